package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/gitdirs"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

// RunnerCommand is the hidden subcommand tmux runs in each pane.
const RunnerCommand = "session-runner"

// ErrUnknownAgent is returned for an agent name with no profile.
var ErrUnknownAgent = errors.New("unknown agent")

// Spawner starts child sessions on one tmux server.
type Spawner struct {
	Tmux *tmux.Client
	// Exe is this binary: tmux runs it as the pane's runner, and sim runs it as the agent.
	Exe string
	// Environ is the environment the child starts from (the spawner's own).
	Environ []string
	Now     func() time.Time
	// Rand feeds the random part of session names (crypto/rand when nil).
	Rand          io.Reader
	Width, Height int
	// Wrap runs an argv inside this tool's sandbox (confine.Wrap when nil).
	Wrap func(confine.Policy, []string) ([]string, error)
}

// Request is one session to spawn.
type Request struct {
	ProjectRoot string
	// StateDir holds the session's state, spec and output files (absolute).
	StateDir          string
	Epic, Story, Step string
	Cycle             int
	Agent, Model      string
	Prompt            string
	// Command is the custom agent's command template.
	Command string
	// TrustProject: the user asked the tool to trust ProjectRoot, the child's
	// folder, for the agent (its TrustEnv, and its trust dialog answered).
	TrustProject bool
	// WorkDir, when set, is the folder the agent works in (the story's git
	// worktree, absolute); ProjectRoot stays the project whose marker and
	// session state the child's hooks find (PROJECT_ROOT). The child gets it
	// as EnvWorkDir.
	WorkDir string
	// Unconfined starts the agent without its CLI's sandbox (--sandbox
	// off); by default a child is confined (Confine).
	Unconfined bool
	// Network are the hosts a confined child's tools may reach.
	Network []string
	// Env is which of the spawner's variables beyond the allow-list the
	// child gets (ChildEnv).
	Env EnvPolicy
	// ReadDeny are paths a confined child may not read besides the user's
	// credentials (workflow.yaml's sandbox.readDeny: absolute, or "~/…"
	// under the child's HOME).
	ReadDeny []string
	// Interactive starts the agent for a person to talk to (Invocation.Interactive).
	Interactive bool
}

// dir is the folder the child runs in.
func (r Request) dir() string {
	if r.WorkDir != "" {
		return r.WorkDir
	}
	return r.ProjectRoot
}

// Session is a spawned child session.
type Session struct {
	Name       string `json:"session"`
	PaneID     string `json:"paneId"`
	StateFile  string `json:"stateFile"`
	OutputFile string `json:"outputFile"`
}

// Spawn creates the session: state file, output file and spec first, then
// a detached tmux session whose pane runs `<exe> session-runner`.
func (s *Spawner) Spawn(ctx context.Context, r Request) (Session, error) {
	prof, ok := agent.LookupProfile(r.Agent)
	if !ok {
		return Session{}, fmt.Errorf("%w %q (known: %v)", ErrUnknownAgent, r.Agent, agent.AgentNames())
	}
	if !filepath.IsAbs(r.StateDir) || !filepath.IsAbs(r.ProjectRoot) || !filepath.IsAbs(r.dir()) {
		return Session{}, fmt.Errorf("project root, work dir and state dir must be absolute")
	}
	if err := s.Tmux.CheckVersion(ctx); err != nil {
		return Session{}, err
	}
	if err := atomicfile.EnsureDir(r.StateDir, 0o700); err != nil {
		return Session{}, err
	}
	name, err := s.freshName(r)
	if err != nil {
		return Session{}, err
	}
	sess := Session{Name: name, StateFile: sessionstate.StatePath(r.StateDir, name),
		OutputFile: sessionstate.OutputPath(r.StateDir, name)}
	spec, err := s.prepare(prof, r, sess)
	if err != nil {
		removeSessionFiles(r.StateDir, name)
		return Session{}, err
	}
	if err := WriteSpec(r.StateDir, spec); err != nil {
		removeSessionFiles(r.StateDir, name)
		return Session{}, err
	}
	pane, err := s.newSession(ctx, tmux.NewSessionSpec{Name: name, Width: s.width(), Height: s.height(),
		Argv: []string{s.Exe, RunnerCommand, "--state-dir", r.StateDir, name}})
	if err != nil {
		removeSessionFiles(r.StateDir, name)
		return Session{}, err
	}
	sess.PaneID = pane
	_, err = sessionstate.Update(r.StateDir, name, func(st *sessionstate.State) error {
		st.PaneID = pane
		return nil
	})
	if err != nil {
		// A failed spawn must not leave its agent running: a caller that
		// retries would otherwise start a second one.
		if kerr := s.Tmux.KillSession(context.WithoutCancel(ctx), name); kerr != nil {
			err = errors.Join(err, fmt.Errorf("kill session %s: %w", name, kerr))
		}
		return Session{}, fmt.Errorf("record pane id of session %s: %w", name, err)
	}
	return sess, nil
}

