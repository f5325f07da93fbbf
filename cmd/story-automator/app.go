package main

import (
	"sort"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/confine"
)

// commandFactories are the commands, all in one list (help sorts them by
// name); each lives in its own file.
var commandFactories = []func() *cli.Command{
	agentSimCommand,
	completionCommand,
	dashboardCommand,
	deferredCommand,
	doctorCommand,
	hooksCommand,
	hostsCommand,
	loopCommand,
	markerCommand,
	modelSimCommand,
	monitorSessionCommand,
	notifyCommand,
	resolveCommand,
	runCommand,
	runsCommand,
	sampleCommand,
	sessionCommand,
	sessionRunnerCommand,
	skillCommand,
	statusCommand,
	stopCommand,
	stopHookCommand,
	verifyCommand,
}

// version may be set with -ldflags -X main.version=… for builds outside a
// module download; empty means: ask the build info (internal/buildinfo).
var version string

// Global flag names (docs/reference.md, "Global flags"); the hook reads the same (stophook.GlobalFlags).
const (
	flagProjectRoot = cliapp.FlagProjectRoot
	flagLogLevel    = cliapp.FlagLogLevel
	flagLogFile     = cliapp.FlagLogFile
	flagTmuxSocket  = cliapp.FlagTmuxSocket
)

// runtimeEnv is what every command gets: its streams, the resolved project root, a logger.
type runtimeEnv struct {
	*cliio.Streams
	// Args is the command line Run was given, without the program name.
	Args        []string
	ProjectRoot string
	TmuxSocket  string
	Log         zerolog.Logger
}

const (
	envKey  = "runtimeEnv"
	argsKey = "args"
)

// envOf returns the runtime environment prepared by the app's Before hook.
func envOf(c *cli.Context) *runtimeEnv {
	return c.App.Metadata[envKey].(*runtimeEnv)
}

func globalFlags() []cli.Flag { return cliapp.GlobalFlags() }

func newApp(s *cliio.Streams) *cli.App {
	cmds := make([]*cli.Command, 0, len(commandFactories))
	for _, f := range commandFactories {
		cmds = append(cmds, f())
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return cliapp.New(cliapp.App{
		Name:     "story-automator",
		Version:  buildinfo.Version(version),
		Usage:    "autonomous story-automation runs and prompt loops for AI coding agents, in tmux",
		Flags:    globalFlags(),
		Commands: cmds,
		Streams:  s,
		Before:   func(c *cli.Context) error { return prepareEnv(c, s) },
	})
}

func prepareEnv(c *cli.Context, s *cliio.Streams) error {
	root, err := cliapp.ProjectRoot(c.String(flagProjectRoot), s.Getwd)
	if err != nil {
		return err
	}
	log, err := cliapp.Logger(c.String(flagLogLevel), c.String(flagLogFile), s.Err)
	if err != nil {
		return err
	}
	args, _ := c.App.Metadata[argsKey].([]string)
	c.App.Metadata[envKey] = &runtimeEnv{Streams: s, Args: args, ProjectRoot: root, TmuxSocket: c.String(flagTmuxSocket), Log: log}
	return nil
}

// Run executes the CLI with args (without the program name) and returns the exit code.
func Run(args []string, s *cliio.Streams) int {
	// The sandbox's network proxy and bridge (internal/confine): argv from
	// the run itself, a command line after "--" read by no flag parser.
	if len(args) > 0 {
		switch args[0] {
		case confine.NetCommand:
			return confine.RunNet(args[1:], s.Err)
		case confine.BridgeCommand:
			return confine.RunBridge(args[1:], s.Err)
		}
	}
	if _, first := cliapp.LeadingFlags(globalFlags(), args); first == stopHookName {
		return runStopHook(args, s)
	}
	s = cliio.HumanStreams(s, args)
	app := newApp(s)
	app.Metadata[argsKey] = args
	return cliio.ExitCode(s, cliapp.Run(app, args))
}
