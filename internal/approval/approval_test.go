package approval

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAnApprovedCommandIsApprovedAndNothingElse(t *testing.T) {
	st := Store{Dir: filepath.Join(t.TempDir(), "approved")}
	const cmd = "./predict.sh --model small"
	if st.Approved(cmd) {
		t.Fatal("approved before Approve")
	}
	if err := st.Approve(cmd); err != nil {
		t.Fatal(err)
	}
	if !st.Approved(cmd) {
		t.Fatal("not approved after Approve")
	}
	for _, other := range []string{"./predict.sh --model small ", "./predict.sh", "./predict.sh --model large", ""} {
		if st.Approved(other) {
			t.Errorf("%q counts as approved", other)
		}
	}
	fi, err := os.Stat(st.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder %v %v: want it private", fi, err)
	}
}

// The file's name is only an index: a file there whose content is not the
// command (as if another command had the same hash) approves nothing.
func TestTheFileMustHoldTheCommandItself(t *testing.T) {
	st := Store{Dir: t.TempDir()}
	const cmd = "notify-me"
	if err := os.WriteFile(st.Path(cmd), []byte("something else"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st.Approved(cmd) {
		t.Fatal("a file with other content approved the command")
	}
}

func TestDirIsUnderTheUserStateFolder(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"XDG_STATE_HOME":          {map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/story-automator/approved"},
		"HOME":                    {map[string]string{"HOME": "/h"}, "/h/.local/state/story-automator/approved"},
		"relative XDG is ignored": {map[string]string{"XDG_STATE_HOME": "s", "HOME": "/h"}, "/h/.local/state/story-automator/approved"},
	} {
		got, err := Dir(env(c.env))
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", name, got, err, c.want)
		}
	}
	st, err := Open(env(nil))
	if err == nil {
		t.Fatalf("no HOME: %q, want an error", st.Dir)
	}
	if st.Approved("x") || st.Approve("x") == nil {
		t.Fatal("a store with no folder approves")
	}
}
