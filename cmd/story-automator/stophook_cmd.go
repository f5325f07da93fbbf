package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/stophook"
)

const stopHookName = "stop-hook"

const stopHookHelp = `story-automator stop-hook: the Claude Code / Codex Stop hook (Gemini CLI: AfterAgent).

Reads the hook's JSON on stdin and prints nothing (the stop proceeds) or one JSON
object ({"decision":"block","reason":…} or {"systemMessage":…}). Always exits 0.
story-automator-hook, installed beside this binary, is the same hook in a smaller
program. Install it with: story-automator hooks install`

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

// runStopHook runs the Stop hook outside the CLI framework, as
// story-automator-hook does (stophook.Command): it always returns 0.
func runStopHook(args []string, s *cliio.Streams) int {
	return stophook.Command(args, stopHookHelp, stophook.Process{
		In: s.In, Out: s.Out, Err: s.Err, Getenv: s.Getenv, Getwd: s.Getwd, Now: s.Now})
}
