package orchestrator

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
)

func TestMergeKeepsTheRecordedConfigurationUnlessGivenAgain(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	pol.MaxCycles = 5
	recorded := func() RunConfig {
		return RunConfig{Epic: "1", Stories: "1-3", Agent: "claude", FallbackAgent: "codex", Parallel: 2,
			Isolate: IsolateWorktree, MaxCycles: 2, Model: "m1", StepModels: map[string]string{StepReview: "r1"},
			Backoff: DurationOf(7 * time.Second), CompletionRechecks: 2, RecheckGrace: DurationOf(time.Second),
			StateFile: "s.md", MarkerFile: "m", OwnerSession: "o",
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
			func(c *RunConfig) { c.Parallel, c.Isolate, c.MaxCycles = 3, IsolateWorktree, 5 }},
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
				*c = RunConfig{Agent: "sim", Parallel: 1, Isolate: IsolateNone, MaxCycles: 5, Budget: &Budget{MaxCostUSD: 2}}
			}},
		{"a new run with parallel stories isolates them", RunConfig{Parallel: 1}, RunConfig{Parallel: 2},
			func(c *RunConfig) { *c = RunConfig{Parallel: 2, Isolate: IsolateWorktree, MaxCycles: 5} }},
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

// flags is a command line for FromFlags: the values given, by name.
type flags map[string]any

func (f flags) IsSet(n string) bool { _, ok := f[n]; return ok }
func (f flags) value(n string, def any) any {
	if v, ok := f[n]; ok {
		return v
	}
	return def
}
func (f flags) String(n string) string {
	return f.value(n, map[string]string{"stories": "all", "agent": "claude"}[n]).(string)
}
func (f flags) StringSlice(n string) []string { v, _ := f.value(n, []string(nil)).([]string); return v }
func (f flags) Int(n string) int {
	return f.value(n, map[string]int{"parallel": 1, "completion-rechecks": 3}[n]).(int)
}
func (f flags) Int64(n string) int64     { return f.value(n, int64(0)).(int64) }
func (f flags) Float64(n string) float64 { return f.value(n, float64(0)).(float64) }
func (f flags) Duration(n string) time.Duration {
	return f.value(n, map[string]time.Duration{"recheck-grace": 5 * time.Second}[n]).(time.Duration)
}
func (f flags) Bool(n string) bool { v, _ := f.value(n, false).(bool); return v }

func TestFromFlagsTakesDefaultsOnANewRunAndOnlyWhatIsGivenOnResume(t *testing.T) {
	t.Parallel()
	o, err := FromFlags(flags{"model": []string{"m", "review=r"}, "max-duration": time.Hour, "backoff": time.Duration(0)})
	if err != nil {
		t.Fatal(err)
	}
	want := RunConfig{Stories: "all", Agent: "claude", Parallel: 1, Model: "m", StepModels: map[string]string{StepReview: "r"},
		Budget: &Budget{MaxDuration: DurationOf(time.Hour)}, Backoff: DurationOf(0), CompletionRechecks: 3,
		RecheckGrace: DurationOf(5 * time.Second)}
	if !reflect.DeepEqual(o.RunConfig, want) {
		t.Fatalf("new run\n got %+v\nwant %+v", o.RunConfig, want)
	}
	o, err = FromFlags(flags{"resume": true, "parallel": 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := (RunConfig{Stories: "all", Parallel: 2}); !o.Resume || !reflect.DeepEqual(o.RunConfig, want) {
		t.Fatalf("resume\n got %+v\nwant %+v", o.RunConfig, want)
	}
}

func TestFromFlagsRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    flags
		code string
		msg  string
	}{
		{flags{"agent": " "}, "invalid_flag", "--agent must not be blank"},
		{flags{"parallel": 0}, "usage_error", "--parallel must be at least 1"},
		{flags{"isolate": "vm"}, "usage_error", `--isolate must be worktree or none, got "vm"`},
		{flags{"fallback-agent": "nope"}, "usage_error", "--fallback-agent must be one of"},
		{flags{"resume": true, "epic": "1"}, "usage_error", "--resume continues the run's own selection"},
		{flags{"max-cycles": 0}, "usage_error", "--max-cycles must be at least 1"},
		{flags{"backoff": -time.Second}, "usage_error", "must not be negative"},
		{flags{"max-tokens": int64(-1)}, "usage_error", "must be positive"},
		{flags{"model": []string{"nostep=m"}}, "usage_error", `no step "nostep"`},
		{flags{"model": []string{"a", "b"}}, "usage_error", "--model given twice"},
	}
	for _, tt := range tests {
		_, err := FromFlags(tt.f)
		var f *coded.Error
		if !errors.As(err, &f) || f.Code != tt.code || !strings.Contains(f.Message, tt.msg) {
			t.Errorf("%v: %v, want %s %q", tt.f, err, tt.code, tt.msg)
		}
	}
}
