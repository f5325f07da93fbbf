package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// ErrUnexpectedShape is returned when "hooks" or "hooks.<event>" exist but are
// not the object and array the agents define; such a file is left alone.
var ErrUnexpectedShape = errors.New("unexpected settings shape")

// Entry is one of our hook entries found in a settings document.
type Entry struct {
	Command string `json:"command"`
	// Timeout is the entry's timeout in seconds, 0 when it has none.
	Timeout int `json:"timeout,omitempty"`
	// Program is the binary or script the command runs.
	Program string `json:"program"`
	// Current is true when the entry is exactly what install writes.
	Current bool `json:"current"`
}

// ours reports whether a hook command is ours: the exact command install
// writes, or anything OurProgram recognises.
func ours(cmd string, h Hook) (string, bool) {
	if prog, ok := OurProgram(cmd); ok {
		return prog, true
	}
	// `<prog> stop-hook` where prog has the name of the binary installing now
	// (a renamed copy at another path): still ours, so it is replaced, not doubled.
	w, cur := splitWords(cmd), splitWords(h.Command)
	if len(w) == 2 && w[1] == "stop-hook" && len(cur) == 2 && filepath.Base(w[0]) == filepath.Base(cur[0]) {
		return w[0], true
	}
	return "", false
}

// stopGroups returns the hooks object and its array for event, either
// possibly nil when absent, or ErrUnexpectedShape when present with the wrong type.
func stopGroups(doc *Object, event string) (*Object, []any, error) {
	hv, ok := doc.Get("hooks")
	if !ok {
		return nil, nil, nil
	}
	hooks, ok := hv.(*Object)
	if !ok {
		return nil, nil, fmt.Errorf("%w: \"hooks\" is not an object", ErrUnexpectedShape)
	}
	sv, ok := hooks.Get(event)
	if !ok {
		return hooks, nil, nil
	}
	stop, ok := sv.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%w: \"hooks.%s\" is not an array", ErrUnexpectedShape, event)
	}
	return hooks, stop, nil
}

// groupHooks returns a Stop group's object and its hooks array when it has that shape.
func groupHooks(group any) (*Object, []any, bool) {
	g, ok := group.(*Object)
	if !ok {
		return nil, nil, false
	}
	hv, ok := g.Get("hooks")
	if !ok {
		return nil, nil, false
	}
	arr, ok := hv.([]any)
	return g, arr, ok
}

// entryCommand returns the command string of a hook entry, if it has one.
func entryCommand(e any) (*Object, string, bool) { return entryCommandAt(e, "command") }

// entryCommandAt is entryCommand for an entry whose command is under key.
func entryCommandAt(e any, key string) (*Object, string, bool) {
	o, ok := e.(*Object)
	if !ok {
		return nil, "", false
	}
	cv, _ := o.Get(key)
	cmd, ok := cv.(string)
	return o, cmd, ok
}

// eventEntries are the entries under an event's array: its groups' hooks,
// or the array itself for a flat provider.
func eventEntries(stop []any, h Hook) []any {
	if h.Flat {
		return stop
	}
	var out []any
	for _, group := range stop {
		if _, arr, ok := groupHooks(group); ok {
			out = append(out, arr...)
		}
	}
	return out
}

// keepEntries filters entries, dropping those of ours keep refuses; it
// reports whether any went.
func keepEntries(arr []any, h Hook, keep func(entry *Object, cmd string) bool) ([]any, bool) {
	kept := make([]any, 0, len(arr))
	removed := false
	for _, e := range arr {
		if o, cmd, ok := entryCommandAt(e, h.commandKey()); ok {
			if _, mine := ours(cmd, h); mine && !keep(o, cmd) {
				removed = true
				continue
			}
		}
		kept = append(kept, e)
	}
	return kept, removed
}

// rewriteOurs walks every entry of ours under h's event in order and lets keep decide
// whether it stays; groups and containers emptied by a removal are dropped.
func rewriteOurs(doc *Object, h Hook, keep func(entry *Object, cmd string) bool) error {
	hooks, stop, err := stopGroups(doc, h.event())
	if err != nil || stop == nil {
		return err
	}
	var newStop []any
	var removed bool
	if h.Flat {
		newStop, removed = keepEntries(stop, h, keep)
	} else {
		newStop, removed = keepGroups(stop, h, keep)
	}
	if removed && len(newStop) == 0 {
		hooks.Delete(h.event())
		if len(hooks.Members) == 0 {
			doc.Delete("hooks")
		}
		return nil
	}
	hooks.Set(h.event(), newStop)
	return nil
}

