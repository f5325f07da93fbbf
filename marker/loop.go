package marker

import "encoding/json"

// LoopState is the `loop` object of a loop-mode marker (SPEC §6).
type LoopState struct {
	Prompt            string  `json:"prompt"`
	Iteration         int     `json:"iteration"`
	MaxIterations     int     `json:"maxIterations"`
	CompletionPromise string  `json:"completionPromise,omitempty"`
	ExitStrategy      string  `json:"exitStrategy,omitempty"`
	FixPlan           string  `json:"fixPlan,omitempty"`
	Advisor           string  `json:"advisor,omitempty"`
	Threshold         float64 `json:"threshold,omitempty"`
	StartedAt         string  `json:"startedAt,omitempty"`

	// Extra keeps loop fields this version does not know.
	Extra map[string]json.RawMessage `json:"-"`
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
