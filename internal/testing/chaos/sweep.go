package chaos

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// sweepFindings are the done specs of the sweep round and their deferred
// findings: two units, of two and one items.
var sweepFindings = map[string]string{
	"spec-0-1-old-sign-up.md": "  - summary: Password rule allows spaces\n    evidence: no check\n    severity: high\n" +
		"  - summary: Error copy is terse\n    evidence: ux note\n    severity: medium\n",
	"spec-0-2-old-sign-in.md": "  - summary: Lockout counter never resets\n    evidence: no reset path\n    severity: medium\n",
}

// newSweepSample is the build-auto sample with two done specs whose
// findings `story-automator deferred` collected into deferred-work.md,
// committed.
func newSweepSample(cfg Config, dir string) (*Sample, error) {
	p := &Sample{Bin: cfg.Bin, Root: filepath.Join(dir, "project"), Home: filepath.Join(dir, "home"),
		Socket: fmt.Sprintf("sa-chaos-%d-%s", os.Getpid(), filepath.Base(dir)), Units: []string{"sweep-1", "sweep-2"}}
	if err := os.MkdirAll(p.Home, 0o700); err != nil {
		return nil, err
	}
	if err := sample.WriteBuildAutoSample(p.Root); err != nil {
		return nil, err
	}
	for name, deferred := range sweepFindings {
		text := "---\ntitle: 'x'\nstatus: 'done'\ndeferred:\n" + deferred + "---\n\n## Auto Run Result\n\nStatus: done\n"
		if err := os.WriteFile(filepath.Join(p.Root, "_bmad-output", "implementation-artifacts", name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	// The worker commits its own work (build-auto), as the user's identity.
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "chaos"}, {"config", "user.email", "chaos@example.invalid"}} {
		if _, err := p.Git(args...); err != nil {
			return nil, err
		}
	}
	if res, exit, err := p.Run(time.Minute, "deferred", "--json"); err != nil || exit != 0 {
		return nil, fmt.Errorf("deferred: exit %d %v %v", exit, res, err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "sample with deferred findings"}} {
		if _, err := p.Git(args...); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// sweepRound kills `run --sweep` one to three times around its commit
// steps (a sweep unit's landing: the squash, the marks, their commit),
// resumes it to its end, and checks that each unit landed once and every
// item is marked done with its unit's commit.
func sweepRound(cfg Config, dir string) (o outcome) {
	p, err := newSweepSample(cfg, dir)
	if err != nil {
		return outcome{err: err}
	}
	defer p.Shutdown()
	p.RunFlags = []string{"--sweep"}
	rng := rand.New(rand.NewSource(cfg.Seed)) //nolint:gosec // G404: a round must replay from CHAOS_SEED
	args := append(append([]string{"run"}, runFlags...), p.RunFlags...)
	for n := 1 + rng.Intn(3); n > 0; n-- {
		plan := planKill(rng, ModeGroupCommit)
		killed, c, err := plan.execute(p, args...)
		if err != nil {
			o.err = err
			return o
		}
		args = nextArgs(p)
		if !killed {
			o.story = append(o.story, "ran to its end before "+plan.what+": "+code(c.Result()))
			break
		}
		o.kills++
		o.story = append(o.story, plan.what)
	}
	o.escalated, o.err = finish(p, &o)
	o.findings = Check(p)
	checkMarks(p, &o.findings)
	return o
}

// checkMarks wants every item of deferred-work.md marked done with the
// commit of the unit that took it, and no item twice.
func checkMarks(p *Sample, f *Findings) {
	lay, err := workflows.Open(p.Root)
	if err != nil {
		f.lost("open the project: %v", err)
		return
	}
	w, err := workflows.ReadDeferredWork(lay)
	if err != nil {
		f.lost("read deferred-work.md: %v", err)
		return
	}
	st, err := orchestrator.LoadState(orchestrator.LatestState(marker.NewStore(p.Root, func(string) string { return "" }), p.Root))
	if err != nil {
		return // Check reported it
	}
	want := map[string]string{}
	for _, u := range st.Units {
		if u.Work == nil {
			continue
		}
		for _, it := range u.Work.Items {
			want[it.ID] = u.Commit
		}
	}
	if len(w.Items) != 3 {
		f.lost("deferred-work.md holds %d items, want 3", len(w.Items))
	}
	for _, e := range w.Items {
		if e.Done == "" || e.Done != want[e.ID] {
			f.lost("item %q is marked %q, want its unit's commit %q", e.Summary, e.Done, want[e.ID])
		}
	}
	data, err := os.ReadFile(w.Path)
	if err == nil && strings.Count(string(data), "\n  done: ") != len(w.Items) {
		f.lost("deferred-work.md holds %d done marks for %d items", strings.Count(string(data), "\n  done: "), len(w.Items))
	}
}
