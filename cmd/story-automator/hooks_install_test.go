package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hooksFixture is a project, a home directory and a binary to install, all in temp dirs.
type hooksFixture struct {
	root, home, exe string
	env             map[string]string
	exeErr          error // what Exe fails with, when set
}

func newHooksFixture(t *testing.T) *hooksFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &hooksFixture{
		root: filepath.Join(base, "project"),
		home: filepath.Join(base, "home"),
		exe:  filepath.Join(base, "my tools", "story-automator"),
	}
	// The fixture's binary lives under t.TempDir(); a TMPDIR elsewhere keeps
	// install from refusing it as transient (hooks_binary_test.go covers that).
	f.env = map[string]string{"HOME": f.home, "TMPDIR": filepath.Join(base, "tmp")}
	for _, d := range []string{f.root, f.home, filepath.Dir(f.exe)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return f
}

// command is the hook command install writes for the fixture's binary.
func (f *hooksFixture) command() string { return `"` + f.exe + `" stop-hook` }

func (f *hooksFixture) run(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	var out bytes.Buffer
	s := testStreams(f.root, &out)
	s.Getenv = func(k string) string { return f.env[k] }
	s.Exe = func() (string, error) { return f.exe, f.exeErr }
	code := Run(args, s)
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: stdout is not one JSON object: %q", args, out.String())
	}
	return res, code
}

func (f *hooksFixture) write(t *testing.T, rel, content string) string {
	t.Helper()
	path := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// stopCommands decodes a settings file and lists the commands under hooks.Stop.
func stopCommands(t *testing.T, path string) []string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, g := range doc.Hooks["Stop"] {
		for _, h := range g.Hooks {
			cmds = append(cmds, h.Command)
		}
	}
	return cmds
}

func TestHooksInstallCreatesTheProjectSettingsFile(t *testing.T) {
	f := newHooksFixture(t)
	res, code := f.run(t, "hooks", "install")
	path := filepath.Join(f.root, ".claude", "settings.json")
	if code != 0 || res["ok"] != true || res["changed"] != true || res["created"] != true ||
		res["backup"] != nil || res["file"] != path || res["scope"] != "project" || res["provider"] != "claude" {
		t.Fatalf("exit %d, %v", code, res)
	}
	if res["command"] != f.command() {
		t.Fatalf("command %v, want %s", res["command"], f.command())
	}
	if got := stopCommands(t, path); len(got) != 1 || got[0] != f.command() {
		t.Fatalf("Stop commands %q", got)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes: file %v dir %v", fi.Mode().Perm(), di.Mode().Perm())
	}
}

func TestHooksInstallIsIdempotent(t *testing.T) {
	f := newHooksFixture(t)
	path := f.write(t, ".claude/settings.json", `{"model": "opus"}`)
	if _, code := f.run(t, "hooks", "install"); code != 0 {
		t.Fatal("first install failed")
	}
	first, files := mustRead(t, path), listDir(t, filepath.Dir(path))
	res, code := f.run(t, "hooks", "install")
	if code != 0 || res["changed"] != false || res["backup"] != nil {
		t.Fatalf("second install: exit %d, %v", code, res)
	}
	if mustRead(t, path) != first || listDir(t, filepath.Dir(path)) != files {
		t.Fatal("second install touched the directory")
	}
}

