package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

// installedBlock is the fenced block of an installed skill file that
// follows the first line containing after: what the skill tells the model
// to write, as installed.
func installedBlock(t *testing.T, root, rel, after string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, after)
	if i < 0 {
		t.Fatalf("%s no longer says %q: BMAD's deferred-work format moved; read the installed skill again", rel, after)
	}
	open := strings.Index(text[i:], "```")
	if open < 0 {
		t.Fatalf("%s: no fenced block after %q", rel, after)
	}
	body := text[i+open:]
	body = body[strings.Index(body, "\n")+1:]
	end := strings.Index(body, "```")
	if end < 0 {
		t.Fatalf("%s: the block after %q never closes", rel, after)
	}
	lines := strings.Split(strings.TrimRight(body[:end], " \n"), "\n")
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	for i, l := range lines {
		lines[i] = l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
	}
	return strings.Join(lines, "\n") + "\n"
}

// fill replaces a template's <…> and {spec_file} placeholders in order.
func fill(t *testing.T, tmpl, spec string, values ...string) string {
	t.Helper()
	out := strings.ReplaceAll(tmpl, "{spec_file}", spec)
	for _, v := range values {
		i, j := strings.Index(out, "<"), strings.Index(out, ">")
		if i < 0 || j < i {
			t.Fatalf("the installed template has fewer placeholders than %d:\n%s", len(values), tmpl)
		}
		out = out[:i] + v + out[j+1:]
	}
	if strings.ContainsAny(out, "<>{}") {
		t.Fatalf("the installed template has more placeholders than %d:\n%s", len(values), tmpl)
	}
	return out
}

// doneSpec writes a done spec from the installed spec template whose
// deferred: list is the items given (YAML), as bmad-build-auto's review
// writes it.
func doneSpec(t *testing.T, root, path, deferredYAML string) string {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(root, ".claude/skills/bmad-build-auto/spec-template.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(tmpl), "status: 'draft'", "status: 'done'", 1)
	lines := strings.Split(text, "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(l, "deferred: []") {
			lines[i], found = strings.TrimRight(deferredYAML, "\n"), true
		}
	}
	if !found {
		t.Fatalf("the installed spec template has no `deferred: []` line:\n%s", tmpl)
	}
	writeFile(t, path, strings.Join(lines, "\n")+"\n## Auto Run Result\n\nStatus: done\n")
	return path
}

// findingsYAML is the installed review step's deferred: item shape, filled
// in once per finding (summary, evidence, location, severity).
func findingsYAML(t *testing.T, root string, findings ...[4]string) string {
	t.Helper()
	shape := installedBlock(t, root, ".claude/skills/bmad-build-auto/step-04-review.md", "Update the single `deferred` list")
	head, item, ok := strings.Cut(shape, "\n")
	if !ok || strings.TrimSpace(head) != "deferred:" {
		t.Fatalf("the installed review step's deferred shape changed:\n%s", shape)
	}
	out := head + "\n"
	for _, f := range findings {
		it := item
		for _, v := range []string{f[0], f[1]} {
			i, j := strings.Index(it, "<"), strings.Index(it, ">\n")
			it = it[:i] + v + it[j+1:]
		}
		it = strings.Replace(it, "src/foo.py:42", f[2], 1)
		it = strings.Replace(it, "severity: medium", "severity: "+f[3], 1)
		out += it
	}
	return out
}

func projectLayout(t *testing.T) (*Layout, string) {
	t.Helper()
	root := realbmad.Project(t)
	l, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	path, err := DeferredWorkPath(l)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "_bmad-output/implementation-artifacts", DeferredWorkFile); path != want {
		t.Fatalf("deferred-work.md at %s, want %s (where the installed build skills write it)", path, want)
	}
	return l, path
}

