package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// Modes of the kill rounds.
const (
	// ModeRandom kills the run, its process group or hangs it up, at any moment.
	ModeRandom = "random"
	// ModeGroupCommit kills the whole process group (or hangs it up) just
	// after a commit step starts or ends, as a closed terminal would.
	ModeGroupCommit = "group-commit"
	// ModeMixed alternates the two.
	ModeMixed = "mixed"
)

// Config sets up a chaos session.
type Config struct {
	Bin     string
	Dir     string // scratch directory, one subdirectory per round
	Seed    int64
	Rounds  int
	Mode    string
	Special bool // also the hostile rounds (tmux hung or killed, bad markers, two runs at once, limits)
	// Only, when set, plays only the hostile round of that name.
	Only string
	Log  io.Writer
	// SSHD, when set, starts a private sshd: every fifth round then runs
	// its stories over local and that ssh host (see remoteRound).
	SSHD func() *sshd.Server
}

// Summary counts what the rounds found.
type Summary struct {
	Rounds, Kills, Lost, Leftovers, Escalations int
	Failures                                    []string
}

func (s Summary) String() string {
	return fmt.Sprintf("chaos: %d rounds, %d lost, %d leftovers, %d escalations (%d kills)",
		s.Rounds, s.Lost, s.Leftovers, s.Escalations, s.Kills)
}

// runFlags keep a round fast: no backoff, short rechecks.
var runFlags = []string{"--agent", agent.AgentSim, "--json", "--backoff", "0s", "--recheck-grace", "50ms", "--completion-rechecks", "2"}

// faults the simulated agent may act out in a round; every one is
// recovered by a retry, so a round still ends done.
var faults = []string{"crash:dev:1@1.2", "false:automate:1@1.3", "review-cycles:2@1.1", "crash:review:1@1.4", "crash:create:1@1.3"}

// Run plays the rounds and returns what they found.
func Run(cfg Config) Summary {
	var sum Summary
	if cfg.Special {
		for _, r := range specialRounds {
			if cfg.Only != "" && r.name != cfg.Only {
				continue
			}
			o := r.play(cfg, roundDir(cfg, r.name))
			sum.Kills += o.kills
			sum.add(cfg, r.name, o)
		}
	}
	for i := 0; i < cfg.Rounds; i++ {
		rng := rand.New(rand.NewSource(cfg.Seed + int64(i))) //nolint:gosec // G404: a round must replay from CHAOS_SEED
		mode := cfg.Mode
		if mode == ModeMixed || mode == "" {
			mode = []string{ModeRandom, ModeGroupCommit}[i%2]
		}
		name := fmt.Sprintf("%s-%d", mode, i)
		// Every third round runs two stories side by side, each in its git worktree.
		var extra []string
		if i%3 == 2 {
			name, extra = name+"-parallel", []string{"--parallel", "2"}
		}
		var res outcome
		if cfg.SSHD != nil && i%5 == 4 {
			res = remoteRound(cfg, roundDir(cfg, name+"-remote"), rng, mode)
			name += "-remote"
		} else {
			res = killRound(cfg, roundDir(cfg, name), rng, mode, extra)
		}
		sum.Kills += res.kills
		sum.add(cfg, name, res)
	}
	return sum
}

func roundDir(cfg Config, name string) string { return filepath.Join(cfg.Dir, name) }

// outcome is one round's result.
type outcome struct {
	findings  Findings
	escalated string // the escalation's code and reason, when the run escalated
	err       error  // the round itself could not be played (or a command hung)
	kills     int
	story     []string // what was done, for the log
}

func (s *Summary) add(cfg Config, name string, o outcome) {
	s.Rounds++
	bad := false
	if o.escalated != "" {
		s.Escalations++
		bad = true
	}
	if o.err != nil {
		s.Leftovers++
		bad = true
		o.findings.Leftovers = append(o.findings.Leftovers, "round failed: "+o.err.Error())
	}
	if len(o.findings.Lost) > 0 {
		s.Lost++
		bad = true
	}
	if len(o.findings.Leftovers) > 0 && o.err == nil {
		s.Leftovers++
		bad = true
	}
	status := "ok"
	if bad {
		status = "FAIL"
		msg := fmt.Sprintf("%s: escalated=%q lost=%v left=%v [%s]", name, o.escalated, o.findings.Lost,
			o.findings.Leftovers, strings.Join(o.story, "; "))
		s.Failures = append(s.Failures, msg)
	} else {
		_ = os.RemoveAll(roundDir(cfg, name))
	}
	fmt.Fprintf(cfg.Log, "round %s: %s (%s)\n", name, status, strings.Join(o.story, "; "))
}

// event is one JSON line of `run --json`.
type event struct {
	Event string `json:"event"`
	Unit  string `json:"unit"`
	Step  string `json:"step"`
}

// killPlan says when to kill a run: after the nth line matching the
// trigger (or, with no trigger, after delay from the start), then delay.
type killPlan struct {
	signal  syscall.Signal
	group   bool
	trigger func(event) bool
	nth     int
	delay   time.Duration
	what    string
}

