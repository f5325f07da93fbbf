package status

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// Outcomes of a wait on a run (status --wait).
const (
	WaitDone      = "done"      // every selected story is done
	WaitEscalated = "escalated" // a step needs the user; the run is paused
	WaitPaused    = "paused"    // interrupted or paused by hand
	WaitDead      = "dead"      // the run's process is gone with work left
	WaitRunning   = "running"   // the wait's bound passed first: wait again
	WaitNoRun     = "no_run"    // the project has no run to wait for
)

// WaitResult is what a wait on a run saw, and the one command to run next.
type WaitResult struct {
	Outcome    string `json:"outcome"`
	RunID      string `json:"runId,omitempty"`
	StatePath  string `json:"stateFile,omitempty"`
	Done       int    `json:"storiesDone"`
	Total      int    `json:"storiesTotal"`
	Current    string `json:"current,omitempty"`
	Message    string `json:"message"`
	Next       string `json:"next"`
	WaitedSecs int64  `json:"waitedSeconds"`
	// Wait is the limit the run waits out, when it does: the run is still
	// going and goes on by itself.
	Wait *orchestrator.LimitWait `json:"wait,omitempty"`
}

// waitBackstop re-reads the run even without a file event: a run whose
// process dies changes no file, and its lock is released silently.
const waitBackstop = 5 * time.Second

// WaitRun blocks until the project's run finishes, escalates, pauses, or dies,
// or until returnAfter passes (0 = no bound), waking on changes to the run's
// state and marker rather than polling them.
func WaitRun(ctx context.Context, root string, getenv func(string) string, returnAfter time.Duration) (WaitResult, error) {
	start := time.Now()
	store := marker.NewStore(root, getenv)
	w := wake.New()
	defer w.Close()
	for _, dir := range []string{orchestrator.RunsDir(root), filepath.Dir(store.Path)} {
		_ = w.Dir(dir) // a missing one is skipped: the backstop still looks
	}
	var deadline <-chan time.Time
	if returnAfter > 0 {
		t := time.NewTimer(returnAfter)
		defer t.Stop()
		deadline = t.C
	}
	backstop := time.NewTicker(waitBackstop)
	defer backstop.Stop()
	for {
		res, final := lookAtRun(store, root)
		res.WaitedSecs = int64(time.Since(start).Seconds())
		if final {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-deadline:
			res.Outcome = WaitRunning
			res.Message = fmt.Sprintf("the run is still going after %s: %d of %d stories done%s", returnAfter, res.Done, res.Total, res.current())
			if res.Wait != nil {
				res.Message = fmt.Sprintf("the run is still going after %s, waiting for a limit to lift: %d of %d stories done; %s",
					returnAfter, res.Done, res.Total, strings.TrimPrefix(WaitText(res.Wait, orchestrator.RunWaiting, time.Now()), "Waiting: "))
			}
			res.Next = fmt.Sprintf("story-automator status --wait --return-after %s", returnAfter)
			return res, nil
		case <-w.C:
		case <-backstop.C:
		}
	}
}

func (r WaitResult) current() string {
	if r.Current == "" {
		return ""
	}
	return "; now " + r.Current
}

// lookAtRun reads the run once and says whether the wait is over.
func lookAtRun(store *marker.Store, root string) (WaitResult, bool) {
	// A corrupt document is moved aside when no run holds the project, so
	// the wait never waits on a document nobody will rewrite.
	st, path, _ := orchestrator.ReadLatestState(store, root, time.Now)
	if path == "" {
		return WaitResult{Outcome: WaitNoRun, Message: "this project has no run",
			Next: "story-automator run --agent claude"}, true
	}
	if st == nil {
		// Unreadable for now (a run holds it): read again at the next wake-up.
		return WaitResult{Outcome: WaitRunning, StatePath: path}, false
	}
	m, merr := store.Read()
	if merr != nil && !errors.Is(merr, marker.ErrNotFound) {
		m = nil
	}
	return waitVerdict(st, path, m, orchestrator.RunLockHeld(root))
}

// waitVerdict decides from a run's state, its marker and its lock whether a
// waiter can stop, what happened, and the one next command.
func waitVerdict(st *orchestrator.State, path string, m *marker.Marker, lockHeld bool) (WaitResult, bool) {
	done, total := st.StoryCounts()
	r := WaitResult{RunID: st.RunID, StatePath: path, Done: done, Total: total}
	if st.Status == orchestrator.RunWaiting {
		// A wait on a limit is the run still going: it goes on by itself.
		r.Wait = st.Wait
	}
	if m != nil && m.CurrentStory != "" {
		r.Current = "story " + m.CurrentStory + " " + m.CurrentStep
	}
	switch {
	case st.Status == orchestrator.RunDone:
		r.Outcome, r.Message, r.Next = WaitDone, fmt.Sprintf("the run is done: %d of %d stories", done, total), "story-automator runs"
	case st.Status == orchestrator.RunPaused && st.Escalation != nil:
		r.Outcome = WaitEscalated
		r.Message = fmt.Sprintf("the run escalated: %s. %s", st.Escalation.Reason, st.Escalation.Action)
		r.Next = "story-automator run --resume"
	case st.Status == orchestrator.RunPaused:
		r.Outcome, r.Message, r.Next = WaitPaused, "the run is paused: "+pauseReason(st.PauseReason), "story-automator run --resume"
	case st.Status == orchestrator.RunSuperseded:
		r.Outcome, r.Message, r.Next = WaitNoRun, "this run was superseded by a newer one", "story-automator status --wait"
	case !lockHeld:
		r.Outcome = WaitDead
		r.Message = fmt.Sprintf("the run's process is gone with %d of %d stories done", done, total)
		r.Next = "story-automator run --resume"
	default:
		return r, false
	}
	return r, true
}

// pauseReason is why a run paused, as the state document says ("by hand"
// when it says nothing).
func pauseReason(s string) string {
	if s == "" || s == "0" {
		return "by hand"
	}
	return s
}

// waitExit is status --wait's exit code for each outcome.
var waitExit = map[string]int{
	WaitDone: 0, WaitEscalated: 3, WaitPaused: 3,
	WaitDead: 4, WaitNoRun: 6, WaitRunning: 8,
}

// WaitExit is the exit code `status --wait` ends with for an outcome: 0
// done, 3 needs you (escalated, paused), 4 its process died, 6 no run, 8
// the bound passed.
func WaitExit(outcome string) int { return waitExit[outcome] }

// WaitFields is what `status --wait` prints as JSON about a wait: every
// field, empty ones too.
// The wait on a limit ("wait") is there only while the run waits.
func WaitFields(res WaitResult) map[string]any {
	f := map[string]any{"outcome": res.Outcome, "runId": res.RunID, "stateFile": res.StatePath,
		"storiesDone": res.Done, "storiesTotal": res.Total, "current": res.Current, "message": res.Message,
		"next": res.Next, "waitedSeconds": res.WaitedSecs}
	if res.Wait != nil {
		f["wait"] = res.Wait
	}
	return f
}
