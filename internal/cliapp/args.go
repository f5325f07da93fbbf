package cliapp

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliflags"
)

// Reorder moves flags in front of positional arguments, because urfave/cli
// v2 stops parsing flags at the first positional argument. It knows each
// command's flags, so a flag's value is never mistaken for a positional
// argument, and a global flag written after the command moves to the front.
// Everything after "--" stays positional.
func Reorder(app *cli.App, args []string) []string {
	globals := FlagTable(app.Flags)
	head, i := globals.Leading(args)
	head = append([]string(nil), head...)
	cmds := app.Commands
	var path []string
	var leaf *cli.Command
	for i < len(args) {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		path = append(path, args[i])
		leaf = c
		cmds = c.Subcommands
		i++
	}
	if leaf == nil {
		return args
	}
	local := FlagTable(leaf.Flags)
	var flags, positional []string
	for i < len(args) {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !cliflags.IsFlag(a) {
			positional = append(positional, a)
			i++
			continue
		}
		table, to := local, &flags
		if _, ok := local[cliflags.Name(a)]; !ok {
			if _, ok := globals[cliflags.Name(a)]; ok {
				table, to = globals, &head
			}
		}
		n := table.Width(args, i)
		*to = append(*to, args[i:i+n]...)
		i += n
	}
	out := append(head, path...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// HelpAsFlag turns `help [command…]` into `[command…] --help`, so help is
// help (exit 0) and not an unknown command.
func HelpAsFlag(app *cli.App, args []string) []string {
	head, i := FlagTable(app.Flags).Leading(args)
	if i >= len(args) || args[i] != "help" {
		return args
	}
	out := append(append([]string{}, head...), args[i+1:]...)
	return append(out, "--help")
}

// LeadingFlags reads, leniently, the flags of globals written before the
// first positional argument: their values by name (an unknown or malformed
// flag is skipped, never an error), and that first positional argument ("" when none).
func LeadingFlags(globals []cli.Flag, args []string) (values map[string]string, first string) {
	return FlagTable(globals).Values(args)
}

// FlagTable maps every flag name and alias of flags to whether it takes a
// value (help and h included).
func FlagTable(flags []cli.Flag) cliflags.Table {
	t := cliflags.Table{"help": false, "h": false}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			t[n] = !isBool
		}
	}
	return t
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
