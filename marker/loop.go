package marker

import "encoding/json"

// Loop limits shared by `loop start`, `loop import` and the Stop hook.
const (
	// DefaultMaxIterations is the iteration limit of a loop started without one;
	// a loop is never unlimited.
	DefaultMaxIterations = 20
	// MaxIterationsCeiling is the largest limit a user may ask for explicitly.
	MaxIterationsCeiling = 1000
	// DefaultThreshold is the advisor confidence a loop trusts by default.
	DefaultThreshold = 0.6
)

// LoopState is the `loop` object of a loop-mode marker (docs/loops.md).
// Fields it does not know are kept in Extra and written back unchanged.
type LoopState struct {
	Prompt            string  `json:"prompt"`
	Iteration         int     `json:"iteration"`
	MaxIterations     int     `json:"maxIterations"`
	CompletionPromise string  `json:"completionPromise"`
	ExitStrategy      string  `json:"exitStrategy"`
	FixPlan           string  `json:"fixPlan,omitempty"`
	Advisor           string  `json:"advisor,omitempty"`
	AdvisorTimeout    string  `json:"advisorTimeout,omitempty"`
	Threshold         float64 `json:"threshold,omitempty"`
	StartedAt         string  `json:"startedAt,omitempty"`
	ImportedFrom      string  `json:"importedFrom,omitempty"`

	// GitFingerprint is the git state the hook saw last; a change is progress.
	GitFingerprint string `json:"gitFingerprint,omitempty"`
	// NoProgressIterations counts consecutive iterations without progress
	// (the circuit_breaker exit strategy).
	NoProgressIterations int `json:"noProgressIterations,omitempty"`
	// LastResponseLength is the length of the previous iteration's last
	// assistant message, so the analyzer can see a response shrink.
	LastResponseLength int `json:"lastResponseLength,omitempty"`
	// LastConfidence is the analyzer's completion confidence (0–100) last time.
	LastConfidence int `json:"lastConfidence,omitempty"`

	// Extra keeps loop fields this version does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// loopFields is LoopState without its methods, so encoding/json does not recurse.
type loopFields LoopState

// knownLoopFields are the JSON names LoopState maps to struct fields.
var knownLoopFields = map[string]bool{
	"prompt": true, "iteration": true, "maxIterations": true, "completionPromise": true,
	"exitStrategy": true, "fixPlan": true, "advisor": true, "advisorTimeout": true,
	"threshold": true, "startedAt": true, "importedFrom": true, "gitFingerprint": true,
	"noProgressIterations": true, "lastResponseLength": true, "lastConfidence": true,
}

// UnmarshalJSON decodes the loop object and keeps the fields it does not know.
func (l *LoopState) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var f loopFields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*l = LoopState(f)
	for k, v := range raw {
		if !knownLoopFields[k] {
			if l.Extra == nil {
				l.Extra = map[string]json.RawMessage{}
			}
			l.Extra[k] = v
		}
	}
	return nil
}

// MarshalJSON encodes the loop object with its unknown fields.
func (l LoopState) MarshalJSON() ([]byte, error) {
	known, err := json.Marshal(loopFields(l))
	if err != nil || len(l.Extra) == 0 {
		return known, err
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(known, &merged); err != nil {
		return nil, err
	}
	for k, v := range l.Extra {
		if !knownLoopFields[k] {
			merged[k] = v
		}
	}
	return json.Marshal(merged)
}

// Clone returns a deep copy of the loop state.
func (l *LoopState) Clone() *LoopState {
	c := *l
	if l.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(l.Extra))
		for k, v := range l.Extra {
			c.Extra[k] = v
		}
	}
	return &c
}

// IsLoop reports whether the marker describes a prompt loop.
func (m *Marker) IsLoop() bool { return m != nil && m.Mode == ModeLoop && m.Loop != nil }
