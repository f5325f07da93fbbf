package workflows

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// boardWithItems is a real 6.12 board with two action items BMAD's own
// sprint_status.py added, and a comment of the user's.
func boardWithItems(t *testing.T) (*Layout, func(args ...string)) {
	t.Helper()
	in, p := bmadBoard(t)
	script := func(args ...string) {
		in.RunScript(t, p.Root, ".claude/skills/bmad-retrospective/scripts/sprint_status.py", append([]string{"update"}, args...)...)
	}
	script("--file", p.SprintStatusPath(), "--epic", "1", "--add-action",
		`[{"action":"Add error handling to the sign-up form","owner":"dev"},{"action":"Document the settings API","owner":"pm"}]`,
		"--ref", "_bmad-output/implementation-artifacts/epic-1-retro-2026-12-03.md", "--date", "12-03-2026 14:05")
	data, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.SprintStatusPath(), append([]byte("# kept: the user's note\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, func(args ...string) { validate(t, in, p); script(args...) }
}

// The board's action items read as BMAD wrote them; moving one forward
// writes byte for byte what BMAD's own `--set-action-status` writes (the
// user's comment kept), BMAD's validate accepts it, and it never moves
// backwards.
func TestAdvanceActionItemWritesWhatBMADsScriptWrites(t *testing.T) {
	p, bmads := boardWithItems(t)
	items, err := p.ReadActionItems()
	if err != nil || len(items) != 2 {
		t.Fatalf("ReadActionItems = %+v, %v", items, err)
	}
	first := items[0]
	if first.ID != "epic-1-retro-item-1-add-error-handling-to-the-sign-up-form" || first.Epic != 1 || first.Owner != "dev" || !first.Open() {
		t.Fatalf("first item = %+v", first)
	}
	theirs := filepath.Join(t.TempDir(), "sprint-status.yaml")
	orig, _ := os.ReadFile(p.SprintStatusPath())
	if err := os.WriteFile(theirs, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 9, 30, 0, 0, time.UTC)
	for _, status := range []string{ActionInProgress, ActionDone} {
		changed, err := p.AdvanceActionItem(first.ID, status, at)
		if err != nil || !changed {
			t.Fatalf("AdvanceActionItem %s = %v, %v", status, changed, err)
		}
		bmads("--file", theirs, "--epic", "1", "--set-action-status", `[{"id":"`+first.ID+`","status":"`+status+`"}]`, "--date", "12-04-2026 09:30")
		mine, _ := os.ReadFile(p.SprintStatusPath())
		want, _ := os.ReadFile(theirs)
		if !bytes.Equal(mine, want) {
			t.Fatalf("%s: the run's board differs from BMAD's:\n--- run\n%s\n--- BMAD\n%s", status, mine, want)
		}
	}
	done, _ := os.ReadFile(p.SprintStatusPath())
	if changed, err := p.AdvanceActionItem(first.ID, ActionInProgress, at.Add(time.Hour)); err != nil || changed {
		t.Fatalf("moving a done item back = %v, %v", changed, err)
	}
	if now, _ := os.ReadFile(p.SprintStatusPath()); !bytes.Equal(now, done) {
		t.Fatalf("a board moved backwards:\n%s", now)
	}
	items, _ = p.ReadActionItems()
	if items[0].Status != ActionDone || !items[1].Open() {
		t.Fatalf("items after = %+v", items)
	}
	if _, err := p.AdvanceActionItem("epic-9-retro-item-1-nope", ActionDone, at); !errors.Is(err, ErrStoryNotFound) {
		t.Fatalf("an unknown item = %v, want ErrStoryNotFound", err)
	}
	bmads("--file", theirs, "--epic", "1") // validates the run's board once more
}

// An action item BMAD would not read is refused with its line, and the
// board is left as it is.
func TestActionItemsRefuseWhatBMADDoesNotWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sprint-status.yaml")
	for name, items := range map[string]string{
		"no id":      "  - epic: 1\n    action: \"x\"\n    status: open\n",
		"bad status": "  - id: \"a\"\n    epic: 1\n    action: \"x\"\n    status: later\n",
		"not a map":  "  - just text\n",
	} {
		src := []byte("development_status:\n  epic-1: done\naction_items:\n" + items)
		s, err := ParseSprintStatus(path, src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ActionItems(); !errors.Is(err, ErrSprintInvalid) || !bytes.Contains([]byte(err.Error()), []byte("line 4")) {
			t.Fatalf("%s: ActionItems = %v, want ErrSprintInvalid at line 4", name, err)
		}
	}
}
