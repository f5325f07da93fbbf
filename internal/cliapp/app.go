// Package cliapp is the command-line plumbing every command shares, on top
// of urfave/cli: flags anywhere on the line, `help CMD`, flag errors as
// usage errors (exit 2), --json on every command, a bare command group
// listing its subcommands. Commands themselves only wire flags to a package.
package cliapp

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/lazyre"
)

// App describes the application New builds.
type App struct {
	Name, Version, Usage string
	Flags                []cli.Flag
	Commands             []*cli.Command
	Streams              *cliio.Streams
	// Before runs after the global flags are parsed, before any command.
	Before cli.BeforeFunc
}

const notFoundKey = "cliapp.notFound"

// New builds the application: every command prepared (see Prepare), help
// as a flag, and an unknown command left for Run to report.
func New(a App) *cli.App {
	for _, c := range a.Commands {
		Prepare(c)
	}
	return &cli.App{
		Name: a.Name, Version: a.Version, Usage: a.Usage,
		Flags: a.Flags, Commands: a.Commands, Before: a.Before,
		Reader: a.Streams.In, Writer: a.Streams.Out, ErrWriter: a.Streams.Err,
		HideHelpCommand: true,
		Metadata:        map[string]any{},
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return FlagUsageError(c.App.Flags, err)
		},
		CommandNotFound: func(c *cli.Context, name string) { c.App.Metadata[notFoundKey] = name },
	}
}

// Run parses args (without the program name) and runs the command they
// name; an unknown command is a usage error.
func Run(app *cli.App, args []string) error {
	full := append([]string{app.Name}, Reorder(app, HelpAsFlag(app, args))...)
	err := app.Run(full)
	if name, ok := app.Metadata[notFoundKey].(string); ok && err == nil {
		err = coded.Usage("unknown command %q (see %s --help)", name, app.Name)
	}
	return err
}

// jsonFlag is the --json every command accepts; cliio.HumanStreams reads it
// from the command line before parsing, so a command need not look at it.
// Each command gets a flag of its own: parsing writes to it, and commands
// of several apps may be parsed at once (tests run them in parallel).
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON on stdout even on a terminal (the default when stdout is not a terminal)"}
}

// Prepare makes flag errors usage errors (exit 2) on c and its subcommands,
// a bare command group print its subcommands, an unknown subcommand a usage
// error, and gives every leaf command --json. A leaf command whose usage
// names no arguments (ArgsUsage "") refuses any (NoArgs).
func Prepare(c *cli.Command) {
	c.HideHelpCommand = true
	if act := c.Action; act != nil && len(c.Subcommands) == 0 && c.ArgsUsage == "" && !c.SkipFlagParsing {
		c.Action = func(ctx *cli.Context) error {
			if err := NoArgs(ctx); err != nil {
				return err
			}
			return act(ctx)
		}
	}
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error { return FlagUsageError(c.Flags, err) }
	if len(c.Subcommands) > 0 && c.Action == nil {
		name := c.Name
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				return coded.Usage("unknown %s command %q", name, ctx.Args().First()).
					WithAction("see %s %s --help", ctx.App.Name, name)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	if len(c.Subcommands) == 0 && !hasFlag(c.Flags, "json") {
		c.Flags = append(c.Flags, jsonFlag())
	}
	for _, sc := range c.Subcommands {
		Prepare(sc)
	}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

var badValue = lazyre.New(`invalid value "([^"]*)" for flag -+([A-Za-z0-9-]+)`)

// FlagUsageError turns a flag parse error into a usage error; a bad
// duration or number names the flag and shows what one looks like.
func FlagUsageError(flags []cli.Flag, err error) *coded.Error {
	m := badValue().FindStringSubmatch(err.Error())
	if m == nil {
		return coded.Usage("%v", err)
	}
	for _, f := range flags {
		if !hasFlag([]cli.Flag{f}, m[2]) {
			continue
		}
		switch f.(type) {
		case *cli.DurationFlag:
			return coded.Usage("--%s %q is not a duration: write it like 90s, 5m or 1h30m", m[2], m[1])
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
			return coded.Usage("--%s %q is not a whole number", m[2], m[1])
		case *cli.Float64Flag:
			return coded.Usage("--%s %q is not a number (for example 0.6)", m[2], m[1])
		}
	}
	return coded.Usage("--%s %q: %s", m[2], m[1], strings.TrimSpace(err.Error()[len(m[0]):]))
}

// NoArgs refuses positional arguments to a command that takes none.
func NoArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return coded.Usage("%s takes no arguments, got %q", c.Command.FullName(), c.Args().First())
	}
	return nil
}

// RefuseBlank refuses a flag given with a blank value: a blank model, agent
// or command would reach the agent's argv as it is.
func RefuseBlank(c interface {
	IsSet(string) bool
	String(string) string
}, names ...string) error {
	for _, n := range names {
		if c.IsSet(n) && strings.TrimSpace(c.String(n)) == "" {
			return &coded.Error{Code: "invalid_flag", Message: fmt.Sprintf("--%s must not be blank", n), Exit: 2}
		}
	}
	return nil
}

func init() {
	// No -v alias: -v reads as "verbose" to many, and no other flag needs it.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (module version, VCS revision, Go version) and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintf(c.App.Writer, "%s %s\n", c.App.Name, c.App.Version) }
}
