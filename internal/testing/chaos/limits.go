package chaos

import (
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// roundLimits is the sim's limits in the limits round: the dev step's
// streams drop for 2 s (an API fault, retried on the backoff), then, at the
// seventh child that got through, a usage limit of 6 s the run waits out.
const roundLimits = "reason=dropped_stream step=dev for=2s; after=6 for=6s"

// limitsRound kills the run's process group while it waits on a usage limit:
// `run --resume` waits only the rest of the recorded wait, and the run ends
// done with the dropped streams recorded as API faults, no retry used.
func limitsRound(cfg Config, dir string) (o outcome) {
	p, err := newRound(cfg, dir)
	if err != nil {
		return outcome{err: err}
	}
	defer p.Shutdown()
	p.Env = append(p.Env, "STORY_AUTOMATOR_SIM_LIMIT="+roundLimits, "STORY_AUTOMATOR_LIMIT_JITTER=0s")
	o.story = append(o.story, "limits "+roundLimits)
	plan := killPlan{signal: syscall.SIGKILL, group: true, nth: 1, what: "SIGKILL to its process group at limit_wait",
		trigger: func(e event) bool { return e.Event == orchestrator.EventLimitWait }}
	killed, c, err := plan.execute(p, append([]string{"run"}, runFlags...)...)
	switch {
	case err != nil:
		return outcome{err: err}
	case !killed:
		o.findings.left("the run never waited on the limit: it ended %s", code(c.Result()))
		return o
	}
	o.kills++
	o.story = append(o.story, plan.what)
	store := marker.NewStore(p.Root, func(string) string { return "" })
	st, err := orchestrator.LoadState(orchestrator.LatestState(store, p.Root))
	if err != nil || st.Wait == nil {
		o.findings.left("the killed run's state records no wait (%v)", err)
		return o
	}
	until, _ := marker.ParseTime(st.Wait.Until)
	o.escalated, o.err = resumeAfterWait(p, until, &o)
	f := Check(p)
	o.findings.Lost = append(o.findings.Lost, f.Lost...)
	o.findings.Leftovers = append(o.findings.Leftovers, f.Leftovers...)
	checkFaultsRecorded(p, &o.findings)
	return o
}

// resumeAfterWait runs `run --resume` to its end and wants its first step to
// start no earlier than the wait's recorded end; it reports an escalation.
func resumeAfterWait(p *Sample, until time.Time, o *outcome) (string, error) {
	c, err := p.Start("run", "--resume", "--json")
	if err != nil {
		return "", err
	}
	var first time.Time
	for line := range c.Lines {
		var e struct {
			Event string    `json:"event"`
			At    time.Time `json:"at"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Event == orchestrator.EventStepStarted && first.IsZero() {
			first = e.At
		}
	}
	exit, err := c.Wait(3 * time.Minute)
	if err != nil {
		return "", err
	}
	o.story = append(o.story, fmt.Sprintf("resume: %s, first step %s after the wait's end", code(c.Result()), first.Sub(until).Round(time.Millisecond)))
	if first.Before(until) {
		o.findings.left("the resumed run started a step at %s, before the wait's end %s", first, until)
	}
	if exit == 0 {
		return "", nil
	}
	res := c.Result()
	return fmt.Sprintf("%s: %v %v", code(res), res["reason"], res["message"]), nil
}

// checkFaultsRecorded wants the dropped streams recorded as API faults and
// the usage limit as a limit, neither costing a retry.
func checkFaultsRecorded(p *Sample, f *Findings) {
	st, err := orchestrator.LoadState(orchestrator.LatestState(marker.NewStore(p.Root, func(string) string { return "" }), p.Root))
	if err != nil {
		return // Check already said so
	}
	faults, limits := 0, 0
	for _, u := range st.Units {
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				switch {
				case orchestrator.IsAPIFault(a):
					faults++
				case a.FinalState == orchestrator.FinalLimited:
					limits++
				}
			}
		}
	}
	if faults == 0 || limits == 0 {
		f.left("the run recorded %d API faults and %d limits, want the dropped streams and the usage limit", faults, limits)
	}
	res, _, err := p.Run(30*time.Second, "runs", "--json")
	runs, _ := res["runs"].([]any)
	if err != nil || len(runs) == 0 {
		f.left("runs --json: %v %v", res, err)
		return
	}
	if row, _ := runs[0].(map[string]any); row["retries"] != float64(0) {
		f.left("the limit and the faults cost retries: %v", row)
	}
}
