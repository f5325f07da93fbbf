package runview

import (
	"fmt"

	"github.com/story-automator/story-automator/orchestrator"
)

// Ending is how `run` reports a run that ended: its JSON fields, its text,
// and, for a run that stopped short, the failure's code.
type Ending struct {
	Fields map[string]any
	Text   string
	// Code is the failure's: failCode, or the escalation's own code for a
	// cause no retry changes; "" when the run finished.
	Code string
}

// Ended reports res, a run that finished (failCode "") or stopped short
// with an error coded failCode.
func Ended(res *orchestrator.Result, failCode string) Ending {
	st := res.State
	done, total := st.StoryCounts()
	usage := st.Spend()
	fields := map[string]any{"runId": st.RunID, "outcome": string(res.Outcome), "stateFile": res.StatePath,
		"storiesDone": done, "storiesTotal": total, "commits": Commits(st), "usage": usage}
	if st.Config.Budget != nil {
		fields["budget"] = st.Config.Budget
	}
	if len(res.Warnings) > 0 { // also logged on stderr as they happened
		fields["warnings"] = res.Warnings
	}
	spent := orchestrator.SpendText(&usage, st.Config.Budget)
	if failCode == "" {
		return Ending{Fields: fields, Text: fmt.Sprintf("run %s done: %d of %d stories, one commit each\n%s\nstate document: %s\n",
			st.RunID, done, total, spent, res.StatePath)}
	}
	end := Ending{Fields: fields, Code: failCode}
	reason, action := st.PauseReason, "fix the cause, then run `story-automator run --resume`"
	if e := st.Escalation; e != nil {
		reason, action = e.Reason, e.Action
		if e.Code != "" {
			end.Code = e.Code
		}
		if e.ResetsAt != "" {
			fields["resetsAt"] = e.ResetsAt
		}
	}
	fields["reason"], fields["action"] = reason, action
	end.Text = fmt.Sprintf("run %s paused (%s): %d of %d stories done\n%s\nwhy: %s\nwhat to do: %s\nstate document: %s\n",
		st.RunID, end.Code, done, total, spent, reason, action, res.StatePath)
	return end
}
