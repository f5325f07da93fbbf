package main

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/runview"
)

// runOutput is how `run` talks: a live block on a terminal, one line per
// event elsewhere, JSON lines with --json.
type runOutput struct {
	e        *runtimeEnv
	json     bool
	live     *orchestrator.LiveReporter
	reporter orchestrator.Reporter
}

func newRunOutput(e *runtimeEnv, asJSON bool) *runOutput {
	o := &runOutput{e: e, json: asJSON}
	switch {
	case asJSON:
		o.reporter = &orchestrator.JSONReporter{W: e.Out}
	case cliio.IsTerminal(e.Out):
		o.live = &orchestrator.LiveReporter{W: e.Out, Now: e.Now, Width: cliio.TerminalWidth(e.Out)}
		o.reporter = o.live
	default:
		o.reporter = &orchestrator.LineReporter{W: e.Out}
	}
	return o
}

// runFailure is the failure users see for a run's error (see orchestrator.Coded).
func runFailure(err error) *cliio.Failure {
	f, _ := cliio.FromCoded(orchestrator.Coded(err))
	return f
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
	st := res.State
	done, total := st.StoryCounts()
	usage := st.Spend()
	fields := map[string]any{"runId": st.RunID, "outcome": string(res.Outcome), "stateFile": res.StatePath,
		"storiesDone": done, "storiesTotal": total, "commits": runview.Commits(st), "usage": usage}
	if st.Config.Budget != nil {
		fields["budget"] = st.Config.Budget
	}
	if len(res.Warnings) > 0 { // also logged on stderr as they happened
		fields["warnings"] = res.Warnings
	}
	spent := orchestrator.SpendText(&usage, st.Config.Budget)
	if err == nil {
		if o.json {
			return cliio.OKJSON(o.e.Out, fields)
		}
		fmt.Fprintf(o.e.Out, "run %s done: %d of %d stories, one commit each\n%s\nstate document: %s\n", st.RunID, done, total, spent, res.StatePath)
		return nil
	}
	f := runFailure(err)
	f.Fields = fields
	reason, action := st.PauseReason, "fix the cause, then run `story-automator run --resume`"
	if st.Escalation != nil {
		reason, action = st.Escalation.Reason, st.Escalation.Action
		if st.Escalation.Code != "" { // a cause no retry changes has its own code
			f.Code = st.Escalation.Code
		}
	}
	fields["reason"], fields["action"] = reason, action
	if o.json {
		return f
	}
	fmt.Fprintf(o.e.Out, "run %s paused (%s): %d of %d stories done\n%s\nwhy: %s\nwhat to do: %s\nstate document: %s\n",
		st.RunID, f.Code, done, total, spent, reason, action, res.StatePath)
	return cliio.ExitStatus(1)
}

// plan prints what a run would do.
func (o *runOutput) plan(res *orchestrator.Result) error {
	st := res.State
	if o.json {
		return cliio.OKJSON(o.e.Out, map[string]any{"dryRun": true, "runId": st.RunID, "stateFile": res.StatePath,
			"config": st.Config, "units": st.Units, "waves": runview.WaveKeys(st)})
	}
	runview.WritePlan(o.e.Out, st)
	return nil
}
