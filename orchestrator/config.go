package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// RunConfig is a run's configuration. The same type carries it from the
// command line (the run command's options: the values given), into the run
// (Merge) and into the state document (State.Config: the values the run was
// started, or last resumed, with). A new flag is one field here, one in the
// run command's options and, when a resumed run may change it, one in Merge.
type RunConfig struct {
	Epic          string `json:"epic,omitempty"`
	Stories       string `json:"stories"`
	Agent         string `json:"agent"`
	FallbackAgent string `json:"fallbackAgent,omitempty"`
	Parallel      int    `json:"parallel"`
	// Isolate is how parallel stories are kept apart: IsolateWorktree or IsolateNone.
	Isolate   string `json:"isolate,omitempty"`
	MaxCycles int    `json:"maxCycles"`
	// Model, Backoff (not given: each step's policy), and the monitor's
	// CompletionRechecks and RecheckGrace: --resume keeps them unless given again.
	Model string `json:"model,omitempty"`
	// StepModels are --model STEP=M, one step's model.
	StepModels         map[string]string `json:"stepModels,omitempty"`
	Backoff            Duration          `json:"backoff,omitzero"`
	CompletionRechecks int               `json:"completionRechecks,omitempty"`
	RecheckGrace       Duration          `json:"recheckGrace,omitzero"`
	StateFile          string            `json:"stateFile"`
	MarkerFile         string            `json:"markerFile"`
	OwnerSession       string            `json:"ownerSession,omitempty"`
	// TmuxSocket is the tmux server (-L name) the run's child sessions live
	// on ("" = the default server): every reader of the run looks there, and
	// --resume goes back to it unless another is given.
	TmuxSocket string `json:"tmuxSocket,omitempty"`
	// Budget is the run's limits given as --max-cost, --max-tokens and
	// --max-duration (kept on --resume unless given again).
	Budget *Budget `json:"budget,omitempty"`
	// MaxWait bounds the wait for an agent's limit to lift (--max-wait; not
	// given: workflow.yaml's maxWait, else DefaultMaxWait).
	MaxWait Duration `json:"maxWait,omitzero"`
	// Hosts pins the run to these hosts (--host; empty = every enabled host).
	Hosts []string `json:"hosts,omitempty"`
	// Sandbox is SandboxOn (children confined by their CLI's own sandbox,
	// the default) or SandboxOff (--sandbox off, `sandbox: off`): kept on
	// --resume unless given again. SandboxNetwork are the hosts a confined
	// child's tools may reach (workflow.yaml's sandbox.network),
	// SandboxReadDeny the paths it may not read besides the user's
	// credentials (sandbox.readDeny, as written).
	Sandbox         string   `json:"sandbox,omitempty"`
	SandboxNetwork  []string `json:"sandboxNetwork,omitempty"`
	SandboxReadDeny []string `json:"sandboxReadDeny,omitempty"`
	// PlanCheckpoint pauses each story after its planning, for a person to
	// review the plan (run --plan-checkpoint, workflow.yaml planCheckpoint;
	// the build-auto pipeline): set by the flag or the policy, kept on --resume.
	PlanCheckpoint bool `json:"planCheckpoint,omitempty"`
	// Spec is the spec folder of a stories-mode run (run --spec, or the one
	// found), project-relative: kept on --resume.
	Spec string `json:"spec,omitempty"`
	// Leftovers, when set, makes the run take up what earlier runs left
	// for later instead of stories (run --sweep, --action-items).
	Leftovers *Leftovers `json:"leftovers,omitempty"`
	// OnEscalation is what an escalation that concerns one story does:
	// OnEscalationPark or OnEscalationPause (run --on-escalation,
	// workflow.yaml onEscalation; kept on --resume unless given again).
	OnEscalation string `json:"onEscalation,omitempty"`
}

// Values of RunConfig.Sandbox.
const (
	SandboxOn  = "on"
	SandboxOff = "off"
)

// Confined reports whether the run's children run in their CLI's sandbox.
func (c RunConfig) Confined() bool { return c.Sandbox != SandboxOff }

// SandboxMode is SandboxOn or SandboxOff as recorded: a document from
// before the setting (never resumed since) ran its children unconfined.
func (c RunConfig) SandboxMode() string {
	if c.Sandbox == SandboxOn {
		return SandboxOn
	}
	return SandboxOff
}

