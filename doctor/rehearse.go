package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

// rehearsalPrompt is the one turn a rehearsal asks of a real child.
const rehearsalPrompt = "story-automator doctor rehearsal: reply with the single word ready and end your turn."

// rehearsalScript is model-sim's answer to it, for --offline.
const rehearsalScript = "rules:\n  - match: \"doctor rehearsal\"\n    actions:\n      - reply: \"ready\"\n"

// Rehearsal runs one real turn of an agent in tmux: against the user's own
// configuration, or offline against model-sim with a private home.
type Rehearsal struct {
	Exe, Root string
	// Environ is the user's environment, which children get.
	Environ []string
	Offline bool
	Timeout time.Duration
}

// Run spawns a child of agent on a private tmux server, waits for it with the
// monitor, and reports whether the prompt arrived, the turn's end was seen,
// the child's hook fired and no dialog stopped it.
func (r Rehearsal) Run(ctx context.Context, agentName string) Check {
	c := Check{Name: "rehearsal", Agent: agentName}
	if r.Timeout <= 0 {
		r.Timeout = 2 * time.Minute
	}
	env, srv, cleanup, err := r.environment(agentName)
	defer cleanup()
	if err != nil {
		c.Status, c.Detail = Fail, "cannot prepare the rehearsal: "+err.Error()
		var ce *coded.Error
		if errors.As(err, &ce) {
			c.Fix = ce.Action
		}
		return c
	}
	stateDir, err := os.MkdirTemp("", "sa-doctor-")
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	// A failed rehearsal keeps its output for the user to read; a passed one leaves nothing.
	defer func() {
		if c.Status != Fail {
			os.RemoveAll(stateDir)
		}
	}()
	tc := tmux.New(fmt.Sprintf("sa-doctor-%d", os.Getpid()))
	defer func() { _ = tc.KillServer(context.WithoutCancel(ctx)) }()
	sp := &child.Spawner{Tmux: tc, Exe: r.Exe, Environ: env, Now: time.Now}
	sess, err := sp.Spawn(ctx, child.Request{ProjectRoot: r.Root, StateDir: stateDir, Step: "dev", Story: "0.1",
		Agent: agentName, Prompt: rehearsalPrompt})
	if err != nil {
		c.Status, c.Detail = Fail, "cannot start a child: "+err.Error()
		return c
	}
	opt := monitor.DefaultOptions()
	opt.Timeout, opt.StartTimeout = r.Timeout, 30*time.Second
	verify, _ := monitor.ParseVerifySpec("none", r.Root, 0)
	res := monitor.Watch(ctx, sess.Name, verify, opt, monitor.Deps{Tmux: tc, StateDir: stateDir, Now: time.Now})
	// The child's processes are waited for before its home and state
	// directories go: an agent still exiting writes into both.
	closer := &tmuxsteps.Runner{Tmux: tc, StateDir: stateDir}
	_ = closer.CloseSession(context.WithoutCancel(ctx), sess.Name)
	c = judge(c, agentName, res, srv)
	return c
}

// judge turns the monitor's result into the rehearsal's check.
func judge(c Check, agentName string, res monitor.Result, srv *simServer) Check {
	if res.Reason == monitor.ReasonDialog {
		c.Status, c.Detail, c.Fix = Fail, "the child stopped at the "+res.Dialog+" dialog", res.Action
		return c
	}
	if res.FinalState != monitor.Completed {
		c.Status = Fail
		c.Detail = fmt.Sprintf("the child ended %s (%s) after %.0fs%s; its output is in %s", res.FinalState, res.Reason,
			res.ElapsedSeconds, lastWords(res.OutputFile), res.OutputFile)
		c.Fix = "read that output, then run `story-automator doctor --agent " + agentName + "` again"
		return c
	}
	if srv != nil && !srv.received("doctor rehearsal") {
		c.Status, c.Detail = Fail, "the turn ended but model-sim never received the rehearsal prompt"
		return c
	}
	p, _ := agent.LookupProfile(agentName)
	c.Status = OK
	c.Detail = fmt.Sprintf("one turn in tmux: prompt delivered, completion seen (%s) in %.1fs, no dialog", res.Reason, res.ElapsedSeconds)
	// Where the screen is the fallback, the child's own hook is what makes completion quick.
	if p.ChildHook != "" && p.Screen != "" && res.Reason != monitor.SignalStopHook {
		c.Status = Warn
		c.Detail += "; the child's own Stop hook did not fire, so completions are seen only from the screen (slower)"
		c.Fix = "check that hooks are not disabled in the agent's settings (disableAllHooks)"
	}
	return c
}

// lastWords quotes the last non-empty line a failed child printed.
func lastWords(outputFile string) string {
	tail, err := sessionstate.OutputTail(outputFile, 20)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if r := []rune(last); len(r) > 160 {
		last = string(r[:160]) + "…"
	}
	return fmt.Sprintf(", saying %q", last)
}

// environment is the child's environment: the user's own, or with --offline
// a private home pointing the CLI at a model-sim started here.
func (r Rehearsal) environment(agentName string) ([]string, *simServer, func(), error) {
	if !r.Offline {
		return r.Environ, nil, func() {}, nil
	}
	write, ok := offline.For(agentName)
	if !ok {
		return r.Environ, nil, func() {}, nil
	}
	home, err := os.MkdirTemp("", "sa-doctor-home-")
	if err != nil {
		return nil, nil, func() {}, err
	}
	removeHome := func() { os.RemoveAll(home) }
	srv, err := startModelSim(r.Exe, rehearsalScript)
	if err != nil {
		return nil, nil, removeHome, err
	}
	cleanup := func() { srv.Close(); removeHome() }
	oenv, err := write(offline.Config{Home: home, BaseURL: srv.url, Trusted: []string{r.Root}})
	if err != nil {
		return nil, nil, cleanup, err
	}
	return oenv.Apply(r.Environ), srv, cleanup, nil
}
