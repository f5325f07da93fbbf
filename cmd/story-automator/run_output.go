package main

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/runview"
	"github.com/story-automator/story-automator/workflows"
)

// runOutput is how `run` talks: a live block on a terminal, one line per
// event elsewhere, JSON lines with --json.
type runOutput struct {
	e        *runtimeEnv
	json     bool
	live     *runview.LiveReporter
	reporter orchestrator.Reporter
	// policy is the run's workflow policy, for the plan's hosts and limit policy.
	policy orchestrator.Policy
}

func newRunOutput(e *runtimeEnv, asJSON bool) *runOutput {
	o := &runOutput{e: e, json: asJSON}
	switch {
	case asJSON:
		o.reporter = &runview.JSONReporter{W: e.Out}
	case cliio.IsTerminal(e.Out):
		o.live = &runview.LiveReporter{W: e.Out, Now: e.Now, Width: cliio.TerminalWidth(e.Out)}
		o.reporter = o.live
	default:
		o.reporter = &runview.LineReporter{W: e.Out}
	}
	return o
}

// runFailure is the failure users see for a run's error (see orchestrator.Coded).
func runFailure(err error) *coded.Error {
	return orchestrator.Coded(err)
}

func (o *runOutput) start() {
	if o.live != nil {
		o.live.Start()
	}
}

func (o *runOutput) stop() {
	if o.live != nil {
		o.live.Stop()
	}
}

// finish prints the result of the run and returns the command's error.
func (o *runOutput) finish(res *orchestrator.Result, err error) error {
	if err != nil && (res == nil || res.State == nil) {
		return runFailure(err)
	}
	if res.DryRun {
		return o.plan(res)
	}
	var f *coded.Error
	code := ""
	if err != nil {
		f = runFailure(err)
		code = f.Code
	}
	end := runview.Ended(res, code)
	switch {
	case err == nil && o.json:
		return cliio.OKJSON(o.e.Out, end.Fields)
	case err == nil:
		fmt.Fprint(o.e.Out, end.Text)
		return nil
	}
	f.Code, f.Fields = end.Code, end.Fields
	status := coded.ExitFailed
	if res.Outcome == orchestrator.OutcomeDoneWithParked {
		status = coded.ExitDoneWithParked
		f.Exit = status
	}
	if o.json {
		return f
	}
	fmt.Fprint(o.e.Out, end.Text)
	return cliio.ExitStatus(status)
}

// plan prints what a run would do: its stories, the hosts they run on,
// what a limit does, and the policy's warnings.
func (o *runOutput) plan(res *orchestrator.Result) error {
	st := res.State
	hosts := o.policy.RunHosts(st.Config, true)
	onLimit, maxWait := o.policy.LimitPolicy(st.Config)
	warnings := []string{}
	if w := (workflows.Sandbox{Off: !st.Config.Confined(), Network: st.Config.SandboxNetwork}).NetworkWarning(); w != "" {
		warnings = append(warnings, w)
	}
	if o.json {
		return cliio.OKJSON(o.e.Out, map[string]any{"dryRun": true, "runId": st.RunID, "stateFile": res.StatePath,
			"pipeline": res.Pipeline, "config": st.Config, "units": st.Units, "waves": runview.WaveKeys(st),
			"hosts": hosts, "onLimit": onLimit, "maxWait": maxWait.String(), "warnings": warnings})
	}
	if res.Pipeline.Pipeline != "" {
		fmt.Fprintln(o.e.Out, bmad.PipelineText(res.Pipeline))
	}
	runview.WritePlan(o.e.Out, st)
	runview.WritePlanPolicy(o.e.Out, hosts, onLimit, maxWait, warnings)
	return nil
}
