package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testHook = Hook{Command: `"/opt/sa/story-automator" stop-hook`, Timeout: 30}

func fixedNow() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func writeFile(t testing.TB, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// mustInstall installs h into path and fails the test on an error.
func mustInstall(t testing.TB, path string, h Hook, opt Options) {
	t.Helper()
	if _, err := Install(path, h, opt); err != nil {
		t.Fatal(err)
	}
}

// mustUninstall uninstalls testHook from path and fails the test on an error.
func mustUninstall(t *testing.T, path string) Result {
	t.Helper()
	res, err := Uninstall(path, testHook, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantEntries fails the test unless dir holds n entries.
func wantEntries(t *testing.T, dir string, n int) {
	t.Helper()
	if names := dirNames(t, dir); len(names) != n {
		t.Fatalf("%s holds %v, want %d entries", dir, names, n)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirNames lists a directory's entries, to show that nothing else was written.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

const installedOnly = `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "\"/opt/sa/story-automator\" stop-hook",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`

func TestInstallCreatesAMissingFileAndDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	res, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || !res.Created || res.Backup != "" {
		t.Fatalf("result %+v", res)
	}
	if got := readFile(t, path); got != installedOnly {
		t.Fatalf("file:\n%s", got)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes file %v dir %v, want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	writeFile(t, path, `{"model": "opus"}`, 0o600)
	mustInstall(t, path, testHook, Options{Now: fixedNow})
	first := readFile(t, path)
	before := dirNames(t, dir)
	res, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || res.Backup != "" || len(res.Actions) != 0 {
		t.Fatalf("second install reported a change: %+v", res)
	}
	if readFile(t, path) != first {
		t.Fatal("second install rewrote the file")
	}
	if after := dirNames(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("second install left new files: %v -> %v", before, after)
	}
}

func TestInstallLeavesAFileWithOurEntryAloneWhateverItsFormatting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	compact := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"/opt/sa/story-automator\" stop-hook","timeout":30}]}]}}`
	writeFile(t, path, compact, 0o600)
	res, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil || res.Changed {
		t.Fatalf("res %+v err %v", res, err)
	}
	if readFile(t, path) != compact {
		t.Fatal("file reformatted although nothing changed")
	}
}

func TestInstallKeepsOtherKeysHooksAndOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{
    "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
    },
    "env": {"A": "1"},
    "cleanupPeriodDays": 30.0
}`, 0o600)
	mustInstall(t, path, testHook, Options{Now: fixedNow})
	// The file's own indentation (four spaces) is kept.
	want := `{
    "permissions": {
        "allow": [
            "Bash(go test:*)"
        ],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "check.sh"
                    }
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "notify-send done",
                        "timeout": 5
                    }
                ]
            },
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "\"/opt/sa/story-automator\" stop-hook",
                        "timeout": 30
                    }
                ]
            }
        ]
    },
    "env": {
        "A": "1"
    },
    "cleanupPeriodDays": 30.0
}
`
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n%s", got)
	}
}

