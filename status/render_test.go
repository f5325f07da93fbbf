package status

import (
	"strings"
	"testing"
)

func TestStatusWatchRedrawsInPlace(t *testing.T) {
	got := RedrawFrame("a\nb\n")
	if got != "\x1b[Ha\x1b[K\nb\x1b[K\n\x1b[J" || strings.Contains(got, "\x1b[2J") {
		t.Fatalf("%q", got)
	}
}
