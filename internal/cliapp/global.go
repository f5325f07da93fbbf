package cliapp

import "github.com/urfave/cli/v2"

// Global flag names (docs/reference.md, "Global flags"); story-automator-hook reads the same
// (stophook.GlobalFlags, kept equal by a test).
const (
	FlagProjectRoot = "project-root"
	FlagLogLevel    = "log-level"
	FlagLogFile     = "log-file"
	FlagTmuxSocket  = "tmux-socket"
)

// GlobalFlags are the flags every story-automator command takes; the
// programs beside it that run its commands parse them the same way.
func GlobalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: FlagProjectRoot, EnvVars: []string{"PROJECT_ROOT"}, Usage: "project directory (default: the current directory)"},
		&cli.StringFlag{Name: FlagLogLevel, Value: "warn", Usage: "log level: debug, info, warn, error"},
		&cli.StringFlag{Name: FlagLogFile, Usage: "write logs to this file instead of stderr"},
		&cli.StringFlag{Name: FlagTmuxSocket, EnvVars: []string{"STORY_AUTOMATOR_TMUX_SOCKET"}, Usage: "tmux socket name (-L); empty = the default server"},
	}
}
