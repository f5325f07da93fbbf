package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/workflows"
)

// fakeRetro is a pipeline's retrospective whose verdict a test sets.
type fakeRetro struct {
	mu      sync.Mutex
	verdict map[string]string
	items   []string
	err     error
	settled int
	// refuse, when set, is what Prompt answers.
	refuse error
}

func (f *fakeRetro) Prompt(agent, target string) (string, error) {
	if f.refuse != nil {
		return "", f.refuse
	}
	return "/bmad-retrospective -H " + target + " (" + agent + ")", nil
}

func (f *fakeRetro) Settle(epic, target string) (RetroVerdict, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settled++
	if f.err != nil {
		return RetroVerdict{}, f.err
	}
	doc := "out/epic-" + epic + "-retro-2026-12-01.md"
	return RetroVerdict{Document: doc, Verdict: f.verdict[epic], Summary: "epic " + target + " judged", ActionItems: f.items,
		Board: "the run set epic-" + epic + "-retrospective: done", Paths: []string{doc}}, nil
}

func (f *fakeRetro) set(epic, verdict string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdict[epic] = verdict
}

// retroHarness has epics 1 and 2 of one story each, a retrospective with a
// verdict, and a retrospective child that writes its document.
func retroHarness(t *testing.T, verdict string) (*harness, *fakeRetro) {
	h := newHarness(t, "1-1", "2-1")
	h.project.retro["2"] = true
	r := &fakeRetro{verdict: map[string]string{"1": verdict}}
	h.retro = r
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepRetro {
			h.repo.touch("out/epic-" + req.Epic + "-retro-2026-12-01.md")
		}
		return StepResult{FinalState: FinalCompleted}
	}
	return h, r
}

func startedUnits(h *harness) []string {
	var out []string
	for _, r := range h.steps.requests() {
		out = append(out, strings.SplitN(r, "/", 2)[0])
	}
	return out
}

// A rejected epic pauses the run with retro_rejected after its
// retrospective's one commit (the document in it), quoting the document;
// the next epic's story never starts, even with a free slot. After the
// person's fix (the verdict changed), `run --resume` goes on without
// holding the retrospective again.
func TestRejectedRetroPausesBeforeTheNextEpicAndResumeGoesOn(t *testing.T) {
	h, r := retroHarness(t, workflows.VerdictRejected)
	o := h.options()
	o.Parallel = 2
	res, err := h.run(context.Background(), o)
	if !errors.Is(err, ErrEscalated) || res.State.Escalation == nil || res.State.Escalation.Code != CodeRetroRejected {
		t.Fatalf("err = %v, escalation %+v", err, res.State.Escalation)
	}
	esc := res.State.Escalation
	if !strings.Contains(esc.Reason, "out/epic-1-retro-2026-12-01.md") || !strings.Contains(esc.Reason, "epic 1 judged") ||
		!strings.Contains(esc.Action, "verdict:") || !strings.Contains(esc.Action, "run --resume") || !strings.Contains(esc.Action, "retroGate: off") {
		t.Fatalf("escalation %+v", esc)
	}
	if got := startedUnits(h); slices.Contains(got, "2-1") || !slices.Contains(got, "1") {
		t.Fatalf("units started: %v", got)
	}
	for _, req := range h.steps.reqs {
		if req.Step == StepRetro && req.Prompt != "/bmad-retrospective -H 1 (sim)" {
			t.Fatalf("retro prompt %q", req.Prompt)
		}
		if req.Step != StepRetro && req.Prompt != "" {
			t.Fatalf("a story step got the retrospective's prompt: %+v", req)
		}
	}
	files := h.repo.commitFiles()
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "epic-1-retro"}) || !slices.Contains(files["epic-1-retro"], "out/epic-1-retro-2026-12-01.md") {
		t.Fatalf("commits %v, files %v", got, files)
	}
	if u := h.saved(res).Unit("epic-1-retro"); u.Retro == nil || u.Retro.Verdict != workflows.VerdictRejected || u.Status != StatusEscalated {
		t.Fatalf("retro unit %+v", u)
	}

	// Still rejected: the run pauses again, and nothing of epic 2 starts.
	h.steps.verify = func(req StepRequest) bool { return req.Step == StepRetro }
	if _, err := h.resume(); !errors.Is(err, ErrEscalated) || slices.Contains(startedUnits(h), "2-1") {
		t.Fatalf("resume with the verdict unchanged: %v, started %v", err, startedUnits(h))
	}
	r.set("1", workflows.VerdictAccepted)
	before := len(h.steps.requests())
	res, err = h.resume()
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume after the fix: %v %s", err, res.Outcome)
	}
	after := h.steps.requests()[before:]
	if len(after) == 0 || slices.ContainsFunc(after, func(s string) bool { return strings.HasPrefix(s, "1/retro") }) || !strings.HasPrefix(after[0], "2-1/") {
		t.Fatalf("requests after the fix: %v", after)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "epic-1-retro", "2-1"}) {
		t.Fatalf("commits %v", got)
	}
}

