package status

import "github.com/story-automator/story-automator/orchestrator"

// waitExit is status --wait's exit code for each outcome.
var waitExit = map[string]int{
	orchestrator.WaitDone: 0, orchestrator.WaitEscalated: 3, orchestrator.WaitPaused: 3,
	orchestrator.WaitDead: 4, orchestrator.WaitNoRun: 6, orchestrator.WaitRunning: 8,
}

// WaitExit is the exit code `status --wait` ends with for an outcome: 0
// done, 3 needs you (escalated, paused), 4 its process died, 6 no run, 8
// the bound passed.
func WaitExit(outcome string) int { return waitExit[outcome] }

// WaitFields is what `status --wait` prints as JSON about a wait: every
// field, empty ones too.
func WaitFields(res orchestrator.WaitResult) map[string]any {
	return map[string]any{"outcome": res.Outcome, "runId": res.RunID, "stateFile": res.StatePath,
		"storiesDone": res.Done, "storiesTotal": res.Total, "current": res.Current, "message": res.Message,
		"next": res.Next, "waitedSeconds": res.WaitedSecs}
}
