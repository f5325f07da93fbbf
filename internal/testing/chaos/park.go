package chaos

import (
	"fmt"
	"math/rand"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// parkFaults crash every attempt of story 1.2's dev step the run's budget
// allows (three: the first and its two retries): it runs out of retries
// and parks; the attempts of a resumed run pass.
const parkFaults = "crash:dev:1@1.2, crash:dev:2@1.2, crash:dev:3@1.2"

func init() {
	specialRounds = append(specialRounds,
		specialRound{"killed-while-parking", parkRound(nil)},
		specialRound{"killed-while-parking-worktree", parkRound([]string{"--parallel", "2"})})
}

// parkRound kills the run (SIGKILL, to it or its process group) within
// moments of story 1.2's last dev attempt ending, while it parks the
// story: its work goes to its ref and out of the tree (or is committed on
// its worktree's branch), the other stories go on. A run that was not
// killed ends done_with_parked, and so does a resume of a run killed before
// it recorded the park (the step is still out of retries). Then --resume
// takes 1.2 up again with its work and every story lands: nothing lost,
// nothing left.
func parkRound(extra []string) func(Config, string) outcome {
	return func(cfg Config, dir string) (o outcome) {
		p, err := newRound(cfg, dir)
		if err != nil {
			return outcome{err: err}
		}
		defer p.Shutdown()
		p.RunFlags = extra
		p.Env = append(p.Env, "STORY_AUTOMATOR_SIM_FAULTS="+parkFaults)
		rng := rand.New(rand.NewSource(cfg.Seed)) //nolint:gosec // G404: a round must replay from CHAOS_SEED
		plan := killPlan{signal: syscall.SIGKILL, group: rng.Intn(2) == 0, nth: 3,
			delay:   time.Duration(rng.Intn(300_000)) * time.Microsecond,
			trigger: func(e event) bool { return e.Event == "step_finished" && e.Unit == "1.2" && e.Step == "dev" }}
		target := "run"
		if plan.group {
			target = "its process group"
		}
		plan.what = fmt.Sprintf("SIGKILL to %s after 1.2's third dev attempt ended +%s", target, plan.delay.Round(time.Microsecond))
		killed, c, err := plan.execute(p, append(append([]string{"run"}, runFlags...), extra...)...)
		if err != nil {
			return outcome{err: err}
		}
		if killed {
			o.kills++
			o.story = append(o.story, plan.what+", "+parkedAtKill(p))
		} else {
			o.story = append(o.story, "ran to its end before "+plan.what+": "+code(c.Result()))
		}
		// A run killed before it recorded the park resumes with the step
		// still out of retries, so it parks the story again and ends
		// done_with_parked; the next resume takes it up.
		esc, err := finish(p, &o)
		if strings.HasPrefix(esc, string(orchestrator.OutcomeDoneWithParked)) && err == nil {
			esc, err = finish(p, &o)
		}
		o.escalated, o.err, o.findings = esc, err, Check(p)
		return o
	}
}

// parkedAtKill says how far the park of 1.2 had come when the run died:
// recorded in the state document or not, its work on its ref or not.
func parkedAtKill(p *Sample) string {
	store := marker.NewStore(p.Root, func(string) string { return "" })
	st, err := orchestrator.LoadState(orchestrator.LatestState(store, p.Root))
	if err != nil {
		return "no state document"
	}
	u := st.Unit("1-2")
	if u == nil {
		return "no unit 1-2"
	}
	ref := "no ref"
	if _, err := p.Git("rev-parse", "-q", "--verify", orchestrator.ParkRef(st.RunID, "1-2")); err == nil {
		ref = "its work on its ref"
	}
	return "1.2 " + u.Status + " at the kill (the document may lag its journal), " + ref
}
