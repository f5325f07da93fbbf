package monitor

import "github.com/story-automator/story-automator/internal/verify"

// Verdict is the answer of one verification; a contract error makes the
// monitor report incomplete at once, with no rechecks.
type Verdict = verify.Verdict

// Verifier confirms that a step's work really happened (verify.Verifier, the
// one seam the workflow checks implement too).
type Verifier = verify.Verifier
