package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/orchestrator"
)

// parkEpics are four stories: 1.2 depends on 1.1, epic 2's two on nothing.
const parkEpics = "# Epics\n\n## Epic 1: Accounts\n\n### Story 1.1: Sign up\n\nAs a visitor I can sign up.\n\n" +
	"### Story 1.2: Account settings\n\nDepends on: 1.1\n\nAs a user I can change my settings.\n\n" +
	"## Epic 2: Billing\n\n### Story 2.1: Invoices\n\nAs a user I see my invoices.\n\n### Story 2.2: Refunds\n\nAs a user I get refunds.\n"

// On the build-auto pipeline a story the worker blocks with a condition
// that needs a person (an intent gap) is parked at night: its spec kept on
// its ref and out of the tree, the board accepted by BMAD's validate, the
// two stories that do not depend on it landed, the one that does left
// waiting, the run ended done_with_parked (exit 10). The person answers
// the spec; --resume lands the rest.
func TestE2EBuildAutoParksABlockedStoryAndLandsTheIndependentOnes(t *testing.T) {
	t.Parallel()
	p, in := newBMAD612ProjectWith(t, parkEpics)
	in = withBuildAutoPolicy(t, p, in, "")
	res, code := p.run([]string{withUV(in), agentsim.EnvBuildAuto + "=blocked=intent gap@1-1"}, "run", "--agent", "sim", "--json")
	st := p.state()
	if code != 10 || res["outcome"] != string(orchestrator.OutcomeDoneWithParked) || res["error"] != "done_with_parked" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	for key, want := range map[string]string{"1-1": orchestrator.StatusParked, "1-2": orchestrator.StatusPending,
		"2-1": orchestrator.StatusDone, "2-2": orchestrator.StatusDone} {
		if got := st.Unit(key).Status; got != want {
			t.Fatalf("%s is %s, want %s\n%s", key, got, want, p.stateLog())
		}
	}
	parked := st.Unit("1-1").Parked
	ref := orchestrator.ParkRef(st.RunID, "1-1")
	if parked == nil || parked.Code != "build_auto_blocked" || parked.Ref != ref || !strings.Contains(parked.Reason, `"intent gap"`) ||
		!strings.Contains(parked.Action, "answer the questions in the spec") || !strings.Contains(parked.Action, ref) || st.Escalation != nil {
		t.Fatalf("parked %+v, escalation %+v", parked, st.Escalation)
	}
	spec := "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md"
	if kept := p.git("show", ref+":"+spec); !strings.Contains(kept, "status: 'blocked'") || !strings.Contains(kept, "Blocking condition: intent gap") {
		t.Fatalf("the ref keeps:\n%s", kept)
	}
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("the parked story's work is left in the tree:\n%s", dirty)
	}
	if commits := p.storyCommits(); commits["2-1"] != 1 || commits["2-2"] != 1 || commits["1-1"] != 0 {
		t.Fatalf("commits %v", commits)
	}
	board := p.board()
	if boardStatus(board, "1-1-sign-up") != "in-progress" || boardStatus(board, "2-1-invoices") != "done" || boardStatus(board, "1-2-account-settings") == "done" {
		t.Fatalf("board:\n%s", board)
	}
	p.validateBoard(in)
	status, _ := p.run(nil, "status", "--json")
	if data, err := json.Marshal(status); err != nil || !strings.Contains(string(data), `"status":"parked"`) || !strings.Contains(string(data), ref) {
		t.Fatalf("status --json: %s", data)
	}

	// The person takes the work back, answers the spec, sets it to draft.
	p.git("cherry-pick", "--no-commit", ref)
	p.git("reset", "-q")
	path := filepath.Join(p.root, filepath.FromSlash(spec))
	text := strings.Replace(readFile(t, path), "status: 'blocked'", "status: 'draft'", 1)
	if err := os.WriteFile(path, []byte(text+"\nAnswer: sign up by e-mail.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	p.checkLanded(in, "1-1", "1-2", "2-1")
}
