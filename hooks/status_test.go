package hooks

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLocate(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		p    Provider
		s    Scope
		want string
	}{
		{Claude, ScopeProject, "/p/.claude/settings.json"},
		{Claude, ScopeLocal, "/p/.claude/settings.local.json"},
		{Claude, ScopeUser, "/home/u/.claude/settings.json"},
		{Codex, ScopeProject, "/p/.codex/hooks.json"},
		{Codex, ScopeUser, "/home/u/.codex/hooks.json"},
	}
	for _, c := range cases {
		loc, err := Locate(c.p, c.s, "/p", getenv)
		if err != nil || loc.Path != c.want {
			t.Errorf("Locate(%s, %s) = %q, %v; want %q", c.p, c.s, loc.Path, err, c.want)
		}
	}
	env["CODEX_HOME"] = "/cx"
	if loc, _ := Locate(Codex, ScopeUser, "/p", getenv); loc.Path != "/cx/hooks.json" {
		t.Errorf("CODEX_HOME ignored: %q", loc.Path)
	}
	if _, err := Locate(Codex, ScopeLocal, "/p", getenv); !errors.Is(err, ErrUnsupportedScope) {
		t.Errorf("codex local: %v", err)
	}
	if _, err := Locate(Claude, ScopeUser, "/p", func(string) string { return "" }); Code(err) != "home_unknown" {
		t.Errorf("no HOME: %v", err)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "story-automator")
	if err := os.WriteFile(bin, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	h := Hook{Command: `"` + bin + `" stop-hook`, Timeout: 30}
	noPath := func(string) string { return "" }
	cases := []struct {
		name    string
		content string // "" = no file
		want    Status
	}{
		{"missing", "", Status{}},
		{"other hooks only", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}`, Status{Exists: true}},
		{"current", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":` + quoteJSON(h.Command) + `,"timeout":30}]}]}}`,
			Status{Exists: true, Installed: true, Command: h.Command, BinaryExists: true}},
		{"stale timeout", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":` + quoteJSON(h.Command) + `}]}]}}`,
			Status{Exists: true, Installed: true, Command: h.Command, BinaryExists: true, Stale: true}},
		{"old path gone", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/gone/story-automator stop-hook","timeout":30}]}]}}`,
			Status{Exists: true, Installed: true, Command: "/gone/story-automator stop-hook", Stale: true}},
		{"duplicated", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":` + quoteJSON(h.Command) + `,"timeout":30}]},{"hooks":[{"type":"command","command":` + quoteJSON(h.Command) + `,"timeout":30}]}]}}`,
			Status{Exists: true, Installed: true, Command: h.Command, BinaryExists: true, Duplicated: true}},
		{"invalid", `{`, Status{Exists: true, Error: "settings_invalid_json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if c.content != "" {
				writeFile(t, path, c.content, 0o600)
			}
			got := Inspect(Location{Provider: Claude, Scope: ScopeProject, Path: path}, h, noPath)
			if got.Exists != c.want.Exists || got.Installed != c.want.Installed || got.Command != c.want.Command ||
				got.BinaryExists != c.want.BinaryExists || got.Stale != c.want.Stale ||
				got.Duplicated != c.want.Duplicated || got.Error != c.want.Error {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
			if got.Path != path || got.Provider != Claude || got.Scope != ScopeProject {
				t.Fatalf("location lost: %+v", got.Location)
			}
		})
	}
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	encodeString(&b, s)
	return b.String()
}
