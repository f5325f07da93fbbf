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

// A host runs only the agents it lists: a fallback it lacks is left out, a
// primary it lacks gives way to the fallback, and with neither the step
// cannot run there.
func TestReadyAgentsAreTheOnesTheUnitsHostLists(t *testing.T) {
	e := slotsEngine(1, RunConfig{Agent: "sim", Isolate: IsolateWorktree})
	u := e.state.Units[0]
	for _, tc := range []struct {
		host, primary, fallback string
		want                    agentPair
		note, code              string
	}{
		{"", "sim", "claude", agentPair{"sim", "claude"}, "", ""},
		{"box", "sim", "claude", agentPair{Primary: "sim"}, "the fallback claude is not ready on host box (its agents: sim)", ""},
		{"claudebox", "sim", "claude", agentPair{Primary: "claude"}, "sim is not ready on host claudebox (its agents: claude): the fallback claude", ""},
		{"box", "claude", "codex", agentPair{"claude", "codex"}, "", CodeNoHostForAgent},
		{"box", "sim", "", agentPair{Primary: "sim"}, "", ""},
	} {
		u.Host = tc.host
		got, note, b := e.readyAgents(u, agentPair{tc.primary, tc.fallback})
		code := ""
		if b != nil {
			code = b.Code
		}
		if code != tc.code || (b == nil && got != tc.want) || !strings.Contains(note, tc.note) || (tc.note == "") != (note == "") {
			t.Errorf("on %q, %s/%s: %+v, %q, %v", tc.host, tc.primary, tc.fallback, got, note, b)
		}
	}
}

// The run's attempts on a host that lacks its fallback agent all use the
// primary, and the state document says why.
func TestAFallbackTheHostLacksIsNeverTriedThere(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.policy.Hosts = []HostPolicy{{Name: LocalHost, Enabled: true, Agents: []string{"sim"}}}
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev && req.Attempt < 3 {
			return StepResult{FinalState: FinalCrashed, Reason: "exit_code_1"}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res := h.runOK()
	st := h.saved(res)
	var agents []string
	for _, a := range st.Unit("1-1").Step(StepDev).Attempts {
		agents = append(agents, a.Agent+"/"+a.Role)
	}
	if strings.Join(agents, " ") != "sim/primary sim/primary sim/primary" {
		t.Fatalf("dev attempts %v", agents)
	}
	notes := 0
	for _, l := range st.Log {
		if strings.Contains(l.Message, "the fallback alt is not ready on host local") {
			notes++
		}
	}
	if notes == 0 {
		t.Fatalf("no note of the missing fallback in %+v", st.Log)
	}
}

// A unit whose host is lost moves to a host that has the run's agent
// ready, not merely the first with a free slot.
func TestALostHostsUnitMovesWhereItsAgentIsReady(t *testing.T) {
	e := slotsEngine(2, RunConfig{Agent: "claude", Parallel: 1, Isolate: IsolateWorktree})
	s := e.newHostSlots()
	e.slots = s
	first, _ := e.nextPlaced(s)
	u, host := e.nextPlaced(s)
	if first == nil || u == nil || host != "claudebox" {
		t.Fatalf("placed %v and %v@%s", first, u, host)
	}
	// local is full, box (sim only) has room: the unit comes here anyway.
	if to := e.hostLost(u, StepDev); to != LocalHost {
		t.Fatalf("moved to %s", to)
	}
}
