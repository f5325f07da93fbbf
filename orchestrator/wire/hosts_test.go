package wire

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/workflows"
)

// The run's remote runners: one per enabled ssh host (the pinned ones
// when --host is given); a pinned name the workflow lacks, or a pinned
// host without the run's agent, is a usage error.
func TestRemotesFollowTheHostsAndThePins(t *testing.T) {
	pol := &workflows.Policy{Hosts: []workflows.Host{{Name: workflows.LocalHost, Enabled: true},
		{Name: "big", SSH: "me@big", Dir: "/srv/sa", Parallel: 2, Agents: []string{"claude"}, Enabled: true},
		{Name: "vm", SSH: "vm", Dir: "/srv/sa", Enabled: false},
		{Name: "box", SSH: "box", Dir: "/w", Enabled: true}}}
	p := Process{Getenv: func(string) string { return "" }, Version: "v1"}
	names := func(o orchestrator.Options) ([]string, error) {
		o.ProjectRoot = t.TempDir()
		rs, err := Remotes(context.Background(), o, pol, &tmuxsteps.Runner{}, p, nil)
		var out []string
		for n := range rs {
			out = append(out, n)
		}
		slices.Sort(out)
		return out, err
	}
	if got, err := names(orchestrator.Options{}); err != nil || strings.Join(got, " ") != "big box" {
		t.Fatalf("every enabled host: %v %v", got, err)
	}
	var o orchestrator.Options
	o.Hosts = []string{"local", "box"}
	if got, err := names(o); err != nil || strings.Join(got, " ") != "box" {
		t.Fatalf("pinned: %v %v", got, err)
	}
	o.Hosts = []string{"nope"}
	var ce *coded.Error
	if _, err := names(o); !errors.As(err, &ce) || ce.Exit != coded.ExitUsage || !strings.Contains(ce.Message, "no such host") {
		t.Fatalf("unknown host: %v", err)
	}
	o.Hosts, o.Agent = []string{"big"}, "codex"
	if _, err := names(o); !errors.As(err, &ce) || !strings.Contains(ce.Message, "its agents are claude, not codex") {
		t.Fatalf("agent the host lacks: %v", err)
	}
}

// A run whose agent no enabled host lists is refused before it starts,
// with the hosts' agents and what to do, rather than left unplaceable.
func TestRemotesRefuseARunNoHostHasTheAgentFor(t *testing.T) {
	pol := &workflows.Policy{Hosts: []workflows.Host{{Name: workflows.LocalHost, Enabled: true, Agents: []string{"codex"}},
		{Name: "big", SSH: "me@big", Dir: "/srv/sa", Agents: []string{"codex", "gemini"}, Enabled: true},
		{Name: "vm", SSH: "vm", Dir: "/srv/sa", Agents: []string{"claude"}, Enabled: false}}}
	p := Process{Getenv: func(string) string { return "" }, Version: "v1"}
	var o orchestrator.Options
	o.ProjectRoot, o.Agent = t.TempDir(), "claude"
	_, err := Remotes(context.Background(), o, pol, &tmuxsteps.Runner{}, p, nil)
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != CodeNoHostForAgent || !strings.Contains(ce.Message, "local: codex; big: codex, gemini") ||
		!strings.Contains(ce.Action, "add claude to a host's agents") {
		t.Fatalf("no host for claude: %v", err)
	}
	// One enabled host with the agent (or with any) is enough.
	pol.Hosts[2].Enabled = true
	if _, err := Remotes(context.Background(), o, pol, &tmuxsteps.Runner{}, p, nil); err != nil {
		t.Fatalf("vm runs claude: %v", err)
	}
	// A run that keeps every story here looks at this machine only.
	o.Isolate = orchestrator.IsolateNone
	if _, err := Remotes(context.Background(), o, pol, &tmuxsteps.Runner{}, p, nil); !errors.As(err, &ce) || ce.Code != CodeNoHostForAgent {
		t.Fatalf("--isolate none, local without claude: %v", err)
	}
}
