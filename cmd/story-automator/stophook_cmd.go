package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/stophook"
)

func init() { register(stopHookCommand) }

const stopHookName = "stop-hook"

const stopHookHelp = `story-automator stop-hook: the Claude Code / Codex Stop hook (Gemini CLI: AfterAgent).

Reads the hook's JSON on stdin and prints nothing (the stop proceeds) or one JSON
object ({"decision":"block","reason":…} or {"systemMessage":…}). Always exits 0.
Install it with: story-automator hooks install`

// stopHookCommand only documents the hook in --help: Run sends every
// stop-hook call to runStopHook before the CLI framework sees it.
func stopHookCommand() *cli.Command {
	return &cli.Command{
		Name:            stopHookName,
		Usage:           "Claude Code / Codex Stop hook, Gemini CLI AfterAgent hook: reads the hook JSON on stdin, prints a decision or nothing, always exits 0",
		SkipFlagParsing: true,
		Action:          func(*cli.Context) error { return nil },
	}
}

// runStopHook runs the Stop hook outside the CLI framework, so that nothing —
// a bad flag, a missing working directory, an unwritable log file, a panic —
// can make it exit non-zero (exit 2 would block the stop) or print anything
// but its decision. It always returns 0.
func runStopHook(args []string, opts map[string]string, s *cliio.Streams) (code int) {
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
	for _, a := range args {
		if a == "--help" || a == "-h" {
			fmt.Fprintln(s.Out, stopHookHelp)
			return 0
		}
	}
	log := stophook.Logger(opts[flagLogLevel], opts[flagLogFile], s.Err)
	root, ok := stophook.ProjectRoot(opts[flagProjectRoot], s.Getenv, s.Getwd)
	if !ok {
		log.Warn().Msg("stop hook: no project root; allowing the stop")
		return 0
	}
	sh := &stophook.Shell{In: s.In, Out: s.Out, Getenv: s.Getenv, Now: s.Now, ProjectRoot: root, Log: log}
	sh.Run(context.Background())
	return 0
}