// retroGate: off reports a rejected epic in the action log and goes on.
func TestRejectedRetroWithTheGateOffOnlyReports(t *testing.T) {
	h, _ := retroHarness(t, workflows.VerdictRejected)
	h.policy.RetroGateOff = true
	res := h.runOK()
	if res.Outcome != OutcomeDone || !slices.Contains(startedUnits(h), "2-1") {
		t.Fatalf("outcome %s, started %v", res.Outcome, startedUnits(h))
	}
	found := false
	for _, l := range h.saved(res).Log {
		found = found || strings.Contains(l.Message, "rejected epic 1") && strings.Contains(l.Message, "retroGate: off")
	}
	if !found {
		t.Fatalf("no report of the rejected epic in the log: %+v", h.saved(res).Log)
	}
}

// accepted and accepted-with-open-items go on; the verdict and its action
// items are kept in the state document (status and the dashboard read them).
func TestAcceptedRetrosGoOnAndKeepTheirActionItems(t *testing.T) {
	for _, v := range []string{workflows.VerdictAccepted, workflows.VerdictAcceptedOpenItems} {
		t.Run(v, func(t *testing.T) {
			h, r := retroHarness(t, v)
			r.items = []string{"Add error handling (owner: dev)"}
			res := h.runOK()
			u := h.saved(res).Unit("epic-1-retro")
			if res.Outcome != OutcomeDone || u.Retro == nil || u.Retro.Verdict != v || !slices.Equal(u.Retro.ActionItems, r.items) {
				t.Fatalf("outcome %s, retro %+v", res.Outcome, u.Retro)
			}
			doc, err := RenderState(h.saved(res))
			if err != nil || !strings.Contains(string(doc), "done · verdict "+v+" (out/epic-1-retro-2026-12-01.md)") {
				t.Fatalf("the state document does not say the verdict (%v):\n%s", err, doc)
			}
			if u.Retro.OpenItems() != (v == workflows.VerdictAcceptedOpenItems) {
				t.Fatalf("OpenItems = %v for %s", u.Retro.OpenItems(), v)
			}
			if got := startedUnits(h); slices.Index(got, "2-1") < slices.Index(got, "1") {
				t.Fatalf("epic 2 started before epic 1's retrospective: %v", got)
			}
		})
	}
}

// A retrospective that leaves no readable verdict escalates with its code.
func TestRetroWithoutAVerdictEscalates(t *testing.T) {
	h, r := retroHarness(t, "")
	r.err = fmt.Errorf("%w: no document", workflows.ErrRetroInvalid)
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) || res.State.Escalation.Code != "retro_invalid" || slices.Contains(startedUnits(h), "2-1") {
		t.Fatalf("err %v, escalation %+v, started %v", err, res.State.Escalation, startedUnits(h))
	}
}

// Without a Retrospective (the five-step pipeline) the retrospective is as
// it was: no gate on the next epic, no skill prompt.
func TestFiveStepRetroHasNoGate(t *testing.T) {
	h, _ := retroHarness(t, workflows.VerdictRejected)
	h.retro = nil
	res := h.runOK()
	st := h.saved(res)
	if res.Outcome != OutcomeDone || len(st.Unit("2-1").DependsOn) != 0 || st.Unit("epic-1-retro").Retro != nil {
		t.Fatalf("outcome %s, 2-1 depends on %v", res.Outcome, st.Unit("2-1").DependsOn)
	}
}

// A retrospective its agent cannot be told to hold escalates at once with
// the pipeline's code and action; no child starts for it.
func TestRetroPromptRefusedEscalates(t *testing.T) {
	h, r := retroHarness(t, workflows.VerdictAccepted)
	r.refuse = &Blocker{Code: CodeRetroUnsupported, Err: errors.New("no skill form"), Action: "give steps.retro.agent one"}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) || res.State.Escalation.Code != CodeRetroUnsupported || res.State.Escalation.Action != "give steps.retro.agent one" {
		t.Fatalf("err %v, escalation %+v", err, res.State.Escalation)
	}
	for _, req := range h.steps.reqs {
		if req.Step == StepRetro {
			t.Fatalf("a retrospective child started: %+v", req)
		}
	}
	if slices.Contains(startedUnits(h), "2-1") {
		t.Fatalf("epic 2 started: %v", startedUnits(h))
	}
}
