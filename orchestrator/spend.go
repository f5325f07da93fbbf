package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/spend"
)

// CodeBudgetExceeded is the code of a run paused at one of its budgets.
const CodeBudgetExceeded = "run_budget_exceeded"

// tally recomputes every step's, unit's and the run's spend from the
// attempts, so the totals never drift from what the attempts hold.
func (s *State) tally() {
	var run spend.Total
	for _, u := range s.Units {
		var ut spend.Total
		for _, st := range u.Steps {
			var t spend.Total
			for i := range st.Attempts {
				if a := &st.Attempts[i]; a.attempted() {
					t.Add(a.Usage)
				}
			}
			st.Usage = totalOrNil(t)
			ut.Merge(t)
		}
		u.Usage = totalOrNil(ut)
		run.Merge(ut)
	}
	s.Usage = &run
}

func totalOrNil(t spend.Total) *spend.Total {
	if t.Attempts == 0 {
		return nil
	}
	return &t
}

// attempted reports whether the attempt ended having run an agent: one
// still running has no figures yet, and one that never started spent nothing.
func (a *Attempt) attempted() bool {
	return a.FinalState != "" && (a.FinalState != FinalError || a.Session != "")
}

// Spend is the run's spend so far.
func (s *State) Spend() spend.Total {
	s.tally()
	return *s.Usage
}

// wallTime is the unit's attempts' wall time: what a story's maxDuration counts.
func (u *Unit) wallTime() time.Duration {
	var ms int64
	for _, st := range u.Steps {
		for _, a := range st.Attempts {
			ms += a.WallMs
		}
	}
	return time.Duration(ms) * time.Millisecond
}

// Limits returns the run's budget as given on the command line.
func (b *Budget) Limits() spend.Limits {
	if b == nil {
		return spend.Limits{}
	}
	d, _ := b.MaxDuration.Get()
	return spend.Limits{MaxCostUSD: b.MaxCostUSD, MaxTokens: b.MaxTokens, MaxDuration: d}
}

// runLimits are the run's limits: the command line's, else workflow.yaml's.
func (e *Engine) runLimits() spend.Limits {
	return e.state.Config.Budget.Limits().Or(e.Policy.RunBudget)
}

// budgetReached returns, under e.mu, the first budget the run or unit u has
// reached, with the action that raises it; nil when none is.
func (e *Engine) budgetReachedLocked(u *Unit) (*spend.Overrun, string) {
	s := e.state
	if ov := e.runLimits().Reached(s.Spend(), e.activeLocked()); ov != nil {
		flag := map[string]string{spend.LimitCost: "--max-cost USD", spend.LimitTokens: "--max-tokens N",
			spend.LimitDuration: "--max-duration D"}[ov.Limit]
		return ov, fmt.Sprintf("raise the run's limit above %s: story-automator run --resume %s", ov.Spent, flag)
	}
	if u != nil {
		ut := u.Usage
		var t spend.Total
		if ut != nil {
			t = *ut
		}
		if ov := e.Policy.StoryBudget.Reached(t, u.wallTime()); ov != nil {
			key := map[string]string{spend.LimitCost: "maxCost", spend.LimitTokens: "maxTokens", spend.LimitDuration: "maxDuration"}[ov.Limit]
			return ov, fmt.Sprintf("raise budget.story.%s above %s in .story-automator/workflow.yaml, then story-automator run --resume", key, ov.Spent)
		}
	}
	return nil, ""
}

// overBudget pauses the run when it or unit u reached a budget; it reports
// whether it did. It is checked before every attempt starts and after each ends.
func (e *Engine) overBudget(u *Unit, st *StepState) bool {
	e.mu.Lock()
	ov, action := e.budgetReachedLocked(u)
	e.mu.Unlock()
	if ov == nil {
		return false
	}
	whose := "the run's"
	if !strings.HasPrefix(action, "raise the run's") {
		whose = "story " + u.Dotted + "'s"
	}
	e.pauseForBudget(u, st, fmt.Sprintf("%s budget is reached: %s", whose, ov), action)
	return true
}

