package main

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
)

// status --wait on a sim run: bounded, it returns "running" (exit 8) while
// stories are left; unbounded, it returns once the run is done (exit 0),
// with the one next command.
func TestE2EStatusWaitFollowsARunToItsEnd(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	res, code := p.run(nil, "status", "--wait", "--json")
	if code != 6 || res["outcome"] != "no_run" {
		t.Fatalf("no run yet: exit %d %v", code, res)
	}
	run := p.cmd([]string{"STORY_AUTOMATOR_SIM_DELAY=300ms"}, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the run to start", func(st *orchestrator.State) bool { return st.Status == orchestrator.RunRunning })
	res, code = p.run(nil, "status", "--wait", "--return-after", "200ms", "--json")
	if code != 8 || res["outcome"] != "running" || !strings.Contains(stringOr(res["next"]), "status --wait --return-after 200ms") {
		t.Fatalf("bounded wait: exit %d %v", code, res)
	}
	res, code = p.run(nil, "status", "--wait", "--return-after", "0", "--json")
	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if code != 0 || res["outcome"] != "done" || res["storiesDone"] != res["storiesTotal"] || res["next"] == "" {
		t.Fatalf("wait to the end: exit %d %v", code, res)
	}
}
