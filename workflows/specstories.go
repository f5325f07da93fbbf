package workflows

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
	"go.yaml.in/yaml/v3"
)

// StoriesFile is the stories list of a BMAD 6.12 spec folder (stories mode).
const StoriesFile = "stories.yaml"

// ErrStoriesInvalid marks a stories.yaml that breaks its schema; the
// message names the file, each line and the rule.
var ErrStoriesInvalid = errors.New("invalid stories.yaml")

// ErrSpecFolder marks a project with several spec folders that have a
// stories.yaml, where a run cannot pick one by itself.
var ErrSpecFolder = errors.New("more than one spec folder with a stories.yaml")

// SpecStory is one entry of stories.yaml, in execution order.
type SpecStory struct {
	ID, Title, Description string
	// SpecCheckpoint pauses after planning, DoneCheckpoint after the story
	// lands; InvokeDevWith is appended verbatim to the dispatch. The worker
	// never reads these: they are the caller's.
	SpecCheckpoint, DoneCheckpoint bool
	InvokeDevWith                  string
	Line                           int
}

var specStoryID = lazyre.New(`^[A-Za-z0-9-]+$`)

// ParseStoriesYAML reads a stories.yaml by its schema (BMAD 6.12's
// bmad-spec): a top-level list; each entry with a quoted string id of
// letters, digits and dashes, unique and prefix-free; a one-line title; a
// description; optional boolean spec_checkpoint and done_checkpoint and a
// string invoke_dev_with; never a status. Every problem is reported, each
// with its line and rule (ErrStoriesInvalid); path is only for messages.
func ParseStoriesYAML(path string, data []byte) ([]SpecStory, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrStoriesInvalid, path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: %s: the file must be a top-level list of stories, in execution order", ErrStoriesInvalid, path)
	}
	var problems []string
	bad := func(n *yaml.Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...)))
	}
	var out []SpecStory
	for i, item := range doc.Content[0].Content {
		if item.Kind != yaml.MappingNode {
			bad(item, "entry %d must be a mapping of id, title, description…", i+1)
			continue
		}
		st := SpecStory{Line: item.Line}
		seen := map[string]*yaml.Node{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			seen[k.Value] = v
			switch k.Value {
			case "id":
				switch {
				case v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0:
					bad(v, "id %s must be a quoted string (id: %q)", v.Value, v.Value)
				case !specStoryID().MatchString(v.Value):
					bad(v, "id %q may hold only letters, digits and dashes", v.Value)
				}
				st.ID = v.Value
			case "title":
				if isString(v) && strings.TrimSpace(v.Value) != "" && !strings.Contains(strings.TrimRight(v.Value, "\n"), "\n") {
					st.Title = strings.TrimSpace(v.Value)
				} else {
					bad(v, "title must be one line of text")
				}
			case "description":
				if isString(v) && strings.TrimSpace(v.Value) != "" {
					st.Description = v.Value
				} else {
					bad(v, "description must be text")
				}
			case "spec_checkpoint", "done_checkpoint":
				if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
					bad(v, "%s must be true or false", k.Value)
					continue
				}
				on := strings.EqualFold(v.Value, "true")
				if k.Value == "spec_checkpoint" {
					st.SpecCheckpoint = on
				} else {
					st.DoneCheckpoint = on
				}
			case "invoke_dev_with":
				if isString(v) {
					st.InvokeDevWith = v.Value
				} else {
					bad(v, "invoke_dev_with must be text")
				}
			case "status":
				bad(k, "no status field, ever: the worker keeps a story's status in its spec file")
			}
		}
		for _, req := range []string{"id", "title", "description"} {
			if seen[req] == nil {
				bad(item, "entry %d has no %s", i+1, req)
			}
		}
		out = append(out, st)
	}
	for i, a := range out {
		for _, b := range out[:i] {
			switch {
			case a.ID == "" || b.ID == "":
			case a.ID == b.ID:
				bad(&yaml.Node{Line: a.Line}, "id %q is used twice (first at line %d); ids are unique", a.ID, b.Line)
			case strings.HasPrefix(a.ID, b.ID+"-") || strings.HasPrefix(b.ID, a.ID+"-"):
				bad(&yaml.Node{Line: a.Line}, "ids %q and %q collide: one is the other plus a dash, and story files are matched as <id>-*.md", b.ID, a.ID)
			}
		}
	}
	if len(doc.Content[0].Content) == 0 {
		bad(doc.Content[0], "the list has no stories")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w:\n%s", ErrStoriesInvalid, strings.Join(problems, "\n"))
	}
	return out, nil
}

