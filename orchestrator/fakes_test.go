package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/marker"
)

// fakeBacklog is an in-memory BMAD project.
type fakeBacklog struct {
	mu      sync.Mutex
	stories []StoryInfo
	retro   map[string]bool
	// statusFile is the fake sprint-status.yaml ("" = none).
	statusFile string
	// repo, when set, sees MarkStoryDone write the status file and the story's files.
	repo *fakeRepo
	// afterDone, when set, runs after MarkStoryDone (a test kills the run there).
	afterDone func(key string)
	// epicErr, when set, is what CheckEpicStory says of every story.
	epicErr error
}

func (p *fakeBacklog) CheckEpicStory(string) error { return p.epicErr }

func newFakeBacklog(keys ...string) *fakeBacklog {
	p := &fakeBacklog{retro: map[string]bool{}}
	for _, k := range keys {
		epic, num, _ := strings.Cut(k, "-")
		p.stories = append(p.stories, StoryInfo{Key: k, Dotted: epic + "." + num, Epic: epic, Title: "Story " + k, Status: "backlog"})
	}
	return p
}

func (p *fakeBacklog) set(key string, fn func(*StoryInfo)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.stories {
		if p.stories[i].Key == key {
			fn(&p.stories[i])
		}
	}
}

func (p *fakeBacklog) Select(epic, spec string) ([]StoryInfo, error) {
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

func (p *fakeBacklog) Story(key string) (StoryInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stories {
		if s.Key == key {
			return s, nil
		}
	}
	return StoryInfo{}, fmt.Errorf("unknown story %s", key)
}

func (p *fakeBacklog) EpicStories(epic string) ([]StoryInfo, error) {
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

func (p *fakeBacklog) RetroDone(epic string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.retro[epic], nil
}

func (p *fakeBacklog) MarkStoryDone(key string) error {
	var files []string
	p.set(key, func(s *StoryInfo) { s.Status, files = StatusDone, s.Files })
	if p.repo != nil {
		p.repo.touch(files...)
		if p.statusFile != "" {
			p.repo.touch(p.statusFile)
		}
	}
	if p.afterDone != nil {
		p.afterDone(key)
	}
	return nil
}

func (p *fakeBacklog) StatusFile() string { return p.statusFile }

// StatusForCommit names the unit whose entries the content carries.
func (p *fakeBacklog) StatusForCommit(_ []byte, key, _ string, _ bool) ([]byte, error) {
	return []byte("entries of " + key), nil
}

func (p *fakeBacklog) StoryFileOwner(path string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stories {
		if slices.Contains(s.Files, path) {
			return s.Key, true
		}
	}
	return "", false
}

func (p *fakeBacklog) FileList(key string) []string {
	s, err := p.Story(key)
	if err != nil {
		return nil
	}
	return s.FileList
}

func (p *fakeBacklog) status(key string) string {
	s, _ := p.Story(key)
	return s.Status
}

// fakeSteps answers every step from a script and records the requests.
type fakeSteps struct {
	mu     sync.Mutex
	reqs   []StepRequest
	script func(ctx context.Context, req StepRequest) StepResult
	closed []string
	// verify answers StepVerifier's verifier (nil: never verified, but a
	// request FromFiles is, as the runner's is for a step without command
	// verifiers).
	verify func(req StepRequest) bool
	// configured records every Configure.
	configured []RunConfig
}

func (f *fakeSteps) Configure(cfg RunConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.configured = append(f.configured, cfg)
	return nil
}

func (f *fakeSteps) StepVerifier(req StepRequest) (verify.Verifier, error) {
	if f.verify == nil {
		return fakeVerifier{verified: req.FromFiles}, nil
	}
	return fakeVerifier{verified: f.verify(req)}, nil
}

// fakeVerifier answers as fakeSteps.verify said.
type fakeVerifier struct{ verified bool }

func (fakeVerifier) Name() string { return "fake" }

func (v fakeVerifier) Verify(context.Context) verify.Verdict {
	if !v.verified {
		return verify.Verdict{Detail: "not done"}
	}
	return verify.Verdict{Verified: true}
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

// CheckAgents finds every agent installed.
func (f *fakeSteps) CheckAgents(context.Context, []string) error { return nil }

// SweepSessions sweeps nothing: the fake's sessions leave no files.
func (f *fakeSteps) SweepSessions(time.Duration, time.Time, func(string) bool) []string { return nil }

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

// fakeRepo is a work tree of changed paths (each with a version that every
// touch bumps) and the commits made from it.
type fakeRepo struct {
	// gitSum is what GitFingerprint answers (a test changes it to plant a hook).
	gitSum  atomic.Value
	mu      sync.Mutex
	commits []CommitRequest
	tree    map[string]int
	failN   int
	findErr int
	// refuse, when set and true, fails every commit (a killed run commits nothing).
	refuse func() bool
	// afterCommit, when set, runs after a commit (a test kills the run there).
	afterCommit func(req CommitRequest)
	// commitErr, when set, fails every commit; commitCalls counts them.
	commitErr   error
	commitCalls int
	// snapshots counts the times the tree was listed.
	snapshots int
	// synced are the commits SyncIndex brought the index in step with.
	synced []string
	// repairErr, when set, is what Repair finds (a locked index).
	repairErr error
	// parked are the parks asked for (see Park), unparked the refs brought back.
	parked   []ParkRequest
	unparked []string
}

func (r *fakeRepo) Prepare(context.Context) error { return nil }

func (r *fakeRepo) Repair(context.Context) error { return r.repairErr }

func (r *fakeRepo) SyncIndex(_ context.Context, sha string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced = append(r.synced, sha)
	return nil
}

// touch changes paths in the work tree.
func (r *fakeRepo) touch(paths ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tree == nil {
		r.tree = map[string]int{}
	}
	for _, p := range paths {
		r.tree[p]++
	}
}

func (r *fakeRepo) Snapshot(context.Context) (Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snapshots++
	snap := Snapshot{}
	for p, v := range r.tree {
		snap[p] = fmt.Sprint(v)
	}
	return snap, nil
}

func (r *fakeRepo) CommittedFile(context.Context, string) ([]byte, bool, error) {
	return nil, false, nil
}

func (r *fakeRepo) Find(_ context.Context, req CommitRequest) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.findErr > 0 {
		r.findErr--
		return "", false, fmt.Errorf("git log: cannot lock the object database")
	}
	for i, c := range r.commits {
		if c.RunID == req.RunID && c.Story.Key == req.Story.Key {
			return fmt.Sprintf("sha%d", i), true, nil
		}
	}
	return "", false, nil
}

// Commit records the request with the paths it took: those of its paths that changed.
func (r *fakeRepo) Commit(_ context.Context, req CommitRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil && r.refuse() {
		return "", fmt.Errorf("the process is dead")
	}
	r.commitCalls++
	if r.commitErr != nil {
		return "", r.commitErr
	}
	if r.afterCommit != nil {
		defer r.afterCommit(req)
	}
	if r.failN > 0 {
		r.failN--
		return "", fmt.Errorf("pre-commit hook failed")
	}
	var took []string
	for _, p := range req.Paths {
		if _, ok := r.tree[p]; ok {
			took = append(took, p)
			delete(r.tree, p)
		}
	}
	for p, data := range req.Contents {
		took = append(took, p+"="+string(data))
		delete(r.tree, p)
	}
	req.Paths = took
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

// commitFiles maps each committed unit to the paths its commit took.
func (r *fakeRepo) commitFiles() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for _, c := range r.commits {
		out[c.Story.Key] = c.Paths
	}
	return out
}

// fakeClock advances only when slept on, and records every sleep.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	// onSleep, when set, runs after each sleep (a test acts during a wait).
	onSleep func(d time.Duration)
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
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook(d)
	}
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
	project *fakeBacklog
	steps   *fakeSteps
	repo    *fakeRepo
	clock   *fakeClock
	env     map[string]string
	policy  Policy
	// retro, when set, is the run's Deps.Retro.
	retro Retrospective
}

