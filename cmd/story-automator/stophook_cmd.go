package main

import (
	"context"
	"fmt"
	"strings"

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

// isStopHookCall reports whether args (after leading global flags) name the stop-hook command.
func isStopHookCall(args []string) bool {
	globals := flagTable(globalFlags())
	for i := 0; i < len(args); {
		if !isFlagToken(args[i]) {
			return args[i] == stopHookName
		}
		i += flagWidth(globals, args, i)
	}
	return false
}

// runStopHook runs the Stop hook outside the CLI framework, so that nothing —
// a bad flag, a missing working directory, an unwritable log file, a panic —
// can make it exit non-zero (exit 2 would block the stop) or print anything
// but its decision. It always returns 0.
func runStopHook(args []string, s *cliio.Streams) (code int) {
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
	opts := hookOptions(args)
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

// hookOptions reads the global flags given before stop-hook, leniently: an
// unknown or malformed flag is ignored rather than an error.
func hookOptions(args []string) map[string]string {
	opts := map[string]string{}
	globals := flagTable(globalFlags())
	for i := 0; i < len(args) && isFlagToken(args[i]); {
		name := flagName(args[i])
		n := flagWidth(globals, args, i)
		if _, val, found := strings.Cut(args[i], "="); found {
			opts[name] = val
		} else if n == 2 {
			opts[name] = args[i+1]
		}
		i += n
	}
	return opts
}
