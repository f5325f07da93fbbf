package resolve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// StepResolve is the step name a resolve session is spawned under.
const StepResolve = "resolve"

// Session is the conversation a person has with an agent about the story,
// seeded with its brief; nil error = it ended normally (the agent exited
// 0), which alone lets the story be re-armed.
type Session interface {
	Run(ctx context.Context, t *Target, brief string) error
}

// TmuxSession is a resolve session as a child session in tmux, the run's
// agent started as a person talks to it (its profile's Interactive command
// line), confined as the run's children are, the terminal attached to it
// until it ends.
type TmuxSession struct {
	Tmux *tmux.Client
	// Exe is this binary (the pane's runner, the hooks, sim).
	Exe      string
	Environ  []string
	StateDir string
	// TrustProject answers the CLI's "trust this folder?" for the project.
	TrustProject bool
	Terminal     *tmux.Terminal
	// Started, when set, learns the session's name before the attach.
	Started func(name string)
}

var _ Session = TmuxSession{}

// Run spawns the session, attaches the terminal to it and waits for it to
// end, also after a detach (the terminal is told how to go back). When ctx
// ends first the session is killed: no agent goes on editing the project.
func (s TmuxSession) Run(ctx context.Context, t *Target, brief string) error {
	cfg := t.State.Config
	name := cfg.Agent
	if name == "" {
		name = agent.DefaultAgent()
	}
	var env child.EnvPolicy
	if pol, err := workflows.LoadPolicy(t.Root); err == nil {
		env = child.EnvPolicy{Pass: pol.Env.Pass, Deny: pol.Notify.Vars()}
	}
	sp := &child.Spawner{Tmux: s.Tmux, Exe: s.Exe, Environ: s.Environ, Now: time.Now}
	sess, err := sp.Spawn(ctx, child.Request{ProjectRoot: t.Root, StateDir: s.StateDir, Epic: t.Unit.Epic, Story: t.Unit.Key,
		Step: StepResolve, Agent: name, Model: cfg.Model, Prompt: brief, TrustProject: s.TrustProject, WorkDir: t.Unit.Worktree,
		Unconfined: !cfg.Confined(), Network: cfg.SandboxNetwork, ReadDeny: cfg.SandboxReadDeny, Env: env, Interactive: true})
	if err != nil {
		return fmt.Errorf("start the resolve session: %w", err)
	}
	if s.Started != nil {
		s.Started(sess.Name)
	}
	attachErr := s.Tmux.Attach(ctx, sess.Name, s.Terminal)
	if alive, _ := s.Tmux.HasSession(context.WithoutCancel(ctx), sess.Name); alive && attachErr == nil && s.Terminal != nil && s.Terminal.Err != nil {
		fmt.Fprintf(s.Terminal.Err, "detached: the resolve session %s goes on (`story-automator session attach %s` goes back); the story is re-armed when it ends\n",
			sess.Name, sess.Name)
	}
	st, err := waitEnd(ctx, s.StateDir, sess.Name)
	if err != nil {
		_ = s.Tmux.KillSession(context.WithoutCancel(ctx), sess.Name)
		if attachErr != nil {
			err = errors.Join(err, fmt.Errorf("attach: %w", attachErr))
		}
		return err
	}
	return endedNormally(sess.Name, st)
}

// waitEnd waits, woken by the session's state file and its pane's process,
// until the session has ended: its runner recorded the agent's exit or the
// pane's kill, or the pane's process is gone.
func waitEnd(ctx context.Context, dir, name string) (*sessionstate.State, error) {
	w := wake.New()
	defer w.Close()
	if err := w.File(sessionstate.StatePath(dir, name)); err != nil {
		return nil, err
	}
	watched := 0
	for {
		st, err := sessionstate.Read(dir, name)
		if err != nil {
			return nil, err
		}
		switch st.Lifecycle {
		case sessionstate.LifecycleExited, child.LifecycleKilled, sessionstate.LifecycleLost:
			return st, nil
		}
		if st.PanePid > 0 && st.PanePid != watched {
			if err := w.Process(st.PanePid); err != nil {
				return nil, err
			}
			watched = st.PanePid
		}
		if st.PanePid > 0 && !proc.Alive(st.PanePid) {
			st.Lifecycle = sessionstate.LifecycleLost
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the resolve session %s was left before it ended: %w", name, ctx.Err())
		case <-w.C:
		}
	}
}

// endedNormally is nil for a session whose agent exited 0; else it says
// how the session ended.
func endedNormally(name string, st *sessionstate.State) error {
	switch {
	case st.Lifecycle == sessionstate.LifecycleExited && st.ExitCode != nil && *st.ExitCode == 0:
		return nil
	case st.Lifecycle == sessionstate.LifecycleExited && st.ExitCode != nil:
		return fmt.Errorf("the resolve session %s ended with its agent's exit code %d", name, *st.ExitCode)
	case st.Signal != "":
		return fmt.Errorf("the resolve session %s ended by %s", name, st.Signal)
	case st.Lifecycle == child.LifecycleKilled:
		return fmt.Errorf("the resolve session %s was killed", name)
	}
	return fmt.Errorf("the resolve session %s ended (%s) without its agent's exit", name, st.Lifecycle)
}
