package stophook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/marker"
)

// The hook finds its project: the flag first, then the environment, then the
// nearest directory above the working directory that holds a marker, but
// never above the repository root.
func TestProjectRootWalksUpToTheMarkerButNotPastTheRepository(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	top := t.TempDir()
	sub := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wd := func() (string, error) { return sub, nil }
	if got, ok := ProjectRoot("", getenv, wd); !ok || got != sub {
		t.Fatalf("no marker: %q %v", got, ok)
	}
	mp := marker.ResolvePath(top, getenv)
	if err := os.MkdirAll(filepath.Dir(mp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mp, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := ProjectRoot("", getenv, wd); !ok || got != top {
		t.Fatalf("marker above: %q %v", got, ok)
	}
	if err := os.Mkdir(filepath.Join(top, "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := ProjectRoot("", getenv, wd); got != sub {
		t.Fatalf("walked past the repository root: %q", got)
	}
	env["CLAUDE_PROJECT_DIR"] = top
	if got, _ := ProjectRoot("", getenv, wd); got != top {
		t.Fatalf("CLAUDE_PROJECT_DIR: %q", got)
	}
	if got, _ := ProjectRoot(sub, getenv, wd); got != sub {
		t.Fatalf("flag: %q", got)
	}
}
