package orchestrator

import (
	"context"
	"testing"

	"github.com/story-automator/story-automator/marker"
)

// What the tests of package orchestrator_test use of the fakes: they run
// the engine on the real adapters (gitvcs, bmad), which import this package.

// Harness is the fakes around a project root (see newHarness).
type Harness = harness

// NewHarness is newHarness.
func NewHarness(t *testing.T, keys ...string) *Harness { return newHarness(t, keys...) }

// Root is the project root; SetRoot moves it.
func (h *harness) Root() string        { return h.root }
func (h *harness) SetRoot(root string) { h.root = root }

// SetScript says how the fake step runner answers (nil: every step completes).
func (h *harness) SetScript(fn func(ctx context.Context, req StepRequest) StepResult) {
	h.steps.script = fn
}

// Options, Deps, Saved and Store are options, deps, saved and store.
func (h *harness) Options() Options            { return h.options() }
func (h *harness) Deps() Deps                  { return h.deps() }
func (h *harness) Saved(res *Result) *State    { return h.saved(res) }
func (h *harness) Store() *marker.Store        { return h.store() }
func (h *harness) StepRequests() []StepRequest { return h.steps.reqs }
