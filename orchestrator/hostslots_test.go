package orchestrator

import (
	"context"
	"strings"
	"testing"
)

// noWorktrees stands for a run's worktrees: hostSlots only asks whether there are any.
type noWorktrees struct{}

func (noWorktrees) Enter(context.Context, string) (string, string, error) { return "", "", nil }
func (noWorktrees) Land(context.Context, string, CommitRequest) (string, error) {
	return "", nil
}
func (noWorktrees) Remove(context.Context, string) error { return nil }

// slotsEngine is an engine over n independent pending stories and a retro,
// with the policy's hosts: local, box (parallel 2, sim), vm (disabled),
// claudebox (claude only).
func slotsEngine(n int, cfg RunConfig) *Engine {
	st := &State{RunID: "run-t", Config: cfg}
	for i := range n {
		k := "1-" + string(rune('1'+i))
		st.Units = append(st.Units, &Unit{Key: k, Dotted: strings.ReplaceAll(k, "-", "."), Kind: KindStory, Status: StatusPending})
	}
	st.Units = append(st.Units, &Unit{Key: "epic-1", Dotted: "epic 1", Kind: KindRetro, Status: StatusPending,
		DependsOn: []string{"1-1", "1-2", "1-3", "1-4"}[:n]})
	pol := DefaultPolicy()
	pol.Hosts = []HostPolicy{{Name: LocalHost, Enabled: true}, {Name: "box", Parallel: 2, Agents: []string{"sim"}, Enabled: true},
		{Name: "vm", Parallel: 4}, {Name: "claudebox", Parallel: 3, Agents: []string{"claude"}, Enabled: true}}
	return &Engine{state: st, Policy: pol, Worktrees: noWorktrees{}, Clock: newFakeClock(), Save: func(*State) error { return nil }}
}

// placeAll places ready units until none fits and returns "story@host" in order.
func placeAll(e *Engine, s *hostSlots) []string {
	var out []string
	for s.anyFree() {
		u, host := e.nextPlaced(s)
		if u == nil {
			break
		}
		out = append(out, u.Key+"@"+host)
	}
	return out
}

func TestHostSlotsSpreadStoriesOverTheHosts(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  RunConfig
		want string
	}{
		{"local and box, least busy first", RunConfig{Agent: "sim", Parallel: 2, Isolate: IsolateWorktree},
			"1-1@local 1-2@box 1-3@local 1-4@box"},
		{"box has room for two more", RunConfig{Agent: "sim", Parallel: 1, Isolate: IsolateWorktree},
			"1-1@local 1-2@box 1-3@box"},
		{"pinned to box", RunConfig{Agent: "sim", Parallel: 3, Isolate: IsolateWorktree, Hosts: []string{"box"}},
			"1-1@box 1-2@box"},
		{"no worktrees: this machine only", RunConfig{Agent: "sim", Parallel: 2, Isolate: IsolateNone},
			"1-1@local 1-2@local"},
		{"an agent a host lacks keeps stories off it", RunConfig{Agent: "claude", Parallel: 1, Isolate: IsolateWorktree},
			"1-1@local 1-2@claudebox 1-3@claudebox 1-4@claudebox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := slotsEngine(4, tc.cfg)
			s := e.newHostSlots()
			if got := strings.Join(placeAll(e, s), " "); got != tc.want {
				t.Fatalf("placed %s, want %s", got, tc.want)
			}
		})
	}
}

// A retrospective runs here even in a run pinned to another host; a unit
// whose host is lost moves here and the host takes no new unit.
func TestHostSlotsRetroHereAndALostHost(t *testing.T) {
	e := slotsEngine(1, RunConfig{Agent: "sim", Parallel: 1, Isolate: IsolateWorktree, Hosts: []string{"box"}})
	s := e.newHostSlots()
	e.slots = s
	u, host := e.nextPlaced(s)
	if u.Key != "1-1" || host != "box" {
		t.Fatalf("placed %v@%s", u, host)
	}
	if to := e.hostLost(u, StepDev); to != LocalHost || u.Host != LocalHost {
		t.Fatalf("moved to %s (unit on %s)", to, u.Host)
	}
	if s.cap["box"] != 0 || !strings.Contains(e.state.Log[len(e.state.Log)-1].Message, "host box unreachable") {
		t.Fatalf("box cap %d, log %+v", s.cap["box"], e.state.Log)
	}
	e.release(s, u)
	u.Status = StatusDone
	r, host := e.nextPlaced(s)
	if r == nil || r.Kind != KindRetro || host != LocalHost {
		t.Fatalf("retro placed %v@%s", r, host)
	}
}

// A run with remote hosts in play works in worktrees unless told otherwise.
func TestRemoteHostsMakeWorktreesTheDefault(t *testing.T) {
	pol := DefaultPolicy()
	pol.Hosts = []HostPolicy{{Name: LocalHost, Enabled: true}, {Name: "box", Parallel: 2, Enabled: true}}
	var c RunConfig
	c.Merge(RunConfig{Parallel: 1}, pol)
	if c.Isolate != IsolateWorktree {
		t.Fatalf("isolate %q with a remote host, want worktree", c.Isolate)
	}
	var pinned RunConfig
	pinned.Merge(RunConfig{Parallel: 1, Hosts: []string{LocalHost}}, pol)
	if pinned.Isolate != IsolateNone {
		t.Fatalf("isolate %q pinned to local at --parallel 1, want none", pinned.Isolate)
	}
}
