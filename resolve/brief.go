package resolve

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/sessionstate"
)

// briefAttempts and briefLines bound what the brief quotes of the step's
// last attempts: the newest ones, the end of each one's output.
const (
	briefAttempts = 3
	briefLines    = 30
)

// Brief is the first message of the resolve session: the story, why it
// stopped (the blocking condition, its code and the action the run named),
// its spec and that spec's last Auto Run Result, the step's last attempts
// with their verifier's word and the end of their output, the intent-gap
// patch when the worker saved one, and what happens when the session ends.
func Brief(t *Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("You are helping a person resolve %s in run %s of story-automator, which works through this project's stories unattended. ", t.describe(), t.State.RunID)
	w("The run set the story aside for a person. Work with them on what blocks it; do not run the story's whole workflow yourself.\n\n")
	w("## Why it stopped\n\n")
	w("- Reason: %s\n", orNone(t.Why.Reason))
	if t.Why.Code != "" {
		w("- Code: %s\n", t.Why.Code)
	}
	if t.Why.Action != "" {
		w("- What the run says to do: %s\n", t.Why.Action)
	}
	w("- Project: %s\n", t.Dir)
	w("- Run state document: %s\n", t.StatePath)
	if spec, ok, err := t.spec(); ok {
		w("\n## The spec\n\n%s (status %s)\n", t.rel(t.Spec), spec.Status)
		if r := spec.Result; r != nil {
			if r.BlockingCondition != "" {
				w("Blocking condition: %s\n", r.BlockingCondition)
			}
			w("\nIts last Auto Run Result:\n\n%s\n", indent(r.Text))
		}
	} else if err != nil {
		w("\n## The spec\n\n%s cannot be read: %v\n", t.rel(t.Spec), err)
	}
	if p := t.IntentGapPatch(); p != "" {
		w("\n## The attempted change\n\nThe worker saved the change it attempted before the intent gap as %s (reverted in the tree). "+
			"If the person accepts it as it is, `story-automator resolve %s --restore-patch` re-applies it and sends the story to review.\n", t.rel(p), t.Unit.Dotted)
	}
	attempts := t.Step.Attempts
	if len(attempts) > 0 {
		w("\n## The %s step's last attempts\n", t.Step.Name)
	}
	for _, a := range attempts[max(0, len(attempts)-briefAttempts):] {
		w("\nAttempt %d (%s): %s", a.N, a.Agent, orNone(a.FinalState))
		if a.Reason != "" {
			w(": %s", a.Reason)
		}
		w("\n")
		if a.Verifier != "" || a.Detail != "" {
			w("Verifier %s: %s\n", orNone(a.Verifier), orNone(a.Detail))
		}
		if a.OutputFile == "" {
			continue
		}
		w("Output: %s\n", a.OutputFile)
		if tail, err := sessionstate.OutputTail(a.OutputFile, briefLines); err == nil && strings.TrimSpace(tail) != "" {
			w("Its last lines:\n\n%s\n", indent(tail))
		}
	}
	w("\n## When you are done\n\n")
	w("The person ends this session when the cause is settled. story-automator then re-arms the story for `story-automator run --resume`: ")
	w("a blocked spec goes back to draft when its plan was changed or never finished (the worker plans again), else to ready-for-dev (it implements again). ")
	w("To choose yourself, set the spec's frontmatter `status:` (draft, ready-for-dev, in-review) before the session ends; that status is kept. ")
	w("Ending the session any other way (killing it) leaves the story as it is.\n")
	return b.String()
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// indent quotes text as a block, four spaces in.
func indent(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}
