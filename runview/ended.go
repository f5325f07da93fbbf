package runview

import (
	"fmt"
	"strings"

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
	parked, parkedText := parkedOf(st)
	if len(parked) > 0 {
		fields["parked"] = parked
	}
	if res.Outcome == orchestrator.OutcomeDoneWithParked {
		fields["action"] = "settle each parked story as its action says, then run `story-automator run --resume`"
		end.Text = fmt.Sprintf("run %s done with parked stories: %d of %d stories done\n%s\n%sstate document: %s\n",
			st.RunID, done, total, spent, parkedText, res.StatePath)
		return end
	}
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
	end.Text = fmt.Sprintf("run %s paused (%s): %d of %d stories done\n%s\nwhy: %s\nwhat to do: %s\n%sstate document: %s\n",
		st.RunID, end.Code, done, total, spent, reason, action, parkedText, res.StatePath)
	return end
}

// ParkedStory is a parked unit as a run's end and `status` show it.
type ParkedStory struct {
	Unit   string `json:"unit"`
	Step   string `json:"step"`
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason"`
	Action string `json:"action"`
	Ref    string `json:"ref,omitempty"`
	// Waiting are the units that depend on it, directly or not.
	Waiting []string `json:"waiting,omitempty"`
}

// parkedOf lists the run's parked units and says them in lines.
func parkedOf(st *orchestrator.State) ([]ParkedStory, string) {
	var out []ParkedStory
	var b strings.Builder
	for _, u := range st.Units {
		if u.Status != orchestrator.StatusParked || u.Parked == nil {
			continue
		}
		p := ParkedStory{Unit: u.Dotted, Step: u.Parked.Step, Code: u.Parked.Code, Reason: u.Parked.Reason, Action: u.Parked.Action,
			Ref: u.Parked.Ref, Waiting: waitingOn(st, u.Key)}
		out = append(out, p)
		fmt.Fprintf(&b, "parked %s (%s): %s\n  what to do: %s\n", p.Unit, p.Step, p.Reason, p.Action)
		if len(p.Waiting) > 0 {
			fmt.Fprintf(&b, "  waiting on it: %s\n", strings.Join(p.Waiting, ", "))
		}
	}
	return out, b.String()
}

// waitingOn lists the units not done that depend on key, directly or not.
func waitingOn(st *orchestrator.State, key string) []string {
	var out []string
	on := map[string]bool{key: true}
	for changed := true; changed; {
		changed = false
		for _, u := range st.Units {
			if on[u.Key] || u.Status == orchestrator.StatusDone {
				continue
			}
			for _, d := range u.DependsOn {
				if on[d] {
					on[u.Key], changed = true, true
					out = append(out, u.Dotted)
					break
				}
			}
		}
	}
	return out
}
