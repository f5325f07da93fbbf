package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
)

// Delivery defaults: each try of a sink is bounded by Timeout, a failed try
// is followed by another after Backoff (doubled each time), Tries in all.
const (
	DefaultTimeout = 10 * time.Second
	DefaultTries   = 3
	DefaultBackoff = time.Second
	// queueLen is how many events may wait for one sink; more are dropped
	// (and the drop recorded), never waited for.
	queueLen = 16
)

// Outcome is how one event went to one sink.
type Outcome struct {
	Event Event  `json:"-"`
	Sink  string `json:"sink"`
	OK    bool   `json:"ok"`
	Tries int    `json:"tries"`
	// Error is the last try's error ("" when OK); Action, when the error
	// names one, the one thing to do about it.
	Error  string `json:"error,omitempty"`
	Action string `json:"action,omitempty"`
}

// permanent marks an error no further try can change: a missing program, a
// URL that is none.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// String is the outcome for the action log.
func (o Outcome) String() string {
	if o.OK {
		return fmt.Sprintf("notified %s to %s (%s)", o.Event.Kind, o.Sink, plural(o.Tries, "1 try", fmt.Sprintf("%d tries", o.Tries)))
	}
	return fmt.Sprintf("notification %s to %s FAILED after %s: %s", o.Event.Kind, o.Sink,
		plural(o.Tries, "1 try", fmt.Sprintf("%d tries", o.Tries)), o.Error)
}

// Sender delivers events to its sinks beside the caller: Notify never waits
// for a sink, each sink gets its events in order on its own goroutine, and
// every outcome goes to Record. Close waits (boundedly) for what is queued.
type Sender struct {
	Sinks []Sink
	// Timeout, Tries and Backoff default to DefaultTimeout, DefaultTries
	// and DefaultBackoff.
	Timeout time.Duration
	Tries   int
	Backoff time.Duration
	// Sleep waits d or until ctx ends (tests pass a fake clock's); a real
	// timer when nil.
	Sleep func(ctx context.Context, d time.Duration) error
	// Record gets every outcome, from the sinks' goroutines (it must be
	// safe for concurrent use); nil drops them.
	Record func(Outcome)

	once   sync.Once
	mu     sync.Mutex
	closed bool
	queues []chan Event
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *Sender) start() {
	s.once.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		for _, sink := range s.Sinks {
			q := make(chan Event, queueLen)
			s.queues = append(s.queues, q)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				for ev := range q {
					s.record(s.deliver(s.ctx, sink, ev))
				}
			}()
		}
	})
}

// Notify queues ev for every sink and returns at once.
func (s *Sender) Notify(ev Event) {
	s.start()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for i, q := range s.queues {
		select {
		case q <- ev:
		default:
			// Recorded beside the caller too: Record may wait on the run's lock.
			o := Outcome{Event: ev, Sink: s.Sinks[i].Name(), Error: "dropped: too many notifications were waiting for this sink"}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.record(o)
			}()
		}
	}
}

// Close stops taking events and waits until those queued are delivered or
// ctx ends; then the tries under way are cut short (and recorded as failed).
func (s *Sender) Close(ctx context.Context) {
	s.start()
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		for _, q := range s.queues {
			close(q)
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
	}
	s.cancel()
}

// SendNow delivers ev to every sink at once, side by side, and returns each
// sink's outcome in the sinks' order (notify test).
func (s *Sender) SendNow(ctx context.Context, ev Event) []Outcome {
	out := make([]Outcome, len(s.Sinks))
	var wg sync.WaitGroup
	for i, sink := range s.Sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.deliver(ctx, sink, ev)
			s.record(out[i])
		}()
	}
	wg.Wait()
	return out
}

// deliver tries sink until it takes ev or the tries run out.
func (s *Sender) deliver(ctx context.Context, sink Sink, ev Event) Outcome {
	o := Outcome{Event: ev, Sink: sink.Name()}
	wait := orDuration(s.Backoff, DefaultBackoff)
	tries := s.Tries
	if tries <= 0 {
		tries = DefaultTries
	}
	for o.Tries < tries {
		if o.Tries > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				o.Error += " (then the run ended before the next try)"
				return o
			}
			wait *= 2
		}
		o.Tries++
		tctx, cancel := context.WithTimeout(ctx, orDuration(s.Timeout, DefaultTimeout))
		err := sink.Send(tctx, ev)
		cancel()
		if err == nil {
			o.OK, o.Error = true, ""
			return o
		}
		o.Error = err.Error()
		var c *coded.Error
		if errors.As(err, &c) {
			o.Action = c.Action
		}
		if ctx.Err() != nil || errors.As(err, new(permanent)) {
			return o
		}
	}
	return o
}

func (s *Sender) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	return orchestrator.SystemClock{}.Sleep(ctx, d)
}

func (s *Sender) record(o Outcome) {
	if s.Record != nil {
		s.Record(o)
	}
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
