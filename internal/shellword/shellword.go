// Package shellword quotes words for a POSIX shell, for the few commands the
// tool hands to a shell on purpose (hook commands, scripted tool calls).
package shellword

import (
	"fmt"
	"strings"
)

// Quote returns s as one POSIX shell word that expands to exactly s: single
// quotes, each quote inside closed, escaped and reopened. (mvdan.cc/sh's syntax.Quote refuses control
// characters such as a newline in POSIX mode, and a written file's content
// can hold them.) A NUL byte cannot pass through a shell and is an error.
func Quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", fmt.Errorf("quote %q for a shell: it holds a NUL byte", s)
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// MustQuote is Quote for strings known to hold no NUL byte (paths from the OS).
func MustQuote(s string) string {
	q, err := Quote(s)
	if err != nil {
		panic(err)
	}
	return q
}
