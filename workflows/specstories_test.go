package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

// The example in BMAD's own schema (as installed) is a valid stories.yaml.
func TestParseStoriesYAMLReadsBMADsExample(t *testing.T) {
	dir := realbmad.Project(t)
	schema, err := os.ReadFile(filepath.Join(dir, ".claude/skills/bmad-spec/assets/stories-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(schema), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("no yaml example in the installed schema:\n%s", schema)
	}
	stories, err := ParseStoriesYAML("stories.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if len(stories) != 2 || stories[0].ID != "1" || !stories[0].SpecCheckpoint || stories[0].DoneCheckpoint ||
		!strings.Contains(stories[0].InvokeDevWith, "Redis") || stories[1].ID != "2" || stories[1].Title != "Expose limiter metrics to the ops dashboard" {
		t.Fatalf("stories %+v", stories)
	}
}

// Every rule of the schema, each reported with its line.
func TestParseStoriesYAMLReportsEachRule(t *testing.T) {
	cases := map[string]struct{ yaml, says string }{
		"not a list":    {"id: \"1\"\n", "top-level list"},
		"bare id":       {"- id: 1\n  title: a\n  description: d\n", "stories.yaml:1: id 1 must be a quoted string"},
		"bad chars":     {"- id: \"1/2\"\n  title: a\n  description: d\n", `stories.yaml:1: id "1/2" may hold only letters, digits and dashes`},
		"duplicate":     {"- id: \"1\"\n  title: a\n  description: d\n- id: \"1\"\n  title: b\n  description: d\n", `stories.yaml:4: id "1" is used twice (first at line 1)`},
		"prefix":        {"- id: \"3\"\n  title: a\n  description: d\n- id: \"3-2\"\n  title: b\n  description: d\n", `stories.yaml:4: ids "3" and "3-2" collide`},
		"no title":      {"- id: \"1\"\n  description: d\n", "stories.yaml:1: entry 1 has no title"},
		"two lines":     {"- id: \"1\"\n  title: |\n    a\n    b\n  description: d\n", "stories.yaml:2: title must be one line"},
		"not boolean":   {"- id: \"1\"\n  title: a\n  description: d\n  spec_checkpoint: \"yes\"\n", "stories.yaml:4: spec_checkpoint must be true or false"},
		"status field":  {"- id: \"1\"\n  title: a\n  description: d\n  status: done\n", "stories.yaml:4: no status field, ever"},
		"empty list":    {"[]\n", "stories.yaml:1: the list has no stories"},
		"no descr":      {"- id: \"1\"\n  title: a\n", "stories.yaml:1: entry 1 has no description"},
		"done not bool": {"- id: \"1\"\n  title: a\n  description: d\n  done_checkpoint: 1\n", "stories.yaml:4: done_checkpoint must be true or false"},
		"invoke list":   {"- id: \"1\"\n  title: a\n  description: d\n  invoke_dev_with: [a]\n", "stories.yaml:4: invoke_dev_with must be text"},
	}
	for name, c := range cases {
		_, err := ParseStoriesYAML("stories.yaml", []byte(c.yaml))
		if !errors.Is(err, ErrStoriesInvalid) || Code(err) != "stories_invalid" || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// One spec folder with a stories.yaml is found; several are refused with the list.
func TestFindSpecFolder(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "_bmad-output")
	planning := filepath.Join(out, "planning-artifacts")
	if got, err := FindSpecFolder([]string{out, planning}); got != "" || err != nil {
		t.Fatalf("none: %q, %v", got, err)
	}
	a := filepath.Join(out, "specs", "spec-rate-limits")
	writeFile(t, filepath.Join(a, StoriesFile), "- id: \"1\"\n  title: a\n  description: d\n")
	writeFile(t, filepath.Join(out, "specs", "spec-no-stories", "SPEC.md"), "# spec\n")
	if got, err := FindSpecFolder([]string{out, planning}); got != a || err != nil {
		t.Fatalf("one: %q, %v", got, err)
	}
	b := filepath.Join(planning, "spec-billing")
	writeFile(t, filepath.Join(b, StoriesFile), "- id: \"1\"\n  title: a\n  description: d\n")
	_, err := FindSpecFolder([]string{out, planning})
	if !errors.Is(err, ErrSpecFolder) || Code(err) != "spec_folder_ambiguous" || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("two: %v", err)
	}
}

// A story's spec is the one stories/<id>-*.md; none is not started, several
// are ambiguous; the sentinels are known by name.
func TestStorySpec(t *testing.T) {
	folder := t.TempDir()
	if got, err := StorySpec(folder, "3"); got != "" || err != nil {
		t.Fatalf("no file: %q, %v", got, err)
	}
	writeFile(t, filepath.Join(folder, StoriesDir, "3-login.md"), "---\nstatus: draft\n---\n")
	writeFile(t, filepath.Join(folder, StoriesDir, "30-other.md"), "---\nstatus: draft\n---\n")
	if got, err := StorySpec(folder, "3"); got != filepath.Join(folder, StoriesDir, "3-login.md") || err != nil {
		t.Fatalf("one file: %q, %v", got, err)
	}
	writeFile(t, filepath.Join(folder, StoriesDir, "3-ambiguous.md"), "---\nstatus: blocked\n---\n")
	_, err := StorySpec(folder, "3")
	if !errors.Is(err, ErrStorySpecAmbiguous) || !strings.Contains(err.Error(), "3-login.md") || !strings.Contains(err.Error(), "3-ambiguous.md") {
		t.Fatalf("two files: %v", err)
	}
	if !SentinelSpec(filepath.Join(folder, StoriesDir, "3-ambiguous.md"), "3") || !SentinelSpec("x/3-unresolved.md", "3") ||
		SentinelSpec(filepath.Join(folder, StoriesDir, "3-login.md"), "3") || SentinelSpec("x/30-unresolved.md", "3") {
		t.Fatal("sentinels misread")
	}
}

// Setting a spec's status changes that line alone.
func TestSetSpecStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "3-login.md")
	writeFile(t, path, "---\r\nid: x\r\nstatus: ready-for-dev\r\nnested:\r\n  status: keep\r\n---\r\n\r\nstatus: body\r\n")
	if err := SetSpecStatus(path, SpecDraft); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "---\r\nid: x\r\nstatus: draft\r\nnested:\r\n  status: keep\r\n---\r\n\r\nstatus: body\r\n" {
		t.Fatalf("file %q", data)
	}
	if err := SetSpecStatus(filepath.Join(t.TempDir(), "none.md"), SpecDraft); err == nil {
		t.Fatal("a missing spec was accepted")
	}
	bare := filepath.Join(t.TempDir(), "bare.md")
	writeFile(t, bare, "no frontmatter\n")
	if err := SetSpecStatus(bare, SpecDraft); !errors.Is(err, ErrSpecInvalid) {
		t.Fatalf("bare: %v", err)
	}
}
