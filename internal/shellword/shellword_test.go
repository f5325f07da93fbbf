package shellword

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestQuoteRoundTripsThroughARealShell(t *testing.T) {
	for _, s := range []string{"", "plain", "/path with spaces/sa", `it's "quoted" $(x) ` + "`y` \\ ;&|*?~", "ünïcode\nnew line", "-n",
		"tab\tbell\a\x01'q'\n", "bad \xff utf-8", "if", "a=b", "~user", "#not a comment", "{a,b}"} {
		q, err := Quote(s)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("sh", "-c", "printf '%s' "+q).Output()
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) = %s: shell gave %q (%v)", s, q, out, err)
		}
	}
	// A word with nothing special to a shell stays as it is.
	if q := MustQuote("/usr/local/bin/story-automator"); q != "/usr/local/bin/story-automator" {
		t.Errorf("a plain path quoted as %s", q)
	}
	if _, err := Quote("nul\x00byte"); err == nil {
		t.Error("a NUL byte was quoted")
	}
}

// A real shell, with each variable set to its own "$NAME", must pass the
// same words to its program as Split finds.
func TestSplitAgreesWithARealShell(t *testing.T) {
	for _, cmd := range []string{
		`story-automator stop-hook`,
		`"/opt/sa/story-automator" stop-hook`,
		`'/x y/story-automator' --project-root /p stop-hook`,
		`bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/story-automator-stop-hook.sh`,
		`bash ${CLAUDE_PROJECT_DIR}/x $HOME`,
		"\"/dir with space \\$HOME \\`x\\` \\\"q\\\"/story-automator\" stop-hook",
		`a\ b c\\d "e\f" 'g\h' "" ''`,
		"one \\\ntwo\tthree  # a comment",
		`it"'s"'joined'parts`,
		`cost $ 5 "a$"`,
		`FOO=1 story-automator stop-hook`,
	} {
		got, err := Split(cmd)
		if err != nil {
			t.Errorf("Split(%q): %v", cmd, err)
			continue
		}
		sh := exec.Command("sh", "-c", "set -- "+cmd+"\nfor w in \"$@\"; do printf '%s\\0' \"$w\"; done")
		sh.Env = []string{"CLAUDE_PROJECT_DIR=$CLAUDE_PROJECT_DIR", "HOME=$HOME", "PATH=/usr/bin:/bin"}
		out, err := sh.Output()
		if err != nil {
			t.Fatalf("sh for %q: %v", cmd, err)
		}
		want := strings.Split(string(out), "\x00")
		want = want[:len(want)-1]
		if !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, the shell says %q", cmd, got, want)
		}
	}
}

func TestSplitRefusesWhatIsNotPlainWords(t *testing.T) {
	for _, cmd := range []string{
		`a; b`, `a && b`, `a | b`, `a > f`, `a < f`, `(a)`, "a `b`", `a $(b)`, `"a $(b)"`, "\"a `b`\"",
		`${X:-y}`, `${}`, `'open`, `"open`, `a&`,
	} {
		if words, err := Split(cmd); !errors.Is(err, ErrNotWords) {
			t.Errorf("Split(%q) = %q, %v; want ErrNotWords", cmd, words, err)
		}
	}
}
