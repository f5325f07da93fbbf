package workflows

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/story-automator/story-automator/internal/lazyre"
	"go.yaml.in/yaml/v3"
)

// actionItemsKey is the top-level list BMAD's retrospective appends to.
const actionItemsKey = "action_items"

// ownerSuffix is an action item's owner written after its text:
// "… (owner: Dev)", "… — Owner: Dev".
var ownerSuffix = lazyre.New(`(?i)\s*(?:[(\[]|[—–-]\s*)?\**owner\**:\**\s*([^)\]]+?)[)\]]?\s*$`)

// RetroBoard is what RecordRetro did to the board.
type RetroBoard struct {
	// RetroSet: the run set epic-N-retrospective to done itself (the
	// child had not).
	RetroSet bool
	// ItemsAdded counts the action items the run appended.
	ItemsAdded int
}

// Changed reports whether RecordRetro wrote anything.
func (b RetroBoard) Changed() bool { return b.RetroSet || b.ItemsAdded > 0 }

// RecordRetro puts an epic's held retrospective on sprint-status.yaml as
// BMAD 6.12's own `sprint_status.py update --set-retro-done --add-action`
// does, when the retrospective's child did not: epic-N-retrospective to
// done (added after the epic's last entry when the board has none), the
// document's action items appended to action_items (id
// epic-N-retro-item-<n>-<slug>, epic, action, owner, status open, ref to
// the document, project-relative), last_updated stamped. A board whose
// retrospective entry is already done is the child's doing and is left
// alone. ref is the document's project-relative path.
func (p *Layout) RecordRetro(epic string, r Retro, ref string, now time.Time) (RetroBoard, error) {
	var did RetroBoard
	err := p.UpdateSprintStatus(func(s *SprintStatus) error {
		did = RetroBoard{}
		key := "epic-" + epic + "-retrospective"
		if i := s.index(key); i >= 0 && s.entries[i].Status == StatusDone {
			return nil
		}
		if err := s.setRetroDone(epic, key); err != nil {
			return err
		}
		did.RetroSet = true
		n, err := s.appendActionItems(epic, r.ActionItems, ref)
		if err != nil {
			return err
		}
		did.ItemsAdded = n
		return s.Stamp(now)
	})
	return did, err
}

// setRetroDone advances the retrospective entry to done, or adds it after
// the epic's last entry.
func (s *SprintStatus) setRetroDone(epic, key string) error {
	if s.index(key) >= 0 {
		_, err := s.Advance(key, StatusDone)
		return err
	}
	after := len(s.entries) - 1
	for i, e := range s.entries {
		if (e.IsStory() && e.Story.Epic == epic) || e.Key == "epic-"+epic {
			after = i
		}
	}
	return s.insertAfter(after, key, StatusDone)
}

// actionItem is one action_items entry in the order BMAD writes its keys.
type actionItem struct {
	ID, Action, Owner, Ref string
	Epic                   int
}

// lines renders the item as ruamel writes it with BMAD's indentation
// (mapping 2, sequence 4, offset 2): dash at dash columns, keys two further.
func (a actionItem) lines(dash int, eol string) string {
	pad, key := strings.Repeat(" ", dash), strings.Repeat(" ", dash+2)
	return pad + "- id: " + quoteYAML(a.ID) + eol +
		key + "epic: " + fmt.Sprint(a.Epic) + eol +
		key + "action: " + quoteYAML(a.Action) + eol +
		key + "owner: " + quoteYAML(a.Owner) + eol +
		key + "status: open" + eol +
		key + "ref: " + quoteYAML(a.Ref) + eol
}