// An item is written as the installed bmad-build skill tells the model to
// write one (its fenced template, key for key), with the finding's location
// and severity after; the spec's findings are read in the shape the
// installed bmad-build-auto review writes them. Entries a skill appended
// itself (its absolute spec path) are read and not added again.
func TestDeferredWorkIsWrittenInTheInstalledSkillsFormat(t *testing.T) {
	l, path := projectLayout(t)
	spec := filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-1-2-account-settings.md")
	doneSpec(t, l.Root, spec, findingsYAML(t, l.Root,
		[4]string{"Retry loop ignores the context's deadline: it keeps going", "client.go retries 5 times # even after cancel", "src/client.go:88", "medium"},
		[4]string{"Cache key omits the locale", "two locales share one entry", "cache/keys.go:12", "high (unverified)"}))
	skillEntry := installedBlock(t, l.Root, ".claude/skills/bmad-build/step-04-review.md", "Append one new entry to")
	before := fill(t, skillEntry, spec, "Cache key omits the locale", "seen by the skill's own review")
	writeFile(t, path, before)

	got, err := CollectDeferred(l, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Added) != 1 || got.Added[0].Summary != "Retry loop ignores the context's deadline: it keeps going" {
		t.Fatalf("added %+v; want only the finding the skill did not write already", got.Added)
	}
	data, _ := os.ReadFile(path)
	rel := "_bmad-output/implementation-artifacts/spec-1-2-account-settings.md"
	want := fill(t, skillEntry, rel, "Retry loop ignores the context's deadline: it keeps going", "client.go retries 5 times # even after cancel") +
		"  location: src/client.go:88\n  severity: medium\n"
	if string(data) != before+want {
		t.Fatalf("deferred-work.md:\n%s\nwant:\n%s", data, before+want)
	}
	w, err := ReadDeferredWork(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Items) != 2 || w.Items[0].SourceSpec != spec || w.Items[1].Location != "src/client.go:88" || w.Items[1].Line != 4 {
		t.Fatalf("items %+v", w.Items)
	}
}

// The same findings are collected once: from one spec again and again,
// while the same finding of another spec is an item of its own.
func TestCollectDeferredDeduplicates(t *testing.T) {
	l, path := projectLayout(t)
	dir := filepath.Join(l.Root, "_bmad-output/implementation-artifacts")
	items := findingsYAML(t, l.Root, [4]string{"Flaky clock in the retry test", "fails 1 in 50", "retry_test.go:10", "low"})
	a := doneSpec(t, l.Root, filepath.Join(dir, "spec-1-1-sign-up.md"), items)
	doneSpec(t, l.Root, filepath.Join(dir, "spec-1-2-sign-in.md"), items)
	// One summary at two locations of one spec is two findings.
	doneSpec(t, l.Root, filepath.Join(dir, "spec-1-3-audit.md"), findingsYAML(t, l.Root,
		[4]string{"Error dropped", "err ignored", "a.go:1", "low"}, [4]string{"Error dropped", "err ignored", "b.go:9", "low"}))
	first, err := CollectAllDeferred(l)
	if err != nil || len(first.Added) != 4 || first.Specs != 3 {
		t.Fatalf("first collection: %+v, %v", first, err)
	}
	data, _ := os.ReadFile(path)
	for _, again := range []func() (Collected, error){func() (Collected, error) { return CollectAllDeferred(l) },
		func() (Collected, error) { return CollectDeferred(l, a) }} {
		got, err := again()
		if err != nil || len(got.Added) != 0 {
			t.Fatalf("again: %+v, %v", got, err)
		}
	}
	if now, _ := os.ReadFile(path); string(now) != string(data) {
		t.Fatalf("a collection with nothing new rewrote the file:\n%s", now)
	}
	w, _ := ReadDeferredWork(l)
	if len(w.Items) != 4 || w.Items[0].ID == w.Items[1].ID || w.Items[0].Summary != w.Items[1].Summary || w.Items[2].ID == w.Items[3].ID {
		t.Fatalf("items %+v", w.Items)
	}
}

