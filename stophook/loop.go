package stophook

import (
	"time"

	"github.com/story-automator/story-automator/marker"
)

// decideLoop decides for the owner of a loop-mode marker once the shared
// checks (owner gate, staleness, background tasks, circuit breaker) have passed.
func decideLoop(in Input, next *marker.Marker, env Env, now time.Time) Decision {
	_ = in
	_ = env
	if next.Loop == nil {
		return Decision{Reason: "loop marker without loop state"}
	}
	reason := next.Loop.Prompt
	next.Loop.Iteration++
	return withLast(next, now, KindContinue, "loop continues", &Output{Decision: "block", Reason: reason})
}
