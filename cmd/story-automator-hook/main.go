// The same start-up settings as story-automator's (see its main.go): the
// hook's CPU time is measured against the same floor.
//go:debug containermaxprocs=0

// Command story-automator-hook is story-automator's Stop hook in a program that links only what the hook's decision needs.
package main

import (
	"fmt"
	"os"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/stophook"
)

// version may be set with -ldflags -X main.version=…, as story-automator's.
var version string

const help = `story-automator-hook: the Claude Code / Codex Stop hook (Gemini CLI: AfterAgent),
exactly as ` + "`story-automator stop-hook`" + ` in a smaller program.

Usage: story-automator-hook [--project-root DIR] [--log-level LEVEL] [--log-file FILE]

Reads the hook's JSON on stdin and prints nothing (the stop proceeds) or one JSON
object ({"decision":"block","reason":…} or {"systemMessage":…}). Always exits 0.
Install it with: story-automator hooks install`

func main() {
	os.Exit(run(os.Args[1:], stophook.SystemProcess()))
}

func run(args []string, p stophook.Process) int {
	for _, a := range args {
		if a == "--version" {
			fmt.Fprintln(p.Out, "story-automator-hook", buildinfo.Version(version))
			return 0
		}
	}
	return stophook.Command(args, help, p)
}
