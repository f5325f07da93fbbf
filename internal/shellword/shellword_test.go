package shellword

import (
	"os/exec"
	"testing"
)

func TestQuoteRoundTripsThroughARealShell(t *testing.T) {
	for _, s := range []string{"", "plain", "/path with spaces/sa", `it's "quoted" $(x) ` + "`y` \\ ;&|*?~", "ünïcode\nnew line", "-n"} {
		q, err := Quote(s)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("sh", "-c", "printf '%s' "+q).Output()
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) = %s: shell gave %q (%v)", s, q, out, err)
		}
	}
	if _, err := Quote("nul\x00byte"); err == nil {
		t.Error("a NUL byte was quoted")
	}
}
