package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/story-automator/story-automator/workflows"
)

// LocalHost is this machine among a run's hosts.
const LocalHost = workflows.LocalHost

// ErrHostLost is the cause of an attempt whose host stayed unreachable past
// the step runner's bound: the run moves the unit to another host and runs
// the step again there. Whatever the lost host still does is never fetched.
var ErrHostLost = errors.New("host unreachable")

// HostPolicy is one machine of the workflow's `hosts:` as the run loop
// schedules over it.
type HostPolicy struct {
	Name string
	// Parallel is how many units run there at once (LocalHost: 0 = the run's --parallel).
	Parallel int
	// Agents are the agents ready there; empty = any.
	Agents  []string
	Enabled bool
}

// remoteSlots is how many stories the enabled remote hosts (those of
// pinned, when given) take at once.
func (p Policy) remoteSlots(pinned []string) int {
	n := 0
	for _, h := range p.Hosts {
		if h.Name != LocalHost && h.Enabled && (len(pinned) == 0 || slices.Contains(pinned, h.Name)) {
			n += max(h.Parallel, 1)
		}
	}
	return n
}

// hostSlots are a run's places to run units: per host, how many at once
// and how many run now. Remote hosts take stories only in a run with a
// worktree per story (each remote story is a clone of that worktree);
// retrospectives always run here, on LocalHost.
type hostSlots struct {
	mu     sync.Mutex
	order  []string
	cap    map[string]int
	used   map[string]int
	agents map[string][]string
	agent  string
}

// HostPlan is one host a run schedules stories on: how many at once (0:
// none, LocalHost parked or not among --host) and the agents ready there
// (empty = any).
type HostPlan struct {
	Name     string   `json:"name"`
	Parallel int      `json:"parallel"`
	Agents   []string `json:"agents,omitempty"`
}

// RunHosts lays out the run's hosts: LocalHost first, with --parallel
// slots (or its own `parallel:`), then each enabled remote host with its
// `parallel:`, only those --host names when given. Remote hosts take
// stories only in a run with a worktree per story (worktrees: the run can
// make them). When none would take a story, LocalHost takes --parallel.
func (p Policy) RunHosts(cfg RunConfig, worktrees bool) []HostPlan {
	pinned := func(name string) bool { return len(cfg.Hosts) == 0 || slices.Contains(cfg.Hosts, name) }
	local := HostPlan{Name: LocalHost}
	if pinned(LocalHost) {
		local.Parallel = max(cfg.Parallel, 1)
	}
	remote := cfg.Isolate == IsolateWorktree && worktrees
	var rest []HostPlan
	total := 0
	for _, h := range p.Hosts {
		switch {
		case h.Name == LocalHost:
			if h.Parallel > 0 && pinned(LocalHost) {
				local.Parallel = h.Parallel
			}
			if !h.Enabled && len(cfg.Hosts) == 0 {
				local.Parallel = 0
			}
			local.Agents = h.Agents
		case h.Enabled && remote && pinned(h.Name):
			rest = append(rest, HostPlan{Name: h.Name, Parallel: max(h.Parallel, 1), Agents: h.Agents})
			total += max(h.Parallel, 1)
		}
	}
	if total+local.Parallel == 0 {
		local.Parallel = max(cfg.Parallel, 1)
	}
	return append([]HostPlan{local}, rest...)
}

// newHostSlots lays out the run's hosts (RunHosts).
func (e *Engine) newHostSlots() *hostSlots {
	cfg := e.state.Config
	s := &hostSlots{cap: map[string]int{}, used: map[string]int{}, agents: map[string][]string{}, agent: cfg.Agent}
	for _, h := range e.Policy.RunHosts(cfg, e.Worktrees != nil) {
		s.order = append(s.order, h.Name)
		s.cap[h.Name], s.agents[h.Name] = h.Parallel, h.Agents
	}
	return s
}

// anyFree reports whether some host has a free slot.
func (s *hostSlots) anyFree() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.order {
		if s.used[h] < s.cap[h] {
			return true
		}
	}
	return false
}

// fits is the host u would take now ("" = none): its recorded host when
// that has a free slot, else the least busy with one whose agents include
// the run's. A retrospective takes LocalHost, even one pinned away.
func (s *hostSlots) fits(u *Unit) string {
	if u.Kind == KindRetro {
		if s.used[LocalHost] < max(s.cap[LocalHost], 1) {
			return LocalHost
		}
		return ""
	}
	free := func(h string) bool {
		return s.used[h] < s.cap[h] && (len(s.agents[h]) == 0 || slices.Contains(s.agents[h], s.agent))
	}
	if u.Host != "" && free(u.Host) {
		return u.Host
	}
	// The least busy host, this machine first among equals: stories
	// spread over the hosts rather than filling one before the next.
	best := ""
	for _, h := range s.order {
		if free(h) && (best == "" || s.used[h] < s.used[best]) {
			best = h
		}
	}
	return best
}

// release frees the slot u holds on its host.
func (e *Engine) release(s *hostSlots, u *Unit) {
	e.mu.Lock()
	host := u.Host
	e.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used[host]--
}

