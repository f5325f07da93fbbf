// Package shellword reads and writes the words of a POSIX shell command,
// through mvdan.cc/sh's parser and quoter: the one place the tool quotes a
// word for a shell.
package shellword

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Quote returns s as one POSIX shell word that expands to exactly s: as it
// is when no character in it means anything to a shell, else quoted. A NUL
// byte cannot pass through a shell and is an error.
func Quote(s string) (string, error) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return "", fmt.Errorf("quote %q for a shell: it holds a NUL byte", s)
	}
	if s == "" {
		return "''", nil
	}
	// syntax.Quote refuses, for a POSIX shell, control characters and bytes
	// that are not UTF-8 (it would need $'…'); POSIX single quotes carry
	// them as they are (a written file's content holds newlines), so those
	// runs are single-quoted here and the rest is left to syntax.Quote.
	var b strings.Builder
	for s != "" {
		plain := strings.IndexFunc(s, unprintable)
		if plain < 0 {
			plain = len(s)
		}
		if plain > 0 {
			q, err := syntax.Quote(s[:plain], syntax.LangPOSIX)
			if err != nil {
				return "", fmt.Errorf("quote %q for a shell: %w", s, err)
			}
			b.WriteString(q)
		}
		rest := s[plain:]
		ctl := strings.IndexFunc(rest, func(r rune) bool { return !unprintable(r) })
		if ctl < 0 {
			ctl = len(rest)
		}
		if ctl > 0 {
			b.WriteString("'" + rest[:ctl] + "'")
		}
		s = rest[ctl:]
	}
	return b.String(), nil
}

// unprintable is a rune syntax.Quote will not put in a POSIX word.
func unprintable(r rune) bool {
	return r == utf8.RuneError || !unicode.IsPrint(r)
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
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotWords, err)
	}
	if len(f.Stmts) == 0 {
		return nil, nil
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if len(f.Stmts) > 1 || !ok || len(st.Redirs) > 0 || st.Background || st.Negated || st.Coprocess {
		return nil, fmt.Errorf("%w: %q", ErrNotWords, cmd)
	}
	var words []string
	for _, a := range call.Assigns {
		if a.Value == nil || a.Append || a.Naked || a.Index != nil || a.Array != nil {
			return nil, fmt.Errorf("%w: assignment in %q", ErrNotWords, cmd)
		}
		v, err := wordText(cmd, a.Value)
		if err != nil {
			return nil, err
		}
		words = append(words, a.Name.Value+"="+v)
	}
	for _, w := range call.Args {
		v, err := wordText(cmd, w)
		if err != nil {
			return nil, err
		}
		words = append(words, v)
	}
	return words, nil
}

// wordText is a parsed word after quote removal, parameters as "$NAME".
func wordText(src string, w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		if err := partText(src, part, false, &b); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func partText(src string, part syntax.WordPart, quoted bool, b *strings.Builder) error {
	switch p := part.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		if p.Dollar {
			return fmt.Errorf("%w: $'…' quoting", ErrNotWords)
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		if p.Dollar {
			return fmt.Errorf("%w: $\"…\" quoting", ErrNotWords)
		}
		for _, inner := range p.Parts {
			if err := partText(src, inner, true, b); err != nil {
				return err
			}
		}
	case *syntax.ParamExp:
		name, ok := plainParameter(src, p)
		if !ok {
			return fmt.Errorf("%w: parameter expansion %q", ErrNotWords, src[p.Pos().Offset():p.End().Offset()])
		}
		b.WriteString("$" + name)
	default:
		return fmt.Errorf("%w: %s", ErrNotWords, src[part.Pos().Offset():part.End().Offset()])
	}
	return nil
}

// plainParameter is the name of $NAME, $1, $@ or ${NAME}: a parameter read
// as it is, with no operator applied.
func plainParameter(src string, p *syntax.ParamExp) (string, bool) {
	if p.Param == nil {
		return "", false
	}
	text := src[p.Pos().Offset():p.End().Offset()]
	name := p.Param.Value
	return name, text == "$"+name || text == "${"+name+"}" && syntax.ValidName(name)
}

// unescape removes the backslashes a shell removes: before any character
// outside quotes, and inside double quotes only before $ ` " and \. (The
// parser has already joined backslash-newline continuations.)
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