func TestInstallNormalisesOlderEntriesWithoutDuplicating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{"hooks": {"Stop": [
  {"hooks": [
    {"type": "command", "command": "other-tool", "timeout": 5},
    {"type": "command", "command": "/old/bin/story-automator stop-hook", "statusMessage": "guarding"}
  ]},
  {"hooks": [{"type": "command", "command": "story-automator stop-hook", "timeout": 10}]},
  {"hooks": [{"type": "command", "command": "bash ~/.claude/hooks/story-automator-stop-hook.sh"}]},
  {"hooks": [{"type": "command", "command": "\"/opt/sa/story-automator\" stop-hook", "timeout": 30}]}
]}}`, 0o600)
	res, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "other-tool",
            "timeout": 5
          },
          {
            "type": "command",
            "command": "\"/opt/sa/story-automator\" stop-hook",
            "statusMessage": "guarding",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n%s", got)
	}
	if len(res.Actions) != 4 {
		t.Fatalf("actions %q, want one update and three removals", res.Actions)
	}
	again, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil || again.Changed {
		t.Fatalf("install after normalising changed again: %+v %v", again, err)
	}
}

func TestInstallRefusesInvalidJSONAndWritesNothing(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":       `{"hooks": {"Stop": [}`,
		"empty":        ``,
		"comment":      "{\n  // mine\n  \"model\": \"opus\"\n}",
		"invalid utf8": "{\"a\": \"\xfe\"}",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			writeFile(t, path, content, 0o644)
			_, err := Install(path, testHook, Options{Now: fixedNow})
			if !errors.Is(err, ErrInvalidJSON) || Code(err) != "settings_invalid_json" {
				t.Fatalf("err %v (code %s), want settings_invalid_json", err, Code(err))
			}
			if readFile(t, path) != content {
				t.Fatal("invalid file was changed")
			}
			wantEntries(t, dir, 1)
		})
	}
}

func TestInstallRefusesAnUnexpectedShape(t *testing.T) {
	for _, content := range []string{`[]`, `{"hooks": []}`, `{"hooks": {"Stop": {"hooks": []}}}`} {
		path := filepath.Join(t.TempDir(), "settings.json")
		writeFile(t, path, content, 0o600)
		_, err := Install(path, testHook, Options{Now: fixedNow})
		if Code(err) != "settings_unexpected_shape" {
			t.Fatalf("%s: err %v, want settings_unexpected_shape", content, err)
		}
		if readFile(t, path) != content {
			t.Fatalf("%s: file changed", content)
		}
	}
}

func TestInstallBacksUpTheFileItChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	old := `{"model": "opus"}`
	writeFile(t, path, old, 0o644)
	res, err := Install(path, testHook, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	wantBackup := path + ".story-automator.bak"
	if res.Backup != wantBackup || readFile(t, wantBackup) != old {
		t.Fatalf("backup %q", res.Backup)
	}
	bi, _ := os.Stat(wantBackup)
	fi, _ := os.Stat(path)
	if bi.Mode().Perm() != 0o600 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("backup mode %v (want 0600), settings mode %v (want kept 0644)", bi.Mode().Perm(), fi.Mode().Perm())
	}
}

// The round trip: whatever the file's formatting, install then uninstall
// leaves it byte for byte as it was, with no backup left behind.
func TestInstallThenUninstallIsByteIdentical(t *testing.T) {
	for name, content := range map[string]string{
		"compact":      `{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"lint"}]}]}}`,
		"four spaces":  "{\n    \"z\": 1,\n    \"a\": [],\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"notify\"}]}\n        ]\n    }\n}",
		"tabs":         "{\n\t\"permissions\": {\"allow\": [\"Bash(ls)\"]},\n\t\"env\": {}\n}\n",
		"empty object": "{}",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			writeFile(t, path, content, 0o644)
			mustInstall(t, path, testHook, Options{})
			if readFile(t, path) == content {
				t.Fatal("install changed nothing")
			}
			if res := mustUninstall(t, path); !res.Restored {
				t.Fatalf("%+v", res)
			}
			if got := readFile(t, path); got != content {
				t.Fatalf("round trip changed the file:\nbefore %q\nafter  %q", content, got)
			}
			wantEntries(t, dir, 1)
		})
	}
}

func TestInstallThenUninstallOfAMissingFileLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	mustInstall(t, path, testHook, Options{})
	if res := mustUninstall(t, path); !res.Removed {
		t.Fatalf("%+v", res)
	}
	wantEntries(t, dir, 0)
}

// A user edit between install and uninstall: the backup no longer matches,
// so uninstall removes only our entry and keeps the file's indentation.
func TestUninstallAfterAUserEditKeepsTheEditAndTheIndent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	writeFile(t, path, "{\n    \"model\": \"opus\"\n}\n", 0o600)
	mustInstall(t, path, testHook, Options{})
	edited := strings.Replace(readFile(t, path), `"opus"`, `"sonnet"`, 1)
	writeFile(t, path, edited, 0o600)
	if res := mustUninstall(t, path); res.Restored {
		t.Fatalf("%+v", res)
	}
	if got := readFile(t, path); got != "{\n    \"model\": \"sonnet\"\n}\n" {
		t.Fatalf("file:\n%s", got)
	}
	wantEntries(t, dir, 2)
}

func TestDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	res, err := Install(path, testHook, Options{DryRun: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || !res.Created || string(res.Content) != installedOnly {
		t.Fatalf("dry run result %+v", res)
	}
	wantEntries(t, dir, 0)
	writeFile(t, path, installedOnly, 0o600)
	res, err = Uninstall(path, Hook{}, Options{DryRun: true, Now: fixedNow})
	if err != nil || !res.Changed || string(res.Content) != "{}\n" {
		t.Fatalf("dry-run uninstall %+v %v", res, err)
	}
	if readFile(t, path) != installedOnly || len(dirNames(t, filepath.Dir(path))) != 1 {
		t.Fatal("dry-run uninstall wrote")
	}
}

func TestUninstallRemovesOnlyOurs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{"hooks": {
  "Stop": [
    {"hooks": [{"type": "command", "command": "other-tool"}, {"type": "command", "command": "/old/story-automator stop-hook"}]},
    {"hooks": [{"type": "command", "command": "\"/opt/sa/story-automator\" stop-hook", "timeout": 30}]}
  ],
  "SubagentStop": [{"hooks": [{"type": "command", "command": "story-automator stop-hook"}]}]
}, "model": "opus"}`, 0o600)
	if _, err := Uninstall(path, Hook{}, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "other-tool"
          }
        ]
      }
    ],
    "SubagentStop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "story-automator stop-hook"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
