package stophook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestParseRalphLoopFile(t *testing.T) {
	path, data := readFixture(t, "ralph-loop.local.md")
	l, err := ParseLoopFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatRalph || l.Active != "true" || l.Iteration != 7 || l.MaxIterations != 50 ||
		l.CompletionPromise != "ALL TESTS GREEN" || l.OwnerSession != "3b9f2c1e-5a47-4d0b-9c2e-8f1a6d3e4b21" || l.StartedAt != "2026-11-22T09:14:03Z" {
		t.Fatalf("parsed %+v", l)
	}
	if !strings.HasPrefix(l.Prompt, "Fix every failing test") || !strings.HasSuffix(l.Prompt, "never delete a test to make it pass") ||
		!strings.Contains(l.Prompt, "| commit after each fix\n---\n") {
		t.Fatalf("prompt %q", l.Prompt)
	}
}

func TestParseForgeLoopFile(t *testing.T) {
	path, data := readFixture(t, "forge-loop.0320-1430-a3b2.local.md")
	l, err := ParseLoopFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatForge || l.Active != "paused" || l.Iteration != 3 || l.MaxIterations != 20 || l.CompletionPromise != "" ||
		l.OwnerSession != "8d0e6a52-1f3b-4c7e-a9d4-2b5c7e1f0a93" {
		t.Fatalf("parsed %+v", l)
	}
	if !strings.HasPrefix(l.Prompt, "Read .claude/forge-state.0320-1430-a3b2.md") || !strings.HasSuffix(l.Prompt, "coverage >= 80%") {
		t.Fatalf("prompt %q", l.Prompt)
	}
}

func TestParseLoopFileTolerance(t *testing.T) {
	src := "\ufeff\r\n---\r\nactive: true\r\niteration: 2\r\n# a comment\r\nmax_iterations: 0\r\n" +
		"completion_promise: \"say \"DONE\" now\"\r\nsession_id:\r\nextra_key: 'it''s'\r\n---\r\nprompt body\r\n"
	l, err := ParseLoopFile(".claude/ralph-loop.local.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l.CompletionPromise != `say "DONE" now` || l.MaxIterations != 0 || l.OwnerSession != "" || l.Other["extra_key"] != "it's" || l.Prompt != "prompt body" {
		t.Fatalf("parsed %+v", l)
	}
}

func TestParseLoopFileRejects(t *testing.T) {
	for name, src := range map[string]string{
		"no frontmatter": "just a prompt\n",
		"unclosed":       "---\nactive: true\nprompt\n",
		"no prompt":      "---\nactive: true\n---\n\n  \n",
		"bad iteration":  "---\niteration: three\n---\np\n",
		"negative max":   "---\nmax_iterations: -1\n---\np\n",
		"bad active":     "---\nactive: maybe\n---\np\n",
		"not key value":  "---\njust words\n---\np\n",
	} {
		if _, err := ParseLoopFile("x.md", []byte(src)); !errors.Is(err, ErrLoopFile) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestLoopFileFormat(t *testing.T) {
	for path, want := range map[string]string{
		".claude/ralph-loop.local.md":          FormatRalph,
		".claude/ralph-loop.abc.local.md":      FormatRalph,
		"/p/.claude/forge-loop.0320.local.md":  FormatForge,
		".claude/forge-loop.local.md":          FormatForge,
		".claude/forge-state.0320.md":          "",
		".claude/ralph-loop.local.md.imported": "",
	} {
		if got := LoopFileFormat(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

// FuzzParseLoopFile: never panics; an accepted file has a prompt and a known activity.
func FuzzParseLoopFile(f *testing.F) {
	for _, name := range []string{"ralph-loop.local.md", "forge-loop.0320-1430-a3b2.local.md"} {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(name, data)
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		l, err := ParseLoopFile(name, data)
		if err != nil {
			return
		}
		if l.Prompt == "" || (l.Active != "true" && l.Active != "false" && l.Active != "paused") || l.Iteration < 0 || l.MaxIterations < 0 {
			t.Fatalf("accepted %+v", l)
		}
	})
}