// SandboxExceptions say which of a confined run's agents its sandbox does
// not cover as the setting reads: an agent with no sandbox (none of its
// own and not this tool's) runs unconfined, and one whose sandbox cannot
// let single hosts through reaches none of them. The simulated agent,
// which runs only this tool's code, is no exception.
func (c RunConfig) SandboxExceptions() []string {
	if !c.Confined() {
		return nil
	}
	var out []string
	for i, name := range []string{c.Agent, c.FallbackAgent} {
		p, ok := agent.LookupProfile(name)
		if !ok || p.Sandbox.OwnCode || (i == 1 && name == c.Agent) {
			continue
		}
		switch {
		case p.Sandbox.Kind == "":
			out = append(out, name+" runs unconfined: it has no sandbox of its own")
		case len(c.SandboxNetwork) > 0 && !p.Sandbox.Hosts:
			out = append(out, name+" reaches no network: its sandbox cannot let single hosts through")
		}
	}
	return out
}

// SandboxSummary is SandboxText with the run's exceptions.
func (c RunConfig) SandboxSummary() string {
	return strings.Join(append([]string{SandboxText(c.SandboxMode(), c.SandboxNetwork)}, c.SandboxExceptions()...), "; ")
}

// SandboxText says for a person how the run's children are confined.
func SandboxText(mode string, hosts []string) string {
	if mode == SandboxOff {
		return "sandbox off (children unconfined)"
	}
	if len(hosts) == 0 {
		return "sandbox on"
	}
	return "sandbox on (network: " + strings.Join(hosts, ", ") + ")"
}

// Budget is a run's limits as given on the command line; 0 = not given.
type Budget struct {
	MaxCostUSD  float64  `json:"maxCostUsd,omitempty"`
	MaxTokens   int64    `json:"maxTokens,omitempty"`
	MaxDuration Duration `json:"maxDuration,omitzero"`
}

// Merge writes the values given (zero: not given) over the configuration c
// holds: a resumed run keeps its recorded settings unless a flag overrides
// them, and a new run starts from an empty one. The run's selection (epic,
// stories) and its files are never merged. The policy's review cycles fill
// in a configuration without any.
func (c *RunConfig) Merge(given RunConfig, pol Policy) {
	if given.Agent != "" {
		c.Agent = given.Agent
	}
	if given.FallbackAgent != "" {
		c.FallbackAgent = given.FallbackAgent
	}
	if given.Parallel > 0 {
		c.Parallel = given.Parallel
	}
	if len(given.Hosts) > 0 {
		c.Hosts = given.Hosts
	}
	if given.Isolate != "" || c.Isolate == "" {
		c.Isolate = isolation(given.Isolate, c.Parallel+pol.remoteSlots(c.Hosts))
	}
	if given.Model != "" {
		c.Model = given.Model
	}
	if given.Leftovers != nil {
		c.Leftovers = given.Leftovers
	}
	if given.TmuxSocket != "" {
		c.TmuxSocket = given.TmuxSocket
	}
	for step, m := range given.StepModels {
		if c.StepModels == nil {
			c.StepModels = map[string]string{}
		}
		c.StepModels[step] = m
	}
	if b := given.Budget; b != nil && *b != (Budget{}) {
		if c.Budget == nil {
			c.Budget = &Budget{}
		}
		if b.MaxCostUSD > 0 {
			c.Budget.MaxCostUSD = b.MaxCostUSD
		}
		if b.MaxTokens > 0 {
			c.Budget.MaxTokens = b.MaxTokens
		}
		if b.MaxDuration.Given() {
			c.Budget.MaxDuration = b.MaxDuration
		}
	}
	c.mergeSandbox(given, pol)
	c.PlanCheckpoint = c.PlanCheckpoint || given.PlanCheckpoint || pol.PlanCheckpoint
	if c.Spec == "" {
		c.Spec = given.Spec
	}
	switch {
	case given.OnEscalation != "":
		c.OnEscalation = given.OnEscalation
	case c.OnEscalation != "":
	case pol.OnEscalation != "":
		c.OnEscalation = pol.OnEscalation
	default:
		c.OnEscalation = OnEscalationPark
	}
	switch {
	case given.MaxCycles > 0:
		c.MaxCycles = given.MaxCycles
	case c.MaxCycles < 1:
		c.MaxCycles = pol.MaxCycles
	}
	if given.Backoff.Given() {
		c.Backoff = given.Backoff
	}
	if given.MaxWait.Given() {
		c.MaxWait = given.MaxWait
	}
	if given.CompletionRechecks > 0 {
		c.CompletionRechecks = given.CompletionRechecks
	}
	if given.RecheckGrace.Given() {
		c.RecheckGrace = given.RecheckGrace
	}
}