// newSession creates the tmux session, retrying when it met a server that
// was exiting (its last session had just ended): nothing was created then.
func (s *Spawner) newSession(ctx context.Context, spec tmux.NewSessionSpec) (string, error) {
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		var pane string
		if pane, err = s.Tmux.NewSession(ctx, spec); !errors.Is(err, tmux.ErrNoServer) {
			return pane, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 25 * time.Millisecond):
		}
	}
	return "", err
}

// freshName picks a name whose state file does not exist yet.
func (s *Spawner) freshName(r Request) (string, error) {
	for i := 0; i < 5; i++ {
		name, err := NewName(NameParts{ProjectRoot: r.ProjectRoot, Epic: r.Epic, Story: r.Story, Step: r.Step, Cycle: r.Cycle}, s.Rand)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(sessionstate.StatePath(r.StateDir, name)); errors.Is(err, os.ErrNotExist) {
			return name, nil
		}
	}
	return "", errors.New("no free session name after 5 tries")
}

// prepare writes the state file, an empty output file and the prompt file
// (when the agent reads one), and returns the runner's spec.
func (s *Spawner) prepare(prof agent.Profile, r Request, sess Session) (Spec, error) {
	inv := Invocation{Exe: s.Exe, Model: r.Model, Prompt: r.Prompt, Template: r.Command,
		PromptFile: PromptPath(r.StateDir, sess.Name), FilesDir: SandboxFilesPath(r.StateDir, sess.Name), Interactive: r.Interactive}
	conf, err := r.confine(prof, sess.Name, s.getenv)
	if err != nil {
		return Spec{}, err
	}
	if conf != nil {
		conf.Exe, conf.NetLog = s.Exe, NetworkLogPath(r.StateDir, sess.Name)
	}
	inv.Confine = conf
	launch, err := Build(prof, inv)
	if err != nil {
		return Spec{}, err
	}
	if launch.Wrap != nil {
		wrap := s.Wrap
		if wrap == nil {
			wrap = confine.Wrap
		}
		if launch.Argv, err = wrap(*launch.Wrap, launch.Argv); err != nil {
			return Spec{}, err
		}
	}
	for _, f := range launch.Files {
		if err := atomicfile.EnsureDir(filepath.Dir(f.Path), 0o700); err != nil {
			return Spec{}, err
		}
		if err := atomicfile.Replace(f.Path, f.Data, 0o600); err != nil {
			return Spec{}, err
		}
	}
	if launch.WritePromptFile {
		if err := atomicfile.Replace(inv.PromptFile, []byte(r.Prompt), 0o600); err != nil {
			return Spec{}, err
		}
	}
	epic := r.Epic
	if epic == "" {
		epic = epicOf(r.Story)
	}
	vars := map[string]string{
		EnvChild: "true", EnvSession: sess.Name, EnvStateDir: r.StateDir, "PROJECT_ROOT": r.ProjectRoot,
		EnvAgent: r.Agent, EnvStep: r.Step, EnvStory: r.Story, EnvEpic: epic,
		// BMAD 6.12's skills run their scripts with `uv run`: a child's uv
		// uses a Python the run found beforehand and never downloads one.
		"UV_PYTHON_DOWNLOADS": "never",
	}
	if r.WorkDir != "" {
		vars[EnvWorkDir] = r.WorkDir
	}
	// A program that takes its folder from $PWD (as a shell sets it)
	// rather than from its working directory works there too.
	vars["PWD"] = r.dir()
	for k, v := range prof.Env {
		vars[k] = v
	}
	for k, v := range launch.Env {
		vars[k] = v
	}
	var accept []string
	if r.TrustProject {
		for k, v := range prof.TrustEnv {
			vars[k] = v
		}
		accept = prof.AcceptedDialogs()
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	_, err = sessionstate.Update(r.StateDir, sess.Name, func(st *sessionstate.State) error {
		*st = sessionstate.State{Name: sess.Name, ProjectRoot: r.ProjectRoot, Epic: epic, Story: r.Story,
			Step: r.Step, Cycle: r.Cycle, Agent: r.Agent, Lifecycle: LifecycleStarting,
			CreatedAt: marker.Timestamp(now()), OutputFile: sess.OutputFile, AcceptDialogs: accept}
		return nil
	})
	if err != nil {
		return Spec{}, err
	}
	if err := atomicfile.Replace(sess.OutputFile, nil, 0o600); err != nil {
		return Spec{}, err
	}
	return Spec{Name: sess.Name, Dir: r.dir(), Argv: launch.Argv, Env: ChildEnv(s.Environ, prof, r.Env, vars),
		Stdin: launch.Stdin, UseStdin: launch.UseStdin, OutputFile: sess.OutputFile}, nil
}

func (s *Spawner) width() int {
	if s.Width > 0 {
		return s.Width
	}
	return DefaultWidth
}

func (s *Spawner) height() int {
	if s.Height > 0 {
		return s.Height
	}
	return DefaultHeight
}

// removeSessionFiles undoes a spawn that did not reach tmux.
func removeSessionFiles(dir, name string) {
	for _, p := range []string{SpecPath(dir, name), PromptPath(dir, name), sessionstate.StatePath(dir, name),
		sessionstate.StatePath(dir, name) + ".lock", sessionstate.OutputPath(dir, name), NetworkLogPath(dir, name)} {
		_ = os.Remove(p)
	}
	removeSandboxFiles(dir, name)
}

// confine is how the child of r is confined: nil when the user turned the
// sandbox off or the agent has none; an error when its sandbox cannot work
// on this system.
func (r Request) confine(prof agent.Profile, name string, getenv func(string) string) (*Confine, error) {
	if r.Unconfined || prof.Sandbox.Kind == "" {
		return nil, nil
	}
	if !prof.Sandbox.SupportsOS(runtime.GOOS) {
		return nil, unsupportedOS(prof)
	}
	c := &Confine{Dir: r.dir(), GitDirs: GitDirs(r.dir()), Network: r.Network,
		FilesDir: SandboxFilesPath(r.StateDir, name), ReadDeny: ReadDenied(prof, r.ReadDeny, getenv)}
	c.Guarded = gitdirs.Guarded(r.dir())
	if prof.Sandbox.Kind == agent.SandboxWrapped {
		var err error
		if c.Model, err = modelAllow(prof.Sandbox.Model, getenv); err != nil {
			return nil, err
		}
	}
	if len(c.GitDirs) == 0 {
		c.GitDirs, c.Guarded = GitDirs(r.ProjectRoot), gitdirs.Guarded(r.ProjectRoot)
	}
	if prof.Sandbox.Hides == agent.HideWrap {
		var err error
		if c.CLIWrites, err = cliWrites(prof, r, c, getenv); err != nil {
			return nil, err
		}
		var writable []string
		if c.Private, writable, err = privateCopies(prof, c, getenv); err != nil {
			return nil, err
		}
		c.CLIWrites = append(c.CLIWrites, writable...)
	}
	if err := atomicfile.EnsureDir(c.TmpDir(), 0o700); err != nil {
		return nil, err
	}
	dir, err := settingsPlace(prof, c.FilesDir, name, getenv)
	if err != nil {
		return nil, err
	}
	c.SettingsDir = dir
	return c, nil
}

// getenv reads the environment the child starts from.
func (s *Spawner) getenv(key string) string { return envValue(s.Environ, key) }

// Validate checks a request before anything is started; its messages name
// the `session spawn` flags the fields come from.
func (r Request) Validate() error {
	switch {
	case r.Step == "" || r.Story == "":
		return errors.New("session spawn needs --step and --story")
	case r.Agent == "":
		return fmt.Errorf("session spawn needs --agent (one of %v)", agent.AgentNames())
	case r.Cycle < 0:
		return errors.New("--cycle must not be negative")
	case r.Agent == agent.AgentCustom && r.Command == "":
		return errors.New("--agent custom needs --command")
	case r.Agent != agent.AgentCustom && r.Command != "":
		return errors.New("--command is only for --agent custom")
	}
	if _, ok := agent.LookupProfile(r.Agent); !ok {
		return fmt.Errorf("unknown --agent %q (one of %v)", r.Agent, agent.AgentNames())
	}
	return nil
}
