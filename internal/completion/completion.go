// Package completion writes shell completion scripts for a urfave/cli command tree.
package completion

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Node is one command path with what may follow it.
type Node struct {
	path  string // "" for the top level, else "loop start"
	cmds  []*cli.Command
	flags []cli.Flag
}

// Tree lists every visible command path, parents before their subcommands,
// with the commands and flags that may follow it.
func Tree(app *cli.App) []Node {
	nodes := []Node{{path: "", cmds: visible(app.Commands), flags: app.VisibleFlags()}}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range visible(cmds) {
			p := strings.TrimSpace(prefix + " " + c.Name)
			nodes = append(nodes, Node{path: p, cmds: visible(c.Subcommands), flags: c.VisibleFlags()})
			walk(p, c.Subcommands)
		}
	}
	walk("", app.Commands)
	return nodes
}

// commandPaths are the paths of every command below the top level: the
// words a script descends through to find where the cursor is.
func commandPaths(nodes []Node) []string {
	var paths []string
	for _, n := range nodes {
		if n.path != "" {
			paths = append(paths, n.path)
		}
	}
	return paths
}

func visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}

// flagWord is a flag name as typed: -h, --json.
func flagWord(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func usage(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

// ErrUnknownShell is returned by Write for a shell it has no script for.
var ErrUnknownShell = errors.New("unknown shell")

// Write prints the completion script of shell (bash, zsh or fish) for app.
// Zsh runs the bash script through bashcompinit.
func Write(w io.Writer, shell string, app *cli.App) error {
	tree := Tree(app)
	switch shell {
	case "bash":
		WriteBash(w, tree)
	case "zsh":
		fmt.Fprintln(w, "#compdef story-automator\nautoload -U +X bashcompinit && bashcompinit")
		WriteBash(w, tree)
	case "fish":
		WriteFish(w, tree)
	default:
		return fmt.Errorf("%w %q", ErrUnknownShell, shell)
	}
	return nil
}
