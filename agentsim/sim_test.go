package agentsim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/sessionstate"
)

func newSim(t *testing.T, o Options, prompt string) (*Sim, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	return &Sim{Prompt: prompt, Options: o, In: strings.NewReader(""), Out: &out,
		Getenv: func(string) string { return "" }}, &out
}

func TestRegistryHoldsTheBuiltInBehaviours(t *testing.T) {
	names := Names()
	if !sort.StringsAreSorted(names) {
		t.Fatalf("unsorted %v", names)
	}
	for _, n := range []string{"finish", "fail", "hang", "silent", "signal", "claude-screen", "late-artifact", "stop-hook", "done-line", "idle"} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("no behaviour %q", n)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate registration did not panic")
		}
	}()
	Register(Behaviour{Name: "finish", Act: actFinish})
}

func TestRunRecordsThePromptByteExact(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "prompt")
	prompt := "\"q\" 'x' $(y) `z`;\nünï\x01\tend"
	s, _ := newSim(t, Options{Behaviour: "finish", PromptFile: rec}, prompt)
	if code := Run(context.Background(), s); code != 0 {
		t.Fatalf("exit %d", code)
	}
	got, err := os.ReadFile(rec)
	if err != nil || string(got) != prompt {
		t.Fatalf("%q %v", got, err)
	}
}

func TestFinishCreatesTheArtifactAndFailUsesTheCode(t *testing.T) {
	art := filepath.Join(t.TempDir(), "a.txt")
	s, _ := newSim(t, Options{Behaviour: "finish", Artifact: art}, "")
	if code := Run(context.Background(), s); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(art); err != nil {
		t.Fatal(err)
	}
	s, _ = newSim(t, Options{Behaviour: "fail", ExitCode: 3}, "")
	if code := Run(context.Background(), s); code != 3 {
		t.Fatalf("exit %d", code)
	}
}

func TestUnknownBehaviourExitsTwo(t *testing.T) {
	s, out := newSim(t, Options{Behaviour: "dance"}, "")
	if code := Run(context.Background(), s); code != 2 || !strings.Contains(out.String(), "dance") {
		t.Fatalf("%d %q", code, out.String())
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{EnvBehaviour: "fail", EnvExitCode: "7", EnvDelay: "250ms", EnvArtifact: "/a"}
	o, err := OptionsFromEnv(func(k string) string { return env[k] })
	if err != nil || o.Behaviour != "fail" || o.ExitCode != 7 || o.Delay.Milliseconds() != 250 || o.Artifact != "/a" {
		t.Fatalf("%+v %v", o, err)
	}
	env[EnvExitCode] = "x"
	if _, err := OptionsFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatal("bad exit code accepted")
	}
}

// countingWriter closes seen once the output holds want n times.
type countingWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	n    int
	seen chan struct{}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Count(w.buf.String(), w.want) >= w.n {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

// runUntil runs s until its output holds want n times, then cancels it and
// returns the output.
func runUntil(s *Sim, want string, n int) string {
	seen := make(chan struct{})
	w := &countingWriter{want: want, n: n, seen: seen}
	s.Out = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- Run(ctx, s) }()
	<-seen
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// The Claude-like screen, once its carriage-return redraws are resolved, is
// a finished turn to the monitor's Claude heuristic.
func TestClaudeScreenIsRecognisedByTheMonitor(t *testing.T) {
	raw := runUntil(&Sim{Prompt: "Implement story 1.2", Options: Options{Behaviour: "claude-screen"}, In: strings.NewReader("")}, "? for shortcuts", 1)
	log := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(log, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	screen, err := sessionstate.OutputTail(log, 40)
	if err != nil || !monitor.ClaudeTurnDone(screen) {
		t.Fatalf("not a finished turn (%v):\n%s", err, screen)
	}
	if !strings.Contains(screen, "✻ "+ClaudeVerb+" for "+ClaudeDuration) || strings.Contains(screen, "esc to interrupt") {
		t.Fatalf("screen:\n%s", screen)
	}
}

func TestStopHookBehaviourEndsATurnPerTypedLine(t *testing.T) {
	out := runUntil(&Sim{Options: Options{Behaviour: "stop-hook"}, In: strings.NewReader("next\nand again\n"), Exe: "/bin/true"}, "turn finished", 3)
	if got := strings.Count(out, "working on the step"); got != 3 {
		t.Fatalf("%d turns, want 3:\n%s", got, out)
	}
}

// A story run's sim child acts out a behaviour the sim knows, named by the
// variable the sim reads.
func TestRunDefaultOfTheSimProfileIsABehaviour(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentSim)
	b, ok := p.RunEnv[EnvBehaviour]
	if !ok || b != BehaviourBMAD {
		t.Fatalf("sim's run environment %v, want %s=%s", p.RunEnv, EnvBehaviour, BehaviourBMAD)
	}
	if !slices.Contains(Names(), b) {
		t.Fatalf("%q is not one of %v", b, Names())
	}
}
