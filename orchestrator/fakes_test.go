package orchestrator

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/marker"
)

// fakeProject is an in-memory BMAD project.
type fakeProject struct {
	mu      sync.Mutex
	stories []StoryInfo
	retro   map[string]bool
}

func newFakeProject(keys ...string) *fakeProject {
	p := &fakeProject{retro: map[string]bool{}}
	for _, k := range keys {
		epic, num, _ := strings.Cut(k, "-")
		p.stories = append(p.stories, StoryInfo{Key: k, Dotted: epic + "." + num, Epic: epic, Title: "Story " + k, Status: "backlog"})
	}
	return p
}

func (p *fakeProject) set(key string, fn func(*StoryInfo)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.stories {
		if p.stories[i].Key == key {
			fn(&p.stories[i])
		}
	}
}

func (p *fakeProject) Select(epic, spec string) ([]StoryInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []StoryInfo
	for _, s := range p.stories {
		if (epic == "" || s.Epic == epic) && (spec == "all" || slices.Contains(strings.Split(spec, ","), s.Key)) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing selected")
	}
	return out, nil
}

func (p *fakeProject) Story(key string) (StoryInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stories {
		if s.Key == key {
			return s, nil
		}
	}
	return StoryInfo{}, fmt.Errorf("unknown story %s", key)
}

func (p *fakeProject) EpicStories(epic string) ([]StoryInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []StoryInfo
	for _, s := range p.stories {
		if s.Epic == epic {
			out = append(out, s)
		}
	}
	return out, nil
}

func (p *fakeProject) RetroDone(epic string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.retro[epic], nil
}

func (p *fakeProject) MarkStoryDone(key string) error {
	p.set(key, func(s *StoryInfo) { s.Status = StatusDone })
	return nil
}

func (p *fakeProject) status(key string) string {
	s, _ := p.Story(key)
	return s.Status
}

// fakeSteps answers every step from a script and records the requests.
type fakeSteps struct {
	mu     sync.Mutex
	reqs   []StepRequest
	script func(ctx context.Context, req StepRequest) StepResult
	closed []string
}

func (f *fakeSteps) RunStep(ctx context.Context, req StepRequest) (StepResult, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	session := fmt.Sprintf("sa-%s-%s-%d", req.Story, req.Step, req.Attempt)
	if req.Started != nil {
		req.Started(session, "/tmp/"+session+".log")
	}
	res := StepResult{FinalState: FinalCompleted}
	if f.script != nil {
		res = f.script(ctx, req)
	}
	if err := ctx.Err(); err != nil {
		return StepResult{}, err
	}
	res.Session = session
	return res, nil
}

func (f *fakeSteps) CloseSession(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = append(f.closed, name)
	return nil
}

// requests returns "story/step#attempt@agent" for every request, in order.
func (f *fakeSteps) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reqs {
		out = append(out, fmt.Sprintf("%s/%s#%d@%s", r.Story, r.Step, r.Attempt, r.Agent))
	}
	return out
}

// fakeRepo records commits.
type fakeRepo struct {
	mu      sync.Mutex
	commits []CommitRequest
	dirty   []string
	failN   int
}

func (r *fakeRepo) Prepare(context.Context) error { return nil }

func (r *fakeRepo) Dirty(context.Context) ([]string, error) { return r.dirty, nil }

func (r *fakeRepo) Find(_ context.Context, req CommitRequest) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.commits {
		if c.RunID == req.RunID && c.Story.Key == req.Story.Key {
			return fmt.Sprintf("sha%d", i), true, nil
		}
	}
	return "", false, nil
}

func (r *fakeRepo) Commit(_ context.Context, req CommitRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failN > 0 {
		r.failN--
		return "", fmt.Errorf("pre-commit hook failed")
	}
	r.commits = append(r.commits, req)
	return fmt.Sprintf("sha%d", len(r.commits)-1), nil
}

func (r *fakeRepo) committed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.commits {
		out = append(out, c.Story.Key)
	}
	return out
}

// fakeClock advances only when slept on, and records every sleep.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}

// harness is a project root with fakes around a real marker store.
type harness struct {
	t       *testing.T
	root    string
	project *fakeProject
	steps   *fakeSteps
	repo    *fakeRepo
	clock   *fakeClock
	env     map[string]string
	policy  Policy
}

func newHarness(t *testing.T, keys ...string) *harness {
	t.Helper()
	h := &harness{t: t, root: t.TempDir(), project: newFakeProject(keys...), steps: &fakeSteps{},
		repo: &fakeRepo{}, clock: newFakeClock(), env: map[string]string{}, policy: DefaultPolicy()}
	return h
}

func (h *harness) getenv(k string) string { return h.env[k] }

func (h *harness) store() *marker.Store { return marker.NewStore(h.root, h.getenv) }

func (h *harness) options() Options {
	return Options{ProjectRoot: h.root, Stories: "all", Agent: "sim", FallbackAgent: "alt", Parallel: 1,
		Pid: os.Getpid(), Getenv: h.getenv, Policy: h.policy}
}

func (h *harness) deps() Deps {
	return Deps{Project: h.project, Steps: h.steps, Repo: h.repo, Clock: h.clock, Report: DiscardReporter{}, Log: zerolog.Nop()}
}

func (h *harness) run(ctx context.Context, o Options) (*Result, error) {
	h.t.Helper()
	return Run(ctx, o, h.deps())
}

// saved reads the state document back from disk.
func (h *harness) saved(res *Result) *State {
	h.t.Helper()
	st, err := LoadState(res.StatePath)
	if err != nil {
		h.t.Fatalf("load state: %v", err)
	}
	return st
}
