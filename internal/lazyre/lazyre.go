// Package lazyre compiles package-level regular expressions on first use, so a
// process that never needs them (the Stop hook runs on every stop of every
// session) does not pay for compiling them at start-up.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr once, on its first call, and
// panics like regexp.MustCompile if expr is invalid.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
