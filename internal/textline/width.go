package textline

import (
	"strings"

	"github.com/rivo/uniseg"
)

// Width is the number of terminal columns s takes, counted per grapheme
// cluster as a terminal draws it: wide East Asian characters and emoji two
// (a skin-toned or joined emoji is one picture), combining marks, format
// characters and controls none, every other character one.
func Width(s string) int {
	return uniseg.StringWidth(s)
}

// PadRight fills s with spaces to width columns; a wider s stays as it is.
func PadRight(s string, width int) string {
	if w := Width(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// cutToWidth is the longest prefix of s, in whole grapheme clusters, that
// takes at most width columns.
func cutToWidth(s string, width int) string {
	used, end := 0, 0
	state := -1
	for rest := s; rest != ""; {
		var cluster string
		var w int
		cluster, rest, w, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if used+w > width {
			break
		}
		used += w
		end += len(cluster)
	}
	return s[:end]
}
