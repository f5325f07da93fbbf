package completion

import (
	"fmt"
	"io"
	"strings"
)

// WriteBash prints a bash completion script for the tree. The script finds
// the command path by descending only through known commands, so flags,
// their values and arguments before the cursor do not change it, and
// `hooks status` is not `status`. It runs under zsh's bashcompinit too
// (hence cmdpath: zsh ties `path` to PATH).
func WriteBash(w io.Writer, nodes []Node) {
	fmt.Fprint(w, `_story_automator() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmdpath="" next="" i words=""
  for ((i=1; i<COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in -*) continue ;; esac
    next=${cmdpath:+$cmdpath }${COMP_WORDS[i]}
    case $next in
`)
	var known []string
	for _, p := range commandPaths(nodes) {
		known = append(known, fmt.Sprintf("%q", p))
	}
	if len(known) > 0 {
		fmt.Fprintf(w, "      %s) cmdpath=$next ;;\n", strings.Join(known, "|"))
	}
	fmt.Fprint(w, `    esac
  done
  case $cmdpath in
`)
	for _, n := range nodes {
		var words []string
		for _, c := range n.cmds {
			words = append(words, c.Name)
		}
		for _, f := range n.flags {
			for _, name := range f.Names() {
				words = append(words, flagWord(name))
			}
		}
		fmt.Fprintf(w, "    %q) words=%q ;;\n", n.path, strings.Join(words, " "))
	}
	fmt.Fprint(w, `  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _story_automator story-automator
`)
}
