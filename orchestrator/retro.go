package orchestrator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/workflows"
)

// CodeRetroRejected is the pause of a run whose epic's retrospective
// rejected the epic (BMAD 6.12's verdict), before the next epic starts.
const CodeRetroRejected = "retro_rejected"

// CodeRetroUnsupported is the escalation of a retrospective whose agent
// cannot be told to run a skill.
const CodeRetroUnsupported = "retro_unsupported"

// Retrospective is the retrospective of a pipeline whose retrospective
// gives a verdict (BMAD 6.12's bmad-retrospective): wire sets Deps.Retro
// to it on such a pipeline; nil keeps the five-step retrospective as it is.
// A run with one holds each epic's retrospective before the next epic's
// stories start, and pauses there on a rejected verdict unless the policy
// says only to report it (Policy.RetroGateOff).
type Retrospective interface {
	// Prompt is what has agent hold the retrospective of target (the
	// skill's -H argument: the epic's id, or a spec folder).
	Prompt(agent, target string) (string, error)
	// Settle reads the retrospective's document (epic's, or target's)
	// and, when its child left the board without it, puts it there itself;
	// it returns the verdict and the project-relative paths the
	// retrospective's commit takes.
	Settle(epic, target string) (RetroVerdict, error)
}

// RetroVerdict is what an epic's retrospective decided, as the run read it.
type RetroVerdict struct {
	// Document is the retrospective's document, project-relative.
	Document string `json:"document"`
	// Verdict is accepted, accepted-with-open-items or rejected.
	Verdict string `json:"verdict"`
	// Summary is the document's own words on the verdict.
	Summary string `json:"summary,omitempty"`
	// ActionItems are the document's action items, one line each.
	ActionItems []string `json:"actionItems,omitempty"`
	// Board says what the run put on the board itself ("" = nothing: the
	// retrospective's child did).
	Board string `json:"board,omitempty"`
	// Paths are what the retrospective's commit takes (the document, the board).
	Paths []string `json:"-"`
}

// OpenItems reports whether the verdict leaves action items open.
func (v *RetroVerdict) OpenItems() bool {
	return v != nil && v.Verdict == workflows.VerdictAcceptedOpenItems && len(v.ActionItems) > 0
}

// retroTarget is the -H argument of a retrospective unit: its Target (a
// spec folder), else its epic.
func retroTarget(u *Unit) string {
	if u.Target != "" {
		return u.Target
	}
	return u.Epic
}

// retroPrompt is the prompt of a retrospective attempt on a pipeline with
// a verdict ("" = the step's workflow prompt).
func (e *Engine) retroPrompt(u *Unit, agentName string) (string, *Blocker) {
	if e.Retro == nil || u.Kind != KindRetro {
		return "", nil
	}
	p, err := e.Retro.Prompt(agentName, retroTarget(u))
	if err != nil {
		if b, ok := AsBlocker(err); ok {
			return "", b
		}
		return "", &Blocker{Code: CodeRetroUnsupported, Err: err,
			Action: "Run the retrospective with an agent that can invoke skills (workflow.yaml `steps.retro.agent`), or hold it by hand and run `story-automator run --resume`."}
	}
	return p, nil
}

// settleRetro reads a finished retrospective's verdict and sets the board
// right before its commit; a document without a verdict escalates.
func (e *Engine) settleRetro(u *Unit) stepEnd {
	r := u.Step(StepRetro)
	if e.Retro == nil || u.Kind != KindRetro || r == nil || r.Status != StatusVerified {
		return stepOK
	}
	v, err := e.Retro.Settle(u.Epic, retroTarget(u))
	if err != nil {
		e.escalateBlocker(u, r, retroBlocker(u, err))
		return stepEscalated
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		u.Retro = &v
		for _, p := range v.Paths {
			if !slices.Contains(u.Paths, p) {
				u.Paths = append(u.Paths, p)
			}
		}
		line := fmt.Sprintf("verdict %s (%s)", v.Verdict, v.Document)
		if len(v.ActionItems) > 0 {
			line += fmt.Sprintf(", %d action items", len(v.ActionItems))
		}
		if v.Board != "" {
			line += "; " + v.Board
		}
		s.addLog(now, u.Dotted, StepRetro, line)
	})
	return stepOK
}

// retroBlocker is the escalation of a retrospective whose document the run
// cannot read.
func retroBlocker(u *Unit, err error) *Blocker {
	if b, ok := AsBlocker(err); ok {
		return b
	}
	code := workflows.Code(err)
	if code == "" || code == "workflow_io" {
		code = "retro_invalid"
	}
	return &Blocker{Code: code, Err: err,
		Action: fmt.Sprintf("The retrospective of %s must leave its document with `verdict:` accepted, accepted-with-open-items or rejected in its frontmatter. Read the session's output, fix or write the document by hand, then run `story-automator run --resume`.", u.Dotted)}
}

// retroGate reads the verdict again (a person may have changed it since
// the run paused) and pauses the run on a rejected epic, before the next
// epic's stories start, unless the policy only reports it.
func (e *Engine) retroGate(u *Unit) bool {
	if e.Retro == nil || u.Kind != KindRetro {
		return true
	}
	r := u.Step(StepRetro)
	if r == nil || r.Status != StatusVerified {
		return true
	}
	v, err := e.Retro.Settle(u.Epic, retroTarget(u))
	if err != nil {
		e.escalateBlocker(u, r, retroBlocker(u, err))
		return false
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(*State) { u.Retro = &v })
	if v.Verdict != workflows.VerdictRejected {
		return true
	}
	quote := ""
	if v.Summary != "" {
		quote = ": “" + v.Summary + "”"
	}
	if e.Policy.RetroGateOff {
		e.updateUnit(u, func(s *State) {
			s.addLog(now, u.Dotted, StepRetro, "the retrospective rejected epic "+u.Epic+" ("+v.Document+")"+quote+"; retroGate: off, the run goes on")
		})
		return true
	}
	items := ""
	if len(v.ActionItems) > 0 {
		items = " Its action items: " + strings.Join(v.ActionItems, "; ") + "."
	}
	e.escalateBlocker(u, r, &Blocker{Code: CodeRetroRejected,
		Err: fmt.Errorf("the retrospective rejected epic %s (%s)%s", u.Epic, v.Document, quote),
		Action: fmt.Sprintf("Read %s, fix what it names (the next epic waits), then set its frontmatter `verdict:` to accepted or accepted-with-open-items and run `story-automator run --resume`: the run reads the verdict again before it goes on.%s To have rejected retrospectives only reported, set `retroGate: off` in %s.",
			v.Document, items, workflows.PolicyFile)})
	return false
}