// What is there stays byte for byte: a person's notes, comments, edits and
// done marks; new items only follow it.
func TestCollectDeferredAppendsAndKeepsEditsAndDoneMarks(t *testing.T) {
	l, path := projectLayout(t)
	before := "# Deferred work\n\n<!-- triage on Fridays -->\n<!--\n- a commented-out item\n  summary: not one\n-->\n" +
		"- source_spec: `none`\n  summary: Split the settings page\n  evidence: too big for one story\n  done: 0123abc\n" +
		"\nNotes by hand, not an item.\n\n## Deferred from: code review of spec-0-1.md (2026-11-01)\n\n" +
		"- [x] Old bug in the parser — deferred: pre-existing\n- Logging is noisy\n  on startup" // no final newline
	writeFile(t, path, before)
	spec := doneSpec(t, l.Root, filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-2-1-export.md"),
		findingsYAML(t, l.Root, [4]string{"Export ignores filters", "export.go never reads them", "export.go:30", "high"}))
	got, err := CollectDeferred(l, spec)
	if err != nil || len(got.Added) != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), before+"\n- source_spec: `_bmad-output/implementation-artifacts/spec-2-1-export.md`\n") {
		t.Fatalf("what was there changed, or the item is not right after it:\n%s", data)
	}
	w, err := ReadDeferredWork(l)
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, e := range w.Open(0) {
		open = append(open, e.Summary+" @ "+e.SourceSpec)
	}
	want := []string{"Logging is noisy on startup @ code review of spec-0-1.md (2026-11-01)", "Export ignores filters @ _bmad-output/implementation-artifacts/spec-2-1-export.md"}
	if strings.Join(open, "|") != strings.Join(want, "|") || len(w.Items) != 4 {
		t.Fatalf("open %q of %d items, want %q", open, len(w.Items), want)
	}
}

// A deferred-work.md that cannot be read is never written: the error names
// the line, and the file stays as it was.
func TestCollectDeferredRefusesAFileItCannotRead(t *testing.T) {
	l, path := projectLayout(t)
	spec := doneSpec(t, l.Root, filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-1-1-a.md"),
		findingsYAML(t, l.Root, [4]string{"A finding", "its evidence", "a.go:1", "low"}))
	for name, text := range map[string]string{
		"line 3": "- source_spec: `x`\n  summary: one\n  summary: two\n",
		"line 2": "intro\n```\n- source_spec: `x`\n  summary: one\n",
		"line 4": "- source_spec: `x`\n  summary: one\n\n- source_spec: `y`\n  evidence: no summary\n",
		"line 5": "- source_spec: `x`\n  summary: one\n\n\n<!-- triage notes\n- not an item\n",
	} {
		writeFile(t, path, text)
		_, err := CollectDeferred(l, spec)
		if !errors.Is(err, ErrDeferredWorkInvalid) || !strings.Contains(err.Error(), name) || Code(err) != "deferred_work_invalid" {
			t.Fatalf("%q: err = %v, want it to name %s", text, err, name)
		}
		if now, _ := os.ReadFile(path); string(now) != text {
			t.Fatalf("the unreadable file was written:\n%s", now)
		}
		if _, err := ReadDeferredWork(l); !errors.Is(err, ErrDeferredWorkInvalid) {
			t.Fatalf("read: %v", err)
		}
	}
}

