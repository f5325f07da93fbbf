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
		"not a list":   {"id: \"1\"\n", "top-level list"},
		"bare id":      {"- id: 1\n  title: a\n  description: d\n", "stories.yaml:1: id 1 must be a quoted string"},
		"bad chars":    {"- id: \"1/2\"\n  title: a\n  description: d\n", `stories.yaml:1: id "1/2" may hold only letters, digits and dashes`},
		"duplicate":    {"- id: \"1\"\n  title: a\n  description: d\n- id: \"1\"\n  title: b\n  description: d\n", `stories.yaml:4: id "1" is used twice (first at line 1)`},
		"prefix":       {"- id: \"3\"\n  title: a\n  description: d\n- id: \"3-2\"\n  title: b\n  description: d\n", `stories.yaml:4: ids "3" and "3-2" collide`},
		"no title":     {"- id: \"1\"\n  description: d\n", "stories.yaml:1: entry 1 has no title"},
		"two lines":    {"- id: \"1\"\n  title: |\n    a\n    b\n  description: d\n", "stories.yaml:2: title must be one line"},
		"not boolean":  {"- id: \"1\"\n  title: a\n  description: d\n  spec_checkpoint: \"yes\"\n", "stories.yaml:4: spec_checkpoint must be true or false"},
		"status field": {"- id: \"1\"\n  title: a\n  description: d\n  status: done\n", "stories.yaml:4: no status field, ever"},
		"invoke list":  {"- id: \"1\"\n  title: a\n  description: d\n  invoke_dev_with: [a]\n", "stories.yaml:4: invoke_dev_with must be text"},
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
