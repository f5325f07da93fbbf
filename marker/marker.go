// Package marker owns the run marker: the flock-guarded file that tells the
// Stop hook whether a run is in progress (per-session state lives in
// package sessionstate, process checks in internal/proc).
package marker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Schema values of the marker (docs/reference.md, "The marker").
const (
	SchemaVersion = 1
	ModeStory     = "story"
	ModeLoop      = "loop"
	StatusActive  = "active"
	StatusPaused  = "paused"
)

// Marker is the JSON object that tells the Stop hook whether a run is in progress.
// Fields it does not know are kept in Extra and written back unchanged.
type Marker struct {
	Version          int    `json:"version"`
	Mode             string `json:"mode"`
	Status           string `json:"status"`
	Epic             string `json:"epic,omitempty"`
	CurrentStory     string `json:"currentStory,omitempty"`
	CurrentStep      string `json:"currentStep,omitempty"`
	StoriesRemaining int    `json:"storiesRemaining"`
	StateFile        string `json:"stateFile,omitempty"`
	ProjectSlug      string `json:"projectSlug,omitempty"`
	OwnerSession     string `json:"ownerSession"`
	// ClaimOnStop: the marker was made inside an agent session that did not
	// say its id, so the first session whose Stop hook meets it becomes the
	// owner (a plain unowned marker guards every session instead).
	ClaimOnStop bool `json:"claimOnStop,omitempty"`
	OwnerPid    int  `json:"ownerPid,omitempty"`
	// OwnerPidStart is when ownerPid started (clock ticks since boot): a
	// pid reused by another process does not match it.
	OwnerPidStart uint64 `json:"ownerPidStart,omitempty"`
	// OwnerLock is the lock file the owner process holds for its whole life
	// (a `run`'s run lock): whether it is held is the truth about the owner.
	OwnerLock             string        `json:"ownerLock,omitempty"`
	CreatedAt             string        `json:"createdAt,omitempty"`
	Heartbeat             string        `json:"heartbeat,omitempty"`
	StopHookBlocks        int           `json:"stopHookBlocks"`
	StopHookSeenHeartbeat string        `json:"stopHookSeenHeartbeat,omitempty"`
	StopHookSeenRemaining *int          `json:"stopHookSeenRemaining,omitempty"`
	PauseReason           string        `json:"pauseReason,omitempty"`
	LastDecision          *LastDecision `json:"lastDecision,omitempty"`
	Loop                  *LoopState    `json:"loop,omitempty"`
	// Waiting is set while a story run waits for an agent's limit to lift:
	// the run is alive (status stays active) and goes on by itself.
	Waiting *Waiting `json:"waiting,omitempty"`

	// Extra holds the fields this version does not know, keyed by name.
	Extra map[string]json.RawMessage `json:"-"`
}

