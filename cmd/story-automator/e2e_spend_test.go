package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// simTurn is the usage every simulated attempt reports in these tests; at
// the sim model's price (3, 15, 0.3, 3.75 per million) one costs $3.51.
const simTurn = "input=1000000,output=10000,cacheRead=100000,cacheWrite=0"

const simTurnCost = 3 + 0.15 + 0.03

var simTurnUsage = spend.Usage{InputTokens: 1_000_000, OutputTokens: 10_000, CacheReadTokens: 100_000}

// checkSpend checks that every ended attempt holds the known figures and
// that each story's and the run's totals are the sums of their attempts.
func checkSpend(t *testing.T, st *orchestrator.State) (attempts int) {
	t.Helper()
	for _, u := range st.Units {
		n := 0
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				if a.FinalState == "" || a.Session == "" {
					continue
				}
				n++
				if a.Usage == nil || a.Usage.Tokens() != simTurnUsage.Tokens() || a.Usage.InputTokens != simTurnUsage.InputTokens ||
					a.Model != spend.SimModel || a.Usage.CostUSD == nil || *a.Usage.CostUSD != simTurnCost {
					t.Fatalf("%s %s attempt %d: model %q usage %+v (%s)", u.Dotted, s.Name, a.N, a.Model, a.Usage, a.UsageNote)
				}
			}
		}
		if n > 0 && (u.Usage == nil || u.Usage.Attempts != n || u.Usage.Tokens() != int64(n)*simTurnUsage.Tokens()) {
			t.Fatalf("%s: %d attempts, total %+v", u.Dotted, n, u.Usage)
		}
		attempts += n
	}
	if st.Usage.Attempts != attempts || st.Usage.Tokens() != int64(attempts)*simTurnUsage.Tokens() ||
		st.Usage.Cost() != roundTo6(float64(attempts)*simTurnCost) {
		t.Fatalf("run total %+v, want %d attempts' worth", st.Usage, attempts)
	}
	return attempts
}

func roundTo6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

func usageOf(t *testing.T, v any) spend.Total {
	t.Helper()
	b, _ := json.Marshal(v)
	var tot spend.Total
	if err := json.Unmarshal(b, &tot); err != nil {
		t.Fatal(err)
	}
	return tot
}

