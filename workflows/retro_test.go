package workflows

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const retroDoc = `---
epic: 1
date: 12-01-2026
verdict: %s
criteria: declared
headless: true
---

# Epic 1 retrospective

## Findings

- not an action item

## Action items

- Add error handling to the sign-up form (owner: dev)
- Document the settings API (owner: pm)

## Acceptance verdict

%s
`

func TestReadRetroVerdictsAndActionItems(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{VerdictAccepted, VerdictAcceptedOpenItems, VerdictRejected} {
		path := filepath.Join(dir, "epic-1-retro-"+v+".md")
		writeFile(t, path, strings.ReplaceAll(strings.Replace(retroDoc, "%s", v, 1), "%s", "see above"))
		r, err := ReadRetro(path)
		if err != nil || r.Verdict != v || r.Summary != "see above" || !reflect.DeepEqual(r.ActionItems, []string{"Add error handling to the sign-up form (owner: dev)", "Document the settings API (owner: pm)"}) {
			t.Fatalf("%s: %+v, %v", v, r, err)
		}
	}
	path := filepath.Join(dir, "epic-2-retro-x.md")
	writeFile(t, path, strings.ReplaceAll(retroDoc, "%s", "approved"))
	if _, err := ReadRetro(path); !errors.Is(err, ErrRetroInvalid) || Code(err) != "retro_invalid" || !strings.Contains(err.Error(), `verdict "approved"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestFindSprintRetroTakesTheNewest(t *testing.T) {
	dir := t.TempDir()
	if got, err := FindSprintRetro(dir, "1"); got != "" || err != nil {
		t.Fatalf("none: %q, %v", got, err)
	}
	old, fresh := filepath.Join(dir, "epic-1-retro-2026-11-01.md"), filepath.Join(dir, "epic-1-retro-2026-12-01.md")
	writeFile(t, fresh, "x")
	writeFile(t, old, "x")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "epic-10-retro-2026-12-02.md"), "x")
	if got, err := FindSprintRetro(dir, "1"); got != fresh || err != nil {
		t.Fatalf("got %q, %v; want %s", got, err, fresh)
	}
}

// After BMAD's own retrospective script updated the board (retrospective
// done, an action item, its own date format, quoted values), the run's
// transitions keep what it wrote and BMAD's validate still accepts the board.
func TestBoardAfterBMADsRetrospectiveUpdate(t *testing.T) {
	in, p := bmadBoard(t)
	in.RunScript(t, p.Root, ".claude/skills/bmad-retrospective/scripts/sprint_status.py", "update",
		"--file", p.SprintStatusPath(), "--epic", "1", "--set-retro-done",
		"--add-action", `[{"action":"Add error handling","owner":"dev"}]`,
		"--ref", filepath.Join(p.ArtifactsDir, "epic-1-retro-2026-12-01.md"),
		"--verdict", VerdictAcceptedOpenItems, "--date", "12-01-2026 10:30")
	before, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	_, items, ok := bytes.Cut(before, []byte("action_items:"))
	if !ok || !bytes.Contains(before, []byte("last_updated: '12-01-2026 10:30'")) && !bytes.Contains(before, []byte("last_updated: \"12-01-2026 10:30\"")) && !bytes.Contains(before, []byte("last_updated: 12-01-2026 10:30")) {
		t.Fatalf("BMAD's update left:\n%s", before)
	}
	at := time.Date(2026, 12, 2, 8, 15, 0, 0, time.UTC)
	if err := p.StartStory(StoryKey{"2", 1}, at); err != nil {
		t.Fatal(err)
	}
	if err := p.FinishStory(StoryKey{"2", 1}, at); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p.SprintStatusPath())
	if !bytes.HasSuffix(after, items) || !bytes.Contains(after, []byte("12-02-2026 08:15")) {
		t.Fatalf("the action items or the stamp's format changed:\n%s", after)
	}
	if got := boardStatus(t, p); got["2-1-invoices"] != StatusDone || got["epic-2"] != StatusDone || got["epic-1-retrospective"] != StatusDone {
		t.Fatalf("board %v", got)
	}
	validate(t, in, p)
}