func planKill(rng *rand.Rand, mode string) killPlan {
	var k killPlan
	switch mode {
	case ModeGroupCommit:
		k.group, k.signal = true, syscall.SIGKILL
		if rng.Intn(4) == 0 {
			k.signal = syscall.SIGHUP
		}
		// The nth commit step from here: on a resume, the stories still to commit.
		k.nth = 1 + rng.Intn(3)
		if rng.Intn(2) == 0 {
			k.trigger = func(e event) bool { return e.Event == "step_started" && e.Step == "commit" }
			k.delay = time.Duration(rng.Intn(40_000)) * time.Microsecond
			k.what = fmt.Sprintf("after commit step %d started", k.nth)
		} else {
			k.trigger = func(e event) bool { return e.Event == "step_verified" && e.Step == "commit" }
			k.delay = time.Duration(rng.Intn(5_000)) * time.Microsecond
			k.what = fmt.Sprintf("after commit step %d ended", k.nth)
		}
	default:
		k.signal = []syscall.Signal{syscall.SIGKILL, syscall.SIGKILL, syscall.SIGHUP}[rng.Intn(3)]
		k.group = rng.Intn(2) == 0
		if rng.Intn(2) == 0 {
			k.delay = time.Duration(rng.Intn(1500)) * time.Millisecond
			k.what = "at a random moment"
		} else {
			k.trigger = func(e event) bool { return e.Event != "" }
			k.nth = 1 + rng.Intn(45)
			k.delay = time.Duration(rng.Intn(30_000)) * time.Microsecond
			k.what = fmt.Sprintf("after event %d", k.nth)
		}
	}
	target := "run"
	if k.group {
		target = "its process group"
	}
	sig := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGHUP: "SIGHUP"}[k.signal]
	k.what = fmt.Sprintf("%s to %s %s +%s", sig, target, k.what, k.delay.Round(time.Microsecond))
	return k
}

// execute starts the binary with args and kills it as the plan says; it
// reports whether the kill happened (else the command ran to its end).
func (k killPlan) execute(p *Sample, args ...string) (bool, *Command, error) {
	c, err := p.Start(args...)
	if err != nil {
		return false, nil, err
	}
	var done atomic.Bool
	kill := func() {
		pid := c.Cmd.Process.Pid
		if k.group {
			pid = -pid
		}
		_ = syscall.Kill(pid, k.signal)
		done.Store(true)
	}
	var timer *time.Timer
	if k.trigger == nil {
		timer = time.AfterFunc(k.delay, kill)
	}
	seen := 0
	for line := range c.Lines {
		var e event
		if k.trigger == nil || done.Load() || json.Unmarshal([]byte(line), &e) != nil || !k.trigger(e) {
			continue
		}
		if seen++; seen == k.nth {
			time.Sleep(k.delay)
			kill()
		}
	}
	exit, err := c.Wait(3 * time.Minute)
	if timer != nil && timer.Stop() {
		return false, c, err // it ended before the moment came
	}
	// A kill that came after the run ended on its own killed nothing.
	return done.Load() && exit < 0, c, err
}

// killRound starts a run, kills it one to three times (resuming after
// each), lets a last resume finish and checks the project.
func killRound(cfg Config, dir string, rng *rand.Rand, mode string, extra []string) (o outcome) {
	return killRoundWith(cfg, dir, rng, mode, extra, nil)
}

// killRoundWith is killRound with setup run on the fresh project first.
func killRoundWith(cfg Config, dir string, rng *rand.Rand, mode string, extra []string, setup func(*Sample) error) (o outcome) {
	p, err := NewSample(cfg.Bin, dir, fmt.Sprintf("sa-chaos-%d-%s", os.Getpid(), filepath.Base(dir)))
	if err != nil {
		return outcome{err: err}
	}
	p.RunFlags = extra
	defer p.Shutdown()
	if setup != nil {
		if err := setup(p); err != nil {
			return outcome{err: err}
		}
	}
	if rng.Intn(2) == 0 {
		f := faults[rng.Intn(len(faults))]
		p.Env = append(p.Env, "STORY_AUTOMATOR_SIM_FAULTS="+f)
		o.story = append(o.story, "fault "+f)
	}
	args := append(append([]string{"run"}, runFlags...), p.RunFlags...)
	for n := 1 + rng.Intn(3); n > 0; n-- {
		plan := planKill(rng, mode)
		killed, c, err := plan.execute(p, args...)
		if err != nil {
			o.err = err
			return o
		}
		args = nextArgs(p)
		if !killed {
			o.story = append(o.story, "ran to its end before "+plan.what+": "+code(c.Result()))
			break
		}
		o.kills++
		o.story = append(o.story, plan.what)
	}
	o.escalated, o.err = finish(p, &o)
	o.findings = Check(p)
	return o
}

// nextArgs is what the user runs after a kill: `run --resume`, or `run`
// again when the kill came before the run had written its state document
// (it had started nothing).
func nextArgs(p *Sample) []string {
	store := marker.NewStore(p.Root, func(string) string { return "" })
	if orchestrator.LatestState(store, p.Root) == "" {
		return append(append([]string{"run"}, runFlags...), p.RunFlags...)
	}
	return []string{"run", "--resume", "--json"}
}

// finish resumes the run until it ends, and reports an escalation.
func finish(p *Sample, o *outcome) (string, error) {
	res, exit, err := p.Run(3*time.Minute, nextArgs(p)...)
	if err != nil {
		return "", err
	}
	o.story = append(o.story, "resume: "+code(res))
	if exit == 0 || res["error"] == "no_run_to_resume" {
		return "", nil
	}
	return fmt.Sprintf("%s: %v %v", code(res), res["reason"], res["message"]), nil
}

// code is the outcome or error code of a result line.
func code(res map[string]any) string {
	if res == nil {
		return "no result"
	}
	if ok, _ := res["ok"].(bool); ok {
		return fmt.Sprint(res["outcome"])
	}
	return fmt.Sprint(res["error"])
}
