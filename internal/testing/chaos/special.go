package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// specialRound is a hostile situation a run must come through.
type specialRound struct {
	name string
	play func(cfg Config, dir string) outcome
}

var specialRounds = []specialRound{
	{"two-runs-at-once", twoRuns},
	{"tmux-server-killed", tmuxKilled},
	{"tmux-server-hung", tmuxHung},
	{"marker-fifo", hostileMarker("fifo")},
	{"marker-symlink", hostileMarker("symlink")},
	{"marker-garbage", hostileMarker("garbage")},
	{"marker-huge", hostileMarker("huge")},
	{"limits-and-dropped-streams", limitsRound},
	{"sweep-killed-while-landing", sweepRound},
}

// newRound makes a round's project.
func newRound(cfg Config, dir string) (*Sample, error) {
	return NewSample(cfg.Bin, dir, fmt.Sprintf("sa-chaos-%d-%s", os.Getpid(), filepath.Base(dir)))
}

// settle resumes the run (bounded), then checks the project; a failure of
// the round itself so far is kept.
func settle(p *Sample, o *outcome) {
	esc, err := finish(p, o)
	o.escalated = esc
	if o.err == nil {
		o.err = err
	}
	o.findings = Check(p)
}

// twoRuns starts two runs at the same moment: one runs, the other is
// refused (run_active) and changes nothing.
func twoRuns(cfg Config, dir string) (o outcome) {
	p, err := newRound(cfg, dir)
	if err != nil {
		return outcome{err: err}
	}
	defer p.Shutdown()
	args := append([]string{"run"}, runFlags...)
	a, err := p.Start(args...)
	if err != nil {
		return outcome{err: err}
	}
	b, err := p.Start(args...)
	if err != nil {
		return outcome{err: err}
	}
	ea, erra := a.Wait(3 * time.Minute)
	eb, errb := b.Wait(3 * time.Minute)
	if erra != nil || errb != nil {
		return outcome{err: fmt.Errorf("%w %w", erra, errb)}
	}
	ra, rb := code(a.Result()), code(b.Result())
	o.story = append(o.story, fmt.Sprintf("first %s (exit %d), second %s (exit %d)", ra, ea, rb, eb))
	refused := func(c string) bool { return c == "run_active" || c == "run_paused" }
	if !(ra == "done" && refused(rb)) && !(rb == "done" && refused(ra)) {
		o.findings.Leftovers = append(o.findings.Leftovers, "two runs at once: want one done and one refused, got "+ra+" and "+rb)
	}
	f := Check(p)
	o.findings.Lost = append(o.findings.Lost, f.Lost...)
	o.findings.Leftovers = append(o.findings.Leftovers, f.Leftovers...)
	return o
}

