package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
)

func init() { register(stopHookCommand) }

func stopHookCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop-hook",
		Usage: "Claude Code / Codex Stop hook: reads the hook JSON on stdin, prints a decision or nothing, always exits 0",
		// The hook must never fail on arguments it does not know.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			e := envOf(c)
			sh := &stophook.Shell{
				In: e.In, Out: e.Out, Getenv: e.Getenv, Now: e.Now,
				ProjectRoot: hookProjectRoot(c), Log: e.Log,
			}
			sh.Run(context.Background())
			return nil
		},
	}
}

// hookProjectRoot is the project the hook guards: --project-root / PROJECT_ROOT
// when given, else $CLAUDE_PROJECT_DIR, else the nearest directory at or above
// the working directory that holds a marker (an agent may have cd'd into a
// subdirectory), stopping at the repository root.
func hookProjectRoot(c *cli.Context) string {
	e := envOf(c)
	if c.IsSet(flagProjectRoot) || e.Getenv("PROJECT_ROOT") != "" {
		return e.ProjectRoot
	}
	if d := e.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	if filepath.IsAbs(e.Getenv(marker.EnvMarkerPath)) {
		return e.ProjectRoot
	}
	for dir := e.ProjectRoot; ; {
		if _, err := os.Lstat(marker.ResolvePath(dir, e.Getenv)); err == nil {
			return dir
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return e.ProjectRoot
}