// keepGroups is keepEntries inside each group of stop; a group left empty
// by a removal goes too.
func keepGroups(stop []any, h Hook, keep func(entry *Object, cmd string) bool) ([]any, bool) {
	newStop := make([]any, 0, len(stop))
	removed := false
	for _, group := range stop {
		g, arr, ok := groupHooks(group)
		if !ok {
			newStop = append(newStop, group)
			continue
		}
		kept, gone := keepEntries(arr, h, keep)
		removed = removed || gone
		if len(kept) == 0 && len(arr) > 0 {
			continue // the group held only our entries
		}
		g.Set("hooks", kept)
		newStop = append(newStop, group)
	}
	return newStop, removed
}

// installHook makes the document hold exactly one entry of ours, equal to h:
// the first existing entry is normalised in place, later ones are removed, and
// a new group is appended when there was none. It returns what it changed.
func installHook(doc *Object, h Hook) ([]string, error) {
	if _, _, err := stopGroups(doc, h.event()); err != nil {
		return nil, err
	}
	var actions []string
	found := false
	err := rewriteOurs(doc, h, func(o *Object, cmd string) bool {
		if found {
			actions = append(actions, "remove duplicate entry "+cmd)
			return false
		}
		found = true
		if normaliseEntry(o, h) {
			actions = append(actions, "update entry "+cmd)
		}
		return true
	})
	if err != nil || found {
		return actions, err
	}
	hooks, stop, _ := stopGroups(doc, h.event())
	if hooks == nil {
		hooks = &Object{}
		doc.Set("hooks", hooks)
	}
	var add any = &Object{Members: []Member{{Key: "hooks", Value: []any{newEntry(h)}}}}
	if h.Flat {
		add = newEntry(h)
	}
	hooks.Set(h.event(), append(stop, add))
	return append(actions, "add entry "+h.Command), nil
}

// uninstallHook removes every entry of ours (h is the hook this binary would
// install, so a renamed copy's entry is recognised) and the containers left empty.
func uninstallHook(doc *Object, h Hook) ([]string, error) {
	var actions []string
	err := rewriteOurs(doc, h, func(_ *Object, cmd string) bool {
		actions = append(actions, "remove entry "+cmd)
		return false
	})
	return actions, err
}

func newEntry(h Hook) *Object {
	return &Object{Members: []Member{
		{Key: "type", Value: "command"},
		{Key: h.commandKey(), Value: h.Command},
		{Key: h.timeoutKey(), Value: json.Number(fmt.Sprint(h.timeoutValue()))},
	}}
}

// normaliseEntry sets type, command and timeout to h's, keeping any other keys;
// it reports whether anything differed.
func normaliseEntry(o *Object, h Hook) bool {
	want := newEntry(h)
	changed := false
	for _, m := range want.Members {
		if v, ok := o.Get(m.Key); !ok || !sameScalar(v, m.Value) {
			o.Set(m.Key, m.Value)
			changed = true
		}
	}
	return changed
}

func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	}
	return false
}

// findOurs lists our entries under h's event in document order.
func findOurs(doc *Object, h Hook) ([]Entry, error) {
	_, stop, err := stopGroups(doc, h.event())
	if err != nil {
		return nil, err
	}
	var found []Entry
	for _, e := range eventEntries(stop, h) {
		o, cmd, ok := entryCommandAt(e, h.commandKey())
		if !ok {
			continue
		}
		prog, mine := ours(cmd, h)
		if !mine {
			continue
		}
		entry := Entry{Command: cmd, Program: prog}
		if tv, ok := o.Get(h.timeoutKey()); ok {
			if n, ok := tv.(json.Number); ok {
				t, _ := n.Int64()
				entry.Timeout = h.timeoutSeconds(int(t))
			}
		}
		probe := &Object{Members: append([]Member(nil), o.Members...)}
		entry.Current = h.Command != "" && !normaliseEntry(probe, h)
		found = append(found, entry)
	}
	return found, nil
}
