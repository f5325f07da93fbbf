package main

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/urfave/cli/v2"
)

// reorderArgs moves flags in front of positional arguments, because urfave/cli
// v2 stops parsing flags at the first positional argument. It knows each
// command's flags, so a flag's value is never mistaken for a positional
// argument, and a global flag written after the command moves to the front.
// Everything after "--" stays positional.
func reorderArgs(app *cli.App, args []string) []string {
	globals := flagTable(app.Flags)
	var head []string
	i := 0
	for i < len(args) && isFlagToken(args[i]) {
		n := flagWidth(globals, args, i)
		head = append(head, args[i:i+n]...)
		i += n
	}
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
		name := flagName(a)
		if _, ok := local[name]; !ok {
			if _, ok := globals[name]; ok {
				n := flagWidth(globals, args, i)
				head = append(head, args[i:i+n]...)
				i += n
				continue
			}
		}
		n := flagWidth(local, args, i)
		flags = append(flags, args[i:i+n]...)
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

// refuseBlank refuses a flag given with a blank value: a blank model, agent
// or command would reach the agent's argv as it is.
func refuseBlank(c interface {
	IsSet(string) bool
	String(string) string
}, names ...string) error {
	for _, n := range names {
		if c.IsSet(n) && strings.TrimSpace(c.String(n)) == "" {
			return &cliio.Failure{Code: "invalid_flag", Message: fmt.Sprintf("--%s must not be blank", n), Exit: 2}
		}
	}
	return nil
}
