package workflows

import (
	"bytes"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Story statuses in the order a story moves through them.
const (
	StatusBacklog     = "backlog"
	StatusReadyForDev = "ready-for-dev"
	StatusInProgress  = "in-progress"
	StatusReview      = "review"
	StatusDone        = "done"
	// StatusOptional is what BMAD writes for a retrospective not yet held.
	StatusOptional = "optional"
)

// devStatusKey is the mapping that holds the statuses.
const devStatusKey = "development_status"

var statusWord = lazyre.New(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// StatusEntry is one `key: status` line of development_status.
type StatusEntry struct {
	// Key is the key as written: "1-2-user-login", "epic-1", "epic-1-retrospective".
	Key    string
	Status string
	// Story is set for story entries; it is the zero key for epic and retro entries.
	Story StoryKey
	// Slug is what follows the story number in the key ("user-login"), or "".
	Slug string
}

// IsStory reports whether the entry is a story's (not an epic's or a retrospective's).
func (e StatusEntry) IsStory() bool { return e.Story.Num > 0 }

// SprintStatus is a parsed sprint-status.yaml. Changes edit only the bytes of
// the changed value (or add one line), so the user's comments, key order,
// quoting and blank lines survive.
type SprintStatus struct {
	Path    string
	src     []byte
	entries []StatusEntry
	keys    []*yaml.Node // key nodes of development_status, parallel to entries
	values  []*yaml.Node
	dev     *yaml.Node // the development_status key node
	devVal  *yaml.Node // its value: a block mapping, or a null scalar when empty
	top     *yaml.Node // the document's top-level mapping
	// unsafe says why the file cannot be rewritten by bytes (ErrSprintUnsafe), nil when it can.
	unsafe error
}

// ParseSprintStatus parses the content of a sprint-status.yaml; path is only
// for messages.
func ParseSprintStatus(path string, data []byte) (*SprintStatus, error) {
	s := &SprintStatus{Path: path, src: data}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSprintInvalid, path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: %s: not a YAML mapping", ErrSprintInvalid, path)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == devStatusKey {
			s.dev, s.devVal = top.Content[i], top.Content[i+1]
		}
	}
	if s.dev == nil {
		return nil, fmt.Errorf("%w: %s: no %s mapping", ErrSprintInvalid, path, devStatusKey)
	}

	s.top = top
	s.unsafe = checkRewritable(path, top, s.devVal)
	switch {
	case s.devVal.Kind == yaml.MappingNode:
	case s.devVal.Kind == yaml.ScalarNode && s.devVal.Tag == "!!null":
		return s, nil
	default:
		return nil, fmt.Errorf("%w: %s: %s must be a mapping of key: status", ErrSprintInvalid, path, devStatusKey)
	}
	for i := 0; i+1 < len(s.devVal.Content); i += 2 {
		k, v := s.devVal.Content[i], s.devVal.Content[i+1]
		if v.Kind != yaml.ScalarNode && s.unsafe != nil {
			return nil, s.unsafe
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%w: %s: line %d: status of %s must be a single word", ErrSprintInvalid, path, v.Line, k.Value)
		}
		e := StatusEntry{Key: k.Value, Status: v.Value}
		if !strings.HasPrefix(k.Value, "epic-") {
			if key, slug, err := splitStoryKey(k.Value); err == nil {
				e.Story, e.Slug = key, slug
			}
		}
		s.entries = append(s.entries, e)
		s.keys = append(s.keys, k)
		s.values = append(s.values, v)
	}
	return s, nil
}

// Bytes is the file's current content.
func (s *SprintStatus) Bytes() []byte { return s.src }

// Entries returns every development_status entry in file order.
func (s *SprintStatus) Entries() []StatusEntry {
	return append([]StatusEntry(nil), s.entries...)
}

// Story returns the entry of a story, in whichever key form it was written.
func (s *SprintStatus) Story(k StoryKey) (StatusEntry, bool) {
	i := s.storyIndex(k)
	if i < 0 {
		return StatusEntry{}, false
	}
	return s.entries[i], true
}

func (s *SprintStatus) storyIndex(k StoryKey) int {
	for i, e := range s.entries {
		if e.IsStory() && e.Story == k {
			return i
		}
	}
	return -1
}

func (s *SprintStatus) index(key string) int {
	for i, e := range s.entries {
		if e.Key == key {
			return i
		}
	}
	return -1
}

// Set gives the entry written exactly as key a new status, appending
// "key: status" at the end of development_status when there is none.
func (s *SprintStatus) Set(key, status string) error {
	if i := s.index(key); i >= 0 {
		return s.replaceValue(i, status)
	}
	return s.insertAfter(len(s.entries)-1, key, status)
}

// SetStory gives a story a new status. A story missing from the file is added
// as "<epic>-<n>-<slug>" on a new line after the last entry of its epic (so
// before that epic's retrospective entry), or at the end.
func (s *SprintStatus) SetStory(k StoryKey, slug, status string) error {
	if k.IsEpic() {
		return fmt.Errorf("%w: %s names an epic, not a story", ErrInvalidKey, k)
	}
	if i := s.storyIndex(k); i >= 0 {
		return s.replaceValue(i, status)
	}
	after := len(s.entries) - 1
	for i, e := range s.entries {
		if (e.IsStory() && e.Story.Epic == k.Epic) || e.Key == "epic-"+k.Epic {
			after = i
		}
	}
	key := k.String()
	if slug != "" {
		key += "-" + slug
	}
	return s.insertAfter(after, key, status)
}

