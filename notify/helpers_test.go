package notify

import (
	"context"
	"errors"
	"sync"
	"time"
)

// fakeSink records what it is sent; fail says, per try, whether to fail.
type fakeSink struct {
	name string
	mu   sync.Mutex
	got  []Event
	// failFirst tries fail, then every try succeeds.
	failFirst int
	tries     int
	// block, when set, holds each try until it is closed or the try's ctx ends.
	block chan struct{}
}

func (f *fakeSink) Name() string { return f.name }

func (f *fakeSink) Send(ctx context.Context, ev Event) error {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.tries <= f.failFirst {
		return errors.New("HTTP 502 Bad Gateway")
	}
	f.got = append(f.got, ev)
	return nil
}

func (f *fakeSink) events() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.got...)
}

// fakeSleep records the waits asked for and returns at once.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *fakeSleep) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// outcomes collects a Sender's outcomes.
type outcomes struct {
	mu  sync.Mutex
	all []Outcome
}

func (o *outcomes) Record(x Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, x)
}

func (o *outcomes) list() []Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Outcome(nil), o.all...)
}

var testRun = Run{ID: "run-20260102-150405-abcd", Project: "/home/me/my project"}

var testNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
