package stophook

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/story-automator/story-automator/internal/cliflags"
)

// Process is what one hook process reads and writes.
type Process struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
	Getwd    func() (string, error)
	Now      func() time.Time
}

// SystemProcess is this process's standard streams, environment, working
// directory and clock.
func SystemProcess() Process {
	return Process{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Getwd: os.Getwd, Now: time.Now}
}

// Global flags of story-automator that the hook reads.
const (
	FlagProjectRoot = "project-root"
	FlagLogLevel    = "log-level"
	FlagLogFile     = "log-file"
)

// GlobalFlags are story-automator's global flags, by whether each takes a
// value, so the hook reads them as the main binary does without its CLI
// framework (cmd/story-automator checks the two agree).
var GlobalFlags = cliflags.Table{FlagProjectRoot: true, FlagLogLevel: true, FlagLogFile: true,
	"tmux-socket": true, "help": false, "h": false}

// Command runs one Stop-hook call from a command line (the global flags,
// then anything: `story-automator stop-hook …` and story-automator-hook
// both come here), printing help for --help or -h anywhere. Nothing — a
// bad flag, a missing working directory, an unwritable log file, a panic —
// makes it return non-zero (exit 2 would block the stop) or print anything
// but its decision: it always returns 0.
func Command(args []string, help string, p Process) (code int) {
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
	for _, a := range args {
		if a == "--help" || a == "-h" {
			fmt.Fprintln(p.Out, help)
			return 0
		}
	}
	opts, _ := GlobalFlags.Values(args)
	log := Logger(opts[FlagLogLevel], opts[FlagLogFile], p.Err)
	root, ok := ProjectRoot(opts[FlagProjectRoot], p.Getenv, p.Getwd)
	if !ok {
		log.Warn("stop hook: no project root; allowing the stop")
		return 0
	}
	sh := &Shell{In: p.In, Out: p.Out, Getenv: p.Getenv, Now: p.Now, ProjectRoot: root, Log: log}
	sh.Run(context.Background())
	return 0
}
