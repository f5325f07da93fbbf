package workflows

import (
	_ "embed"
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/spend"
)

// Workflow steps. A story goes through StorySteps in order; StepRetro runs
// once at the end of an epic.
const (
	StepCreate   = "create"
	StepDev      = "dev"
	StepAutomate = "automate"
	StepReview   = "review"
	StepCommit   = "commit"
	StepRetro    = "retro"
)

// StorySteps returns the steps of one story, in order.
func StorySteps() []string {
	return []string{StepCreate, StepDev, StepAutomate, StepReview, StepCommit}
}

// AllSteps returns every step: the story steps and then retro.
func AllSteps() []string { return append(StorySteps(), StepRetro) }

// Step actions.
const (
	// ActionAgent runs the step's prompt in an agent session.
	ActionAgent = "agent"
	// ActionGitCommit means the orchestrator commits the story with git itself.
	ActionGitCommit = "git_commit"
)

// PolicyFile is where a project overrides the default policy.
const PolicyFile = StateDir + "/workflow.yaml"

//go:embed defaults.yaml
var defaultPolicyYAML []byte

// Step is the policy of one workflow step.
type Step struct {
	Name    string
	Enabled bool
	// Action is ActionAgent or ActionGitCommit.
	Action string
	// Agent and FallbackAgent override the run's --agent and --fallback-agent; "" keeps them.
	Agent, FallbackAgent string
	Timeout              time.Duration
	// Verifiers must all confirm the step (see VerifierNames).
	Verifiers []string
	// Command and CommandTimeout override the policy's test command for this step.
	Command        string
	CommandTimeout time.Duration
	// Retries is how many further attempts follow a crashed or unverified one.
	Retries int
	// Backoff is the wait before the first retry; it doubles on each retry.
	Backoff time.Duration
	// Optional steps do not block the story: a failure is recorded and the story goes on.
	Optional bool
	// MaxCycles bounds the review rounds (review step only).
	MaxCycles int
	// Model is the model the step's agent runs ("" = the agent's default).
	Model string
}

// Policy is the whole workflow policy: the defaults with a project's overrides.
type Policy struct {
	TestCommand string
	TestTimeout time.Duration
	Steps       map[string]*Step
	// Sources lists what the policy was built from: "defaults" and the project file.
	Sources []string
	// Prices add to or replace the shipped price table (`prices`).
	Prices spend.PriceTable
	// RunBudget and StoryBudget are `budget.run` and `budget.story`.
	RunBudget, StoryBudget spend.Limits
	// Notify is where a run's notifications go (`notify`).
	Notify Notify
	// Hosts are the machines stories may run on (`hosts`): LocalHost first,
	// then the ssh hosts in the file's order.
	Hosts []Host
	// OnLimit is `onLimit`: what a step does when its agent meets a usage
	// or rate limit ("" = OnLimitFallback); MaxWait is `maxWait`, the
	// longest wait for a limit to lift (0 = the run's default).
	OnLimit string
	MaxWait time.Duration
	// Sandbox is `sandbox`: whether children are confined and which hosts they reach.
	Sandbox Sandbox
	// Env is `env`: the variables a child gets beyond the allow-list.
	Env Env
	// Pipeline is `pipeline`: PipelineBuildAuto or PipelineFiveStep pins
	// the pipeline ("" = the one the project's BMAD files call for).
	Pipeline string
	// PlanCheckpoint is `planCheckpoint`: on the build-auto pipeline, each
	// story's worker halts after planning and the run pauses for a person
	// to review the plan (run --resume implements it).
	PlanCheckpoint bool
	// OnEscalation is `onEscalation`: OnEscalationPark parks a story whose
	// escalation needs a person and the run goes on, OnEscalationPause
	// pauses the run ("" = park).
	OnEscalation string
	// RetroGateOff is `retroGate: off`: a rejected BMAD 6.12 retrospective
	// is reported and the run goes on to the next epic (default: it pauses).
	RetroGateOff bool
}

// Values of `retroGate`.
const (
	RetroGateOn  = "on"
	RetroGateOff = "off"
)

// What an escalation that concerns one story does (`onEscalation`).
const (
	OnEscalationPark  = "park"
	OnEscalationPause = "pause"
)

// What a step does when its agent meets a limit (`onLimit`).
const (
	OnLimitFallback = "fallback"
	OnLimitWait     = "wait"
	OnLimitEscalate = "escalate"
)

// Step returns one step's policy; an unknown name is ErrUnknownStep.
func (p *Policy) Step(name string) (*Step, error) {
	if s, ok := p.Steps[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q (steps: %s)", ErrUnknownStep, name, strings.Join(AllSteps(), ", "))
}

// MaxReviewCycles is the review step's MaxCycles.
func (p *Policy) MaxReviewCycles() int { return p.Steps[StepReview].MaxCycles }

// CommandFor returns the command and time bound the command verifier uses for a step.
func (p *Policy) CommandFor(s *Step) (string, time.Duration) {
	cmd, limit := p.TestCommand, p.TestTimeout
	if s.Command != "" {
		cmd = s.Command
	}
	if s.CommandTimeout > 0 {
		limit = s.CommandTimeout
	}
	return cmd, limit
}

// DefaultPolicy is the policy embedded in the binary.
func DefaultPolicy() *Policy {
	p := &Policy{Steps: map[string]*Step{}, Hosts: defaultHosts()}
	for _, name := range AllSteps() {
		p.Steps[name] = &Step{Name: name, Enabled: true, Action: ActionAgent}
	}
	if err := p.apply("defaults", defaultPolicyYAML); err != nil {
		panic(fmt.Sprintf("embedded defaults.yaml: %v", err))
	}
	return p
}

// LoadPolicy returns the default policy overridden by the project's
// .story-automator/workflow.yaml when it exists. Errors name the file, the
// key path and the line (ErrPolicy).
func LoadPolicy(root string) (*Policy, error) {
	p := DefaultPolicy()
	path := filepath.Join(root, PolicyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read workflow policy: %w", err)
	}
	if err := p.apply(PolicyFile, data); err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	if err := p.checkSSHConfigFiles(root, home); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePolicy applies one policy document on top of the defaults; source
// names it in errors.
func ParsePolicy(source string, data []byte) (*Policy, error) {
	p := DefaultPolicy()
	if err := p.apply(source, data); err != nil {
		return nil, err
	}
	return p, nil
}

// apply overrides p with the keys a document sets, then checks the result.
func (p *Policy) apply(source string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPolicy, source, err)
	}
	pr := &policyReader{}
	if len(doc.Content) > 0 && !isNull(doc.Content[0]) {
		pr.top(p, doc.Content[0])
	}
	p.Sources = append(p.Sources, source)
	if len(pr.problems) == 0 {
		p.check(pr)
	}
	if len(pr.problems) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrPolicy, source, strings.Join(pr.problems, "; "))
	}
	return nil
}

// check validates what no single key can: verifiers that need a command,
// env.pass against notify's secrets.
func (p *Policy) check(pr *policyReader) {
	p.checkEnv(pr)
	for _, name := range AllSteps() {
		s := p.Steps[name]
		if cmd, _ := p.CommandFor(s); slices.Contains(s.Verifiers, VerifyCommand) && strings.TrimSpace(cmd) == "" {
			pr.problems = append(pr.problems, fmt.Sprintf("steps.%s.verifier: %q needs testCommand or steps.%s.command", name, VerifyCommand, name))
		}
	}
}

var agentName = lazyre.New(`^[a-z][a-z0-9_-]*$`)
