// Package textline shapes text for one line of terminal or table output.
package textline

import "strings"

// Cut shortens s to at most width terminal columns (wide CJK and emoji count
// two), ending a cut line with "…"; a width below 1 leaves s as it is.
func Cut(s string, width int) string {
	if width < 1 {
		return s
	}
	if Width(s) <= width {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := RuneWidth(r)
		if used+w > width-1 { // one column for the ellipsis
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + "…"
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