// tmuxKilled kills the tmux server in the middle of a step: the step's
// session is gone, the run retries or pauses, and a resume finishes.
func tmuxKilled(cfg Config, dir string) (o outcome) {
	return tmuxFault(cfg, dir, "SIGKILL to the tmux server during dev of 1.1", func(pid int) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
}

// tmuxHung stops the tmux server (SIGSTOP) in the middle of a step: the run
// must not hang (every tmux call has a deadline); once the server is gone
// for good a resume finishes.
func tmuxHung(cfg Config, dir string) (o outcome) {
	return tmuxFault(cfg, dir, "SIGSTOP to the tmux server during dev of 1.1", func(pid int) {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	})
}

func tmuxFault(cfg Config, dir, what string, fault func(pid int)) (o outcome) {
	p, err := newRound(cfg, dir)
	if err != nil {
		return outcome{err: err}
	}
	defer p.Shutdown()
	// Steps long enough that the server (which exits with its last session) is there to hit.
	p.Env = append(p.Env, "STORY_AUTOMATOR_SIM_DELAY=3s")
	c, err := p.Start(append([]string{"run"}, runFlags...)...)
	if err != nil {
		return outcome{err: err}
	}
	// A run whose tmux calls have deadlines ends (or gets past the fault) in well under this.
	var hung atomic.Bool
	deadline := time.AfterFunc(90*time.Second, func() {
		hung.Store(true)
		_ = syscall.Kill(-c.Cmd.Process.Pid, syscall.SIGKILL)
	})
	server := 0
	for line := range c.Lines {
		var e event
		if server == 0 && json.Unmarshal([]byte(line), &e) == nil && e.Event == "step_started" && e.Step == "dev" {
			for try := 0; try < 50 && server == 0; try++ { // the session is being spawned
				if pid, ok := p.TmuxServerPid(); ok {
					server = pid
					fault(pid)
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
			if server == 0 {
				o.err = fmt.Errorf("no tmux server to hit during dev")
			}
		}
	}
	exit, err := c.Wait(30 * time.Second)
	deadline.Stop()
	if hung.Load() {
		err = fmt.Errorf("still running 90s after the fault: killed")
	}
	if server > 0 {
		_ = syscall.Kill(server, syscall.SIGKILL) // the hung server is gone for good now
		_ = syscall.Kill(server, syscall.SIGCONT)
	}
	o.story = append(o.story, fmt.Sprintf("%s: run ended %s (exit %d)", what, code(c.Result()), exit))
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("the run hung on the tmux server: %w", err)
	}
	settle(p, &o)
	return o
}

// hostileMarker puts something hostile at the marker's path: the hook and
// `marker show` answer at once, `run` does not hang and never writes through
// it, and once it is removed a run finishes.
func hostileMarker(kind string) func(Config, string) outcome {
	return func(cfg Config, dir string) (o outcome) {
		p, err := newRound(cfg, dir)
		if err != nil {
			return outcome{err: err}
		}
		defer p.Shutdown()
		store := marker.NewStore(p.Root, func(string) string { return "" })
		target := filepath.Join(dir, "elsewhere.json")
		if err := plant(kind, store.Path, target); err != nil {
			return outcome{err: err}
		}
		before, _ := os.ReadFile(target)
		hook, err := runHook(p)
		o.story = append(o.story, fmt.Sprintf("stop-hook printed %q", hook))
		if err != nil || strings.Contains(hook, "block") {
			o.findings.Leftovers = append(o.findings.Leftovers, fmt.Sprintf("stop-hook with a %s marker: %q %v", kind, hook, err))
		}
		for _, args := range [][]string{{"marker", "show"}, append([]string{"run"}, runFlags...)} {
			res, exit, err := p.Run(30*time.Second, args...)
			o.story = append(o.story, fmt.Sprintf("%s: %s (exit %d)", args[0]+" "+args[1], code(res), exit))
			if err != nil {
				o.findings.Leftovers = append(o.findings.Leftovers, fmt.Sprintf("%v with a %s marker: %v", args[:2], kind, err))
			}
		}
		if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
			o.findings.Leftovers = append(o.findings.Leftovers, "a run wrote through the marker symlink into "+target)
		}
		_ = os.Remove(store.Path) // what the user does once told
		if _, _, err := p.Run(3*time.Minute, append([]string{"run"}, runFlags...)...); err != nil {
			o.err = err
		}
		f := Check(p)
		o.findings.Lost = append(o.findings.Lost, f.Lost...)
		o.findings.Leftovers = append(o.findings.Leftovers, f.Leftovers...)
		return o
	}
}

// plant writes a hostile marker of the kind at path.
func plant(kind, path, target string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	switch kind {
	case "fifo":
		return syscall.Mkfifo(path, 0o600)
	case "symlink":
		if err := os.WriteFile(target, []byte(`{"version":1,"mode":"story","status":"paused","storiesRemaining":0,"ownerSession":""}`), 0o600); err != nil {
			return err
		}
		return os.Symlink(target, path)
	case "garbage":
		return os.WriteFile(path, []byte("\x00\xffnot json{{{"), 0o600)
	case "huge":
		big := `{"version":1,"mode":"story","status":"active","storiesRemaining":3,"ownerSession":"","pad":"` +
			strings.Repeat("x", 64<<20) + `"}`
		return os.WriteFile(path, []byte(big), 0o600)
	}
	return fmt.Errorf("unknown marker kind %q", kind)
}

// runHook runs the Stop hook as Claude Code would, bounded by 10 s.
func runHook(p *Sample) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, p.Bin, "stop-hook")
	c.Dir, c.Env = p.Root, p.environ()
	c.Stdin = strings.NewReader(`{"session_id":"chaos","hook_event_name":"Stop","stop_hook_active":false,"cwd":"` + p.Root + `"}`)
	out, err := c.Output()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("stop-hook hung: %w", ctx.Err())
	}
	return strings.TrimSpace(string(out)), err
}