`
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n%s", got)
	}
}

func TestUninstallDropsContainersItEmpties(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "story-automator stop-hook"}]}]}}`, 0o600)
	if _, err := Uninstall(path, Hook{}, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "{\n  \"model\": \"opus\"\n}\n" {
		t.Fatalf("file:\n%s", got)
	}
	// A Stop array the user left empty is theirs, not ours to drop.
	writeFile(t, path, `{"hooks": {"Stop": []}}`, 0o600)
	res, err := Uninstall(path, Hook{}, Options{Now: fixedNow})
	if err != nil || res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestUninstallOfAMissingFileCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	res, err := Uninstall(filepath.Join(dir, ".claude", "settings.json"), Hook{}, Options{Now: fixedNow})
	if err != nil || res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
	wantEntries(t, dir, 0)
}

func TestInstallEditsTheTargetOfASymlinkedFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	writeFile(t, target, `{}`, 0o600)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res, err := Install(link, testHook, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	if readFile(t, target) != installedOnly || filepath.Dir(res.Backup) != filepath.Dir(target) {
		t.Fatalf("target not edited or backup misplaced: %+v", res)
	}
}

func TestWriteRefusesAFileChangedSinceItWasRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{"a": 1}`, 0o600)
	l, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, `{"a": 2}`, 0o600)
	err = write(&l, []byte("{}\n"), &Result{})
	if Code(err) != "settings_changed" || readFile(t, path) != `{"a": 2}` {
		t.Fatalf("err %v, file %s", err, readFile(t, path))
	}
}

func TestRenamedBinariesReplaceRatherThanDoubleTheEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	installs := []Hook{
		{Command: `"/tmp/a/sa" stop-hook`, Timeout: 30},
		{Command: `"/tmp/b/sa" stop-hook`, Timeout: 30},                // same name, other directory
		{Command: `"/opt/story-automator-dev" stop-hook`, Timeout: 30}, // a story-automator* binary
		{Command: `"/usr/bin/story-automator" stop-hook`, Timeout: 30},
	}
	for _, h := range installs {
		mustInstall(t, path, h, Options{Now: fixedNow})
	}
	got := readFile(t, path)
	if n := strings.Count(got, "stop-hook"); n != 2 {
		// "/tmp/b/sa" is not named story-automator*, so the last install cannot
		// know it; everything else collapsed into one entry.
		t.Fatalf("want 2 entries (sa and story-automator), got %d:\n%s", n, got)
	}
	if _, err := Uninstall(path, Hook{Command: `"/elsewhere/sa" stop-hook`}, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); strings.Contains(got, "stop-hook") {
		t.Fatalf("uninstall from a renamed binary left entries:\n%s", got)
	}
}
