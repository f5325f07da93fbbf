package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// runOptions are `run`'s flags as given (gh's Options pattern): the flags
// fill it, validate refuses what cannot work, and orchestratorOptions turns
// it into the run's options.
type runOptions struct {
	Epic, Stories        string
	Agent, FallbackAgent string
	Models               cli.StringSlice
	MaxCost              float64
	MaxTokens            int64
	MaxDuration          time.Duration
	MaxWait              time.Duration
	Parallel             int
	Isolate              string
	Hosts                cli.StringSlice
	Resume, DryRun, JSON bool
	MaxCycles            int
	Backoff              time.Duration
	CompletionRechecks   int
	RecheckGrace         time.Duration
	TrustProject         bool
	PlanCheckpoint       bool
	Spec, Replan         string
	Sandbox              string
	// Sweep, MinSeverity, Only and ActionItems: a run of leftovers
	// (--sweep, --action-items) instead of stories.
	Sweep, ActionItems bool
	MinSeverity        string
	Only               cli.StringSlice
	// OnEscalation is --on-escalation: park or pause ("" = the recorded
	// one, else workflow.yaml's, else park).
	OnEscalation string
	// IsSet reports whether a flag was on the command line (not its default).
	IsSet func(name string) bool
}

// validate refuses blank values and flag combinations that cannot work,
// each with a usage error (*coded.Error, exit 2).
func (o *runOptions) validate() error {
	named := []struct{ name, value string }{{"agent", o.Agent}, {"fallback-agent", o.FallbackAgent}, {"epic", o.Epic}, {"stories", o.Stories},
		{"spec", o.Spec}, {"replan", o.Replan}}
	for _, f := range named {
		if o.IsSet(f.name) && strings.TrimSpace(f.value) == "" {
			return &coded.Error{Code: "invalid_flag", Message: fmt.Sprintf("--%s must not be blank", f.name), Exit: coded.ExitUsage}
		}
	}
	if o.Parallel < 1 {
		return coded.Usage("--parallel must be at least 1")
	}
	if o.IsSet("isolate") && o.Isolate != orchestrator.IsolateWorktree && o.Isolate != orchestrator.IsolateNone {
		return coded.Usage("--isolate must be worktree or none, got %q", o.Isolate)
	}
	if err := checkSandboxFlag(o.Sandbox); err != nil {
		return err
	}
	if o.IsSet("on-escalation") && o.OnEscalation != orchestrator.OnEscalationPark && o.OnEscalation != orchestrator.OnEscalationPause {
		return coded.Usage("--on-escalation must be %s or %s, got %q", orchestrator.OnEscalationPark, orchestrator.OnEscalationPause, o.OnEscalation)
	}
	agents := agent.RunAgents()
	for _, f := range named[:2] {
		if f.value != "" && !slices.Contains(agents, f.value) {
			return coded.Usage("--%s must be one of %s, got %q", f.name, strings.Join(agents, ", "), f.value)
		}
	}
	if o.Resume && (o.IsSet("epic") || o.IsSet("stories")) {
		return coded.Usage("--resume continues the run's own selection; drop --epic and --stories")
	}
	if err := o.validateStoriesMode(); err != nil {
		return err
	}
	if o.IsSet("max-cycles") && o.MaxCycles < 1 {
		return coded.Usage("--max-cycles must be at least 1")
	}
	if o.Backoff < 0 || o.RecheckGrace < 0 || o.CompletionRechecks < 1 {
		return coded.Usage("--backoff and --recheck-grace must not be negative, --completion-rechecks at least 1")
	}
	if (o.IsSet("max-cost") && o.MaxCost <= 0) || (o.IsSet("max-tokens") && o.MaxTokens <= 0) ||
		(o.IsSet("max-duration") && o.MaxDuration <= 0) {
		return coded.Usage("--max-cost, --max-tokens and --max-duration must be positive")
	}
	if o.IsSet("max-wait") && o.MaxWait <= 0 {
		return coded.Usage("--max-wait must be positive")
	}
	if o.IsSet("max-wait") && o.MaxWait < workflows.MinMaxWait {
		return coded.Usage("--max-wait must be at least %s (a limit lifts in minutes or hours; workflow.yaml's onLimit: escalate stops at once)", workflows.MinMaxWait)
	}
	if err := o.validateLeftovers(); err != nil {
		return err
	}
	_, _, err := parseModels(o.Models.Value())
	return err
}

