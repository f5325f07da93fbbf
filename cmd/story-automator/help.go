package main

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/lazyre"

	"github.com/urfave/cli/v2"
)

// jsonFlag is the --json every command accepts; cliio.HumanStreams reads it from the
// command line before parsing, so a command need not look at it.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON on stdout even on a terminal (the default when stdout is not a terminal)"}

// prepareCommand makes flag errors usage errors (exit 2) on every command, a
// bare command group print its subcommands, an unknown subcommand a usage
// error, and gives every leaf command --json.
func prepareCommand(c *cli.Command) {
	c.HideHelpCommand = true
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error { return flagUsageError(c.Flags, err) }
	if len(c.Subcommands) > 0 && c.Action == nil {
		name := c.Name
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				return cliio.UsageError("unknown %s command %q", name, ctx.Args().First()).
					WithAction("see story-automator %s --help", name)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	if len(c.Subcommands) == 0 && !hasFlag(c.Flags, "json") {
		c.Flags = append(c.Flags, jsonFlag)
	}
	for _, sc := range c.Subcommands {
		prepareCommand(sc)
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

// flagUsageError turns a flag parse error into a usage error; a bad duration
// names the flag and shows what a duration looks like.
func flagUsageError(flags []cli.Flag, err error) *cliio.Failure {
	m := badValue().FindStringSubmatch(err.Error())
	if m == nil {
		return cliio.UsageError("%v", err)
	}
	for _, f := range flags {
		if !hasFlag([]cli.Flag{f}, m[2]) {
			continue
		}
		switch f.(type) {
		case *cli.DurationFlag:
			return cliio.UsageError("--%s %q is not a duration: write it like 90s, 5m or 1h30m", m[2], m[1])
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
			return cliio.UsageError("--%s %q is not a whole number", m[2], m[1])
		case *cli.Float64Flag:
			return cliio.UsageError("--%s %q is not a number (for example 0.6)", m[2], m[1])
		}
	}
	return cliio.UsageError("--%s %q: %s", m[2], m[1], strings.TrimSpace(err.Error()[len(m[0]):]))
}

// version may be set with -ldflags -X main.version=… for builds outside a
// module download; empty means: ask the build info (internal/buildinfo).
var version string

func init() {
	// No -v alias: -v reads as "verbose" to many, and no other flag needs it.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (module version, VCS revision, Go version) and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintf(c.App.Writer, "story-automator %s\n", c.App.Version) }
}

// helpAsFlag turns `help [command…]` into `[command…] --help`, so help is
// help (exit 0) and not an unknown command.
func helpAsFlag(app *cli.App, args []string) []string {
	globals := flagTable(app.Flags)
	i := 0
	for i < len(args) && isFlagToken(args[i]) {
		i += flagWidth(globals, args, i)
	}
	if i >= len(args) || args[i] != "help" {
		return args
	}
	out := append(append([]string{}, args[:i]...), args[i+1:]...)
	return append(out, "--help")
}
