package cliapp

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Reorder moves flags in front of positional arguments, because urfave/cli
// v2 stops parsing flags at the first positional argument. It knows each
// command's flags, so a flag's value is never mistaken for a positional
// argument, and a global flag written after the command moves to the front.
// Everything after "--" stays positional.
func Reorder(app *cli.App, args []string) []string {
	globals := flagTable(app.Flags)
	head, i := leading(globals, args)
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
	local := flagTable(leaf.Flags)
	var flags, positional []string
	for i < len(args) {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !isFlagToken(a) {
			positional = append(positional, a)
			i++
			continue
		}
		table, to := local, &flags
		if _, ok := local[flagName(a)]; !ok {
			if _, ok := globals[flagName(a)]; ok {
				table, to = globals, &head
			}
		}
		n := flagWidth(table, args, i)
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
	head, i := leading(flagTable(app.Flags), args)
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
	table := flagTable(globals)
	values = map[string]string{}
	head, i := leading(table, args)
	for j := 0; j < len(head); {
		n := flagWidth(table, head, j)
		if _, val, found := strings.Cut(head[j], "="); found {
			values[flagName(head[j])] = val
		} else if n == 2 {
			values[flagName(head[j])] = head[j+1]
		}
		j += n
	}
	if i < len(args) {
		first = args[i]
	}
	return values, first
}

// leading splits off the flags before the first positional argument: it
// returns them and the index of that argument.
func leading(table map[string]bool, args []string) ([]string, int) {
	i := 0
	for i < len(args) && isFlagToken(args[i]) {
		i += flagWidth(table, args, i)
	}
	return args[:i], i
}

// flagTable maps every flag name and alias to whether it takes a value.
func flagTable(flags []cli.Flag) map[string]bool {
	t := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			t[n] = !isBool
		}
	}
	return t
}

func isFlagToken(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

func flagName(a string) string {
	n := strings.TrimLeft(a, "-")
	if i := strings.IndexByte(n, '='); i >= 0 {
		n = n[:i]
	}
	return n
}

// flagWidth is how many tokens the flag at args[i] spans: 2 when it takes a
// value written as the next token, else 1.
func flagWidth(table map[string]bool, args []string, i int) int {
	takesValue, known := table[flagName(args[i])]
	if known && takesValue && !strings.Contains(args[i], "=") && i+1 < len(args) {
		return 2
	}
	return 1
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