func validStatus(status string) error {
	if !statusWord().MatchString(status) {
		return fmt.Errorf("%w %q: want a word such as backlog, ready-for-dev, in-progress, review, done", ErrInvalidStatus, status)
	}
	return nil
}

// replaceValue rewrites only the bytes of entry i's value, keeping its quotes.
func (s *SprintStatus) replaceValue(i int, status string) error {
	if err := validStatus(status); err != nil {
		return err
	}
	v := s.values[i]
	if v.Value == status {
		return nil
	}
	out, err := s.replaceScalar(v, status)
	if err != nil {
		return err
	}
	return s.adopt(out, s.entries[i].Key, status)
}

// replaceScalar returns the content with only the bytes of the one-line
// scalar v replaced by text, its quotes kept.
func (s *SprintStatus) replaceScalar(v *yaml.Node, text string) ([]byte, error) {
	start, err := offsetOf(s.src, v.Line, v.Column)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSprintInvalid, s.Path, err)
	}
	end, err := scalarEnd(s.src, start, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: line %d: %v", ErrSprintInvalid, s.Path, v.Line, err)
	}
	repl := text
	if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		q := s.src[start : start+1]
		repl = string(q) + text + string(q)
	}
	return append(append(append([]byte(nil), s.src[:start]...), repl...), s.src[end:]...), nil
}

// insertAfter adds "key: status" on a new line after entry i's line (or under
// the development_status key when i < 0), indented like its siblings.
func (s *SprintStatus) insertAfter(i int, key, status string) error {
	if err := validStatus(status); err != nil {
		return err
	}
	if _, _, err := splitStoryKey(key); err != nil && !strings.HasPrefix(key, "epic-") {
		return err
	}
	if s.devVal.Kind == yaml.MappingNode && s.devVal.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("%w: %s: %s is a flow mapping; write it as one entry per line", ErrSprintInvalid, s.Path, devStatusKey)
	}
	line, indent := s.dev.Line, strings.Repeat(" ", s.dev.Column-1+2)
	if i >= 0 {
		line, indent = s.values[i].Line, strings.Repeat(" ", s.keys[i].Column-1)
	}
	at, err := offsetOf(s.src, line+1, 1)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSprintInvalid, s.Path, err)
	}
	eol := "\n"
	if bytes.HasSuffix(s.src[:at], []byte("\r\n")) {
		eol = "\r\n" // the file's own line ending
	}
	var out []byte
	out = append(out, s.src[:at]...)
	if at > 0 && s.src[at-1] != '\n' {
		out = append(out, eol...)
	}
	out = append(out, indent+key+": "+status+eol...)
	out = append(out, s.src[at:]...)
	return s.adopt(out, key, status)
}

// adopt re-parses edited content and takes it only if key now has status and
// no other entry changed.
func (s *SprintStatus) adopt(out []byte, key, status string) error {
	next, err := ParseSprintStatus(s.Path, out)
	if err != nil {
		return fmt.Errorf("edit of %s would corrupt it: %w", key, err)
	}
	seen := false
	for _, e := range next.entries {
		if e.Key == key {
			seen = e.Status == status
			continue
		}
		if j := s.index(e.Key); j < 0 || s.entries[j].Status != e.Status {
			return fmt.Errorf("%w: %s: edit of %s changed %s", ErrSprintInvalid, s.Path, key, e.Key)
		}
	}
	if !seen {
		return fmt.Errorf("%w: %s: edit of %s did not take", ErrSprintInvalid, s.Path, key)
	}
	*s = *next
	return nil
}

// offsetOf converts a 1-based line and rune column into a byte offset; the
// line just past the last one maps to the end of the content.
func offsetOf(src []byte, line, col int) (int, error) {
	off := 0
	for l := 1; l < line; l++ {
		nl := bytes.IndexByte(src[off:], '\n')
		if nl < 0 {
			if l == line-1 {
				return len(src), nil
			}
			return 0, fmt.Errorf("line %d is past the end", line)
		}
		off += nl + 1
	}
	for c := 1; c < col; c++ {
		if off >= len(src) || src[off] == '\n' {
			return 0, fmt.Errorf("column %d is past the end of line %d", col, line)
		}
		_, w := utf8.DecodeRune(src[off:])
		off += w
	}
	return off, nil
}

// scalarEnd finds where the scalar token that starts at start ends.
func scalarEnd(src []byte, start int, v *yaml.Node) (int, error) {
	rest := src[start:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	switch {
	case v.Style&yaml.DoubleQuotedStyle != 0, v.Style&yaml.SingleQuotedStyle != 0:
		if len(rest) == 0 || (rest[0] != '"' && rest[0] != '\'') {
			return 0, fmt.Errorf("expected a quoted value")
		}
		q := rest[0]
		for j := 1; j < len(rest); j++ {
			if rest[j] == '\\' && q == '"' {
				j++
				continue
			}
			if rest[j] == q {
				return start + j + 1, nil
			}
		}
		return 0, fmt.Errorf("quoted value spans lines")
	case v.Style == 0 || v.Style == yaml.TaggedStyle:
		if i := bytes.Index(rest, []byte(" #")); i >= 0 {
			rest = rest[:i]
		}
		rest = bytes.TrimRight(rest, " \t\r")
		if string(rest) != v.Value {
			return 0, fmt.Errorf("value %q is not a one-line plain scalar", v.Value)
		}
		return start + len(rest), nil
	}
	return 0, fmt.Errorf("value %q uses a block style; write it as a plain word", v.Value)
}