// nextPlaced marks the first pending unit whose dependencies are done and
// that a host has a slot for as running on that host, and returns it (nil
// when none). A unit that depends, directly or not, on a blocked
// (escalated) unit stays pending: its dependency is not done.
func (e *Engine) nextPlaced(s *hostSlots) (*Unit, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range e.state.Units {
		if u.Status != StatusPending || !e.depsDone(u) {
			continue
		}
		host := s.fits(u)
		if host == "" {
			continue
		}
		s.used[host]++
		now := e.Clock.Now()
		if u.Host != host && (host != LocalHost || u.Host != "") {
			e.state.addLog(now, u.Dotted, "", "on host "+host)
		}
		u.Status, u.Host = StatusRunning, host
		e.persistLocked(u)
		return u, host
	}
	return nil, ""
}

// hostLost moves a unit whose host stayed unreachable to another one (the
// first with a free slot, else LocalHost, even in a run pinned elsewhere)
// for its step's next attempt, and returns the host it moves to. The lost
// host takes no new unit for the rest of the run.
func (e *Engine) hostLost(u *Unit, step string) string {
	s := e.slots
	lost := u.Host
	to := LocalHost
	if s != nil {
		s.mu.Lock()
		for _, h := range s.order {
			if h != lost && s.used[h] < s.cap[h] && (len(s.agents[h]) == 0 || slices.Contains(s.agents[h], s.agent)) {
				to = h
				break
			}
		}
		s.used[lost]--
		s.used[to]++
		// Gone for good as far as this run knows: no new story goes there.
		s.cap[lost] = 0
		s.mu.Unlock()
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(st *State) {
		u.Host = to
		st.addLog(now, u.Dotted, step, "host "+lost+" unreachable: the step runs again on "+to+"; nothing more is taken from "+lost)
	})
	return to
}

// hostNote is " on NAME" for a unit on a remote host, else "".
func (u *Unit) hostNote() string {
	if u.Host == "" || u.Host == LocalHost {
		return ""
	}
	return " on " + u.Host
}

// RemoteHosts reports whether a unit of the run ran on a remote host.
func (s *State) RemoteHosts() bool {
	for _, u := range s.Units {
		if u.hostNote() != "" {
			return true
		}
	}
	return false
}

// abandonedReason is the reason of an attempt a stopped orchestrator left.
const abandonedReason = "the orchestrator stopped during the attempt"

// adoptable is the session of the attempt before attempt idx of a unit on
// a remote host when a stopped orchestrator abandoned it: its child may
// still run there, and the new attempt waits for it (see StepRequest.Adopt).
func adoptable(u *Unit, st *StepState, idx int) string {
	if idx < 1 || u.Host == "" || u.Host == LocalHost {
		return ""
	}
	prev := st.Attempts[idx-1]
	if prev.FinalState != FinalInterrupted || prev.Reason != abandonedReason || prev.Cycle != st.Attempts[idx].Cycle {
		return ""
	}
	return prev.Session
}

// CodeNoHostForAgent is a unit whose host has none of its step's agents
// ready (the host's agents: in workflow.yaml).
const CodeNoHostForAgent = "no_host_for_agent"

// hostAgents are the agents host has ready (nil = any).
func (e *Engine) hostAgents(host string) []string {
	if host == "" {
		host = LocalHost
	}
	for _, h := range e.Policy.Hosts {
		if h.Name == host {
			return h.Agents
		}
	}
	return nil
}

// readyAgents narrows a step's agents to those its unit's host has ready:
// a fallback the host lacks is left out, and a primary it lacks gives way
// to the fallback, which then runs every attempt there. With neither
// ready, the step cannot run on that host: a blocker.
func (e *Engine) readyAgents(u *Unit, p agentPair) (agentPair, string, *Blocker) {
	e.mu.Lock()
	host := u.Host
	e.mu.Unlock()
	listed := e.hostAgents(host)
	ready := func(a string) bool { return a != "" && (len(listed) == 0 || slices.Contains(listed, a)) }
	if host == "" {
		host = LocalHost
	}
	where := "host " + host + " (its agents: " + strings.Join(listed, ", ") + ")"
	switch {
	case ready(p.Primary) && (p.Fallback == "" || ready(p.Fallback)):
		return p, "", nil
	case ready(p.Primary):
		return agentPair{Primary: p.Primary}, fmt.Sprintf("the fallback %s is not ready on %s: only %s runs the step there", p.Fallback, where, p.Primary), nil
	case ready(p.Fallback):
		return agentPair{Primary: p.Fallback}, fmt.Sprintf("%s is not ready on %s: the fallback %s runs the step there", p.Primary, where, p.Fallback), nil
	}
	return p, "", &Blocker{Code: CodeNoHostForAgent, Err: fmt.Errorf("neither %s is ready on %s", strings.Join(nonEmpty(p.Primary, p.Fallback), " nor "), where),
		Action: fmt.Sprintf("add the step's agent to that host's agents: in %s, or pin the run to other hosts (--host), then run `%s`", workflows.PolicyFile, ResumeCommand)}
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
