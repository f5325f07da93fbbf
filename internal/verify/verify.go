// Package verify is the one seam for "did a step's work really happen": a
// Verifier the monitor re-checks and the run trusts, whoever implements it —
// the BMAD workflow checks (workflows), the generic specs (monitor: none,
// cmd:, glob:) or a contract failure.
package verify

import "context"

// Verdict is the answer of one verification.
type Verdict struct {
	Verified bool   `json:"verified"`
	Detail   string `json:"detail,omitempty"`
	// ContractErr is set when the verifier itself can never pass as asked (a
	// bad spec, an unknown story or verifier): re-checking is pointless.
	ContractErr error `json:"-"`
}

// Passed reports whether the work is confirmed: verified, and by a verifier
// that is valid.
func (v Verdict) Passed() bool { return v.Verified && v.ContractErr == nil }

// Verifier confirms that a step's work happened. Verify reads afresh on
// every call, so it can be asked again after a grace period.
type Verifier interface {
	// Name identifies the verifier in output, e.g. "review_completion" or "glob:docs/*.md=1".
	Name() string
	Verify(ctx context.Context) Verdict
}

// Contract is a verifier that always answers with err as a contract error:
// what a run or monitor reports when the verifier asked for is invalid.
func Contract(name string, err error) Verifier { return contract{name: name, err: err} }

// IsContract reports whether v is a Contract verifier.
func IsContract(v Verifier) bool {
	_, ok := v.(contract)
	return ok
}

type contract struct {
	name string
	err  error
}

func (c contract) Name() string { return c.name }

func (c contract) Verify(context.Context) Verdict {
	return Verdict{Detail: c.err.Error(), ContractErr: c.err}
}
