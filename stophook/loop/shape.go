package loop

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
)

// MaxFileBytes bounds what `loop import` and --prompt-file read.
const MaxFileBytes = 1 << 20

// Shape is what the user asked a new loop to look like (the flags shared by
// start and import); the Set fields tell an explicit flag from its default.
type Shape struct {
	MaxIterations        int
	MaxIterationsSet     bool
	CompletionPromise    string
	CompletionPromiseSet bool
	ExitStrategy         string
	FixPlan              string
	Advisor              string
	AdvisorTimeout       time.Duration
	Threshold            float64
	Owner                string
	OwnerSet             bool
	Replace              bool
}

// state validates s into a loop state (without prompt and iteration) and
// returns the warnings a user should see.
func (s Shape) state(projectRoot string) (*marker.LoopState, []string, error) {
	n := s.MaxIterations
	if n < 1 || n > marker.MaxIterationsCeiling {
		return nil, nil, usage("--max-iterations must be 1..%d (a loop is never unlimited), got %d", marker.MaxIterationsCeiling, n)
	}
	th := s.Threshold
	if !(th > 0 && th <= 1) {
		return nil, nil, usage("--threshold must be in (0, 1], got %v", th)
	}
	to := s.AdvisorTimeout
	if to <= 0 || to > stophook.MaxAdvisorTimeout {
		return nil, nil, usage("--advisor-timeout must be in (0, %s] so the advisor ends before the agent kills the Stop hook (%ds), got %s",
			stophook.MaxAdvisorTimeout, agent.HookTimeout, to)
	}
	l := &marker.LoopState{MaxIterations: n, CompletionPromise: strings.TrimSpace(s.CompletionPromise),
		ExitStrategy: strings.TrimSpace(s.ExitStrategy), Threshold: th}
	if fp := s.FixPlan; fp != "" {
		if !filepath.IsAbs(fp) {
			fp = filepath.Join(projectRoot, fp)
		}
		l.FixPlan = filepath.Clean(fp)
	}
	members, err := stophook.ParseExitStrategy(l.ExitStrategy, l.FixPlan != "")
	if err != nil {
		return nil, nil, usage("--exit-strategy: %v", err)
	}
	var warnings []string
	for _, m := range members {
		if m == stophook.StrategyFixPlan && l.FixPlan == "" {
			return nil, nil, usage("--exit-strategy %s needs --fix-plan FILE", l.ExitStrategy)
		}
	}
	if l.FixPlan != "" {
		if _, err := os.Stat(l.FixPlan); err != nil {
			warnings = append(warnings, fmt.Sprintf("fix plan %s does not exist yet", l.FixPlan))
		}
	}
	if a := strings.TrimSpace(s.Advisor); a != "" {
		l.Advisor, l.AdvisorTimeout = a, to.String()
	}
	return l, warnings, nil
}

// owner is the loop's owning session: the flag, else the imported file's,
// else the agent session this process runs in.
func (s Shape) owner(fromFile string, getenv func(string) string) string {
	if s.OwnerSet {
		return strings.TrimSpace(s.Owner)
	}
	if fromFile != "" {
		return fromFile
	}
	return agent.AgentSessionID(getenv)
}

// Prompt is the PROMPT words joined by spaces, or --prompt-file's text (file
// "-" reads in).
func Prompt(words []string, file string, in io.Reader) (string, error) {
	w := strings.TrimSpace(strings.Join(words, " "))
	switch {
	case file != "" && w != "":
		return "", usage("give the prompt as PROMPT or --prompt-file, not both")
	case file == "" && w == "":
		return "", usage("loop start needs a PROMPT")
	case file == "":
		return w, nil
	}
	data, err := ReadFile(in, file)
	if err != nil {
		return "", fail("prompt_file", "%v", err)
	}
	if p := strings.TrimSpace(string(data)); p != "" {
		return p, nil
	}
	return "", usage("--prompt-file %s is empty", file)
}

// ReadFile reads path ("-" = in), refusing more than MaxFileBytes.
func ReadFile(in io.Reader, path string) ([]byte, error) {
	r := in
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxFileBytes)
	}
	return data, nil
}
