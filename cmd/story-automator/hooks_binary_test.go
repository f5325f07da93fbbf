package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user's file, in a layout of its own, survives install + uninstall byte
// for byte, and no backup is left behind.
func TestHooksInstallUninstallRoundTripIsByteIdentical(t *testing.T) {
	f := newHooksFixture(t)
	old := "{\n    \"theme\": \"dark\",\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n    },\n    \"env\": {}\n}"
	path := f.write(t, ".claude/settings.json", old)
	res, code := f.run(t, "hooks", "install")
	if code != 0 || res["backup"] != path+".story-automator.bak" {
		t.Fatalf("install: exit %d, %v", code, res)
	}
	if res, code = f.run(t, "hooks", "uninstall"); code != 0 || res["restored"] != true {
		t.Fatalf("uninstall: exit %d, %v", code, res)
	}
	if got := mustRead(t, path); got != old {
		t.Fatalf("round trip changed the file:\n%q\n%q", old, got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left in .claude: %v", entries)
	}
}

func TestHooksInstallRefusesATransientBinaryUnlessForced(t *testing.T) {
	f := newHooksFixture(t)
	f.exe = filepath.Join(filepath.Dir(f.root), "go-build123", "b001", "exe", "story-automator")
	writeExe(t, f.exe)
	res, code := f.run(t, "hooks", "install")
	if code != 1 || res["error"] != "binary_transient" || !strings.Contains(res["action"].(string), "go install") {
		t.Fatalf("exit %d, %v", code, res)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".claude", "settings.json")); err == nil {
		t.Fatal("a refused install wrote the settings file")
	}
	res, code = f.run(t, "hooks", "install", "--force")
	if code != 0 || !strings.Contains(res["warning"].(string), "WARNING") || res["command"] != f.command() {
		t.Fatalf("--force: exit %d, %v", code, res)
	}
}

func TestHooksInstallPrefersTheBinaryOnPath(t *testing.T) {
	f := newHooksFixture(t)
	onPath := f.exe // a lasting binary, found on PATH
	f.env["PATH"] = filepath.Dir(onPath)
	f.exe = filepath.Join(f.env["TMPDIR"], "go-run", "story-automator")
	writeExe(t, f.exe)
	res, code := f.run(t, "hooks", "install")
	if code != 0 || res["command"] != `"`+onPath+`" stop-hook` || res["warning"] == nil {
		t.Fatalf("exit %d, %v", code, res)
	}
}

func writeExe(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
}