// appendActionItems adds one entry per item to the top-level action_items
// list (made when there is none), and checks the result parses to exactly
// the entries before plus these.
func (s *SprintStatus) appendActionItems(epic string, items []string, ref string) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	num := 0
	if _, err := fmt.Sscan(epic, &num); err != nil || fmt.Sprint(num) != epic {
		return 0, fmt.Errorf("%w: epic %q is not a number; BMAD's action items need one", ErrInvalidKey, epic)
	}
	eol := "\n"
	if bytes.Contains(s.src, []byte("\r\n")) {
		eol = "\r\n"
	}
	seq := s.topValue(actionItemsKey)
	before := 0
	if seq != nil && seq.Kind == yaml.SequenceNode {
		before = len(seq.Content)
	}
	var want []actionItem
	for i, text := range items {
		action, owner := text, ""
		if m := ownerSuffix().FindStringSubmatchIndex(text); m != nil {
			action, owner = strings.TrimSpace(text[:m[0]]), strings.TrimSpace(text[m[2]:m[3]])
		}
		want = append(want, actionItem{ID: fmt.Sprintf("epic-%d-retro-item-%d-%s", num, before+i+1, retroSlug(action)),
			Epic: num, Action: action, Owner: owner, Ref: ref})
	}
	out, err := s.withItems(seq, want, eol)
	if err != nil {
		return 0, err
	}
	next, err := ParseSprintStatus(s.Path, out)
	if err != nil {
		return 0, fmt.Errorf("adding action items would corrupt %s: %w", s.Path, err)
	}
	if !sameEntries(s.entries, next.entries) || !hasItems(next, before, want) {
		return 0, fmt.Errorf("%w: %s: the action items did not take (nothing was written)", ErrSprintInvalid, s.Path)
	}
	*s = *next
	return len(want), nil
}

// withItems is the file with the items written after the list's last
// entry, as the list's value when it is empty, or as a new list at the end.
func (s *SprintStatus) withItems(seq *yaml.Node, items []actionItem, eol string) ([]byte, error) {
	render := func(dash int) string {
		var b strings.Builder
		for _, a := range items {
			b.WriteString(a.lines(dash, eol))
		}
		return b.String()
	}
	src := s.src
	switch {
	case seq == nil:
		out := append([]byte(nil), src...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, eol...)
		}
		return append(out, actionItemsKey+":"+eol+render(2)...), nil
	case seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 && seq.Style&yaml.FlowStyle == 0:
		last := seq.Content[len(seq.Content)-1]
		end := lastLine(last)
		at, err := offsetOf(src, end+1, 1)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSprintInvalid, s.Path, err)
		}
		out := append([]byte(nil), src[:at]...)
		if at > 0 && src[at-1] != '\n' {
			out = append(out, eol...)
		}
		out = append(out, render(max(seq.Content[0].Column-3, 0))...)
		return append(out, src[at:]...), nil
	case (seq.Kind == yaml.ScalarNode && seq.Tag == "!!null") || (seq.Kind == yaml.SequenceNode && len(seq.Content) == 0 && seq.Line == s.keyNode(actionItemsKey).Line):
		// "action_items:" or "action_items: []" on one line: that line
		// becomes the list's head.
		k := s.keyNode(actionItemsKey)
		at, err := offsetOf(src, k.Line, 1)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSprintInvalid, s.Path, err)
		}
		stop := len(src)
		if nl := bytes.IndexByte(src[at:], '\n'); nl >= 0 {
			stop = at + nl + 1
		}
		out := append([]byte(nil), src[:at]...)
		out = append(out, actionItemsKey+":"+eol+render(2)...)
		return append(out, src[stop:]...), nil
	}
	return nil, fmt.Errorf("%w: %s: %s is neither a block list nor empty; make it one entry per line (nothing was written)",
		ErrSprintUnsafe, s.Path, actionItemsKey)
}

// keyNode is a top-level key's node (the document's own when absent).
func (s *SprintStatus) keyNode(key string) *yaml.Node {
	for i := 0; i+1 < len(s.top.Content); i += 2 {
		if s.top.Content[i].Value == key {
			return s.top.Content[i]
		}
	}
	return s.top
}

// lastLine is the last line a node's text is on.
func lastLine(n *yaml.Node) int {
	line := n.Line
	for _, c := range n.Content {
		line = max(line, lastLine(c))
	}
	return line
}

// hasItems reports whether the board's action_items are before entries
// followed by want.
func hasItems(s *SprintStatus, before int, want []actionItem) bool {
	seq := s.topValue(actionItemsKey)
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) != before+len(want) {
		return false
	}
	for i, a := range want {
		var got struct {
			ID     string `yaml:"id"`
			Epic   int    `yaml:"epic"`
			Action string `yaml:"action"`
			Owner  string `yaml:"owner"`
			Status string `yaml:"status"`
			Ref    string `yaml:"ref"`
		}
		if err := seq.Content[before+i].Decode(&got); err != nil {
			return false
		}
		if got.ID != a.ID || got.Epic != a.Epic || got.Action != a.Action || got.Owner != a.Owner || got.Status != "open" || got.Ref != a.Ref {
			return false
		}
	}
	return true
}

