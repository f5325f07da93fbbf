// Package agentsim is the simulated agent (`story-automator agent-sim`): it
// acts out what a real agent does in a child session, chosen by name from a
// registry of behaviours, so runs can be shown and tested with no agent CLI.
package agentsim

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/spend"
)

// Environment variables that configure the simulated agent when its flags
// are not given (a spawned child inherits them from the spawner).
const (
	EnvBehaviour  = agent.EnvSimBehaviour
	EnvExitCode   = agent.EnvSimExitCode
	EnvDelay      = agent.EnvSimDelay
	EnvArtifact   = "STORY_AUTOMATOR_SIM_ARTIFACT"
	EnvSignal     = "STORY_AUTOMATOR_SIM_SIGNAL"
	EnvPromptFile = "STORY_AUTOMATOR_SIM_PROMPT_FILE"
	EnvInputFile  = "STORY_AUTOMATOR_SIM_INPUT_FILE"
)

// DefaultBehaviour is acted out when none is chosen.
var DefaultBehaviour = "finish"

// Behaviour is one way the simulated agent can act. Act returns the exit code.
type Behaviour struct {
	Name    string
	Summary string
	Act     func(ctx context.Context, s *Sim) int
}

var (
	regMu    sync.RWMutex
	registry = map[string]Behaviour{}
)

// Register adds a behaviour; new behaviours live in their own files and
// register themselves from init. A duplicate name panics.
func Register(b Behaviour) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[b.Name]; dup || b.Name == "" || b.Act == nil {
		panic(fmt.Sprintf("agentsim: bad or duplicate behaviour %q", b.Name))
	}
	registry[b.Name] = b
}

// Lookup returns the behaviour registered under name.
func Lookup(name string) (Behaviour, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	b, ok := registry[name]
	return b, ok
}

// Names lists the registered behaviours, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Options choose and tune a behaviour.
type Options struct {
	Behaviour string
	ExitCode  int
	Delay     time.Duration
	Artifact  string
	Signal    string
	// PromptFile receives the prompt exactly as received, so tests can check it byte for byte.
	PromptFile string
	// InputFile receives every line typed into the agent while it idles.
	InputFile string
	// CrashKills is the agent CLI's process when the simulated agent runs as
	// that CLI's shell tool (model-sim's steps): a crash fault kills it too,
	// because an agent that crashes takes its session down.
	CrashKills int
	// SessionAgent: this process is its child session's agent (the sim
	// profile's argv says so), so it reports its usage for the run to read.
	SessionAgent bool
	// Usage is what each turn reports (nil = DefaultTurnUsage); Transcript,
	// when set, receives it even outside a session.
	Usage      *spend.Usage
	Transcript string
}

// OptionsFromEnv reads Options from the STORY_AUTOMATOR_SIM_* variables.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	o := Options{Behaviour: getenv(EnvBehaviour), Artifact: getenv(EnvArtifact), Signal: getenv(EnvSignal),
		PromptFile: getenv(EnvPromptFile), InputFile: getenv(EnvInputFile)}
	if v := getenv(EnvExitCode); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, fmt.Errorf("%s=%q: not a number", EnvExitCode, v)
		}
		o.ExitCode = n
	}
	if v := getenv(EnvDelay); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return o, fmt.Errorf("%s=%q: %w", EnvDelay, v, err)
		}
		o.Delay = d
	}
	if v := getenv(EnvUsage); v != "" {
		u, err := ParseUsage(v)
		if err != nil {
			return o, fmt.Errorf("%s: %w", EnvUsage, err)
		}
		o.Usage = &u
	}
	return o, nil
}

// Sim is one run of the simulated agent.
type Sim struct {
	Prompt  string
	Model   string
	Options Options
	In      io.Reader
	Out     io.Writer
	Getenv  func(string) string
	// Exe is this binary, for helpers the simulation starts (a stop hook, a late writer).
	Exe string
	Now func() time.Time
}

// Run records the prompt and acts out the chosen behaviour; it returns the exit code.
func Run(ctx context.Context, s *Sim) int {
	name := s.Options.Behaviour
	if name == "" {
		name = DefaultBehaviour
	}
	b, ok := Lookup(name)
	if !ok {
		fmt.Fprintf(s.Out, "agent-sim: unknown behaviour %q (known: %s)\n", name, strings.Join(Names(), ", "))
		return 2
	}
	if s.Options.PromptFile != "" {
		if err := atomicfile.Replace(s.Options.PromptFile, []byte(s.Prompt), 0o600); err != nil {
			fmt.Fprintf(s.Out, "agent-sim: record prompt: %v\n", err)
			return 2
		}
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if l, reset, ok, err := limitedNow(s, now); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: %v\n", err)
		return 2
	} else if ok {
		return actLimited(ctx, s, l, reset)
	}
	if err := recordTurn(s); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: %v\n", err)
	}
	return b.Act(ctx, s)
}

// Sleep waits d or until ctx ends; it reports whether the full wait happened.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Forever blocks until ctx ends (the process is usually killed first).
func Forever(ctx context.Context) {
	for Sleep(ctx, time.Hour) {
	}
}
