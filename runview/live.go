package runview

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// LiveReporter redraws a small progress block on a terminal: stories done
// of total, the current step of every running story, and elapsed time.
type LiveReporter struct {
	W   io.Writer
	Now func() time.Time
	// Width cuts lines so none wraps (which would break the redraw); 0 = 100.
	Width int

	mu      sync.Mutex
	started time.Time
	runID   string
	done    int
	total   int
	usage   *spend.Total
	budget  *orchestrator.Budget
	sandbox string
	running map[string]liveStep
	// wait is the limit the run waits out, while it does.
	wait    *liveWait
	recent  []string
	drawn   int
	stop    chan struct{}
	stopped chan struct{}
}

var _ orchestrator.Reporter = (*LiveReporter)(nil)

// liveWait is a run's wait on a limit: whose, why, and when it ends.
type liveWait struct {
	agent, reason string
	until         time.Time
}

type liveStep struct {
	step, detail string
	since        time.Time
}

// liveRecent is how many finished events stay on screen.
const liveRecent = 4

// Start begins redrawing once a second (for the elapsed time) until Stop.
func (r *LiveReporter) Start() {
	r.mu.Lock()
	if r.Now == nil {
		r.Now = time.Now
	}
	r.started, r.running = r.Now(), map[string]liveStep{}
	r.stop, r.stopped = make(chan struct{}), make(chan struct{})
	r.mu.Unlock()
	go func() {
		defer close(r.stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.mu.Lock()
				r.redrawLocked()
				r.mu.Unlock()
			case <-r.stop:
				return
			}
		}
	}()
}

// Stop ends the redraws and leaves the last frame on screen.
func (r *LiveReporter) Stop() {
	if r.stop == nil {
		return
	}
	close(r.stop)
	<-r.stopped
	r.mu.Lock()
	r.redrawLocked()
	r.mu.Unlock()
}

// Report folds the event into the picture and redraws it.
func (r *LiveReporter) Report(ev orchestrator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[string]liveStep{}
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.started.IsZero() {
		r.started = r.Now()
	}
	if ev.Usage != nil {
		r.usage = ev.Usage
	}
	switch ev.Kind {
	case orchestrator.EventRunStarted:
		r.runID, r.done, r.total, r.budget, r.sandbox = ev.Message, ev.Done, ev.Total, ev.Budget, ev.Sandbox
	case orchestrator.EventStepStarted:
		detail := ev.Agent
		if ev.Attempt > 0 {
			detail = fmt.Sprintf("attempt %d%s · %s", ev.Attempt, cycleText(ev.Cycle), ev.Agent)
			if ev.Role == orchestrator.RoleFallback {
				detail += " (fallback)"
			}
		}
		r.running[ev.Unit] = liveStep{step: ev.Step, detail: detail, since: ev.At}
	case orchestrator.EventLimitWait:
		d, _ := time.ParseDuration(ev.Wait)
		r.wait = &liveWait{agent: ev.Agent, reason: ev.Reason, until: ev.At.Add(d)}
		r.note(ev)
	case orchestrator.EventLimitResumed:
		r.wait = nil
		r.note(ev)
	case orchestrator.EventUnitDone:
		delete(r.running, ev.Unit)
		r.done, r.total = ev.Done, ev.Total
		r.note(ev)
	case orchestrator.EventStepFinished, orchestrator.EventStepVerified:
		if ev.Kind == orchestrator.EventStepFinished && ev.FinalState == orchestrator.FinalCompleted {
			return
		}
		r.note(ev)
	default:
		r.note(ev)
	}
	r.redrawLocked()
}

func (r *LiveReporter) note(ev orchestrator.Event) {
	r.recent = append(r.recent, ev.At.Local().Format("15:04:05")+" "+describeEvent(ev))
	if len(r.recent) > liveRecent {
		r.recent = r.recent[len(r.recent)-liveRecent:]
	}
}

// redrawLocked replaces the previous frame with the current one.
func (r *LiveReporter) redrawLocked() {
	now := r.Now()
	head := fmt.Sprintf("story-automator run %s · %d/%d stories done · elapsed %s",
		r.runID, r.done, r.total, now.Sub(r.started).Round(time.Second))
	if r.sandbox != "" {
		head += " · " + orchestrator.SandboxText(r.sandbox, nil)
	}
	lines := []string{head, "  " + orchestrator.SpendText(r.usage, r.budget)}
	keys := make([]string, 0, len(r.running))
	for k := range r.running {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := r.running[k]
		lines = append(lines, fmt.Sprintf("  %-10s %-9s %s · %s", k, s.step, s.detail, now.Sub(s.since).Round(time.Second)))
	}
	if w := r.wait; w != nil {
		lines = append(lines, fmt.Sprintf("  waiting: %s met a limit (%s) · goes on by itself at %s (in %s)", w.agent, w.reason,
			w.until.Local().Format("15:04:05"), max(w.until.Sub(now), 0).Round(time.Second)))
	}
	for _, l := range r.recent {
		lines = append(lines, "  "+l)
	}
	var b strings.Builder
	if r.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", r.drawn)
	}
	for _, l := range lines {
		b.WriteString("\r\x1b[2K" + textline.Cut(l, cmp.Or(r.Width, 100)) + "\n")
	}
	b.WriteString("\x1b[J")
	r.drawn = len(lines)
	_, _ = io.WriteString(r.W, b.String()) // a terminal gone away: nothing to tell
}
