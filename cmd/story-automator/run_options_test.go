package main

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
)

// parseRun runs `run ARGS` through the real flags and validation, and
// returns the orchestrator options it would run with.
func parseRun(t *testing.T, args ...string) (orchestrator.Options, error) {
	t.Helper()
	var got orchestrator.Options
	app := &cli.App{Name: "story-automator", Writer: io.Discard, ErrWriter: io.Discard,
		Commands: []*cli.Command{newRunCommand(func(_ *cli.Context, o *runOptions) error {
			got = o.orchestratorOptions()
			return nil
		})}}
	err := app.Run(append([]string{"story-automator", "run"}, args...))
	return got, err
}

func TestRunFlagsTakeDefaultsOnANewRunAndOnlyWhatIsGivenOnResume(t *testing.T) {
	o, err := parseRun(t, "--model", "m", "--model", "review=r", "--max-duration", "1h", "--backoff", "0s")
	if err != nil {
		t.Fatal(err)
	}
	def := monitor.DefaultOptions()
	want := orchestrator.RunConfig{Stories: "all", Agent: agent.DefaultAgent(), Parallel: 1, Model: "m",
		StepModels: map[string]string{orchestrator.StepReview: "r"},
		Budget:     &orchestrator.Budget{MaxDuration: orchestrator.DurationOf(time.Hour)}, Backoff: orchestrator.DurationOf(0),
		CompletionRechecks: def.Rechecks, RecheckGrace: orchestrator.DurationOf(def.RecheckGrace)}
	if !reflect.DeepEqual(o.RunConfig, want) || o.Resume || o.DryRun {
		t.Fatalf("new run\n got %+v\nwant %+v", o.RunConfig, want)
	}
	o, err = parseRun(t, "--max-wait", "90m")
	if err != nil || o.MaxWait != orchestrator.DurationOf(90*time.Minute) {
		t.Fatalf("--max-wait: %+v %v", o.MaxWait, err)
	}
	o, err = parseRun(t, "--on-escalation", "pause")
	if err != nil || o.OnEscalation != orchestrator.OnEscalationPause {
		t.Fatalf("--on-escalation: %q %v", o.OnEscalation, err)
	}
	o, err = parseRun(t, "--resume", "--parallel", "2", "--trust-project")
	if err != nil {
		t.Fatal(err)
	}
	if want := (orchestrator.RunConfig{Stories: "all", Parallel: 2}); !o.Resume || !o.TrustProject || !reflect.DeepEqual(o.RunConfig, want) {
		t.Fatalf("resume\n got %+v\nwant %+v", o.RunConfig, want)
	}
}

// --sweep and --action-items make a run of leftovers with what they chose.
func TestRunFlagsChooseLeftovers(t *testing.T) {
	o, err := parseRun(t, "--sweep", "--min-severity", "medium", "--only", "dw-1,dw-2", "--only", "dw-3", "--action-items")
	want := &orchestrator.Leftovers{Sweep: true, MinSeverity: "medium", Only: []string{"dw-1", "dw-2", "dw-3"}, ActionItems: true}
	if err != nil || !reflect.DeepEqual(o.Leftovers, want) {
		t.Fatalf("got %+v, %v", o.Leftovers, err)
	}
	if o, err = parseRun(t); err != nil || o.Leftovers != nil {
		t.Fatalf("a story run: %+v, %v", o.Leftovers, err)
	}
}

func TestRunFlagsRefuseWhatCannotWork(t *testing.T) {
	tests := []struct {
		args string
		code string
		msg  string
	}{
		{"--agent= ", "invalid_flag", "--agent must not be blank"},
		{"--model= ", "invalid_flag", "the model must not be blank"},
		{"--parallel 0", "usage_error", "--parallel must be at least 1"},
		{"--isolate vm", "usage_error", `--isolate must be worktree or none, got "vm"`},
		{"--fallback-agent nope", "usage_error", "--fallback-agent must be one of"},
		{"--resume --epic 1", "usage_error", "--resume continues the run's own selection"},
		{"--max-cycles 0", "usage_error", "--max-cycles must be at least 1"},
		{"--backoff -1s", "usage_error", "must not be negative"},
		{"--max-tokens -1", "usage_error", "must be positive"},
		{"--max-wait 0s", "usage_error", "--max-wait must be positive"},
		{"--max-wait 1ns", "usage_error", "--max-wait must be at least 1m0s"},
		{"--model nostep=m", "usage_error", `no step "nostep"`},
		{"--model a --model b", "usage_error", "--model given twice"},
		{"--spec= ", "invalid_flag", "--spec must not be blank"},
		{"--spec s --epic 1", "usage_error", "--spec runs every story of the spec folder"},
		{"--spec s --resume", "usage_error", "--resume continues the run's own spec folder"},
		{"--replan 1", "usage_error", "use it with --resume"},
		{"--min-severity high", "usage_error", "add --sweep"},
		{"--only dw-1", "usage_error", "add --sweep"},
		{"--sweep --resume", "usage_error", "drop --sweep and --action-items"},
		{"--action-items --epic 1", "usage_error", "drop --epic and --stories"},
		{"--sweep --parallel 2", "usage_error", "one at a time"},
		{"--sweep --min-severity urgent", "usage_error", `severity "urgent"`},
		{"--sweep --spec s", "usage_error", "drop --spec"},
		{"--on-escalation stop", "usage_error", `--on-escalation must be park or pause, got "stop"`},
	}
	for _, tt := range tests {
		_, err := parseRun(t, strings.Fields(tt.args)...)
		var f *coded.Error
		if !errors.As(err, &f) || f.Code != tt.code || f.Exit != coded.ExitUsage || !strings.Contains(f.Message, tt.msg) {
			t.Errorf("%s: %v, want %s %q", tt.args, err, tt.code, tt.msg)
		}
	}
}

// --spec reaches the run's configuration, --replan the resumed run.
func TestRunFlagsTakeTheSpecFolderAndReplan(t *testing.T) {
	o, err := parseRun(t, "--spec", "_bmad-output/specs/spec-a")
	if err != nil || o.Spec != "_bmad-output/specs/spec-a" || o.Replan != "" {
		t.Fatalf("--spec: %+v %v", o, err)
	}
	o, err = parseRun(t, "--resume", "--replan", "3-2")
	if err != nil || o.Replan != "3-2" || o.Spec != "" {
		t.Fatalf("--replan: %+v %v", o, err)
	}
}
