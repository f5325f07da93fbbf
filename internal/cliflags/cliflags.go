// Package cliflags reads command-line flags by a table of their names, leniently and without a CLI framework.
package cliflags

import "strings"

// Table maps every flag name and alias to whether it takes a value.
type Table map[string]bool

// Leading splits off the flags before the first positional argument: it
// returns them and the index of that argument.
func (t Table) Leading(args []string) ([]string, int) {
	i := 0
	for i < len(args) && IsFlag(args[i]) {
		i += t.Width(args, i)
	}
	return args[:i], i
}

// Values reads the flags written before the first positional argument:
// their values by name (an unknown or malformed flag is skipped, never an
// error), and that first positional argument ("" when none).
func (t Table) Values(args []string) (values map[string]string, first string) {
	values = map[string]string{}
	head, i := t.Leading(args)
	for j := 0; j < len(head); {
		n := t.Width(head, j)
		if _, val, found := strings.Cut(head[j], "="); found {
			values[Name(head[j])] = val
		} else if n == 2 {
			values[Name(head[j])] = head[j+1]
		}
		j += n
	}
	if i < len(args) {
		first = args[i]
	}
	return values, first
}

// Width is how many tokens the flag at args[i] spans: 2 when it takes a
// value written as the next token, else 1.
func (t Table) Width(args []string, i int) int {
	takesValue, known := t[Name(args[i])]
	if known && takesValue && !strings.Contains(args[i], "=") && i+1 < len(args) {
		return 2
	}
	return 1
}

// IsFlag reports whether a is a flag token ("-x", "--name", "--name=v"; not "-" or "--").
func IsFlag(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

// Name is a flag token's name, without dashes or "=value".
func Name(a string) string {
	n := strings.TrimLeft(a, "-")
	if i := strings.IndexByte(n, '='); i >= 0 {
		n = n[:i]
	}
	return n
}
