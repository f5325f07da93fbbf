package hooks

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints hooks status for people: one row per settings file.
func WriteTable(w io.Writer, command string, reports []Status) {
	fmt.Fprintf(w, "The hook this binary installs: %s\n\n", command)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tSCOPE\tINSTALLED\tFILE\tNOTE")
	for _, st := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Provider, st.Scope, yesNo(st.Installed), st.Path, hookNote(st))
	}
	tw.Flush()
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
	}
}

// hookNote is what a person should know about one settings file's hook.
func hookNote(st Status) string {
	var notes []string
	switch {
	case st.Error != "":
		notes = append(notes, st.Error+": "+st.Message)
	case !st.Installed:
		return ""
	}
	if st.Installed && !st.BinaryExists {
		notes = append(notes, "its binary is missing")
	}
	if st.Stale {
		notes = append(notes, "differs from what install writes now")
	}
	if st.Duplicated {
		notes = append(notes, "installed more than once")
	}
	if st.Off != "" {
		notes = append(notes, st.Off)
	}
	if cs := st.Codex; cs != nil {
		switch {
		case !cs.HooksEnabled:
			notes = append(notes, "hooks are off in "+cs.ConfigFile)
		case cs.Trusted == nil:
			notes = append(notes, "trust unknown ("+cs.Error+")")
		case *cs.Trusted:
			notes = append(notes, "trusted by "+productOf(st.Provider))
		default:
			notes = append(notes, "not trusted by "+productOf(st.Provider)+": "+cs.Action)
		}
	}
	return strings.Join(notes, "; ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
