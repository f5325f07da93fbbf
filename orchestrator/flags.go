package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/workflows"
)

// FlagValues are a command line's flags, read by name (urfave/cli's
// Context has these methods).
type FlagValues interface {
	IsSet(name string) bool
	String(name string) string
	StringSlice(name string) []string
	Int(name string) int
	Int64(name string) int64
	Float64(name string) float64
	Duration(name string) time.Duration
	Bool(name string) bool
}

// FromFlags reads `run`'s command line into the run's options, refusing
// what cannot work with a usage error (*coded.Error, exit 2). A new run takes every flag, defaults included; a
// resumed run only those given again (the rest are zero: not given), so it
// keeps its recorded configuration (RunConfig.Merge).
func FromFlags(f FlagValues) (Options, error) {
	if err := checkFlags(f); err != nil {
		return Options{}, err
	}
	resume := f.Bool("resume")
	given := func(name string) bool { return f.IsSet(name) || !resume }
	o := Options{Resume: resume, DryRun: f.Bool("dry-run"), TrustProject: f.Bool("trust-project")}
	c := &o.RunConfig
	c.Epic, c.Stories = f.String("epic"), f.String("stories")
	c.FallbackAgent, c.Isolate = f.String("fallback-agent"), f.String("isolate")
	if given("agent") {
		c.Agent = f.String("agent")
	}
	if given("parallel") {
		c.Parallel = f.Int("parallel")
	}
	c.Model, c.StepModels, _ = ParseModels(f.StringSlice("model"))
	b := Budget{MaxCostUSD: f.Float64("max-cost"), MaxTokens: f.Int64("max-tokens")}
	if d := f.Duration("max-duration"); d > 0 {
		b.MaxDuration = DurationOf(d)
	}
	if b != (Budget{}) {
		c.Budget = &b
	}
	if f.IsSet("max-cycles") {
		c.MaxCycles = f.Int("max-cycles")
	}
	if f.IsSet("backoff") {
		c.Backoff = DurationOf(f.Duration("backoff"))
	}
	if given("completion-rechecks") {
		c.CompletionRechecks = f.Int("completion-rechecks")
	}
	if given("recheck-grace") {
		c.RecheckGrace = DurationOf(f.Duration("recheck-grace"))
	}
	return o, nil
}

// checkFlags refuses blank values and flag combinations that cannot work.
func checkFlags(f FlagValues) error {
	for _, n := range []string{"agent", "fallback-agent", "epic", "stories"} {
		if f.IsSet(n) && strings.TrimSpace(f.String(n)) == "" {
			return &coded.Error{Code: "invalid_flag", Message: fmt.Sprintf("--%s must not be blank", n), Exit: coded.ExitUsage}
		}
	}
	if f.Int("parallel") < 1 {
		return coded.Usage("--parallel must be at least 1")
	}
	if v := f.String("isolate"); f.IsSet("isolate") && v != IsolateWorktree && v != IsolateNone {
		return coded.Usage("--isolate must be worktree or none, got %q", v)
	}
	agents := agent.RunAgents()
	for _, n := range []string{"agent", "fallback-agent"} {
		if v := f.String(n); v != "" && !slices.Contains(agents, v) {
			return coded.Usage("--%s must be one of %s, got %q", n, strings.Join(agents, ", "), v)
		}
	}
	if f.Bool("resume") && (f.IsSet("epic") || f.IsSet("stories")) {
		return coded.Usage("--resume continues the run's own selection; drop --epic and --stories")
	}
	if f.IsSet("max-cycles") && f.Int("max-cycles") < 1 {
		return coded.Usage("--max-cycles must be at least 1")
	}
	if f.Duration("backoff") < 0 || f.Duration("recheck-grace") < 0 || f.Int("completion-rechecks") < 1 {
		return coded.Usage("--backoff and --recheck-grace must not be negative, --completion-rechecks at least 1")
	}
	if (f.IsSet("max-cost") && f.Float64("max-cost") <= 0) || (f.IsSet("max-tokens") && f.Int64("max-tokens") <= 0) ||
		(f.IsSet("max-duration") && f.Duration("max-duration") <= 0) {
		return coded.Usage("--max-cost, --max-tokens and --max-duration must be positive")
	}
	_, _, err := ParseModels(f.StringSlice("model"))
	return err
}

// ParseModels splits --model values into the run's model and step models
// (STEP=MODEL). A blank value, an unknown step or a second run-wide model
// is refused.
func ParseModels(values []string) (model string, steps map[string]string, err error) {
	for _, v := range values {
		step, m, isStep := strings.Cut(v, "=")
		if !isStep {
			step, m = "", v
		}
		step, m = strings.TrimSpace(step), strings.TrimSpace(m)
		switch {
		case m == "":
			return "", nil, &coded.Error{Code: "invalid_flag", Message: fmt.Sprintf("--model %q: the model must not be blank", v), Exit: coded.ExitUsage}
		case isStep && !slices.Contains(workflows.AllSteps(), step):
			return "", nil, coded.Usage("--model %q: no step %q (steps: %s)", v, step, strings.Join(workflows.AllSteps(), ", "))
		case isStep:
			if steps == nil {
				steps = map[string]string{}
			}
			steps[step] = m
		case model != "" && model != m:
			return "", nil, coded.Usage("--model given twice (%s, %s): give one model for every step, and STEP=MODEL for the others", model, m)
		default:
			model = m
		}
	}
	return model, steps, nil
}
