// Package shellword quotes words for a POSIX shell, for the few commands the
// tool hands to a shell on purpose (hook commands, scripted tool calls).
package shellword

import (
	"errors"
	"fmt"
	"strings"
)

// Quote returns s as one POSIX shell word that expands to exactly s: single
// quotes, each quote inside closed, escaped and reopened. (Control characters such as a newline pass
// through as they are: a written file's content can hold them.) A NUL byte cannot pass through a shell and is an error.
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

// ErrNotWords is a command Split does not take apart: one with operators,
// redirections, substitutions or an unclosed quote.
var ErrNotWords = errors.New("not a plain command of words")

// Split splits a simple command into the words a POSIX shell would pass to
// its program: quotes and backslashes removed, a "#" comment dropped, and
// every parameter ($NAME, ${NAME}) left as "$NAME" rather than expanded, so
// a path like "$CLAUDE_PROJECT_DIR"/x reads as written. It runs nothing. A
// command it cannot read as plain words (operators, redirections, command
// substitutions, other parameter expansions, an unclosed quote) is
// ErrNotWords.
func Split(cmd string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '#' && !inWord:
			return words, nil
		case c == '\\':
			inWord = true
			if i+1 < len(cmd) {
				i++
				if cmd[i] != '\n' { // backslash-newline joins lines
					w.WriteByte(cmd[i])
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("%w: unclosed single quote", ErrNotWords)
			}
			w.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			n, err := doubleQuoted(cmd[i+1:], &w)
			if err != nil {
				return nil, err
			}
			i += n // at the closing quote
		case c == '$':
			inWord = true
			n, err := parameter(cmd[i:], &w)
			if err != nil {
				return nil, err
			}
			i += n - 1
		case strings.IndexByte("|&;<>()`", c) >= 0:
			return nil, fmt.Errorf("%w: %q", ErrNotWords, c)
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	end()
	return words, nil
}

// doubleQuoted copies the inside of a double-quoted string (s starts after
// the opening quote) to w and returns how many bytes it used, the closing
// quote included.
func doubleQuoted(s string, w *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			// Inside double quotes a backslash escapes only these.
			if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
				continue
			}
			w.WriteByte(c)
		case '$':
			n, err := parameter(s[i:], w)
			if err != nil {
				return 0, err
			}
			i += n - 1
		case '`':
			return 0, fmt.Errorf("%w: command substitution", ErrNotWords)
		default:
			w.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("%w: unclosed double quote", ErrNotWords)
}

// parameter reads $NAME or ${NAME} at the start of s, writes "$NAME" to w
// and returns its length; a lone "$" is itself.
func parameter(s string, w *strings.Builder) (int, error) {
	if len(s) > 1 && s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 0 || !isName(s[2:end]) {
			return 0, fmt.Errorf("%w: parameter expansion %q", ErrNotWords, s)
		}
		w.WriteString("$" + s[2:end])
		return end + 1, nil
	}
	if len(s) > 1 && s[1] == '(' {
		return 0, fmt.Errorf("%w: command substitution", ErrNotWords)
	}
	n := 1
	for n < len(s) && isNameByte(s[n], n == 1) {
		n++
	}
	w.WriteString(s[:n])
	return n, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}
