package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The statuses of a retrospective's action item, in order (BMAD 6.12's
// sprint_status.py ACTION_STATUSES).
const (
	ActionOpen       = "open"
	ActionInProgress = "in-progress"
	ActionDone       = "done"
)

var actionStatuses = []string{ActionOpen, ActionInProgress, ActionDone}

// ActionItem is one entry of the board's top-level action_items, as BMAD's
// retrospective writes it.
type ActionItem struct {
	ID     string `yaml:"id" json:"id"`
	Epic   int    `yaml:"epic" json:"epic"`
	Action string `yaml:"action" json:"action"`
	Owner  string `yaml:"owner" json:"owner,omitempty"`
	Status string `yaml:"status" json:"status"`
	Ref    string `yaml:"ref" json:"ref,omitempty"`
}

// Open reports whether nobody has started or finished the item.
func (a ActionItem) Open() bool { return a.Status == ActionOpen }

// ActionItems is the board's action_items (none when it has no list). An
// entry that is not one (not a mapping, no id, a status BMAD does not use)
// is ErrSprintInvalid naming its line.
func (s *SprintStatus) ActionItems() ([]ActionItem, error) {
	seq := s.topValue(actionItemsKey)
	if seq == nil || (seq.Kind == yaml.ScalarNode && seq.Tag == "!!null") {
		return nil, nil
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: %s line %d: %s is not a list", ErrSprintInvalid, s.Path, seq.Line, actionItemsKey)
	}
	var out []ActionItem
	for _, n := range seq.Content {
		var a ActionItem
		if err := n.Decode(&a); err != nil || n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%w: %s line %d: an action item is a mapping of id, epic, action, owner, status, ref", ErrSprintInvalid, s.Path, n.Line)
		}
		if strings.TrimSpace(a.ID) == "" {
			return nil, fmt.Errorf("%w: %s line %d: an action item without an id", ErrSprintInvalid, s.Path, n.Line)
		}
		if !slices.Contains(actionStatuses, a.Status) {
			return nil, fmt.Errorf("%w: %s line %d: action item %s has the status %q (one of %s)", ErrSprintInvalid, s.Path, n.Line,
				a.ID, a.Status, strings.Join(actionStatuses, ", "))
		}
		out = append(out, a)
	}
	return out, nil
}

// ReadActionItems is the board's action items; a project without a board
// has none.
func (p *Layout) ReadActionItems() ([]ActionItem, error) {
	s, err := p.ReadSprintStatus()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, nil
	}
	return s.ActionItems()
}

// AdvanceActionItem moves the board's action item id forward to status
// (open → in-progress → done) as BMAD's `sprint_status.py update
// --set-action-status` does: only the bytes of the item's status change,
// the item's quoting, the comments and every other line are kept, and
// last_updated is stamped. An item already there or further on is left as
// it is (changed false): the board never moves backwards. An id the board
// does not have is ErrStoryNotFound.
func (p *Layout) AdvanceActionItem(id, status string, now time.Time) (changed bool, err error) {
	to := slices.Index(actionStatuses, status)
	if to < 0 {
		return false, fmt.Errorf("action item status %q: one of %s", status, strings.Join(actionStatuses, ", "))
	}
	err = p.UpdateSprintStatus(func(s *SprintStatus) error {
		changed = false
		items, err := s.ActionItems()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(items, func(a ActionItem) bool { return a.ID == id })
		if i < 0 {
			return fmt.Errorf("%w: %s has no action item %s", ErrStoryNotFound, s.Path, id)
		}
		if slices.Index(actionStatuses, items[i].Status) >= to {
			return nil
		}
		v := mappingValue(s.topValue(actionItemsKey).Content[i], "status")
		if v == nil || v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%w: %s: action item %s has no one-line status", ErrSprintUnsafe, s.Path, id)
		}
		out, err := s.replaceScalar(v, status)
		if err != nil {
			return err
		}
		next, err := ParseSprintStatus(s.Path, out)
		if err != nil {
			return fmt.Errorf("setting action item %s %s would corrupt %s: %w", id, status, s.Path, err)
		}
		got, err := next.ActionItems()
		want := slices.Clone(items)
		want[i].Status = status
		if err != nil || !slices.Equal(got, want) || !sameEntries(s.entries, next.entries) {
			return fmt.Errorf("%w: %s: action item %s did not take %s (nothing was written)", ErrSprintInvalid, s.Path, id, status)
		}
		*s = *next
		changed = true
		return s.Stamp(now)
	})
	return changed, err
}

// mappingValue is a mapping node's value of key, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
