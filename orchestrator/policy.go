package orchestrator

import (
	"fmt"
	"time"

	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/workflows"
)

// StepPolicy is how the run loop treats one step.
type StepPolicy struct {
	Enabled bool
	// Action is how the step runs: ActionAgent, or for commit ActionGitCommit ("" = the step's default).
	Action string
	// Agent and FallbackAgent override the run's agents for this step; "" keeps them.
	Agent, FallbackAgent string
	Timeout              time.Duration
	// Retries is how many further attempts follow a crashed or unverified one.
	Retries int
	// Backoff is the wait before the first retry; it doubles on each further retry.
	Backoff time.Duration
	// Optional steps never block a story: exhausting them is recorded and the story goes on.
	Optional bool
	// Model is the step's model from workflow.yaml ("" = none).
	Model string
}

// Policy is the run loop's workflow policy.
type Policy struct {
	Steps map[string]StepPolicy
	// MaxCycles bounds the review rounds of one story before the run escalates.
	MaxCycles int
	// MaxBackoff caps the doubled retry wait.
	MaxBackoff time.Duration
	// Prices price the attempts' usage (nil = the shipped table).
	Prices spend.PriceTable
	// RunBudget and StoryBudget are workflow.yaml's budgets; the command
	// line's run limits replace RunBudget's.
	RunBudget, StoryBudget spend.Limits
	// OnLimit is what a step does when its agent meets a limit (OnLimitFallback,
	// OnLimitWait, OnLimitEscalate; "" = fallback); MaxWait bounds a limit's
	// wait (0 = DefaultMaxWait; the run's --max-wait replaces it).
	OnLimit string
	MaxWait time.Duration
	// Hosts are the machines stories may run on, LocalHost first (nil: this
	// machine alone).
	Hosts []HostPolicy
	// SandboxOff, SandboxNetwork and SandboxReadDeny are workflow.yaml's
	// `sandbox`: children unconfined, or the hosts a confined child's tools
	// may reach and the paths it may not read (besides the credentials).
	SandboxOff      bool
	SandboxNetwork  []string
	SandboxReadDeny []string
	// PlanCheckpoint is workflow.yaml's planCheckpoint (see RunConfig).
	PlanCheckpoint bool
	// OnEscalation is workflow.yaml's onEscalation (see RunConfig).
	OnEscalation string
	// RetroGateOff is `retroGate: off`: a rejected retrospective is only
	// reported (see Retrospective).
	RetroGateOff bool
}

// Step actions (the workflow policy's `action`).
const (
	ActionAgent     = "agent"
	ActionGitCommit = "git_commit"
)

// Defaults of the run loop (docs/running-stories.md, "The workflow policy").
const (
	DefaultMaxCycles    = 5
	DefaultCrashRetries = 2
	DefaultMaxBackoff   = 5 * time.Minute
	// DefaultMaxWait bounds the wait for an agent's limit to lift.
	DefaultMaxWait = 6 * time.Hour
)

// What a step does when its agent meets a limit (workflow.yaml `onLimit`).
const (
	// OnLimitFallback: the step's other agent, when it is not limited, at
	// once; else the run waits.
	OnLimitFallback = workflows.OnLimitFallback
	// OnLimitWait: the run waits for the agent's limit to lift.
	OnLimitWait = workflows.OnLimitWait
	// OnLimitEscalate: the step escalates at once.
	OnLimitEscalate = workflows.OnLimitEscalate
)

// DefaultPolicy enables every step with two retries; automate and retro are optional.
func DefaultPolicy() Policy {
	p := Policy{Steps: map[string]StepPolicy{}, MaxCycles: DefaultMaxCycles, MaxBackoff: DefaultMaxBackoff}
	for _, s := range append(StorySteps(), StepRetro) {
		p.Steps[s] = StepPolicy{Enabled: true, Retries: DefaultCrashRetries, Backoff: 10 * time.Second, Timeout: time.Hour}
	}
	for _, s := range []string{StepAutomate, StepRetro} {
		sp := p.Steps[s]
		sp.Optional = true
		p.Steps[s] = sp
	}
	return p
}

// Step returns a step's policy; unknown steps are disabled.
func (p Policy) Step(name string) StepPolicy {
	return p.Steps[name]
}

// Validate reports a policy the loop cannot run.
func (p Policy) Validate() error {
	if p.MaxCycles < 1 {
		return fmt.Errorf("maxCycles must be at least 1, got %d", p.MaxCycles)
	}
	switch p.OnLimit {
	case "", OnLimitFallback, OnLimitWait, OnLimitEscalate:
	default:
		return fmt.Errorf("onLimit must be %s, %s or %s, got %q", OnLimitFallback, OnLimitWait, OnLimitEscalate, p.OnLimit)
	}
	if p.MaxWait < 0 {
		return fmt.Errorf("maxWait must not be negative")
	}
	for name, s := range p.Steps {
		if s.Retries < 0 || s.Backoff < 0 {
			return fmt.Errorf("step %s: retries and backoff must not be negative", name)
		}
	}
	return nil
}

// backoff is the wait before a retry that follows failures failed attempts.
func (p Policy) backoff(s StepPolicy, failures int) time.Duration {
	if failures <= 0 || s.Backoff <= 0 {
		return 0
	}
	d := s.Backoff
	for i := 1; i < failures; i++ {
		d *= 2
		if p.MaxBackoff > 0 && d >= p.MaxBackoff {
			return p.MaxBackoff
		}
	}
	if p.MaxBackoff > 0 && d > p.MaxBackoff {
		return p.MaxBackoff
	}
	return d
}

// PolicyFrom turns the workflow policy into the run loop's.
func PolicyFrom(wp *workflows.Policy) Policy {
	p := Policy{Steps: map[string]StepPolicy{}, MaxCycles: wp.MaxReviewCycles(), MaxBackoff: DefaultMaxBackoff,
		Prices: spend.DefaultPrices().With(wp.Prices), RunBudget: wp.RunBudget, StoryBudget: wp.StoryBudget,
		OnLimit: wp.OnLimit, MaxWait: wp.MaxWait,
		SandboxOff: wp.Sandbox.Off, SandboxNetwork: wp.Sandbox.Network, SandboxReadDeny: wp.Sandbox.ReadDeny,
		PlanCheckpoint: wp.PlanCheckpoint, OnEscalation: wp.OnEscalation,
		RetroGateOff: wp.RetroGateOff}
	for name, s := range wp.Steps {
		p.Steps[name] = StepPolicy{Enabled: s.Enabled, Action: s.Action, Agent: s.Agent, FallbackAgent: s.FallbackAgent,
			Timeout: s.Timeout, Retries: s.Retries, Backoff: s.Backoff, Optional: s.Optional, Model: s.Model}
	}
	if p.MaxCycles < 1 {
		p.MaxCycles = DefaultMaxCycles
	}
	for _, h := range wp.Hosts {
		p.Hosts = append(p.Hosts, HostPolicy{Name: h.Name, Parallel: h.Parallel, Agents: h.Agents, Enabled: h.Enabled})
	}
	return p
}
