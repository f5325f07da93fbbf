package completion

import (
	"fmt"
	"io"
	"strings"
)

// WriteFish prints a fish completion script for the tree. Each completion
// is offered at exactly one command path, found as the bash script finds
// it, so `status`, `hooks status` and `loop status` keep their own flags.
func WriteFish(w io.Writer, nodes []Node) {
	var known []string
	for _, p := range commandPaths(nodes) {
		known = append(known, fishQuote(p))
	}
	fmt.Fprintf(w, `complete -c story-automator -f
function __story_automator_path
    set -l cmdpath
    for word in (commandline -opc)[2..-1]
        string match -q -- '-*' $word; and continue
        if contains -- (string join ' ' $cmdpath $word) %s
            set cmdpath $cmdpath $word
        end
    end
    string join ' ' $cmdpath
end
function __story_automator_at
    set -l here (__story_automator_path)
    test "$here" = "$argv[1]"
end
`, strings.Join(known, " "))
	for _, n := range nodes {
		// Command names have no character special inside fish's double quotes.
		cond := `"__story_automator_at ` + fishQuote(n.path) + `"`
		for _, c := range n.cmds {
			fmt.Fprintf(w, "complete -c story-automator -n %s -a %s -d %s\n", cond, c.Name, fishQuote(c.Usage))
		}
		for _, f := range n.flags {
			var names []string
			for _, name := range f.Names() {
				if len(name) == 1 {
					names = append(names, "-s "+name)
				} else {
					names = append(names, "-l "+name)
				}
			}
			fmt.Fprintf(w, "complete -c story-automator -n %s %s -d %s\n", cond, strings.Join(names, " "), fishQuote(usage(f)))
		}
	}
}

// fishQuote single-quotes s for fish, where only \ and ' are special.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
