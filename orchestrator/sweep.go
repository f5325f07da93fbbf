package orchestrator

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/marker"
)

// A process killed in the middle of an atomic write leaves its temp file
// (".<name>.tmp-<digits>") next to the file it was replacing. A run sweeps
// the temps of the files only the tool writes, by exact pattern, when it
// holds the lock of their writers: the run lock (state documents, and once
// the abandoned sessions are closed, the BMAD files and session files) and
// the marker lock (the marker).

// TempSweeper is implemented by a Backlog or StepRunner that writes files of
// its own: it removes their temp files a killed writer left behind.
type TempSweeper interface {
	SweepTemps() []string
}

// sweepRunTemps removes the temps of the state documents (the caller holds
// the run lock) and of the marker (under the marker lock).
func sweepRunTemps(ctx context.Context, root string, store *marker.Store) []string {
	removed := atomicfile.SweepTemps(RunsDir(root), func(t string) bool {
		return strings.HasPrefix(t, "run-") && strings.HasSuffix(t, ".md")
	})
	if unlock, err := store.Lock(ctx); err == nil {
		base := filepath.Base(store.Path)
		removed = append(removed, atomicfile.SweepTemps(store.Dir(), func(t string) bool { return t == base })...)
		unlock()
	}
	return removed
}

// sweepTemps removes what the project and the step runner left half-written.
func (e *Engine) sweepTemps() {
	for _, x := range []any{e.Backlog, e.Steps} {
		if s, ok := x.(TempSweeper); ok {
			for _, p := range s.SweepTemps() {
				e.Log.Debug().Str("path", p).Msg("removed a temp file left by a killed write")
			}
		}
	}
}
