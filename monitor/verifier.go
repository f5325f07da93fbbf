package monitor

import "context"

// Verdict is the answer of one verification.
type Verdict struct {
	Verified bool   `json:"verified"`
	Detail   string `json:"detail,omitempty"`
	// ContractErr is set when the verifier itself is invalid (a bad spec, an
	// unknown story): the monitor reports incomplete at once, with no rechecks.
	ContractErr error `json:"-"`
}

// Verifier confirms that a step's work really happened.
type Verifier interface {
	// Name identifies the verifier in JSON output, e.g. "glob:docs/*.md=1".
	Name() string
	Verify(ctx context.Context) Verdict
}
