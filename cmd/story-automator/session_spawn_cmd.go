package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

func sessionSpawnCommand() *cli.Command {
	return &cli.Command{
		Name:  "spawn",
		Usage: "start a child agent session for one step of a story",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "step", Usage: "workflow step (create, dev, review, …)"},
			&cli.StringFlag{Name: "story", Usage: "story key, e.g. 1.2"},
			&cli.StringFlag{Name: "epic", Usage: "epic (default: from the story key)"},
			&cli.IntFlag{Name: "cycle", Usage: "review/fix cycle number, 0 = none"},
			&cli.StringFlag{Name: "agent", Usage: "claude, codex, gemini, sim or custom"},
			&cli.StringFlag{Name: "model", Usage: "model for the agent"},
			&cli.StringFlag{Name: "prompt-file", Usage: "read the prompt from this file ('-' = stdin)"},
			&cli.StringFlag{Name: "prompt", Usage: "the prompt text"},
			&cli.StringFlag{Name: "command", Usage: "custom agent: command template with {prompt}, {prompt_file} or {model}; without a prompt placeholder the prompt goes to stdin"},
			&cli.StringFlag{Name: "sandbox", Value: orchestrator.SandboxOn, Usage: sandboxUsage},
			&cli.BoolFlag{Name: "trust-project", Usage: "answer the agent CLI's \"trust this folder?\" for the project folder (the one you run in) as you would; never the bypass warning or an API key"},
		},
		Action: sessionSpawn,
	}
}

func sessionSpawn(c *cli.Context) error {
	if err := cliapp.RefuseBlank(c, "model", "agent", "command", "step", "story", "epic"); err != nil {
		return err
	}
	e := envOf(c)
	req, err := spawnRequest(c, e)
	if err != nil {
		return err
	}
	exe, err := e.Exe()
	if err != nil {
		return coded.Fail("spawn_failed", "cannot find this binary: %v", err)
	}
	if !req.Unconfined {
		if err := child.CheckSandbox(context.Background(), req.Agent, e.Environ()); err != nil {
			return agentFailure(err)
		}
	}
	// Its agent's own `git add -A` must pick up neither this tool's state
	// nor what a sandbox plants.
	if err := wire.KeepOutOfGit(context.Background(), e.ProjectRoot, e.Getenv, req.StateDir); err != nil {
		e.Log.Warn().Err(err).Msg("could not list story-automator's files in .git/info/exclude")
	}
	sp := &child.Spawner{Tmux: sessionTmux(e), Exe: exe, Environ: e.Environ(), Now: e.Now}
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		return child.SpawnFailure(err)
	}
	e.Log.Info().Str("session", sess.Name).Str("agent", req.Agent).Msg("spawned")
	sweepOldSessions(e)
	return cliio.OKJSON(e.Out, map[string]any{"session": sess.Name, "paneId": sess.PaneID,
		"stateFile": sess.StateFile, "outputFile": sess.OutputFile})
}

// spawnRequest validates the spawn flags; every problem is a usage error.
func spawnRequest(c *cli.Context, e *runtimeEnv) (child.Request, error) {
	r := child.Request{ProjectRoot: e.ProjectRoot, StateDir: sessionStateDir(e),
		Epic: c.String("epic"), Story: c.String("story"), Step: c.String("step"), Cycle: c.Int("cycle"),
		Agent: c.String("agent"), Model: c.String("model"), Command: c.String("command"),
		TrustProject: c.Bool("trust-project")}
	if c.IsSet("prompt") && c.IsSet("prompt-file") {
		return r, coded.Usage("give --prompt or --prompt-file, not both")
	}
	if err := r.Validate(); err != nil {
		return r, coded.Usage("%v", err)
	}
	if err := spawnSandbox(c, e, &r); err != nil {
		return r, err
	}
	var err error
	if r.Prompt, err = child.PromptFrom(c.String("prompt"), c.String("prompt-file"), e.In); err != nil {
		return r, err
	}
	return r, nil
}

// sweepOldSessions removes the project's sessions that ended longer ago
// than STORY_AUTOMATOR_SESSION_TTL (default 24h; a bad value is logged and
// nothing is swept), sparing those its latest run names.
func sweepOldSessions(e *runtimeEnv) {
	swept, err := orchestrator.SweepFinishedSessions(e.ProjectRoot, sessionStateDir(e), e.Getenv, e.Now())
	if err != nil {
		e.Log.Warn().Err(err).Msg("finished sessions are not swept")
	}
	for _, name := range swept {
		e.Log.Debug().Str("session", name).Msg("swept the files of a session that ended long ago")
	}
}

// spawnSandbox sets how the child is confined: --sandbox when given, else
// workflow.yaml's sandbox (on by default), whose hosts the child may reach,
// and which variables beyond the allow-list it gets (env.pass, never notify's).
func spawnSandbox(c *cli.Context, e *runtimeEnv, r *child.Request) error {
	if err := checkSandboxFlag(c.String("sandbox")); err != nil {
		return err
	}
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return coded.Wrap(workflows.Code(err), err)
	}
	r.Unconfined = pol.Sandbox.Off
	if c.IsSet("sandbox") {
		r.Unconfined = c.String("sandbox") == orchestrator.SandboxOff
	}
	r.Network, r.ReadDeny = pol.Sandbox.Network, pol.Sandbox.ReadDeny
	r.Env = child.EnvPolicy{Pass: pol.Env.Pass, Deny: pol.Notify.Vars()}
	return nil
}

// sandboxUsage is the --sandbox flag's help, the same on run and session spawn.
const sandboxUsage = "on: each child runs inside its agent CLI's own sandbox (writes only its story's folder, .git and a private temp dir; no network but workflow.yaml's sandbox.network hosts); off: children unconfined, as the CLI's bypass switch runs them (default: workflow.yaml's sandbox, else on)"

// checkSandboxFlag refuses a --sandbox value other than on or off.
func checkSandboxFlag(v string) error {
	if v != orchestrator.SandboxOn && v != orchestrator.SandboxOff {
		return coded.Usage("--sandbox must be on or off, got %q", v)
	}
	return nil
}

// agentFailure is the coded error of an agent or sandbox check.
func agentFailure(err error) error {
	if ae, ok := child.AsAgentError(err); ok {
		return coded.Fail(ae.Code, "%s", ae.Message).WithAction("%s", ae.Action)
	}
	return coded.Wrap("spawn_failed", err)
}