// Only done specs are collected; a story spec of a spec folder is one.
func TestCollectAllDeferredReadsDoneSprintAndStorySpecs(t *testing.T) {
	l, _ := projectLayout(t)
	folder := filepath.Join(l.Root, "_bmad-output/specs/spec-billing")
	writeFile(t, filepath.Join(folder, StoriesFile), "- id: \"1\"\n  title: Invoices\n  description: list them\n")
	doneSpec(t, l.Root, filepath.Join(folder, "stories/1-invoices.md"),
		findingsYAML(t, l.Root, [4]string{"Invoice totals round twice", "totals.go rounds per line", "totals.go:7", "medium"}))
	blocked := filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-3-1-blocked.md")
	doneSpec(t, l.Root, blocked, findingsYAML(t, l.Root, [4]string{"Not yet", "blocked spec", "b.go:1", "high"}))
	text, _ := os.ReadFile(blocked)
	writeFile(t, blocked, strings.Replace(string(text), "status: 'done'", "status: 'blocked'", 1))
	writeFile(t, filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-3-2-broken.md"), "no frontmatter\n")
	got, err := CollectAllDeferred(l)
	if err != nil || got.Specs != 1 || len(got.Added) != 1 || got.Added[0].SourceSpec != "_bmad-output/specs/spec-billing/stories/1-invoices.md" {
		t.Fatalf("%+v, %v", got, err)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "spec-3-2-broken.md") {
		t.Fatalf("warnings %q", got.Warnings)
	}
}

// --min-severity keeps the items at or above it; an unverified grade ranks
// as its grade, an item without one below low.
func TestDeferredOpenFiltersBySeverity(t *testing.T) {
	w := DeferredWork{Items: []DeferredEntry{{Summary: "a", Severity: "low"}, {Summary: "b", Severity: "medium (unverified)"},
		{Summary: "c", Severity: "high"}, {Summary: "d"}, {Summary: "e", Severity: "high", Done: "abc123"}}}
	for _, c := range []struct {
		min  string
		want string
	}{{"", "abcd"}, {"low", "abc"}, {"medium", "bc"}, {"high", "c"}} {
		rank := 0
		if c.min != "" {
			var err error
			if rank, err = ParseMinSeverity(c.min); err != nil {
				t.Fatal(err)
			}
		}
		var got string
		for _, e := range w.Open(rank) {
			got += e.Summary
		}
		if got != c.want {
			t.Fatalf("--min-severity %q: %q, want %q", c.min, got, c.want)
		}
	}
	for _, bad := range []string{"", "urgent", "high (unverified)"} {
		if _, err := ParseMinSeverity(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// A spec's deferred: list that is not one is a clear error naming the spec.
func TestReadSpecDeferredRefusesABadList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec-1-1-x.md")
	writeFile(t, path, "---\nstatus: done\ndeferred:\n  - just a string\n---\n")
	if _, _, err := ReadSpecDeferred(path); !errors.Is(err, ErrSpecInvalid) || !strings.Contains(err.Error(), "spec-1-1-x.md") {
		t.Fatalf("err = %v", err)
	}
	writeFile(t, path, "---\nstatus: done\ndeferred:\n  - evidence: no summary\n---\n")
	if _, _, err := ReadSpecDeferred(path); !errors.Is(err, ErrSpecInvalid) || !strings.Contains(err.Error(), "no summary") {
		t.Fatalf("err = %v", err)
	}
	if s, err := ReadSpec(path); err != nil || s.Status != SpecDone {
		t.Fatalf("ReadSpec must not depend on the list: %+v, %v", s, err)
	}
}

// Marking items done adds the one done mark to each (a line after a build
// skill's entry; a checked box on a bullet) and changes nothing else; an
// item done already, or not there, is skipped.
func TestMarkDeferredDone(t *testing.T) {
	l, path := projectLayout(t)
	before := "<!-- keep -->\n- source_spec: `a.md`\n  summary: First\n  evidence: |\n    two lines\n\n" +
		"- source_spec: `b.md`\n  summary: Second\n  done: by hand\n" +
		"## Deferred from: code review of c.md (2026-11-01)\n- Third, a bullet\n- [ ] Fourth, a box\n- source_spec: `d.md`\n  summary: Fifth"
	writeFile(t, path, before)
	w, err := ReadDeferredWork(l)
	if err != nil || len(w.Items) != 5 {
		t.Fatalf("%+v, %v", w.Items, err)
	}
	ids := []string{w.Items[0].ID, w.Items[1].ID, w.Items[2].ID, w.Items[3].ID, w.Items[4].ID, "dw-00000000"}
	marked, err := MarkDeferredDone(l, ids, "0123abcd")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ids[0], ids[2], ids[3], ids[4]}; strings.Join(marked, " ") != strings.Join(want, " ") {
		t.Fatalf("marked %q, want %q", marked, want)
	}
	data, _ := os.ReadFile(path)
	want := "<!-- keep -->\n- source_spec: `a.md`\n  summary: First\n  evidence: |\n    two lines\n  done: 0123abcd\n\n" +
		"- source_spec: `b.md`\n  summary: Second\n  done: by hand\n" +
		"## Deferred from: code review of c.md (2026-11-01)\n- [x] Third, a bullet\n- [x] Fourth, a box\n- source_spec: `d.md`\n  summary: Fifth\n  done: 0123abcd\n"
	if string(data) != want {
		t.Fatalf("deferred-work.md:\n%s\nwant:\n%s", data, want)
	}
	w, err = ReadDeferredWork(l)
	if err != nil || len(w.Open(0)) != 0 || w.Items[0].Done != "0123abcd" || w.Items[0].Evidence != "two lines" {
		t.Fatalf("%+v, %v", w.Items, err)
	}
	if marked, err := MarkDeferredDone(l, ids, "4567"); err != nil || len(marked) != 0 {
		t.Fatalf("again: %q, %v", marked, err)
	}
	if now, _ := os.ReadFile(path); string(now) != want {
		t.Fatalf("marking nothing rewrote the file:\n%s", now)
	}
	if _, err := MarkDeferredDone(l, ids, "two\nlines"); err == nil {
		t.Fatal("a two-line mark was accepted")
	}
}

// The ledger is where the build skills write: a team override of
// implementation_artifacts in _bmad/custom/config.toml moves it, while
// _bmad/bmm/config.yaml still names the old folder.
func TestDeferredWorkFollowsTheBuildSkillsConfig(t *testing.T) {
	root := realbmad.Project(t)
	writeFile(t, filepath.Join(root, "_bmad/custom/config.toml"), "[modules.bmm]\nimplementation_artifacts = \"{project-root}/out/impl\"\n")
	l, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	path, err := DeferredWorkPath(l)
	if want := filepath.Join(root, "out/impl", DeferredWorkFile); err != nil || path != want {
		t.Fatalf("%s, %v; want %s", path, err, want)
	}
	spec := doneSpec(t, root, filepath.Join(root, "out/impl/spec-1-1-a.md"), findingsYAML(t, root, [4]string{"A finding", "evidence", "a.go:1", "low"}))
	if got, err := CollectAllDeferred(l); err != nil || len(got.Added) != 1 || got.Added[0].SourceSpec != "out/impl/spec-1-1-a.md" {
		t.Fatalf("%+v, %v (spec %s)", got, err, spec)
	}
}

// The run's call on one spec: a spec not done adds nothing and writes
// nothing; one that cannot be read is an error naming it.
func TestCollectDeferredOneSpec(t *testing.T) {
	l, path := projectLayout(t)
	spec := doneSpec(t, l.Root, filepath.Join(l.Root, "_bmad-output/implementation-artifacts/spec-4-1-a.md"),
		findingsYAML(t, l.Root, [4]string{"A finding", "evidence", "a.go:1", "low"}))
	text, _ := os.ReadFile(spec)
	writeFile(t, spec, strings.Replace(string(text), "status: 'done'", "status: 'in-review'", 1))
	if got, err := CollectDeferred(l, spec); err != nil || len(got.Added) != 0 || got.Specs != 0 {
		t.Fatalf("in-review: %+v, %v", got, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deferred-work.md written for a spec not done: %v", err)
	}
	writeFile(t, spec, "---\nstatus: done\ndeferred: not a list\n---\n")
	if _, err := CollectDeferred(l, spec); !errors.Is(err, ErrSpecInvalid) || !strings.Contains(err.Error(), "spec-4-1-a.md") {
		t.Fatalf("err = %v", err)
	}
}