func TestE2ESimRunRecordsKnownUsageEverywhere(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	env := []string{"STORY_AUTOMATOR_SIM_USAGE=" + simTurn, "STORY_AUTOMATOR_SIM_FAULTS=crash:dev:1@1-1"}
	res, code := p.run(env, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	st := p.state()
	n := checkSpend(t, st)
	if d := st.Unit("1-1").Step(orchestrator.StepDev).Usage; d == nil || d.Attempts != 2 {
		t.Fatalf("the crashed dev attempt and its retry: %+v", d)
	}
	if got := usageOf(t, res["usage"]); got.Attempts != n || got.Tokens() != st.Usage.Tokens() || got.Cost() != st.Usage.Cost() {
		t.Errorf("result usage %+v, state %+v", got, st.Usage)
	}
	status, _ := p.run(nil, "status", "--json")
	run := status["run"].(map[string]any)
	if got := usageOf(t, run["usage"]); got.Tokens() != st.Usage.Tokens() || got.Cost() != st.Usage.Cost() {
		t.Errorf("status usage %+v", got)
	}
	for _, key := range []string{"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "costUsd"} {
		if _, ok := run["usage"].(map[string]any)[key]; !ok {
			t.Errorf("status --json usage lacks %s", key)
		}
	}
	story := run["units"].([]any)[0].(map[string]any)
	if got := usageOf(t, story["usage"]); got.Tokens() != st.Unit("1-1").Usage.Tokens() {
		t.Errorf("status story usage %+v", got)
	}
	runs, _ := p.run(nil, "runs", "--json")
	list := runs["runs"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 1 || first["runId"] != st.RunID || first["outcome"] != "done" || first["retries"] != 1.0 ||
		first["attempts"] != float64(n) || usageOf(t, first["usage"]).Cost() != st.Usage.Cost() {
		t.Errorf("runs --json: %v", runs)
	}
	show, code := p.run(nil, "runs", "show", st.RunID[:12])
	if code != 0 || show["run"].(map[string]any)["runId"] != st.RunID {
		t.Errorf("runs show: %d %v", code, show)
	}
	if _, code := p.run(nil, "runs", "show", "run-nope"); code != 1 {
		t.Errorf("runs show of an unknown run exited %d", code)
	}
	// The run's picture: a bar and a table row per attempt, the crash among them.
	page := filepath.Join(t.TempDir(), "run.html")
	if res, code := p.run(nil, "runs", "show", st.RunID, "--html", page); code != 0 || res["linked"] != true {
		t.Fatalf("runs show --html: %d %v", code, res)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var attempts int
	for _, u := range st.Units {
		for _, step := range u.Steps {
			attempts += len(step.Attempts)
		}
	}
	if got := strings.Count(string(html), `<tr id="a-`); got != attempts || !strings.Contains(string(html), `<rect class="bar s-crashed"`) ||
		!strings.Contains(string(html), "Greet the World") {
		t.Errorf("the page shows %d attempts of %d, or lacks the crash or a title", got, attempts)
	}
	if doc, _ := os.ReadFile(res["stateFile"].(string)); !strings.Contains(string(doc), "**Timeline:** `"+page+"`") {
		t.Error("the state document does not name the page")
	}
}

func TestE2EMaxCostPausesAfterTheFirstStoryAndResumeCarriesTheSpendThroughAKill(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	env := []string{"STORY_AUTOMATOR_SIM_USAGE=" + simTurn}
	// Story 1.1 takes four attempts (create, dev, automate, review): $12.72.
	res, code := p.run(env, append([]string{"run", "--agent", "sim", "--json", "--max-cost", "12"}, fast...)...)
	if code != 1 || res["error"] != orchestrator.CodeBudgetExceeded || res["outcome"] != "budget_exceeded" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	st := p.state()
	if st.Unit("1-1").Status != orchestrator.StatusDone || st.Unit("1-1").Commit == "" {
		t.Fatalf("story 1.1 %s", st.Unit("1-1").Status)
	}
	for _, k := range []string{"1-2", "1-3", "1-4"} {
		for _, s := range st.Unit(k).Steps {
			if len(s.Attempts) > 0 {
				t.Fatalf("%s %s started after the budget was reached", k, s.Name)
			}
		}
	}
	before := checkSpend(t, st)
	doc := readFile(t, st.Config.StateFile)
	if !strings.Contains(doc, "cost $12.7200 spent of $12.0000") || !strings.Contains(doc, "run --resume --max-cost") {
		t.Fatalf("the state document does not say what was spent against which limit and how to raise it:\n%s", doc)
	}
	if m := p.marker(); m == nil || m.Status != "paused" {
		t.Fatalf("marker %+v", m)
	}
	// Resumed with more, killed while 1.2's dev hangs, resumed again.
	c := p.cmd(append(env, "STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1@1-2"), append([]string{"run", "--resume", "--json", "--max-cost", "100"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.2's dev session to hang", func(st *orchestrator.State) bool {
		a := st.Unit("1-2").Step(orchestrator.StepDev).Attempts
		return len(a) == 1 && a[0].Session != "" && a[0].FinalState == ""
	})
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
	if st := p.state(); st.Usage.Attempts != before+1 {
		t.Fatalf("after the kill the state holds %d attempts' spend, want %d", st.Usage.Attempts, before+1)
	}
	res, code = p.run(env, append([]string{"run", "--resume", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
	st = p.state()
	all := checkSpend(t, st)
	if st.Config.Budget == nil || st.Config.Budget.MaxCostUSD != 100 || all <= before+2 {
		t.Fatalf("budget %+v, %d attempts (before %d)", st.Config.Budget, all, before)
	}
	// The killed attempt's usage was read from its agent's record on resume.
	if a := st.Unit("1-2").Step(orchestrator.StepDev).Attempts[0]; a.FinalState != orchestrator.FinalInterrupted || a.Usage == nil {
		t.Fatalf("the killed attempt: %+v", a)
	}
}

func TestE2EModelFlagsReachTheAgentsArgv(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	res, code := p.run(nil, append([]string{"run", "--agent", "sim", "--json", "--stories", "1", "--model", "review=M2", "--model", "M1"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	for _, u := range p.state().Units {
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				want := "M1"
				if s.Name == orchestrator.StepReview {
					want = "M2"
				}
				// The sim names the model it was started with (its argv's --model) in its usage.
				if a.Model != want {
					t.Errorf("%s %s ran %q, want %q", u.Dotted, s.Name, a.Model, want)
				}
			}
		}
	}
	for _, bad := range [][]string{{"--model", " "}, {"--model", "review="}} {
		res, code := p.run(nil, append([]string{"run", "--agent", "sim", "--json"}, bad...)...)
		if code != 2 || res["error"] != "invalid_flag" {
			t.Errorf("%v: exit %d %v", bad, code, res)
		}
	}
}