// LastDecision is what the Stop hook decided the last time it acted for the owner.
type LastDecision struct {
	At       string `json:"at"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// Waiting is a run's wait for an agent's limit to lift. Times are RFC 3339.
type Waiting struct {
	Reason string `json:"reason"`
	Agent  string `json:"agent"`
	// ResetsAt is when the agent said its limit lifts ("" = it did not say);
	// ResumesAt is when the run goes on.
	ResetsAt  string `json:"resetsAt,omitempty"`
	ResumesAt string `json:"resumesAt"`
	Since     string `json:"since,omitempty"`
}

// ErrNotObject means the marker holds valid JSON that is not an object.
var ErrNotObject = errors.New("marker is not a JSON object")

// knownFields are the JSON names Marker maps to struct fields.
var knownFields = map[string]bool{
	"version": true, "mode": true, "status": true, "epic": true, "currentStory": true,
	"currentStep": true, "storiesRemaining": true, "stateFile": true, "projectSlug": true,
	"ownerSession": true, "claimOnStop": true, "ownerPid": true, "ownerPidStart": true, "ownerLock": true, "createdAt": true, "heartbeat": true,
	"stopHookBlocks": true, "stopHookSeenHeartbeat": true, "stopHookSeenRemaining": true,
	"pauseReason": true, "lastDecision": true, "loop": true, "waiting": true,
}

// knownFieldsFolded holds knownFields in lower case.
var knownFieldsFolded = func() map[string]bool {
	out := make(map[string]bool, len(knownFields))
	for k := range knownFields {
		out[strings.ToLower(k)] = true
	}
	return out
}()

// markerFields is Marker without its methods, so encoding/json does not recurse.
type markerFields Marker

// Decode parses marker bytes. A marker without version, mode or status (as older
// tools write it) is an active story-mode marker.
func Decode(data []byte) (*Marker, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if json.Valid(trimmed) {
			return nil, ErrNotObject
		}
		return nil, fmt.Errorf("marker is not valid JSON")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, fmt.Errorf("marker is not valid JSON: %w", err)
	}
	var f markerFields
	if err := json.Unmarshal(trimmed, &f); err != nil {
		return nil, fmt.Errorf("marker field has the wrong type: %w", err)
	}
	m := Marker(f)
	for k, v := range raw {
		// encoding/json matched a known field case-insensitively; keeping the
		// key too would write the field twice.
		if !knownFields[k] && !knownFieldsFolded[strings.ToLower(k)] {
			if m.Extra == nil {
				m.Extra = map[string]json.RawMessage{}
			}
			m.Extra[k] = v
		}
	}
	if m.Version == 0 {
		m.Version = SchemaVersion
	}
	if m.Mode == "" {
		m.Mode = ModeStory
	}
	if m.Status == "" {
		m.Status = StatusActive
	}
	return &m, nil
}

// Encode renders the marker as indented JSON, unknown fields included.
func (m *Marker) Encode() ([]byte, error) {
	known, err := json.Marshal(markerFields(*m))
	if err != nil {
		return nil, err
	}
	if len(m.Extra) > 0 {
		var merged map[string]json.RawMessage
		if err := json.Unmarshal(known, &merged); err != nil {
			return nil, err
		}
		for k, v := range m.Extra {
			if !knownFields[k] {
				merged[k] = v
			}
		}
		if known, err = json.Marshal(merged); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, known, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// MarshalJSON lets a Marker be embedded in command output with its unknown fields.
func (m *Marker) MarshalJSON() ([]byte, error) {
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return nil, err
	}
	return c.Bytes(), nil
}

// Clone returns a deep copy, so a decision can change a marker without touching its input.
func (m *Marker) Clone() *Marker {
	c := *m
	if m.StopHookSeenRemaining != nil {
		v := *m.StopHookSeenRemaining
		c.StopHookSeenRemaining = &v
	}
	if m.LastDecision != nil {
		d := *m.LastDecision
		c.LastDecision = &d
	}
	if m.Loop != nil {
		c.Loop = m.Loop.Clone()
	}
	if m.Waiting != nil {
		w := *m.Waiting
		c.Waiting = &w
	}
	if m.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(m.Extra))
		for k, v := range m.Extra {
			c.Extra[k] = v
		}
	}
	return &c
}

// Active reports whether the marker asks for guarding at all (step 3 of the Stop hook's order, docs/reference.md).
// A mode this version does not know never asks for guarding: the hook fails open.
func (m *Marker) Active() bool {
	if m.Status != StatusActive {
		return false
	}
	switch m.Mode {
	case ModeStory:
		return m.StoriesRemaining > 0
	case ModeLoop:
		return true
	default:
		return false
	}
}

// Timestamp formats t the way every marker time is written: RFC 3339, UTC, nanoseconds.
func Timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseTime reads a marker timestamp; ok is false when it is missing or malformed.
func ParseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// Touch records verified progress: a new heartbeat that always differs from the last one.
func (m *Marker) Touch(now time.Time) {
	ts := Timestamp(now)
	if ts == m.Heartbeat {
		ts = Timestamp(now.Add(time.Nanosecond))
	}
	m.Heartbeat = ts
}

// Pause stops the Stop hook from guarding the run and records why.
func (m *Marker) Pause(reason string) {
	m.Status = StatusPaused
	m.PauseReason = reason
	m.Waiting = nil
}

// Resume makes a paused run guarded again, with a fresh circuit-breaker count.
func (m *Marker) Resume() {
	m.Status = StatusActive
	m.PauseReason = ""
	m.StopHookBlocks = 0
}
