package main

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// `stop` (the dashboard's stop key from the command line) ends a working
// run as Ctrl-C in its terminal would and returns once its process has
// gone: the child killed, its attempt interrupted, the run paused; resume
// finishes it. With no run going it says so.
func TestE2EStopEndsTheRunningRunAndResumeFinishes(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	if res, code := p.run(nil, "stop", "--json"); code != 1 || res["error"] != "no_run" || stringOr(res["action"]) == "" {
		t.Fatalf("stop with no run: exit %d %v", code, res)
	}
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1@1-1"}, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	var out strings.Builder
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	p.waitFor("1.1's dev session to hang", func(st *orchestrator.State) bool {
		a := st.Unit("1-1").Step(orchestrator.StepDev).Attempts
		return len(a) == 1 && a[0].Session != ""
	})
	res, code := p.run(nil, "stop", "--json")
	if code != 0 || res["stopped"] != true || res["pid"] != float64(c.Process.Pid) || res["next"] != orchestrator.ResumeCommand {
		t.Fatalf("stop: exit %d %v", code, res)
	}
	if err := <-done; err == nil {
		t.Fatal("the stopped run exited 0; want it paused (run_interrupted)")
	}
	if m := p.marker(); m == nil || m.Status != marker.StatusPaused {
		t.Fatalf("marker after stop: %+v", m)
	}
	if s, _ := p.run(nil, "status", "--json"); len(s["sessions"].([]any)) != 0 {
		t.Fatalf("stop left the child session running: %v", s["sessions"])
	}
	if dev := p.state().Unit("1-1").Step(orchestrator.StepDev); dev.Attempts[0].FinalState != orchestrator.FinalInterrupted {
		t.Fatalf("dev after stop: %+v", dev)
	}
	if res, code := p.run(nil, append([]string{"run", "--resume", "--json"}, fast...)...); code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
}
