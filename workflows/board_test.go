package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

const boardEpics = "# Epics\n\n## Epic 1: Accounts\n\n### Story 1.1: Sign up\n\nAs a visitor I can sign up.\n\n### Story 1.2: Account settings\n\nAs a user I change my settings.\n\n## Epic 2: Billing\n\n### Story 2.1: Invoices\n\nAs a user I see my invoices.\n"

// bmadBoard is a real 6.12 project whose sprint-status.yaml BMAD's own
// sprint_plan.py generated, run through uv as BMAD runs it.
func bmadBoard(t *testing.T) (realbmad.Installed, *Layout) {
	t.Helper()
	in := realbmad.Require(t)
	dir := realbmad.Project(t)
	writeFile(t, filepath.Join(dir, "_bmad-output/planning-artifacts/epics.md"), boardEpics)
	in.RunScript(t, dir, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "generate",
		"--epic-file", "_bmad-output/planning-artifacts/epics.md",
		"--status-file", "_bmad-output/implementation-artifacts/sprint-status.yaml",
		"--stories-dir", "_bmad-output/implementation-artifacts", "--project", "demo", "--date", "2026-11-28")
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return in, p
}

// validate runs BMAD's own `sprint_plan.py validate` on the board.
func validate(t *testing.T, in realbmad.Installed, p *Layout) {
	t.Helper()
	out := in.RunScript(t, p.Root, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "validate", "--status-file", p.SprintStatusPath())
	var res struct {
		Valid    bool     `json:"valid"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Valid {
		board, _ := os.ReadFile(p.SprintStatusPath())
		t.Fatalf("BMAD's validate rejects the board (%v): %s\n%s", err, out, board)
	}
}

func boardStatus(t *testing.T, p *Layout) map[string]string {
	t.Helper()
	s, err := p.ReadSprintStatus()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range s.Entries() {
		out[e.Key] = e.Status
	}
	return out
}

// commentsAndKeys is the file with every status and stamp blanked: what the
// run must keep as it was.
func commentsAndKeys(data []byte) string {
	re := regexp.MustCompile(`(?m)^(\s*[\w-]+:) .*$`)
	return re.ReplaceAllString(string(data), "$1")
}

// A board from BMAD's own generator driven through a story's transitions:
// story and epic in progress at dispatch, the story done, the epic done after
// its last story, never backwards; comments, order and last_updated's format
// kept; BMAD's validate accepts the board after every step.
func TestBoardTransitionsOnABMADBoard(t *testing.T) {
	in, p := bmadBoard(t)
	before, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	validate(t, in, p)
	at := time.Date(2026, 12, 3, 14, 5, 0, 0, time.UTC)
	steps := []struct {
		do   func(StoryKey, time.Time) error
		key  StoryKey
		want map[string]string
	}{
		{p.StartStory, StoryKey{"1", 1}, map[string]string{"1-1-sign-up": "in-progress", "epic-1": "in-progress", "1-2-account-settings": "backlog"}},
		{p.FinishStory, StoryKey{"1", 1}, map[string]string{"1-1-sign-up": "done", "epic-1": "in-progress"}},
		{p.StartStory, StoryKey{"1", 2}, map[string]string{"1-2-account-settings": "in-progress", "epic-1": "in-progress"}},
		{p.FinishStory, StoryKey{"1", 2}, map[string]string{"1-2-account-settings": "done", "epic-1": "done", "epic-1-retrospective": "optional", "epic-2": "backlog"}},
		// Never backwards: starting a done story again changes nothing.
		{p.StartStory, StoryKey{"1", 1}, map[string]string{"1-1-sign-up": "done", "epic-1": "done"}},
	}
	for i, st := range steps {
		if err := st.do(st.key, at); err != nil {
			t.Fatalf("step %d (%s): %v", i, st.key.Dotted(), err)
		}
		got := boardStatus(t, p)
		for k, v := range st.want {
			if got[k] != v {
				t.Fatalf("step %d (%s): %s is %q, want %q", i, st.key.Dotted(), k, got[k], v)
			}
		}
		validate(t, in, p)
	}
	after, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	if commentsAndKeys(after) != commentsAndKeys(before) {
		t.Fatalf("comments, keys or order changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if !bytes.Contains(after, []byte("last_updated: '2026-12-03'")) || !bytes.Contains(after, []byte("generated: '2026-11-28'")) {
		t.Fatalf("last_updated not stamped in the file's own format (quoted date):\n%s", after)
	}
	again, _ := os.ReadFile(p.SprintStatusPath())
	if err := p.StartStory(StoryKey{"1", 2}, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(p.SprintStatusPath()); !bytes.Equal(now, again) {
		t.Fatalf("a transition that moves nothing rewrote the board:\n%s", now)
	}
}

// A CRLF board keeps its line endings.
func TestBoardKeepsCRLF(t *testing.T) {
	in, p := bmadBoard(t)
	data, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	if err := os.WriteFile(p.SprintStatusPath(), crlf, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 14, 5, 0, 0, time.UTC)
	if err := p.StartStory(StoryKey{"2", 1}, at); err != nil {
		t.Fatal(err)
	}
	if err := p.FinishStory(StoryKey{"2", 1}, at); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(p.SprintStatusPath())
	if n := bytes.Count(out, []byte("\n")); n != bytes.Count(out, []byte("\r\n")) || n != bytes.Count(crlf, []byte("\r\n")) {
		t.Fatalf("line endings changed:\n%q", out)
	}
	if got := boardStatus(t, p); got["2-1-invoices"] != "done" || got["epic-2"] != "done" {
		t.Fatalf("board %v", got)
	}
	validate(t, in, p)
}

// A board the run cannot rewrite by bytes is refused with the key at fault
// and left as it was.
func TestBoardRefusesWhatItCannotRewriteSafely(t *testing.T) {
	head := "generated: 2026-11-28\nlast_updated: 2026-11-28\nproject: demo\n"
	cases := map[string]struct{ board, says string }{
		"flow mapping": {head + "development_status: {epic-1: backlog, 1-1-sign-up: backlog}\n", "development_status is a flow mapping"},
		"anchor":       {head + "development_status:\n  epic-1: &st backlog\n  1-1-sign-up: backlog\n", "line 5: epic-1 carries an anchor (&st)"},
		"alias":        {head + "status_words: &st backlog\ndevelopment_status:\n  epic-1: backlog\n  1-1-sign-up: *st\n", "line 4: status_words carries an anchor (&st)"},
		"duplicate":    {head + "development_status:\n  epic-1: backlog\n  1-1-sign-up: backlog\n  1-1-sign-up: done\n", "line 7: duplicate key 1-1-sign-up"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, DefaultArtifactsDir, SprintStatusFile)
			writeFile(t, path, c.board)
			p, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = p.StartStory(StoryKey{"1", 1}, time.Now())
			if !errors.Is(err, ErrSprintUnsafe) || Code(err) != "sprint_status_unsafe" || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("err = %v (%s)", err, Code(err))
			}
			if now, _ := os.ReadFile(path); string(now) != c.board {
				t.Fatalf("the refused board changed:\n%s", now)
			}
		})
	}
}

// last_updated keeps whichever of BMAD's formats the file uses, and its quotes.
func TestStampKeepsTheFilesFormat(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 7, 0, 0, time.UTC)
	cases := map[string]string{
		"last_updated: 05-06-2025 21:30":     "last_updated: 12-03-2026 09:07",
		"last_updated: \"2025-05-06 21:30\"": "last_updated: \"2026-12-03 09:07\"",
		"last_updated: 2025-05-06 # kept":    "last_updated: 2026-12-03 # kept",
		"last_updated: yesterday":            "last_updated: yesterday",
	}
	for line, want := range cases {
		s, err := ParseSprintStatus("s.yaml", []byte("generated: 2025-05-06\n"+line+"\ndevelopment_status:\n  epic-1: backlog\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Stamp(at); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !strings.Contains(string(s.Bytes()), want+"\n") || !strings.Contains(string(s.Bytes()), "generated: 2025-05-06\n") {
			t.Fatalf("%s: got\n%s", line, s.Bytes())
		}
	}
}

// Advance moves forward only, within the kind's own statuses.
func TestAdvanceNeverGoesBackwards(t *testing.T) {
	s, err := ParseSprintStatus("s.yaml", []byte("development_status:\n  epic-1: done\n  1-1-a: contexted\n  epic-1-retrospective: optional\n"))
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Advance("epic-1", StatusInProgress); err != nil || changed {
		t.Fatalf("epic done → in-progress: changed %v, %v", changed, err)
	}
	if changed, err := s.Advance("1-1-a", StatusInProgress); err != nil || changed {
		t.Fatalf("contexted (= in-progress) → in-progress: changed %v, %v", changed, err)
	}
	if changed, err := s.Advance("1-1-a", StatusReview); err != nil || !changed {
		t.Fatalf("contexted → review: changed %v, %v", changed, err)
	}
	if _, err := s.Advance("epic-1-retrospective", StatusInProgress); !errors.Is(err, ErrInvalidStatus) {
		t.Fatalf("a retrospective in progress: %v", err)
	}
	if _, err := s.Advance("2-1-b", StatusDone); !errors.Is(err, ErrStoryNotFound) {
		t.Fatalf("an entry the board lacks: %v", err)
	}
}

// A story the board does not list is refused, the board untouched.
func TestStartStoryNotOnTheBoard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultArtifactsDir, SprintStatusFile)
	board := "development_status:\n  epic-1: backlog\n  1-1-a: backlog\n"
	writeFile(t, path, board)
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StartStory(StoryKey{"1", 2}, time.Now()); !errors.Is(err, ErrStoryNotFound) || !strings.Contains(err.Error(), "lists no story 1.2") {
		t.Fatalf("err = %v", err)
	}
	if now, _ := os.ReadFile(path); string(now) != board {
		t.Fatalf("board changed:\n%s", now)
	}
}

// A line added to a CRLF board ends as its other lines do.
func TestInsertKeepsCRLF(t *testing.T) {
	s, err := ParseSprintStatus("s.yaml", []byte("development_status:\r\n  epic-1: backlog\r\n  1-1-a: backlog\r\n  epic-1-retrospective: optional\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetStory(StoryKey{"1", 2}, "b", StatusReadyForDev); err != nil {
		t.Fatal(err)
	}
	if want := "development_status:\r\n  epic-1: backlog\r\n  1-1-a: backlog\r\n  1-2-b: ready-for-dev\r\n  epic-1-retrospective: optional\r\n"; string(s.Bytes()) != want {
		t.Fatalf("got %q", s.Bytes())
	}
}
