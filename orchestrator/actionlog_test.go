package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// noteOnUnitDone adds an action-log line, from inside the run, as each unit is done.
type noteOnUnitDone struct {
	log  *ActionLog
	errs []error
}

func (r *noteOnUnitDone) Report(ev Event) {
	if ev.Kind == EventUnitDone {
		r.errs = append(r.errs, r.log.Add(ev.Unit, "", "during the run"))
	}
}

func TestTheActionLogTakesLinesDuringTheRunAndAfterItEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	log := &ActionLog{}
	if err := log.Add("", "", "before"); err == nil {
		t.Fatal("a line before any run was taken")
	}
	rep := &noteOnUnitDone{log: log}
	d := h.deps()
	d.ActionLog, d.Report = log, rep
	res, err := Run(context.Background(), h.options(), d)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Add("", "", "after the run"); err != nil {
		t.Fatal(err)
	}
	if len(rep.errs) == 0 || errors.Join(rep.errs...) != nil {
		t.Fatalf("adding during the run: %v", rep.errs)
	}
	st, err := LoadState(res.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, l := range st.Log {
		if at[l.Message] == 0 {
			at[l.Message] = i + 1
		}
	}
	during, finished, after := at["during the run"], at["run finished: every story done"], at["after the run"]
	if during == 0 || finished == 0 || after == 0 || !(during < finished && finished < after) {
		t.Fatalf("log order during=%d finished=%d after=%d: %+v", during, finished, after, st.Log)
	}
	if st.Log[during-1].Unit != "1.1" {
		t.Fatalf("the line in the run lost its unit: %+v", st.Log[during-1])
	}
	// Once another run holds the project, the ended run's document is not touched.
	lock, err := AcquireRunLock(h.root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if err := log.Add("", "", "while another run goes"); !errors.Is(err, ErrRunActive) {
		t.Fatalf("added while the run lock was held elsewhere: %v", err)
	}
}

// noteBeside adds a line from its own goroutine for every event, as the
// notifier does.
type noteBeside struct {
	log    *ActionLog
	wg     sync.WaitGroup
	mu     sync.Mutex
	events int
	errs   []error
}

func (r *noteBeside) Report(ev Event) {
	r.wg.Add(1)
	r.mu.Lock()
	r.events++
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		if err := r.log.Add(ev.Unit, ev.Step, "beside "+ev.Kind); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
	}()
}

func TestLinesAddedBesideTheLoopWhileItRunsAreKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	log := &ActionLog{}
	rep := &noteBeside{log: log}
	d := h.deps()
	d.ActionLog, d.Report = log, rep
	o := h.options()
	o.Parallel = 2
	res, err := Run(context.Background(), o, d)
	rep.wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(res.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range st.Log {
		if strings.HasPrefix(l.Message, "beside ") {
			n++
		}
	}
	if len(rep.errs) > 0 || n != rep.events {
		t.Fatalf("%d of %d lines added beside the loop kept, errors %v", n, rep.events, rep.errs)
	}
}
