package notify

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestASinkThatFailsIsTriedAgainWithADoublingWait(t *testing.T) {
	sink := &fakeSink{name: "webhook x (json)", failFirst: 2}
	clock, rec := &fakeSleep{}, &outcomes{}
	s := &Sender{Sinks: []Sink{sink}, Sleep: clock.Sleep, Record: rec.Record}
	s.Notify(Done(testRun, testNow, 4))
	s.Close(context.Background())
	got := rec.list()
	if len(got) != 1 || !got[0].OK || got[0].Tries != 3 || got[0].Error != "" || len(sink.events()) != 1 {
		t.Fatalf("outcomes %+v, delivered %d", got, len(sink.events()))
	}
	if want := []time.Duration{time.Second, 2 * time.Second}; !reflect.DeepEqual(clock.waits, want) {
		t.Fatalf("waited %v, want %v", clock.waits, want)
	}
	if s := got[0].String(); s != "notified done to webhook x (json) (3 tries)" {
		t.Fatalf("log line %q", s)
	}
}

func TestASinkThatNeverWorksGivesUpAfterItsTriesAndSaysWhy(t *testing.T) {
	sink := &fakeSink{name: "command", failFirst: 100}
	clock, rec := &fakeSleep{}, &outcomes{}
	s := &Sender{Sinks: []Sink{sink}, Tries: 4, Sleep: clock.Sleep, Record: rec.Record}
	s.Notify(Escalated(testRun, testNow, "1.2", "dev", "dev story of 1.2: crashed", "fix it"))
	s.Close(context.Background())
	got := rec.list()
	if len(got) != 1 || got[0].OK || got[0].Tries != 4 || sink.tries != 4 || len(clock.waits) != 3 {
		t.Fatalf("outcomes %+v, tries %d, waits %v", got, sink.tries, clock.waits)
	}
	if s := got[0].String(); s != "notification escalated to command FAILED after 4 tries: HTTP 502 Bad Gateway" {
		t.Fatalf("log line %q", s)
	}
}

func TestEachTryIsBoundedByTheTimeout(t *testing.T) {
	sink := &fakeSink{name: "desktop", block: make(chan struct{})} // never answers
	rec := &outcomes{}
	s := &Sender{Sinks: []Sink{sink}, Timeout: 20 * time.Millisecond, Tries: 2, Sleep: (&fakeSleep{}).Sleep, Record: rec.Record}
	got := s.SendNow(context.Background(), Test(testRun, testNow))
	if len(got) != 1 || got[0].OK || got[0].Tries != 2 || !strings.Contains(got[0].Error, "deadline exceeded") {
		t.Fatalf("outcomes %+v", got)
	}
	if r := rec.list(); len(r) != 1 {
		t.Fatalf("recorded %+v", r)
	}
}

func TestNotifyNeverWaitsForASinkAndEachSinkGetsItsEventsInOrder(t *testing.T) {
	slow := &fakeSink{name: "slow", block: make(chan struct{})}
	fast := &fakeSink{name: "fast"}
	s := &Sender{Sinks: []Sink{slow, fast}, Sleep: (&fakeSleep{}).Sleep}
	kinds := []string{KindLimitWait, KindLimitResumed, KindDone}
	for _, k := range kinds {
		ev := Test(testRun, testNow)
		ev.Kind = k
		s.Notify(ev) // returns although slow holds its first event
	}
	close(slow.block)
	s.Close(context.Background())
	for _, sink := range []*fakeSink{slow, fast} {
		var got []string
		for _, ev := range sink.events() {
			got = append(got, ev.Kind)
		}
		if !reflect.DeepEqual(got, kinds) {
			t.Fatalf("%s got %v, want %v", sink.name, got, kinds)
		}
	}
}

func TestCloseCutsShortWhatItCannotWaitFor(t *testing.T) {
	stuck := &fakeSink{name: "stuck", block: make(chan struct{})}
	rec := &outcomes{}
	s := &Sender{Sinks: []Sink{stuck}, Timeout: time.Hour, Record: rec.Record}
	s.Notify(Done(testRun, testNow, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Close(ctx)
	got := rec.list()
	if len(got) != 1 || got[0].OK || got[0].Tries != 1 {
		t.Fatalf("outcomes %+v", got)
	}
	s.Notify(Done(testRun, testNow, 1)) // after Close: dropped, no panic
}

func TestAFullQueueDropsTheEventAndRecordsTheDrop(t *testing.T) {
	stuck := &fakeSink{name: "stuck", block: make(chan struct{})}
	rec := &outcomes{}
	s := &Sender{Sinks: []Sink{stuck}, Record: rec.Record}
	for range queueLen + 2 { // one taken by the worker, queueLen queued, one too many
		s.Notify(Test(testRun, testNow))
	}
	close(stuck.block)
	s.Close(context.Background())
	dropped := 0
	for _, o := range rec.list() {
		if strings.HasPrefix(o.Error, "dropped") {
			dropped++
		}
	}
	if dropped < 1 || len(stuck.events())+dropped != queueLen+2 {
		t.Fatalf("delivered %d, dropped %d of %d", len(stuck.events()), dropped, queueLen+2)
	}
}
