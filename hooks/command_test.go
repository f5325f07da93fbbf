package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/stophook"
)

func TestNewHookQuotesTheResolvedAbsolutePath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "dir with space $HOME `x` \"q\"", "story-automator")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h, err := NewHook(link)
	if err != nil {
		t.Fatal(err)
	}
	want := "'" + dir + "/dir with space $HOME `x` \"q\"/story-automator' stop-hook"
	if h.Command != want {
		t.Fatalf("command\n got %s\nwant %s", h.Command, want)
	}
	if h.Timeout != agent.HookTimeout {
		t.Fatalf("timeout %d", h.Timeout)
	}
	if got := splitWords(h.Command); !reflect.DeepEqual(got, []string{real, "stop-hook"}) {
		t.Fatalf("a shell would split the command as %q", got)
	}
	if prog, ok := OurProgram(h.Command); !ok || prog != real {
		t.Fatalf("OurProgram = %q, %v", prog, ok)
	}
}

// Beside the main binary, the hook's own program is what the entry runs;
// the main binary's stop-hook is the fallback (above).
func TestNewHookRunsTheHookBinaryBesideTheMainOne(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "story-automator")
	hook := filepath.Join(dir, stophook.BinaryName)
	for _, p := range []string{exe, hook} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h, err := NewHook(exe)
	if err != nil {
		t.Fatal(err)
	}
	if h.Command != `"`+hook+`"` {
		t.Fatalf("command %s", h.Command)
	}
	if prog, ok := OurProgram(h.Command); !ok || prog != hook {
		t.Fatalf("OurProgram = %q, %v", prog, ok)
	}
}

func TestNewHookFailsForAMissingBinary(t *testing.T) {
	if _, err := NewHook(filepath.Join(t.TempDir(), "gone")); err == nil {
		t.Fatal("want an error for a binary that does not exist")
	}
}

func TestOurProgramRecognisesCurrentAndOlderEntries(t *testing.T) {
	cases := []struct {
		cmd  string
		prog string
		ours bool
	}{
		{`"/opt/sa/story-automator" stop-hook`, "/opt/sa/story-automator", true},
		{`/old/bin/story-automator stop-hook`, "/old/bin/story-automator", true},
		{`story-automator stop-hook`, "story-automator", true},
		{`story-automator --project-root /p stop-hook`, "story-automator", true},
		{`'/x y/story-automator' stop-hook`, "/x y/story-automator", true},
		{`bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/story-automator-stop-hook.sh`, "$CLAUDE_PROJECT_DIR/.claude/hooks/story-automator-stop-hook.sh", true},
		{`/home/u/.claude/hooks/story-automator-stop-hook.sh`, "/home/u/.claude/hooks/story-automator-stop-hook.sh", true},
		{`story-automator marker heartbeat`, "", false},
		{`story-automator-dev stop-hook`, "story-automator-dev", true},
		{`"/opt/sa/story-automator-hook"`, "/opt/sa/story-automator-hook", true},
		{`story-automator-hook --log-level debug`, "story-automator-hook", true},
		{`my-story-automator stop-hook`, "", false},
		{`echo story-automator`, "", false},
		{`npx prettier --write .`, "", false},
		{``, "", false},
	}
	for _, c := range cases {
		prog, ok := OurProgram(c.cmd)
		if ok != c.ours || prog != c.prog {
			t.Errorf("OurProgram(%q) = %q, %v; want %q, %v", c.cmd, prog, ok, c.prog, c.ours)
		}
	}
}

func TestProgramExists(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "story-automator")
	if err := os.WriteFile(bin, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "PATH" {
			return "/nonexistent:" + dir
		}
		return ""
	}
	noPath := func(string) string { return "" }
	cases := []struct {
		prog   string
		getenv func(string) string
		want   bool
	}{
		{bin, noPath, true},
		{filepath.Join(dir, "gone"), env, false},
		{"story-automator", env, true},
		{"story-automator", noPath, false},
		{dir, env, false},
		{"", env, false},
	}
	for _, c := range cases {
		if got := ProgramExists(c.prog, c.getenv); got != c.want {
			t.Errorf("ProgramExists(%q) = %v, want %v", c.prog, got, c.want)
		}
	}
}
