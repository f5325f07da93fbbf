package orchestrator

import (
	"fmt"
	"time"
)

// move is what a step does next: another attempt (with which agent, in
// which review cycle, after which wait) or nothing, because its budget is spent.
type move struct {
	Exhausted bool
	Reason    string
	Cycle     int
	Agent     string
	Role      string
	Backoff   time.Duration
}

// agentPair is the primary and fallback agent of one step.
type agentPair struct{ Primary, Fallback string }

// nextMove decides the next attempt of an agent step from its attempts so
// far. Failures alternate the primary and the fallback agent and wait the
// doubled backoff; a review that finishes unverified ends its cycle and the
// next cycle starts at once with the primary agent.
func nextMove(st *StepState, sp StepPolicy, pol Policy, agents agentPair) move {
	counted := st.counted()
	cycle := 0
	failures := len(counted)
	if st.Name == StepReview {
		cycle = 1
		if last := st.lastFinished(); last != nil {
			cycle = last.Cycle
			if last.FinalState == FinalIncomplete {
				cycle++
			}
		}
		used := map[int]bool{}
		failures = 0
		for _, a := range counted {
			switch {
			case a.FinalState == FinalIncomplete:
				used[a.Cycle] = true
			case a.Cycle == cycle:
				failures++
			}
		}
		if len(used) >= pol.MaxCycles {
			return move{Exhausted: true, Reason: fmt.Sprintf("review not verified after %d cycles", len(used))}
		}
	}
	if failures > sp.Retries {
		return move{Exhausted: true, Reason: fmt.Sprintf("%d attempts failed (last: %s)", failures, describeAttempt(counted[len(counted)-1]))}
	}
	m := move{Cycle: cycle, Agent: agents.Primary, Role: RolePrimary, Backoff: pol.backoff(sp, failures)}
	if failures%2 == 1 && agents.Fallback != "" {
		m.Agent, m.Role = agents.Fallback, RoleFallback
	}
	return m
}

// describeAttempt says how an attempt ended, for logs and escalations.
func describeAttempt(a Attempt) string {
	s := a.FinalState
	if a.Reason != "" {
		s += " (" + a.Reason + ")"
	}
	if a.ResetsAt != "" {
		s += ", lifts at " + humanTime(a.ResetsAt)
	}
	if a.Detail != "" && a.FinalState != FinalCompleted {
		s += ": " + a.Detail
	}
	who := a.Agent
	if a.Role == RoleFallback {
		who += " (fallback)"
	}
	if a.Cycle > 0 {
		who += fmt.Sprintf(", review cycle %d", a.Cycle)
	}
	return fmt.Sprintf("attempt %d with %s: %s", a.N, who, s)
}

// agentsFor resolves a step's agents: the step's own override, else the run's.
func agentsFor(sp StepPolicy, cfg RunConfig) agentPair {
	p := agentPair{Primary: cfg.Agent, Fallback: cfg.FallbackAgent}
	if sp.Agent != "" {
		p.Primary = sp.Agent
	}
	if sp.FallbackAgent != "" {
		p.Fallback = sp.FallbackAgent
	}
	return p
}
