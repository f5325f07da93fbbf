package orchestrator

import (
	"fmt"
	"time"
)

// Settings are the tunables of a run given on the command line. A new run
// records them in its configuration; `--resume` keeps the recorded ones and
// replaces only those given again. The zero value of each means "not given".
type Settings struct {
	Model string
	// StepModels are --model STEP=M: they replace the run's recorded ones
	// step by step.
	StepModels map[string]string
	// Budget holds the run limits given (a zero field: not given).
	Budget Budget
	// MaxCycles replaces the policy's review cycles (0: the policy's).
	MaxCycles int
	// Backoff replaces every step's retry backoff (nil: each step's own).
	Backoff *time.Duration
	// CompletionRechecks and RecheckGrace tune the monitor's verification of a finished step.
	CompletionRechecks int
	RecheckGrace       *time.Duration
}

// SettingsConfigurer is implemented by step runners that take the run's
// recorded settings (model, monitor rechecks) before the first step.
type SettingsConfigurer interface {
	Configure(cfg RunConfig) error
}

// record writes the given settings into a run's configuration; on a new run
// the policy's review cycles fill in a missing --max-cycles.
func (s Settings) record(cfg *RunConfig, pol Policy, resume bool) {
	if s.Model != "" {
		cfg.Model = s.Model
	}
	for step, m := range s.StepModels {
		if cfg.StepModels == nil {
			cfg.StepModels = map[string]string{}
		}
		cfg.StepModels[step] = m
	}
	if b := s.Budget; b != (Budget{}) {
		if cfg.Budget == nil {
			cfg.Budget = &Budget{}
		}
		if b.MaxCostUSD > 0 {
			cfg.Budget.MaxCostUSD = b.MaxCostUSD
		}
		if b.MaxTokens > 0 {
			cfg.Budget.MaxTokens = b.MaxTokens
		}
		if b.MaxDuration != "" {
			cfg.Budget.MaxDuration = b.MaxDuration
		}
	}
	switch {
	case s.MaxCycles > 0:
		cfg.MaxCycles = s.MaxCycles
	case !resume || cfg.MaxCycles < 1:
		cfg.MaxCycles = pol.MaxCycles
	}
	if s.Backoff != nil {
		cfg.Backoff = s.Backoff.String()
	}
	if s.CompletionRechecks > 0 {
		cfg.CompletionRechecks = s.CompletionRechecks
	}
	if s.RecheckGrace != nil {
		cfg.RecheckGrace = s.RecheckGrace.String()
	}
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
	if cfg.Backoff != "" {
		d, err := time.ParseDuration(cfg.Backoff)
		if err != nil || d < 0 {
			return out, fmt.Errorf("%w: backoff %q in the run's configuration", ErrConfig, cfg.Backoff)
		}
		for name, sp := range out.Steps {
			sp.Backoff = d
			out.Steps[name] = sp
		}
	}
	if err := out.Validate(); err != nil {
		return out, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return out, nil
}
