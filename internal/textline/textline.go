// Package textline shapes text for one line of terminal or table output.
package textline

import "strings"

// Cut shortens s to at most width terminal columns (wide CJK and emoji count
// two; a cut never splits a grapheme cluster), ending a cut line with "…";
// a width below 1 leaves s as it is.
func Cut(s string, width int) string {
	if width < 1 || Width(s) <= width {
		return s
	}
	return cutToWidth(s, width-1) + "…" // one column for the ellipsis
}

// OneLine joins s's words with single spaces: newlines and runs of blanks go.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// OrDash is s, or "—" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// StripANSI removes terminal escape sequences (CSI, OSC and two-byte escapes).
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		i = skipEscape(s, i)
	}
	return b.String()
}

// skipEscape returns the index of the last byte of the escape at s[i].
func skipEscape(s string, i int) int {
	if i+1 >= len(s) {
		return i
	}
	switch s[i+1] {
	case '[':
		j := i + 2
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
		return j
	case ']', 'P', '_', '^':
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 1
			}
		}
		return len(s) - 1
	case '(', ')', '*', '+', '#', '%':
		// Character set and line attribute selections carry one more byte.
		if i+2 < len(s) {
			return i + 2
		}
		return len(s) - 1
	}
	return i + 1
}