// pauseForBudget pauses the run as an escalation does (marker paused, the
// other units' sessions stopped), with run_budget_exceeded; the step keeps
// its attempts and retries, and goes on where it was on --resume.
func (e *Engine) pauseForBudget(u *Unit, st *StepState, reason, action string) {
	now := e.Clock.Now()
	var stop context.CancelFunc
	var esc Escalation
	e.updateUnit(u, func(s *State) {
		esc = Escalation{At: marker.Timestamp(now), Unit: u.Dotted, Step: st.Name, Reason: reason, Action: action,
			Code: CodeBudgetExceeded}
		if s.Escalation == nil {
			s.Escalation = &esc
		}
		s.addLog(now, u.Dotted, st.Name, "paused before the next attempt: "+reason)
		stop = e.stopUnits
	})
	e.escalated.Store(true)
	e.halting.Store(true)
	e.pauseMarker(CodeBudgetExceeded + ": " + reason)
	if stop != nil {
		stop()
	}
	e.emit(Event{Kind: EventBudgetExceeded, Unit: u.Dotted, Step: st.Name, Reason: reason, Message: action,
		Usage: e.usageNow()})
}

// activeLocked is how long the run has been running, earlier sessions included.
func (e *Engine) activeLocked() time.Duration {
	if e.sessionStart.IsZero() {
		return time.Duration(e.state.ActiveMs) * time.Millisecond
	}
	return e.activeBase + e.Clock.Now().Sub(e.sessionStart)
}

// budgetShown is the run's effective limits, for people; nil when none.
func (e *Engine) budgetShown() *Budget {
	l := e.runLimits()
	if l.IsZero() {
		return nil
	}
	b := &Budget{MaxCostUSD: l.MaxCostUSD, MaxTokens: l.MaxTokens}
	if l.MaxDuration > 0 {
		b.MaxDuration = DurationOf(l.MaxDuration)
	}
	return b
}

// usageNow is the run's spend, for an event.
func (e *Engine) usageNow() *spend.Total {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.state.Spend()
	return &t
}

// modelFor is the model of a step's agent: --model STEP=M, else --model M,
// else the step's model in workflow.yaml, else "" (the agent's default).
func (e *Engine) modelFor(step string) string {
	c := e.state.Config
	if m := c.StepModels[step]; m != "" {
		return m
	}
	if c.Model != "" {
		return c.Model
	}
	return e.Policy.Step(step).Model
}

// recordUsage prices an attempt's usage and records it with its model.
func (e *Engine) recordUsage(at *Attempt, res StepResult, asked string) {
	at.Model = res.Model
	if at.Model == "" {
		at.Model = asked
	}
	at.Usage, at.UsageNote = nil, res.UsageNote
	if res.Usage != nil {
		u := e.prices().Priced(*res.Usage, at.Model)
		at.Usage = &u
		if u.CostUSD == nil {
			at.UsageNote = fmt.Sprintf("no price for model %q: add it to prices in .story-automator/workflow.yaml", at.Model)
		}
	} else if at.UsageNote == "" {
		at.UsageNote = "the step runner reported no usage"
	}
}

func (e *Engine) prices() spend.PriceTable {
	if e.Policy.Prices != nil {
		return e.Policy.Prices
	}
	return spend.DefaultPrices()
}

// UsageReader is implemented by step runners that can read a session's
// usage after the fact: a resumed run reads what the attempts a killed
// orchestrator abandoned spent. dir is the folder the agent worked in (the
// story's worktree; "" = the project's root).
type UsageReader interface {
	SessionUsage(agent, session, dir string) StepResult
}

// readAbandoned records the usage of attempts a killed orchestrator left.
func (e *Engine) readAbandoned(sessions []string) {
	r, ok := e.Steps.(UsageReader)
	if !ok || len(sessions) == 0 {
		return
	}
	want := map[string]bool{}
	for _, s := range sessions {
		want[s] = true
	}
	for _, u := range e.state.Units {
		for _, st := range u.Steps {
			for i := range st.Attempts {
				a := &st.Attempts[i]
				if !want[a.Session] || a.Usage != nil {
					continue
				}
				res := r.SessionUsage(a.Agent, a.Session, u.Worktree)
				e.updateUnit(u, func(*State) { e.recordUsage(a, res, a.Model) })
			}
		}
	}
}
