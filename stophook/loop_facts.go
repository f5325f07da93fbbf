package stophook

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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

func (s *Shell) consultAdvisor(ctx context.Context, raw []byte, msg string, l *marker.LoopState) *AdvisorVerdict {
	req, err := AdvisorRequest(raw, msg, l)
	if err != nil {
		return &AdvisorVerdict{Err: err}
	}
	start := time.Now()
	v := RunAdvisor(ctx, l.Advisor, s.ProjectRoot, req, AdvisorTimeout(l))
	s.Log.Debug("advisor consulted", "took", time.Since(start), "err", v.Err)
	return &v
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
