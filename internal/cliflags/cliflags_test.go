package cliflags

import (
	"maps"
	"testing"
)

// Values reads the flags before the first positional argument, skipping
// what it does not know, and never fails.
func TestValuesReadsLeadingFlagsLeniently(t *testing.T) {
	table := Table{"root": true, "quiet": false}
	got, first := table.Values([]string{"--quiet", "--bogus", "-root", "/p", "--root=/q", "cmd", "--root", "/late"})
	if want := map[string]string{"root": "/q"}; !maps.Equal(got, want) || first != "cmd" {
		t.Fatalf("Values = %v, %q", got, first)
	}
	if got, first := table.Values([]string{"--root"}); len(got) != 0 || first != "" {
		t.Fatalf("a value-less flag at the end: %v, %q", got, first)
	}
}