func newHarness(t *testing.T, keys ...string) *harness {
	t.Helper()
	h := &harness{t: t, root: t.TempDir(), project: newFakeBacklog(keys...), steps: &fakeSteps{},
		repo: &fakeRepo{}, clock: newFakeClock(), env: map[string]string{}, policy: DefaultPolicy()}
	return h
}

func (h *harness) getenv(k string) string { return h.env[k] }

func (h *harness) store() *marker.Store { return marker.NewStore(h.root, h.getenv) }

func (h *harness) options() Options {
	// The tests of today's escalations pause the run (park_test.go parks).
	return Options{ProjectRoot: h.root, RunConfig: RunConfig{Stories: "all", Agent: "sim", FallbackAgent: "alt", Parallel: 1, OnEscalation: OnEscalationPause},
		Pid: os.Getpid(), Getenv: h.getenv, Policy: h.policy}
}

func (h *harness) deps() Deps {
	return Deps{Backlog: h.project, Steps: h.steps, Repo: h.repo, Clock: h.clock, Report: DiscardReporter{}, Log: zerolog.Nop(), Retro: h.retro}
}

func (h *harness) run(ctx context.Context, o Options) (*Result, error) {
	h.t.Helper()
	return Run(ctx, o, h.deps())
}

// runOK runs the harness to its end without an error.
func (h *harness) runOK() *Result {
	h.t.Helper()
	res, err := h.run(context.Background(), h.options())
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// runUntilEscalatedByCrashes runs the harness with every step crashing
// until the run escalates.
func (h *harness) runUntilEscalatedByCrashes() *Result {
	h.t.Helper()
	h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCrashed} }
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) {
		h.t.Fatal(err)
	}
	return res
}

// resume runs the harness again with --resume.
func (h *harness) resume() (*Result, error) {
	h.t.Helper()
	o := h.options()
	o.Resume = true
	return h.run(context.Background(), o)
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

// runThenRewindToCommit runs story 1-1 to the end, then rewrites the state
// document to "commit running", as a run killed between its commit and
// saving the state would have left it.
func (h *harness) runThenRewindToCommit() *Result {
	h.t.Helper()
	h.project.retro["1"] = true
	res, err := h.run(context.Background(), h.options())
	if err != nil {
		h.t.Fatal(err)
	}
	st := h.saved(res)
	u := st.Unit("1-1")
	u.Status, u.Step(StepCommit).Status, st.Status = StatusRunning, StatusRunning, RunRunning
	if err := SaveState(res.StatePath, st); err != nil {
		h.t.Fatal(err)
	}
	return res
}

// advance moves the clock on, as an attempt's running time does.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