func isString(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag == "!!str" }

// FindSpecFolder finds the one spec folder that has a stories.yaml under
// dirs (the output, planning and implementation folders), searched three
// levels deep: "" when there is none; ErrSpecFolder, listing them, when
// there are several.
func FindSpecFolder(dirs []string) (string, error) {
	found, err := SpecFolders(dirs)
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: %s; name one with --spec", ErrSpecFolder, strings.Join(found, ", "))
}

// SpecFolders lists every folder that has a stories.yaml under dirs,
// searched three levels deep (hidden folders skipped), sorted, each once.
func SpecFolders(dirs []string) ([]string, error) {
	var found []string
	for _, d := range dirs {
		base := strings.Count(filepath.Clean(d), string(filepath.Separator))
		err := filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // an unreadable folder holds no spec we can use
			}
			if e.IsDir() {
				if (path != d && strings.HasPrefix(e.Name(), ".")) || strings.Count(path, string(filepath.Separator))-base > 3 {
					return filepath.SkipDir
				}
				return nil
			}
			if e.Name() == StoriesFile && !slices.Contains(found, filepath.Dir(path)) {
				found = append(found, filepath.Dir(path))
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	slices.Sort(found)
	return found, nil
}

// ReadStories reads and checks a spec folder's stories.yaml.
func ReadStories(folder string) ([]SpecStory, error) {
	path := filepath.Join(folder, StoriesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseStoriesYAML(path, data)
}

// ErrStorySpecAmbiguous marks a story with more than one file
// stories/<id>-*.md in its spec folder: the worker cannot tell which is its.
var ErrStorySpecAmbiguous = errors.New("ambiguous story file match")

// StoriesDir is the folder of a spec folder's story specs.
const StoriesDir = "stories"

// StorySpec finds story id's spec in a spec folder: the one file
// stories/<id>-*.md ("" when there is none: the story has not started).
// More than one is ErrStorySpecAmbiguous, naming them. Ids are
// prefix-free, so no other story's file matches.
func StorySpec(folder, id string) (string, error) {
	found, err := filepath.Glob(filepath.Join(folder, StoriesDir, id+"-*.md"))
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%w: story %q has %d files: %s", ErrStorySpecAmbiguous, id, len(found), strings.Join(found, ", "))
}

// Sentinel suffixes of the skeleton specs bmad-build-auto writes when it
// halts before planning in folder+id mode: the story's id unknown (or no
// stories.yaml), or its story file ambiguous.
const (
	SentinelUnresolved = "-unresolved.md"
	SentinelAmbiguous  = "-ambiguous.md"
)

// SentinelSpec reports whether path is such a skeleton spec of story id.
func SentinelSpec(path, id string) bool {
	base := filepath.Base(path)
	return base == id+SentinelUnresolved || base == id+SentinelAmbiguous
}

// OutputDir is BMAD's default output folder, relative to the project.
const OutputDir = "_bmad-output"

// DiscoverSpecFolder is the spec folder a run takes without --spec: none
// ("") when the project has a board (sprint mode); else the one folder
// with a stories.yaml under the output folder, the planning and the
// implementation artifacts (FindSpecFolder: ErrSpecFolder when several;
// all lists them).
func (p *Layout) DiscoverSpecFolder() (found string, all []string, err error) {
	if isFile(p.SprintStatusPath()) {
		return "", nil, nil
	}
	dirs := append([]string{filepath.Join(p.Root, OutputDir), p.ArtifactsDir}, p.PlanningDirs...)
	all, err = SpecFolders(dirs)
	if err != nil {
		return "", nil, err
	}
	found, err = FindSpecFolder(dirs)
	return found, all, err
}
