package stophook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/marker"
)

// maxFixPlanBytes bounds what the hook reads of a fix-plan file.
const maxFixPlanBytes = 1 << 20

// gatherLoopFacts collects, before the marker lock is taken, what Decide needs
// for a loop and cannot find out by itself: the transcript's last assistant
// text (only when the input lacks last_assistant_message), the git fingerprint
// (no git process unless the strategy watches the work tree), the fix plan
// (only for fix_plan). The advisor is not among them: it is consulted only
// when the decision asks for it (see Shell.advise). The shell calls it for the owner's stop only (notOwnerStop), so a
// stop that is not the owner's, or not a loop's, costs nothing.
func (s *Shell) gatherLoopFacts(ctx context.Context, in Input, m *marker.Marker) LoopFacts {
	var f LoopFacts
	if !m.IsLoop() {
		return f
	}
	l := m.Loop
	if in.LastAssistantMessage == nil && in.TranscriptPath != "" {
		text, err := LastAssistantText(in.TranscriptPath, MaxTranscriptTail)
		if err != nil {
			s.Log.Debug("no assistant text in the transcript", "error", err)
		}
		f.TranscriptMessage = text
	}
	f.GitFingerprint = GitFingerprint(ctx, s.ProjectRoot, StrategyNeedsWorkTree(l.ExitStrategy))
	if l.FixPlan != "" && strategyUses(l, StrategyFixPlan) {
		f.FixPlan, f.FixPlanErr = readFixPlan(s.ProjectRoot, l.FixPlan)
	}
	return f
}

// consultAdvisor runs the loop's advisor, only when it is the very command
// the user approved at `loop start` (internal/approval): the marker lies in
// the project, where a child may have rewritten it. Any other command is
// not run and counts as a failing advisor, which lets the stop through.
func (s *Shell) consultAdvisor(ctx context.Context, raw []byte, msg string, l *marker.LoopState) *AdvisorVerdict {
	if err := advisorApproved(s.Getenv, l.Advisor); err != nil {
		return &AdvisorVerdict{Err: err}
	}
	req, err := AdvisorRequest(raw, msg, l)
	if err != nil {
		return &AdvisorVerdict{Err: err}
	}
	start := time.Now()
	v := RunAdvisor(ctx, l.Advisor, s.ProjectRoot, req, AdvisorTimeout(l))
	s.Log.Debug("advisor consulted", "took", time.Since(start), "err", v.Err)
	return &v
}

// ErrAdvisorNotApproved marks an advisor the hook did not run: not the
// command approved at `loop start`.
var ErrAdvisorNotApproved = errors.New("not run: the marker's advisor is not a command you approved with `story-automator loop start --advisor`")

func advisorApproved(getenv func(string) string, command string) error {
	st, err := approval.Open(getenv)
	if err != nil {
		return fmt.Errorf("%w (%v)", ErrAdvisorNotApproved, err)
	}
	if !st.Approved(command) {
		return fmt.Errorf("%w (no approval in %s; the marker may have been changed since): "+
			"if %q is yours, `story-automator loop cancel` and start the loop again from your terminal",
			ErrAdvisorNotApproved, st.Dir, clip(command, 120))
	}
	return nil
}

// readFixPlan reads the fix-plan file (relative paths are from the project root).
func readFixPlan(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read fix plan: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFixPlanBytes))
	if err != nil {
		return "", fmt.Errorf("read fix plan %s: %w", path, err)
	}
	return string(data), nil
}