// validateStoriesMode refuses --spec beside another selection or a
// resume, and --replan without --resume.
func (o *runOptions) validateStoriesMode() error {
	switch {
	case o.IsSet("spec") && (o.IsSet("epic") || o.IsSet("stories")):
		return coded.Usage("--spec runs every story of the spec folder, in its order; drop --epic and --stories")
	case o.IsSet("spec") && o.Resume:
		return coded.Usage("--resume continues the run's own spec folder; drop --spec")
	case o.IsSet("replan") && !o.Resume:
		return coded.Usage("--replan sends a story of a paused run back to planning: use it with --resume")
	}
	return nil
}

// validateLeftovers checks --sweep, --min-severity, --only and
// --action-items: a run of leftovers selects no stories, runs its units
// one at a time in the project's tree, and is not chosen again on --resume.
func (o *runOptions) validateLeftovers() error {
	if !o.Sweep && (o.IsSet("min-severity") || o.IsSet("only")) {
		return coded.Usage("--min-severity and --only choose what --sweep takes up; add --sweep")
	}
	if !o.Sweep && !o.ActionItems {
		return nil
	}
	switch {
	case o.Resume:
		return coded.Usage("--resume continues the run's own selection; drop --sweep and --action-items")
	case o.IsSet("epic") || o.IsSet("stories"):
		return coded.Usage("--sweep and --action-items take up what earlier runs left, not stories; drop --epic and --stories")
	case o.IsSet("spec"):
		return coded.Usage("--sweep and --action-items take up what earlier runs left, not a spec folder's stories; drop --spec")
	case o.Parallel > 1:
		return coded.Usage("--sweep and --action-items run their units one at a time in the project's tree (each re-reads and marks the one ledger or board); drop --parallel")
	}
	if o.IsSet("min-severity") {
		if _, err := workflows.ParseMinSeverity(o.MinSeverity); err != nil {
			return coded.Usage("--min-severity: %v", err)
		}
	}
	for _, id := range o.Only.Value() {
		if strings.TrimSpace(id) == "" {
			return coded.Usage("--only: an empty item id")
		}
	}
	return nil
}

// orchestratorOptions is the run's options from valid flags. A new run takes
// every flag, defaults included; a resumed run only those given again (the
// rest are zero: not given), so it keeps its recorded configuration
// (RunConfig.Merge).
func (o *runOptions) orchestratorOptions() orchestrator.Options {
	given := func(name string) bool { return o.IsSet(name) || !o.Resume }
	opts := orchestrator.Options{Resume: o.Resume, DryRun: o.DryRun, TrustProject: o.TrustProject}
	c := &opts.RunConfig
	c.Epic, c.Stories = o.Epic, o.Stories
	c.FallbackAgent, c.Isolate = o.FallbackAgent, o.Isolate
	c.Hosts = o.Hosts.Value()
	if given("agent") {
		c.Agent = o.Agent
	}
	if given("parallel") {
		c.Parallel = o.Parallel
	}
	if o.IsSet("sandbox") {
		// Not given: the recorded value, else workflow.yaml's (RunConfig.Merge).
		c.Sandbox = o.Sandbox
	}
	c.PlanCheckpoint = o.PlanCheckpoint
	c.Spec, opts.Replan = o.Spec, o.Replan
	if o.Sweep || o.ActionItems {
		c.Leftovers = &orchestrator.Leftovers{Sweep: o.Sweep, MinSeverity: o.MinSeverity, ActionItems: o.ActionItems}
		for _, id := range o.Only.Value() {
			c.Leftovers.Only = append(c.Leftovers.Only, strings.TrimSpace(id))
		}
	}
	if o.IsSet("on-escalation") {
		c.OnEscalation = o.OnEscalation
	}
	c.Model, c.StepModels, _ = parseModels(o.Models.Value())
	b := orchestrator.Budget{MaxCostUSD: o.MaxCost, MaxTokens: o.MaxTokens}
	if o.MaxDuration > 0 {
		b.MaxDuration = orchestrator.DurationOf(o.MaxDuration)
	}
	if b != (orchestrator.Budget{}) {
		c.Budget = &b
	}
	if o.IsSet("max-cycles") {
		c.MaxCycles = o.MaxCycles
	}
	if o.IsSet("max-wait") {
		c.MaxWait = orchestrator.DurationOf(o.MaxWait)
	}
	if o.IsSet("backoff") {
		c.Backoff = orchestrator.DurationOf(o.Backoff)
	}
	if given("completion-rechecks") {
		c.CompletionRechecks = o.CompletionRechecks
	}
	if given("recheck-grace") {
		c.RecheckGrace = orchestrator.DurationOf(o.RecheckGrace)
	}
	return opts
}

// parseModels splits --model values into the run's model and step models
// (STEP=MODEL). A blank value, an unknown step or a second run-wide model
// is refused.
func parseModels(values []string) (model string, steps map[string]string, err error) {
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
