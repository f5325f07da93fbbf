package orchestrator

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMergeKeepsTheRecordedConfigurationUnlessGivenAgain(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	pol.MaxCycles = 5
	recorded := func() RunConfig {
		return RunConfig{Epic: "1", Stories: "1-3", Agent: "claude", FallbackAgent: "codex", Parallel: 2,
			Isolate: IsolateWorktree, MaxCycles: 2, Model: "m1", StepModels: map[string]string{StepReview: "r1"},
			Backoff: DurationOf(7 * time.Second), CompletionRechecks: 2, RecheckGrace: DurationOf(time.Second),
			StateFile: "s.md", MarkerFile: "m", OwnerSession: "o", Sandbox: SandboxOn, OnEscalation: OnEscalationPark,
			Budget: &Budget{MaxCostUSD: 1, MaxTokens: 10, MaxDuration: DurationOf(time.Hour)}}
	}
	tests := []struct {
		name  string
		into  RunConfig
		given RunConfig
		want  func(*RunConfig)
	}{
		{"nothing given keeps all", recorded(), RunConfig{}, func(*RunConfig) {}},
		{"the selection and files are never merged", recorded(),
			RunConfig{Epic: "2", Stories: "all", StateFile: "x", MarkerFile: "y", OwnerSession: "z"}, func(*RunConfig) {}},
		{"agents and parallel", recorded(), RunConfig{Agent: "gemini", FallbackAgent: "sim", Parallel: 4},
			func(c *RunConfig) { c.Agent, c.FallbackAgent, c.Parallel = "gemini", "sim", 4 }},
		{"isolate given", recorded(), RunConfig{Isolate: IsolateNone}, func(c *RunConfig) { c.Isolate = IsolateNone }},
		{"isolate missing from an old document follows parallel", RunConfig{Parallel: 3}, RunConfig{},
			func(c *RunConfig) {
				c.Parallel, c.Isolate, c.MaxCycles, c.Sandbox, c.OnEscalation = 3, IsolateWorktree, 5, SandboxOn, OnEscalationPark
			}},
		{"sandbox off given replaces the recorded on", recorded(), RunConfig{Sandbox: SandboxOff},
			func(c *RunConfig) { c.Sandbox = SandboxOff }},
		{"a recorded off stays off on a resume without the flag", RunConfig{Parallel: 1, Sandbox: SandboxOff}, RunConfig{},
			func(c *RunConfig) { c.Isolate, c.MaxCycles, c.OnEscalation = IsolateNone, 5, OnEscalationPark }},
		{"on-escalation given replaces the recorded one", recorded(), RunConfig{OnEscalation: OnEscalationPause},
			func(c *RunConfig) { c.OnEscalation = OnEscalationPause }},
		{"models: the run's replaced, step models step by step", recorded(),
			RunConfig{Model: "m2", StepModels: map[string]string{StepDev: "d2"}},
			func(c *RunConfig) { c.Model, c.StepModels = "m2", map[string]string{StepReview: "r1", StepDev: "d2"} }},
		{"budget field by field", recorded(), RunConfig{Budget: &Budget{MaxTokens: 20}},
			func(c *RunConfig) { c.Budget.MaxTokens = 20 }},
		{"an empty budget is not given", recorded(), RunConfig{Budget: &Budget{}}, func(*RunConfig) {}},
		{"cycles given", recorded(), RunConfig{MaxCycles: 4}, func(c *RunConfig) { c.MaxCycles = 4 }},
		{"a zero backoff given replaces the recorded one", recorded(), RunConfig{Backoff: DurationOf(0)},
			func(c *RunConfig) { c.Backoff = DurationOf(0) }},
		{"monitor rechecks", recorded(), RunConfig{CompletionRechecks: 3, RecheckGrace: DurationOf(0)},
			func(c *RunConfig) { c.CompletionRechecks, c.RecheckGrace = 3, DurationOf(0) }},
		{"a new run: given values, the policy's cycles", RunConfig{Parallel: 1},
			RunConfig{Agent: "sim", Budget: &Budget{MaxCostUSD: 2}},
			func(c *RunConfig) {
				*c = RunConfig{Agent: "sim", Parallel: 1, Isolate: IsolateNone, MaxCycles: 5, Budget: &Budget{MaxCostUSD: 2},
					Sandbox: SandboxOn, OnEscalation: OnEscalationPark}
			}},
		{"a new run with parallel stories isolates them", RunConfig{Parallel: 1}, RunConfig{Parallel: 2},
			func(c *RunConfig) {
				*c = RunConfig{Parallel: 2, Isolate: IsolateWorktree, MaxCycles: 5, Sandbox: SandboxOn, OnEscalation: OnEscalationPark}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.into
			want.StepModels = maps.Clone(tt.into.StepModels)
			if tt.into.Budget != nil {
				b := *tt.into.Budget
				want.Budget = &b
			}
			tt.want(&want)
			got := tt.into
			got.Merge(tt.given, pol)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("merge %+v\n got %+v\nwant %+v", tt.given, got, want)
			}
		})
	}
}

// workflow.yaml's onEscalation fills a run that has none; a recorded or
// given one wins over it.
func TestMergeTakesThePolicysOnEscalation(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	pol.OnEscalation = OnEscalationPause
	for _, tt := range []struct {
		into, given, want string
	}{{"", "", OnEscalationPause}, {OnEscalationPark, "", OnEscalationPark}, {"", OnEscalationPark, OnEscalationPark}} {
		c := RunConfig{Parallel: 1, OnEscalation: tt.into}
		c.Merge(RunConfig{OnEscalation: tt.given}, pol)
		if c.OnEscalation != tt.want {
			t.Fatalf("recorded %q, given %q: %q, want %q", tt.into, tt.given, c.OnEscalation, tt.want)
		}
	}
}

