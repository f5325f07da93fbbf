// Package completion writes shell completion scripts for a urfave/cli command tree.
package completion

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Node is one command path with what may follow it.
type Node struct {
	path  string // "" for the top level, else "loop start"
	cmds  []*cli.Command
	flags []cli.Flag
}

// Tree lists every visible command path with the commands and flags that may follow it.
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
	// Deepest paths first, so a shell's first match is the most specific.
	sort.SliceStable(nodes, func(i, j int) bool {
		return strings.Count(nodes[i].path, " ") > strings.Count(nodes[j].path, " ")
	})
	return nodes
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

func flagWords(flags []cli.Flag) []string {
	var w []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) == 1 {
				w = append(w, "-"+n)
			} else {
				w = append(w, "--"+n)
			}
		}
	}
	return w
}

// WriteBash prints a bash completion script for the tree.
func WriteBash(w io.Writer, nodes []Node) {
	fmt.Fprint(w, `_story_automator() {
  local cur=${COMP_WORDS[COMP_CWORD]} path="" i words
  for ((i=1; i<COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in -*) ;; *) path="$path ${COMP_WORDS[i]}" ;; esac
  done
  path=${path# }
  case "$path" in
`)
	for _, n := range nodes {
		var words []string
		for _, c := range n.cmds {
			words = append(words, c.Name)
		}
		words = append(words, flagWords(n.flags)...)
		pat := `""`
		if n.path != "" {
			pat = fmt.Sprintf("%q|%q*", n.path, n.path+" ")
		}
		fmt.Fprintf(w, "    %s) words=%q ;;\n", pat, strings.Join(words, " "))
	}
	fmt.Fprint(w, `    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _story_automator story-automator
`)
}

// WriteFish prints a fish completion script for the tree.
func WriteFish(w io.Writer, nodes []Node) {
	fmt.Fprintln(w, "complete -c story-automator -f")
	for _, n := range nodes {
		cond := "__fish_use_subcommand"
		if n.path != "" {
			parts := strings.Fields(n.path)
			cond = "__fish_seen_subcommand_from " + parts[len(parts)-1]
		}
		for _, c := range n.cmds {
			fmt.Fprintf(w, "complete -c story-automator -n %q -a %s -d %q\n", cond, c.Name, c.Usage)
		}
		for _, f := range n.flags {
			long := f.Names()[0]
			usage := ""
			if d, ok := f.(cli.DocGenerationFlag); ok {
				usage = d.GetUsage()
			}
			if n.path == "" {
				fmt.Fprintf(w, "complete -c story-automator -l %s -d %q\n", long, usage)
				continue
			}
			fmt.Fprintf(w, "complete -c story-automator -n %q -l %s -d %q\n", cond, long, usage)
		}
	}
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