// quoteYAML writes a string double-quoted, as BMAD's script forces its
// values to be; a JSON string is a valid YAML double-quoted scalar.
func quoteYAML(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// retroSlug is an action's slug as BMAD's sprint_status.py derives it:
// lowercase, runs of non-word characters to "-", at most 40 characters,
// and a short hash of the text when nothing is left.
func retroSlug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || r == '_' || unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := []rune(strings.Trim(b.String(), "-"))
	if len(slug) > 40 {
		slug = slug[:40]
	}
	out := strings.Trim(string(slug), "-")
	if out == "" {
		sum := sha256.Sum256([]byte(text))
		out = hex.EncodeToString(sum[:])[:8]
	}
	return out
}

// CarryRetro gives s what a retrospective writes outside
// development_status as from has it: its action_items block and its
// last_updated (a retrospective's commit takes them from the work tree,
// whatever the committed board had).
func (s *SprintStatus) CarryRetro(from *SprintStatus) error {
	if err := s.carryActionItems(from); err != nil {
		return err
	}
	v, want := s.topValue("last_updated"), from.topValue("last_updated")
	if v == nil || want == nil || v.Kind != yaml.ScalarNode || want.Kind != yaml.ScalarNode || v.Value == want.Value {
		return nil
	}
	out, err := s.replaceScalar(v, want.Value)
	if err != nil {
		return err
	}
	next, err := ParseSprintStatus(s.Path, out)
	if err != nil {
		return fmt.Errorf("carrying last_updated would corrupt %s: %w", s.Path, err)
	}
	if nv := next.topValue("last_updated"); nv == nil || nv.Value != want.Value || !sameEntries(s.entries, next.entries) {
		return fmt.Errorf("%w: %s: carrying last_updated did not take", ErrSprintInvalid, s.Path)
	}
	*s = *next
	return nil
}

// carryActionItems gives s the action_items block of from, as from writes
// it. A board without a difference is left as it is; the result must parse
// to from's items and s's own entries.
func (s *SprintStatus) carryActionItems(from *SprintStatus) error {
	want := from.topValue(actionItemsKey)
	if want == nil {
		return nil
	}
	block := from.topBlock(actionItemsKey)
	out := append([]byte(nil), s.src...)
	if start, end := s.topBlockSpan(actionItemsKey); start >= 0 {
		if bytes.Equal(s.src[start:end], block) {
			return nil
		}
		out = append(append(append([]byte(nil), s.src[:start]...), block...), s.src[end:]...)
	} else {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, block...)
	}
	next, err := ParseSprintStatus(s.Path, out)
	if err != nil {
		return fmt.Errorf("carrying the action items would corrupt %s: %w", s.Path, err)
	}
	var a, b any
	if err := want.Decode(&a); err != nil {
		return err
	}
	if got := next.topValue(actionItemsKey); got == nil || got.Decode(&b) != nil || !sameYAML(a, b) || !sameEntries(s.entries, next.entries) {
		return fmt.Errorf("%w: %s: carrying the action items did not take", ErrSprintInvalid, s.Path)
	}
	*s = *next
	return nil
}

func sameYAML(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// topBlock is the text of a top-level key and its value, up to the next
// top-level key (or the end), its last line ended.
func (s *SprintStatus) topBlock(key string) []byte {
	start, end := s.topBlockSpan(key)
	if start < 0 {
		return nil
	}
	b := append([]byte(nil), s.src[start:end]...)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}

// topBlockSpan is where topBlock lies in the source (-1 when absent).
func (s *SprintStatus) topBlockSpan(key string) (start, end int) {
	for i := 0; i+1 < len(s.top.Content); i += 2 {
		if s.top.Content[i].Value != key {
			continue
		}
		start, err := offsetOf(s.src, s.top.Content[i].Line, 1)
		if err != nil {
			return -1, -1
		}
		end := len(s.src)
		if i+2 < len(s.top.Content) {
			if e, err := offsetOf(s.src, s.top.Content[i+2].Line, 1); err == nil {
				end = e
			}
		}
		return start, end
	}
	return -1, -1
}