// workflow.yaml's `sandbox: off` makes a new run unconfined; its hosts are
// recorded with the run.
func TestMergeTakesTheSandboxFromThePolicyForANewRun(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	pol.SandboxOff = true
	var c RunConfig
	c.Merge(RunConfig{}, pol)
	if c.Sandbox != SandboxOff || c.Confined() {
		t.Fatalf("sandbox %q confined %v, want off from the policy", c.Sandbox, c.Confined())
	}
	pol = DefaultPolicy()
	pol.SandboxNetwork = []string{"registry.npmjs.org"}
	c = RunConfig{}
	c.Merge(RunConfig{}, pol)
	if !c.Confined() || !reflect.DeepEqual(c.SandboxNetwork, []string{"registry.npmjs.org"}) {
		t.Fatalf("got %q %v, want on with the policy's host", c.Sandbox, c.SandboxNetwork)
	}
	// The paths a child may not read follow the policy too, as written.
	pol = DefaultPolicy()
	pol.SandboxReadDeny = []string{"~/.config/rclone"}
	c = RunConfig{SandboxReadDeny: []string{"/old"}}
	c.Merge(RunConfig{}, pol)
	if !reflect.DeepEqual(c.SandboxReadDeny, []string{"~/.config/rclone"}) {
		t.Fatalf("readDeny %q, want the policy's", c.SandboxReadDeny)
	}
}

func TestDurationRecordsItsTextAndOnlyWhenGiven(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(RunConfig{Backoff: DurationOf(0), Budget: &Budget{MaxDuration: DurationOf(90 * time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `"backoff":"0s"`) || strings.Contains(s, "recheckGrace") || !strings.Contains(s, `"maxDuration":"1h30m0s"`) {
		t.Fatalf("json %s", s)
	}
	// An older document's text stays as written; a broken one loads and is refused when the run starts.
	var c RunConfig
	if err := json.Unmarshal([]byte(`{"backoff":"7s","recheckGrace":"soon","budget":{"maxDuration":"25m"}}`), &c); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.Backoff.Get(); !ok || d != 7*time.Second || c.Budget.MaxDuration.String() != "25m" {
		t.Fatalf("loaded %+v", c)
	}
	if _, ok := c.RecheckGrace.Get(); ok || !c.RecheckGrace.Given() {
		t.Fatalf("a broken recheck grace reads as valid: %+v", c.RecheckGrace)
	}
	if err := c.check(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `recheck grace "soon"`) {
		t.Fatalf("check: %v", err)
	}
}

// What the sandbox setting does not cover is said, never left to guess: a
// sandbox that cannot let single hosts through gives no network even to
// the listed hosts; the state document's configuration says so. This
// tool's own sandbox (a custom command, OpenCode, Copilot CLI) lets the
// listed hosts through its proxy, and only they (with a CLI's model
// endpoint): no exception.
func TestSandboxExceptionsNameTheAgentsTheSettingDoesNotCover(t *testing.T) {
	for _, tc := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{Agent: "claude", Sandbox: SandboxOn, SandboxNetwork: []string{"registry.npmjs.org"}}, ""},
		{RunConfig{Agent: "sim", Sandbox: SandboxOn}, ""},
		{RunConfig{Agent: "custom", Sandbox: SandboxOn}, ""},
		{RunConfig{Agent: "custom", Sandbox: SandboxOn, SandboxNetwork: []string{"registry.npmjs.org"}}, ""},
		{RunConfig{Agent: "claude", FallbackAgent: "codex", Sandbox: SandboxOn, SandboxNetwork: []string{"registry.npmjs.org"}},
			"codex reaches no network: its sandbox cannot let single hosts through"},
		{RunConfig{Agent: "custom", Sandbox: SandboxOff}, ""},
		{RunConfig{Agent: "opencode", Sandbox: SandboxOn}, ""},
		{RunConfig{Agent: "copilot", Sandbox: SandboxOn, SandboxNetwork: []string{"registry.npmjs.org"}}, ""},
		{RunConfig{Agent: "copilot", Sandbox: SandboxOff}, ""},
	} {
		if got := strings.Join(tc.cfg.SandboxExceptions(), "; "); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.cfg, got, tc.want)
		}
	}
	st := &State{RunID: "r", Config: RunConfig{Agent: "claude", FallbackAgent: "codex", Sandbox: SandboxOn, SandboxNetwork: []string{"example.org"}}}
	b, err := RenderState(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "codex reaches no network: its sandbox cannot let single hosts through |") {
		t.Fatalf("configuration:\n%s", b)
	}
}

// The plan checkpoint comes from the flag or workflow.yaml's planCheckpoint
// and stays with a resumed run.
func TestMergeTakesThePlanCheckpointFromTheFlagOrThePolicy(t *testing.T) {
	t.Parallel()
	var c RunConfig
	c.Merge(RunConfig{}, DefaultPolicy())
	if c.PlanCheckpoint {
		t.Fatal("a plan checkpoint nobody asked for")
	}
	c.Merge(RunConfig{PlanCheckpoint: true}, DefaultPolicy())
	if !c.PlanCheckpoint {
		t.Fatal("--plan-checkpoint not taken")
	}
	c.Merge(RunConfig{}, DefaultPolicy())
	if !c.PlanCheckpoint {
		t.Fatal("a resumed run lost its plan checkpoint")
	}
	pol := DefaultPolicy()
	pol.PlanCheckpoint = true
	var p RunConfig
	p.Merge(RunConfig{}, pol)
	if !p.PlanCheckpoint {
		t.Fatal("planCheckpoint: true not taken")
	}
}
