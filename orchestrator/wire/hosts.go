package wire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/workflows"
)

// EnvHostLostAfter bounds how long a host may stay unreachable during a
// step before the step runs again on another host (a duration; default 2m).
const EnvHostLostAfter = "STORY_AUTOMATOR_HOST_LOST_AFTER"

// Remotes are the step runners of the policy's enabled ssh hosts (those
// pinned, when the run names hosts), beside steps. An unknown pinned name
// is a usage error.
func Remotes(ctx context.Context, o orchestrator.Options, pol *workflows.Policy, steps *tmuxsteps.Runner, p Process, exclude []string) (map[string]*tmuxsteps.Remote, error) {
	for _, name := range o.Hosts {
		spec, ok := pol.Host(name)
		if !ok {
			return nil, coded.Usage("--host %s: no such host in %s (hosts: %s)", name, workflows.PolicyFile, strings.Join(pol.HostNames(), ", ")).
				WithAction("add it under hosts: in %s, or see story-automator hosts list", workflows.PolicyFile)
		}
		if o.Agent != "" && len(spec.Agents) > 0 && !slices.Contains(spec.Agents, o.Agent) {
			return nil, coded.Usage("--host %s: its agents are %s, not %s", name, strings.Join(spec.Agents, ", "), o.Agent).
				WithAction("run with one of its agents, or add %s to its agents: in %s", o.Agent, workflows.PolicyFile)
		}
	}
	if err := agentHasAHost(o, pol); err != nil {
		return nil, err
	}
	lost, _ := time.ParseDuration(p.Getenv(EnvHostLostAfter))
	// Not a repository: the run refuses it before any step.
	_, prefix, _ := gitvcs.TopOf(ctx, o.ProjectRoot)
	out := map[string]*tmuxsteps.Remote{}
	for _, spec := range pol.Hosts {
		if spec.Local() || !spec.Enabled || (len(o.Hosts) > 0 && !slices.Contains(o.Hosts, spec.Name)) {
			continue
		}
		h, err := hosts.New(spec, hosts.Options{ControlDir: hosts.ControlDir(filepath.Join(o.ProjectRoot, workflows.StateDir)),
			Getenv: p.Getenv, Persist: 2 * time.Minute})
		if err != nil {
			return nil, coded.Usage("%v", err)
		}
		r := tmuxsteps.NewRemote(steps, h, ProjectName(o.ProjectRoot), exclude)
		r.LostAfter, r.Version, r.Prefix = lost, p.Version, prefix
		out[spec.Name] = r
	}
	return out, nil
}

// CodeNoHostForAgent is a run whose agent no host it may use has ready.
const CodeNoHostForAgent = orchestrator.CodeNoHostForAgent

// agentHasAHost refuses a run (no --host) whose agent none of the enabled
// hosts it would schedule over lists in its agents: its stories could
// never be placed. (Pinned hosts are checked one by one above.)
func agentHasAHost(o orchestrator.Options, pol *workflows.Policy) error {
	if _, listed := pol.Host(workflows.LocalHost); o.Agent == "" || len(o.Hosts) > 0 || !listed {
		return nil // unlisted, this machine runs any agent
	}
	var places, lists []string
	for _, h := range pol.Hosts {
		if !h.Enabled || (!h.Local() && o.Isolate == orchestrator.IsolateNone) {
			continue
		}
		if len(h.Agents) == 0 || slices.Contains(h.Agents, o.Agent) {
			return nil
		}
		places = append(places, h.Name)
		lists = append(lists, h.Name+": "+strings.Join(h.Agents, ", "))
	}
	if len(places) == 0 {
		return nil // no host enabled: the run falls back to this machine, any agent
	}
	return coded.Fail(CodeNoHostForAgent, "no enabled host runs %s (%s)", o.Agent, strings.Join(lists, "; ")).
		WithAction("run with one of those agents, or add %s to a host's agents: in %s (story-automator hosts list shows them)", o.Agent, workflows.PolicyFile)
}

// ProjectName names the project's repository on a host: its folder's
// name and a hash of its path, so two projects of one name never share one.
func ProjectName(root string) string {
	sum := sha256.Sum256([]byte(root))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, filepath.Base(root))
	return base[:min(len(base), 24)] + "-" + hex.EncodeToString(sum[:4])
}