// mergeSandbox: the flag wins, then the recorded value, then the policy's
// (confined unless workflow.yaml says off); the hosts follow the policy.
func (c *RunConfig) mergeSandbox(given RunConfig, pol Policy) {
	switch {
	case given.Sandbox != "":
		c.Sandbox = given.Sandbox
	case c.Sandbox == "" && pol.SandboxOff:
		c.Sandbox = SandboxOff
	case c.Sandbox == "":
		c.Sandbox = SandboxOn
	}
	c.SandboxNetwork = append([]string(nil), pol.SandboxNetwork...)
	c.SandboxReadDeny = append([]string(nil), pol.SandboxReadDeny...)
}

// check refuses a recorded configuration a run cannot use (a state
// document edited by hand).
func (c RunConfig) check() error {
	if err := c.Backoff.check(); err != nil {
		return fmt.Errorf("%w: backoff %q in the run's configuration", ErrConfig, c.Backoff)
	}
	if err := c.MaxWait.check(); err != nil {
		return fmt.Errorf("%w: max wait %q in the run's configuration", ErrConfig, c.MaxWait)
	}
	if err := c.RecheckGrace.check(); err != nil {
		return fmt.Errorf("%w: recheck grace %q in the run's configuration", ErrConfig, c.RecheckGrace)
	}
	return nil
}

// effectivePolicy is the policy with the run's recorded settings applied.
func effectivePolicy(pol Policy, cfg RunConfig) (Policy, error) {
	out := pol
	out.Steps = make(map[string]StepPolicy, len(pol.Steps))
	for name, sp := range pol.Steps {
		out.Steps[name] = sp
	}
	if cfg.MaxCycles > 0 {
		out.MaxCycles = cfg.MaxCycles
	}
	if d, ok := cfg.Backoff.Get(); ok {
		for name, sp := range out.Steps {
			sp.Backoff = d
			out.Steps[name] = sp
		}
	}
	if d, ok := cfg.MaxWait.Get(); ok {
		out.MaxWait = d
	}
	if out.MaxWait <= 0 {
		out.MaxWait = DefaultMaxWait
	}
	if err := out.Validate(); err != nil {
		return out, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return out, nil
}

// Duration is an optional duration: given (zero included) or not. It is
// recorded as Go's duration text ("7s"), kept as written, and left out of
// the JSON when not given.
type Duration struct {
	d    time.Duration
	text string // "" = not given
}

// DurationOf is d, given.
func DurationOf(d time.Duration) Duration { return Duration{d: d, text: d.String()} }

// Given reports whether the duration was given.
func (x Duration) Given() bool { return x.text != "" }

// IsZero reports whether the duration was not given (json omitzero).
func (x Duration) IsZero() bool { return !x.Given() }

// Get returns the duration and whether it was given as a valid one.
func (x Duration) Get() (time.Duration, bool) {
	return x.d, x.Given() && x.check() == nil
}

// String is the duration as recorded; "" when not given.
func (x Duration) String() string { return x.text }

func (x Duration) check() error {
	if !x.Given() {
		return nil
	}
	d, err := time.ParseDuration(x.text)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %s", x.text)
	}
	return err
}

// MarshalJSON writes the duration's text.
func (x Duration) MarshalJSON() ([]byte, error) { return json.Marshal(x.text) }

// UnmarshalJSON reads a duration's text. A text that is not a duration
// loads as it is and is refused when the run starts (RunConfig.check), so
// a hand-edited document is not taken for a corrupt one.
func (x *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, _ := time.ParseDuration(s)
	*x = Duration{d: d, text: s}
	return nil
}
