package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrSprintUnsafe marks a sprint-status.yaml the run cannot rewrite without
// risking what it does not own: a flow mapping, an anchor or alias, a
// duplicate key. Nothing is written to such a file.
var ErrSprintUnsafe = errors.New("sprint-status.yaml cannot be rewritten safely")

// The kinds of development_status entries, each with its own statuses.
const (
	kindStory = "story"
	kindEpic  = "epic"
	kindRetro = "retrospective"
)

// statusRanks orders each kind's statuses as BMAD does; drafted and
// contexted are the older names of ready-for-dev and in-progress.
var statusRanks = map[string]map[string]int{
	kindStory: {StatusBacklog: 0, StatusReadyForDev: 1, "drafted": 1, StatusInProgress: 2, "contexted": 2, StatusReview: 3, StatusDone: 4},
	kindEpic:  {StatusBacklog: 0, StatusInProgress: 1, "contexted": 1, StatusDone: 2},
	kindRetro: {StatusOptional: 0, StatusDone: 1},
}

// stampLayouts are the last_updated formats BMAD's sprint_plan.py accepts,
// its own first.
var stampLayouts = []string{"01-02-2006 15:04", "2006-01-02 15:04", "2006-01-02"}

func entryKind(key string) string {
	switch {
	case strings.HasPrefix(key, "epic-") && strings.HasSuffix(key, "-retrospective"):
		return kindRetro
	case strings.HasPrefix(key, "epic-"):
		return kindEpic
	}
	return kindStory
}

// checkRewritable finds what makes a parsed document unsafe to rewrite by
// bytes: anchors and aliases anywhere, duplicate keys in any mapping, a
// flow-style top level or development_status.
func checkRewritable(path string, top, devVal *yaml.Node) error {
	if top.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("%w: %s: the top level is a flow mapping ({…}); write one key per line (nothing was written)", ErrSprintUnsafe, path)
	}
	if devVal.Kind == yaml.MappingNode && devVal.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("%w: %s: line %d: %s is a flow mapping ({…}); write one entry per line (nothing was written)", ErrSprintUnsafe, path, devVal.Line, devStatusKey)
	}
	var walk func(n *yaml.Node, at string) error
	walk = func(n *yaml.Node, at string) error {
		switch {
		case n.Kind == yaml.AliasNode:
			return fmt.Errorf("%w: %s: line %d: %s is an alias (*%s); write the value itself (nothing was written)", ErrSprintUnsafe, path, n.Line, at, n.Value)
		case n.Anchor != "":
			return fmt.Errorf("%w: %s: line %d: %s carries an anchor (&%s); remove it (nothing was written)", ErrSprintUnsafe, path, n.Line, at, n.Anchor)
		}
		if n.Kind == yaml.MappingNode {
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if seen[k.Value] {
					return fmt.Errorf("%w: %s: line %d: duplicate key %s; keep one (nothing was written)", ErrSprintUnsafe, path, k.Line, k.Value)
				}
				seen[k.Value] = true
				if err := walk(k, k.Value); err != nil {
					return err
				}
				if err := walk(n.Content[i+1], k.Value); err != nil {
					return err
				}
			}
			return nil
		}
		for _, c := range n.Content {
			if err := walk(c, at); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(top, "the document")
}

// Rewritable is nil when the file can be rewritten by bytes, else the
// ErrSprintUnsafe that names the key and line at fault.
func (s *SprintStatus) Rewritable() error { return s.unsafe }

// Advance moves an entry, written exactly as key, forward to status: never
// backwards (a status already as far or further is left, changed false),
// never from or to a status its kind does not have.
func (s *SprintStatus) Advance(key, status string) (changed bool, err error) {
	i := s.index(key)
	if i < 0 {
		return false, fmt.Errorf("%w: %s has no entry %s", ErrStoryNotFound, s.Path, key)
	}
	kind := entryKind(key)
	ranks := statusRanks[kind]
	to, ok := ranks[status]
	if !ok {
		return false, fmt.Errorf("%w %q for %s %s", ErrInvalidStatus, status, kind, key)
	}
	from, ok := ranks[s.entries[i].Status]
	if !ok {
		return false, fmt.Errorf("%w: %s: %s has the status %q, which a %s does not have", ErrSprintInvalid, s.Path, key, s.entries[i].Status, kind)
	}
	if from >= to {
		return false, nil
	}
	return true, s.replaceValue(i, status)
}

// Stamp sets the top-level last_updated to now, written in the format the
// file already uses (one of BMAD's); a file without one, or with a format
// BMAD does not know, is left as it is.
func (s *SprintStatus) Stamp(now time.Time) error {
	v := s.topValue("last_updated")
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	for _, layout := range stampLayouts {
		if _, err := time.Parse(layout, v.Value); err != nil {
			continue
		}
		stamp := now.Format(layout)
		if stamp == v.Value {
			return nil
		}
		out, err := s.replaceScalar(v, stamp)
		if err != nil {
			return err
		}
		next, err := ParseSprintStatus(s.Path, out)
		if err != nil {
			return fmt.Errorf("edit of last_updated would corrupt it: %w", err)
		}
		if nv := next.topValue("last_updated"); nv == nil || nv.Value != stamp || !sameEntries(s.entries, next.entries) {
			return fmt.Errorf("%w: %s: edit of last_updated did not take", ErrSprintInvalid, s.Path)
		}
		*s = *next
		return nil
	}
	return nil
}

func sameEntries(a, b []StatusEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Status != b[i].Status {
			return false
		}
	}
	return true
}

// topValue is the value node of a top-level key, nil without one.
func (s *SprintStatus) topValue(key string) *yaml.Node {
	for i := 0; i+1 < len(s.top.Content); i += 2 {
		if s.top.Content[i].Value == key {
			return s.top.Content[i+1]
		}
	}
	return nil
}

// StartStory records on the board that the run dispatched a story: the
// story and its epic to in-progress, never backwards, last_updated stamped.
// The story's entry is found as the file writes it; a story the board does
// not list is ErrStoryNotFound, and nothing is written.
func (p *Layout) StartStory(k StoryKey, now time.Time) error {
	return p.moveOnBoard(k, StatusInProgress, now)
}

// FinishStory records a verified story: it goes to done, and its epic to
// done once every story of the epic on the board is, never backwards.
func (p *Layout) FinishStory(k StoryKey, now time.Time) error {
	return p.moveOnBoard(k, StatusDone, now)
}

func (p *Layout) moveOnBoard(k StoryKey, status string, now time.Time) error {
	return p.UpdateSprintStatus(func(s *SprintStatus) error {
		e, ok := s.Story(k)
		if !ok {
			return fmt.Errorf("%w: %s lists no story %s", ErrStoryNotFound, p.Rel(s.Path), k.Dotted())
		}
		changed, err := s.Advance(e.Key, status)
		if err != nil {
			return err
		}
		epic := "epic-" + k.Epic
		epicStatus := StatusInProgress
		if status == StatusDone {
			epicStatus = StatusDone
			for _, o := range s.entries {
				if o.IsStory() && o.Story.Epic == k.Epic && o.Status != StatusDone {
					epicStatus = StatusInProgress
					break
				}
			}
		}
		if s.index(epic) >= 0 {
			moved, err := s.Advance(epic, epicStatus)
			if err != nil {
				return err
			}
			changed = changed || moved
		}
		if !changed {
			return nil
		}
		return s.Stamp(now)
	})
}