func TestHooksInstallKeepsOtherSettingsAndBacksUp(t *testing.T) {
	f := newHooksFixture(t)
	old := `{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}], "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "gofmt -w"}]}]}, "theme": "dark"}`
	path := f.write(t, ".claude/settings.json", old)
	res, code := f.run(t, "hooks", "install")
	if code != 0 {
		t.Fatalf("exit %d %v", code, res)
	}
	backup, _ := res["backup"].(string)
	if backup != path+".story-automator.bak" || mustRead(t, backup) != old {
		t.Fatalf("backup %v", res["backup"])
	}
	if got := stopCommands(t, path); strings.Join(got, "|") != "say done|"+f.command() {
		t.Fatalf("Stop commands %q", got)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	hooks := doc["hooks"].(map[string]any)
	if doc["theme"] != "dark" || doc["permissions"] == nil || hooks["PostToolUse"] == nil {
		t.Fatalf("other settings lost: %v", doc)
	}
	content := mustRead(t, path)
	if strings.Index(content, `"permissions"`) > strings.Index(content, `"hooks"`) ||
		strings.Index(content, `"hooks"`) > strings.Index(content, `"theme"`) {
		t.Fatalf("key order changed:\n%s", content)
	}
}

func TestHooksInstallRefusesInvalidJSON(t *testing.T) {
	f := newHooksFixture(t)
	bad := "{\"model\": \"opus\",\n"
	path := f.write(t, ".claude/settings.local.json", bad)
	res, code := f.run(t, "hooks", "install", "--scope", "local")
	if code != 1 || res["ok"] != false || res["error"] != "settings_invalid_json" || res["file"] != path {
		t.Fatalf("exit %d, %v", code, res)
	}
	if !strings.Contains(res["message"].(string), path) {
		t.Fatalf("message does not name the file: %v", res["message"])
	}
	if mustRead(t, path) != bad || listDir(t, filepath.Dir(path)) != "settings.local.json" {
		t.Fatal("invalid settings file touched or something written beside it")
	}
}

func TestHooksInstallNormalisesAnOlderEntry(t *testing.T) {
	f := newHooksFixture(t)
	path := f.write(t, ".claude/settings.json", `{"hooks": {"Stop": [
		{"hooks": [{"type": "command", "command": "story-automator stop-hook"}]},
		{"hooks": [{"type": "command", "command": "/old/story-automator-stop-hook.sh", "timeout": 10}]}]}}`)
	res, code := f.run(t, "hooks", "install")
	if code != 0 || res["changed"] != true {
		t.Fatalf("exit %d, %v", code, res)
	}
	if got := stopCommands(t, path); len(got) != 1 || got[0] != f.command() {
		t.Fatalf("Stop commands %q, want exactly ours", got)
	}
	if !strings.Contains(mustRead(t, path), `"timeout": 30`) {
		t.Fatalf("timeout not set:\n%s", mustRead(t, path))
	}
}

func TestHooksDryRunWritesNothing(t *testing.T) {
	f := newHooksFixture(t)
	res, code := f.run(t, "hooks", "install", "--dry-run")
	if code != 0 || res["dryRun"] != true || res["changed"] != true {
		t.Fatalf("exit %d, %v", code, res)
	}
	if !strings.Contains(res["content"].(string), `"Stop"`) {
		t.Fatalf("dry run does not show the result: %v", res["content"])
	}
	if got := listDir(t, f.root); got != "" {
		t.Fatalf("dry run wrote %s", got)
	}
}

func TestHooksUninstallRemovesOnlyOurs(t *testing.T) {
	f := newHooksFixture(t)
	path := f.write(t, ".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`)
	if _, code := f.run(t, "hooks", "install"); code != 0 {
		t.Fatal("install failed")
	}
	res, code := f.run(t, "hooks", "uninstall")
	if code != 0 || res["changed"] != true || res["backup"] != nil || res["restored"] != true {
		t.Fatalf("exit %d, %v", code, res)
	}
	if got := stopCommands(t, path); strings.Join(got, "|") != "say done" {
		t.Fatalf("Stop commands after uninstall %q", got)
	}
	res, code = f.run(t, "hooks", "uninstall")
	if code != 0 || res["changed"] != false {
		t.Fatalf("second uninstall: exit %d, %v", code, res)
	}
}

func TestHooksUserAndCodexScopes(t *testing.T) {
	f := newHooksFixture(t)
	cases := []struct {
		args []string
		file string
	}{
		{[]string{"--scope", "user"}, filepath.Join(f.home, ".claude", "settings.json")},
		{[]string{"--provider", "codex"}, filepath.Join(f.root, ".codex", "hooks.json")},
		{[]string{"--provider", "codex", "--scope", "user"}, filepath.Join(f.home, ".codex", "hooks.json")},
	}
	for _, c := range cases {
		res, code := f.run(t, append([]string{"hooks", "install"}, c.args...)...)
		if code != 0 || res["file"] != c.file {
			t.Fatalf("%v: exit %d, %v", c.args, code, res)
		}
		if got := stopCommands(t, c.file); len(got) != 1 || got[0] != f.command() {
			t.Fatalf("%v: Stop commands %q", c.args, got)
		}
	}
}

func TestHooksUsageErrors(t *testing.T) {
	f := newHooksFixture(t)
	for _, args := range [][]string{
		{"hooks", "install", "--scope", "global"},
		{"hooks", "install", "--provider", "cursor"},
		{"hooks", "install", "--provider", "gemini", "--scope", "local"},
		{"hooks", "install", "--provider", "codex", "--scope", "local"},
		{"hooks", "uninstall", "extra"},
		{"hooks", "frobnicate"},
	} {
		res, code := f.run(t, args...)
		if code != 2 || res["error"] != "usage_error" {
			t.Errorf("%v: exit %d, %v", args, code, res)
		}
	}
	delete(f.env, "HOME")
	res, code := f.run(t, "hooks", "install", "--scope", "user")
	if code != 1 || res["error"] != "home_unknown" {
		t.Errorf("user scope without HOME: exit %d, %v", code, res)
	}
}
