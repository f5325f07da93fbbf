package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/spend"
)

func agentSimCommand() *cli.Command {
	return &cli.Command{
		Name:      "agent-sim",
		Usage:     "the simulated agent: acts out a behaviour (" + strings.Join(agentsim.Names(), ", ") + ")",
		ArgsUsage: "[PROMPT]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "behaviour", Usage: "what to act out (env " + agentsim.EnvBehaviour + ")"},
			&cli.IntFlag{Name: "exit-code", Usage: "exit code for fail (env " + agentsim.EnvExitCode + ")"},
			&cli.DurationFlag{Name: "delay", Usage: "how long the work takes (env " + agentsim.EnvDelay + ")"},
			&cli.StringFlag{Name: "artifact", Usage: "file the work creates (env " + agentsim.EnvArtifact + ")"},
			&cli.StringFlag{Name: "signal", Usage: "signal to die by (env " + agentsim.EnvSignal + ")"},
			&cli.StringFlag{Name: "prompt-file", Usage: "record the received prompt here (env " + agentsim.EnvPromptFile + ")"},
			&cli.StringFlag{Name: "input-file", Usage: "record typed lines here (env " + agentsim.EnvInputFile + ")"},
			&cli.StringFlag{Name: "model", Usage: "the model its usage names (default " + spend.SimModel + ")"},
			&cli.StringFlag{Name: "usage", Usage: "tokens each turn reports: input=N,output=N,cacheRead=N,cacheWrite=N (env " + agentsim.EnvUsage + "; default input=1000,output=200,cacheRead=3000,cacheWrite=100)"},
			&cli.StringFlag{Name: "transcript", Usage: "append each turn's usage here, in Claude Code's transcript format"},
			&cli.BoolFlag{Name: "session-agent", Usage: "this is its child session's agent: write its transcript beside the session's state and name it there, as Claude Code's Stop hook does"},
			&cli.IntFlag{Name: "crash-kills", Usage: "bmad: a crash fault also kills this process (the agent CLI whose shell tool runs agent-sim)"},
		},
		Action: agentSimAction,
	}
}

func agentSimAction(c *cli.Context) error {
	e := envOf(c)
	if c.NArg() > 1 {
		return coded.Usage("agent-sim takes one PROMPT argument, got %d", c.NArg())
	}
	opts, err := agentsim.OptionsFromEnv(e.Getenv)
	if err != nil {
		return coded.Usage("%v", err)
	}
	if c.IsSet("exit-code") {
		opts.ExitCode = c.Int("exit-code")
	}
	opts.CrashKills = c.Int("crash-kills")
	opts.SessionAgent, opts.Transcript = c.Bool("session-agent"), c.String("transcript")
	if c.IsSet("usage") {
		u, err := agentsim.ParseUsage(c.String("usage"))
		if err != nil {
			return coded.Usage("--usage: %v", err)
		}
		opts.Usage = &u
	}
	if c.IsSet("delay") {
		opts.Delay = c.Duration("delay")
	}
	for flag, dst := range map[string]*string{"behaviour": &opts.Behaviour, "artifact": &opts.Artifact, "signal": &opts.Signal,
		"prompt-file": &opts.PromptFile, "input-file": &opts.InputFile} {
		if c.IsSet(flag) {
			*dst = c.String(flag)
		}
	}
	exe, _ := e.Exe()
	sim := &agentsim.Sim{Prompt: c.Args().First(), Model: c.String("model"), Options: opts,
		In: e.In, Out: e.Out, Getenv: e.Getenv, Exe: exe, Now: e.Now}
	if code := agentsim.Run(context.Background(), sim); code != 0 {
		return cliio.ExitStatus(code)
	}
	return nil
}
