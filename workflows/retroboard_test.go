package workflows

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// boardItems is the board's action_items and its retrospective entries.
func boardItems(t *testing.T, path string) ([]map[string]any, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Items []map[string]any  `yaml:"action_items"`
		Dev   map[string]string `yaml:"development_status"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return doc.Items, doc.Dev
}

// The run's fix-up of a board its retrospective child could not write
// (BMAD's script needs a package from the network) writes what BMAD's own
// `sprint_status.py update --set-retro-done --add-action` writes for the same
// document (ids, order, quoting), with earlier items kept, and BMAD's
// validate accepts it; a second call, or a board the child already set,
// changes nothing.
func TestRecordRetroWritesWhatBMADsScriptWrites(t *testing.T) {
	in, p := bmadBoard(t)
	at := time.Date(2026, 12, 3, 14, 5, 0, 0, time.UTC)
	for _, k := range []StoryKey{{"1", 1}, {"1", 2}} {
		if err := p.FinishStory(k, at); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier epic's item, as BMAD writes it, is kept and counted.
	in.RunScript(t, p.Root, ".claude/skills/bmad-retrospective/scripts/sprint_status.py", "update",
		"--file", p.SprintStatusPath(), "--epic", "2", "--add-action", `[{"action":"Older item","owner":"sm"}]`,
		"--ref", "old.md", "--date", "12-01-2026 10:30")
	doc := filepath.Join(p.ArtifactsDir, "epic-1-retro-2026-12-03.md")
	writeFile(t, doc, strings.ReplaceAll(strings.Replace(retroDoc, "%s", VerdictAcceptedOpenItems, 1), "%s", "ok"))
	r, err := ReadRetro(doc)
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Rel(doc)
	theirs := filepath.Join(t.TempDir(), "sprint-status.yaml")
	orig, _ := os.ReadFile(p.SprintStatusPath())
	if err := os.WriteFile(theirs, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	in.RunScript(t, p.Root, ".claude/skills/bmad-retrospective/scripts/sprint_status.py", "update",
		"--file", theirs, "--epic", "1", "--set-retro-done",
		"--add-action", `[{"action":"Add error handling to the sign-up form","owner":"dev"},{"action":"Document the settings API","owner":"pm"}]`,
		"--ref", ref, "--verdict", VerdictAcceptedOpenItems, "--date", "12-03-2026 14:05")

	did, err := p.RecordRetro("1", r, ref, at)
	if err != nil || !did.RetroSet || did.ItemsAdded != 2 {
		t.Fatalf("RecordRetro = %+v, %v", did, err)
	}
	validate(t, in, p)
	gotItems, gotDev := boardItems(t, p.SprintStatusPath())
	wantItems, wantDev := boardItems(t, theirs)
	if !reflect.DeepEqual(gotItems, wantItems) || !reflect.DeepEqual(gotDev, wantDev) {
		mine, _ := os.ReadFile(p.SprintStatusPath())
		bmads, _ := os.ReadFile(theirs)
		t.Fatalf("the run's board differs from BMAD's:\n--- run\n%s\n--- BMAD\n%s", mine, bmads)
	}
	mine, _ := os.ReadFile(p.SprintStatusPath())
	bmads, _ := os.ReadFile(theirs)
	_, mineItems, _ := bytes.Cut(mine, []byte("action_items:"))
	_, bmadItems, _ := bytes.Cut(bmads, []byte("action_items:"))
	if !bytes.Equal(mineItems, bmadItems) {
		t.Fatalf("action_items not written as BMAD writes them:\n--- run\n%s\n--- BMAD\n%s", mineItems, bmadItems)
	}
	if commentsAndKeys(bytes.Split(mine, []byte("action_items:"))[0]) != commentsAndKeys(bytes.Split(orig, []byte("action_items:"))[0]) {
		t.Fatalf("comments, keys or order changed:\n--- before\n%s\n--- after\n%s", orig, mine)
	}
	for i := 0; i < 2; i++ {
		again, err := p.RecordRetro("1", r, ref, at.Add(time.Hour))
		if err != nil || again.Changed() {
			t.Fatalf("call %d on a board with the retrospective done: %+v, %v", i, again, err)
		}
		if now, _ := os.ReadFile(p.SprintStatusPath()); !bytes.Equal(now, mine) {
			t.Fatalf("a board already right was rewritten:\n%s", now)
		}
	}
}

// Boards BMAD's generator does not write: no action_items yet, an empty
// flow list, a list at column 0, CRLF line endings, no retrospective entry.
func TestRecordRetroOnOtherBoardShapes(t *testing.T) {
	r := Retro{Verdict: VerdictAcceptedOpenItems, ActionItems: []string{`Fix "quoted" thing: now — Owner: Dev Lead`, "!!!"}}
	at := time.Date(2026, 12, 3, 14, 5, 0, 0, time.UTC)
	head := "last_updated: 12-01-2026 10:30\ndevelopment_status:\n  epic-1: done\n  1-1-a: done\n  epic-1-retrospective: optional\n  epic-2: backlog\n"
	cases := map[string]string{
		"none":     head,
		"empty":    head + "action_items: []\n",
		"bare":     head + "action_items:\n# trailing comment\n",
		"column 0": head + "action_items:\n- epic: 2\n  action: x\n  owner: y\n  status: open\n",
		"crlf":     strings.ReplaceAll(head+"action_items:\n  - epic: 2\n    action: x\n    status: done\n", "\n", "\r\n"),
		"no retro": strings.Replace(head, "  epic-1-retrospective: optional\n", "", 1),
	}
	for name, board := range cases {
		t.Run(name, func(t *testing.T) {
			p := openProject(t)
			writeFile(t, p.SprintStatusPath(), board)
			did, err := p.RecordRetro("1", r, "docs/retro.md", at)
			if err != nil || !did.RetroSet || did.ItemsAdded != 2 {
				t.Fatalf("RecordRetro = %+v, %v", did, err)
			}
			items, dev := boardItems(t, p.SprintStatusPath())
			data, _ := os.ReadFile(p.SprintStatusPath())
			if dev["epic-1-retrospective"] != StatusDone || dev["epic-2"] != StatusBacklog {
				t.Fatalf("development_status %v\n%s", dev, data)
			}
			n := len(items)
			if n < 2 || items[n-2]["action"] != `Fix "quoted" thing: now` || items[n-2]["owner"] != "Dev Lead" ||
				items[n-2]["id"] != "epic-1-retro-item-"+strconv.Itoa(n-1)+"-fix-quoted-thing-now" || items[n-1]["status"] != "open" ||
				items[n-1]["ref"] != "docs/retro.md" || items[n-1]["id"] != "epic-1-retro-item-"+strconv.Itoa(n)+"-"+retroSlug("!!!") {
				t.Fatalf("items %v\n%s", items, data)
			}
			if name == "crlf" && bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\n")) {
				t.Fatalf("line endings mixed:\n%q", data)
			}
			if name == "bare" && !bytes.Contains(data, []byte("# trailing comment")) {
				t.Fatalf("comment lost:\n%s", data)
			}
			if !bytes.Contains(data, []byte("last_updated: 12-03-2026 14:05")) {
				t.Fatalf("last_updated not stamped:\n%s", data)
			}
			// The retrospective's commit carries the work tree's items into
			// the committed board, whatever it had.
			base, err := ParseSprintStatus("c.yaml", []byte(board))
			if err != nil {
				t.Fatal(err)
			}
			now, err := ParseSprintStatus("w.yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			if err := base.CarryRetro(now); err != nil {
				t.Fatal(err)
			}
			carried := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, carried, string(base.Bytes()))
			if !bytes.Contains(base.Bytes(), []byte("last_updated: 12-03-2026 14:05")) {
				t.Fatalf("last_updated not carried:\n%s", base.Bytes())
			}
			if got, dev := boardItems(t, carried); !reflect.DeepEqual(got, items) || dev["epic-1-retrospective"] != StatusOptional && name != "no retro" {
				t.Fatalf("carried %v %v:\n%s", got, dev, base.Bytes())
			}
		})
	}
}

// `retroGate: off` only reports a rejected retrospective; on (the default)
// pauses; anything else is refused with its line.
func TestPolicyRetroGate(t *testing.T) {
	for doc, off := range map[string]bool{"version: 1\n": false, "retroGate: on\n": false, "retroGate: off\n": true} {
		p, err := ParsePolicy("w.yaml", []byte(doc))
		if err != nil || p.RetroGateOff != off {
			t.Fatalf("%q: off=%v, %v", doc, p.RetroGateOff, err)
		}
	}
	if _, err := ParsePolicy("w.yaml", []byte("retroGate: maybe\n")); err == nil || !strings.Contains(err.Error(), `retroGate: must be on or off, got "maybe" (line 1)`) {
		t.Fatalf("err = %v", err)
	}
}
