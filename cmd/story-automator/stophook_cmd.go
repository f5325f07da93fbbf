package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
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
	log := hookLogger(opts, s.Err)
	root, ok := hookProjectRoot(opts[flagProjectRoot], s)
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

func hookLogger(opts map[string]string, stderr io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(strings.ToLower(opts[flagLogLevel]))
	if err != nil || opts[flagLogLevel] == "" {
		level = zerolog.WarnLevel
	}
	w := stderr
	if lf := opts[flagLogFile]; lf != "" {
		if f, err := os.OpenFile(lf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			w = f
		}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// hookProjectRoot is the project the hook guards: --project-root, else
// $PROJECT_ROOT, else $CLAUDE_PROJECT_DIR, else the nearest directory at or
// above the working directory that holds a marker (an agent may have cd'd
// into a subdirectory), stopping at the repository root.
func hookProjectRoot(flag string, s *cliio.Streams) (string, bool) {
	for _, dir := range []string{flag, s.Getenv("PROJECT_ROOT"), s.Getenv("CLAUDE_PROJECT_DIR")} {
		if dir != "" {
			abs, err := filepath.Abs(dir)
			return abs, err == nil
		}
	}
	wd, err := s.Getwd()
	if err != nil {
		return "", false
	}
	if filepath.IsAbs(s.Getenv(marker.EnvMarkerPath)) {
		return wd, true
	}
	for dir := wd; ; {
		if _, err := os.Lstat(marker.ResolvePath(dir, s.Getenv)); err == nil {
			return dir, true
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return wd, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd, true
		}
		dir = parent
	}
}
