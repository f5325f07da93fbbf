package stophook

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// Exit strategies (docs/loops.md).
const (
	StrategyNone           = "none"
	StrategyAuto           = "auto"
	StrategyFixPlan        = "fix_plan"
	StrategyDoneSignals    = "done_signals"
	StrategyCircuitBreaker = "circuit_breaker"
	StrategyComposite      = "composite"

	// AutoThreshold and DoneSignalsThreshold are the analyzer confidences the
	// auto and done_signals strategies need.
	AutoThreshold        = 70
	DoneSignalsThreshold = 40
	// NoProgressLimit is how many iterations without progress open the
	// circuit_breaker strategy.
	NoProgressLimit = 3
)

var simpleStrategies = []string{StrategyAuto, StrategyFixPlan, StrategyDoneSignals, StrategyCircuitBreaker}

// ParseExitStrategy validates an --exit-strategy value and returns its member
// strategies in the order they are tried. "" and "none" have no members; a bare
// "composite" means auto and circuit_breaker, plus fix_plan when the loop has a
// fix plan; "composite:a,b" lists its members.
func ParseExitStrategy(spec string, haveFixPlan bool) ([]string, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == StrategyNone:
		return nil, nil
	case slices.Contains(simpleStrategies, spec):
		return []string{spec}, nil
	case spec == StrategyComposite:
		members := []string{StrategyAuto, StrategyCircuitBreaker}
		if haveFixPlan {
			members = append(members, StrategyFixPlan)
		}
		return members, nil
	case strings.HasPrefix(spec, StrategyComposite+":"):
		var members []string
		for _, p := range strings.Split(strings.TrimPrefix(spec, StrategyComposite+":"), ",") {
			p = strings.TrimSpace(p)
			if !slices.Contains(simpleStrategies, p) {
				return nil, fmt.Errorf("unknown composite member %q (want %s)", p, strings.Join(simpleStrategies, ", "))
			}
			if !slices.Contains(members, p) {
				members = append(members, p)
			}
		}
		return members, nil
	}
	return nil, fmt.Errorf("unknown exit strategy %q (want auto, fix_plan, done_signals, circuit_breaker, composite or composite:a,b)", spec)
}

// StrategyNeedsWorkTree reports whether a strategy watches the git work tree
// (and so needs `git` to run on every stop).
func StrategyNeedsWorkTree(spec string) bool {
	members, _ := ParseExitStrategy(spec, true)
	return slices.Contains(members, StrategyCircuitBreaker)
}

// strategyUses reports whether the loop's strategy includes member.
func strategyUses(l *marker.LoopState, member string) bool {
	members, _ := ParseExitStrategy(l.ExitStrategy, l.FixPlan != "")
	return slices.Contains(members, member)
}

// applyExitStrategy tries the loop's exit strategy; composite fires on the
// first member that does. A member that fires ends the loop, except
// circuit_breaker, which pauses it for a human to look at.
func applyExitStrategy(m, next *marker.Marker, msg string, prevLen int, env Env, now time.Time) (Decision, bool) {
	l := next.Loop
	members, err := ParseExitStrategy(l.ExitStrategy, l.FixPlan != "")
	if err != nil || len(members) == 0 {
		return Decision{}, false
	}
	var sig *CompletionSignal
	analyze := func() CompletionSignal {
		if sig == nil {
			s := AnalyzeResponse(msg, prevLen)
			sig = &s
			l.LastConfidence = s.Confidence
		}
		return *sig
	}
	for _, member := range members {
		switch member {
		case StrategyAuto:
			if s := analyze(); s.Complete && s.Confidence >= AutoThreshold {
				return endLoop(next, now, KindComplete, analyzerReason(member, s), strategyNotice(member, analyzerReason(member, s), l)), true
			}
		case StrategyDoneSignals:
			if s := analyze(); s.Confidence >= DoneSignalsThreshold {
				return endLoop(next, now, KindComplete, analyzerReason(member, s), strategyNotice(member, analyzerReason(member, s), l)), true
			}
		case StrategyFixPlan:
			if env.Loop.FixPlanErr != nil {
				continue
			}
			if st := ParseFixPlan(env.Loop.FixPlan); st.Finished() {
				why := fmt.Sprintf("fix_plan: all %d steps settled (%d done, %d out of attempts)", st.Steps, st.Done, st.Exhausted)
				return endLoop(next, now, KindComplete, why, strategyNotice(member, why, l)), true
			}
		case StrategyCircuitBreaker:
			if l.NoProgressIterations >= NoProgressLimit {
				why := fmt.Sprintf("circuit_breaker: %d consecutive iterations without progress (git HEAD, index and work tree unchanged, no heartbeat)", l.NoProgressIterations)
				return pauseLoop(m, next, now, KindBreakerOpen, why, "story-automator loop "+why+
					"; the loop is paused. Look at what is stuck, then `story-automator loop resume` or `story-automator loop cancel`."), true
			}
		}
	}
	return Decision{}, false
}

func analyzerReason(member string, s CompletionSignal) string {
	return fmt.Sprintf("%s: completion confidence %d (%s)", member, s.Confidence, strings.Join(s.Evidence, ", "))
}

func strategyNotice(member, why string, l *marker.LoopState) string {
	return fmt.Sprintf("story-automator loop complete after %d iteration(s), exit strategy %s: %s.", l.Iteration, member, why)
}
