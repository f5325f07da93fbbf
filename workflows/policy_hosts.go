package workflows

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/internal/shellword"
)

// LocalHost is the name of this machine among a policy's hosts.
const LocalHost = "local"

// Host is one machine stories may run on: this machine (LocalHost) or one
// reached over ssh (`hosts:` in workflow.yaml).
type Host struct {
	Name string
	// SSH is the destination handed to ssh: user@host, host, an alias from
	// ~/.ssh/config. Empty for LocalHost.
	SSH string
	// SSHCommand is the host's own ssh program and options (shell words);
	// "" = STORY_AUTOMATOR_SSH_COMMAND, else ssh.
	SSHCommand string
	// Dir is the host's work directory, an absolute path on that host.
	Dir string
	// Parallel is how many stories run there at once; 0 = the run's --parallel (LocalHost only).
	Parallel int
	// Agents are the agents ready on that host; empty = any.
	Agents []string
	// Enabled is false for a host the policy parks (`enabled: false`).
	Enabled bool
}

// Local reports whether h is this machine.
func (h Host) Local() bool { return h.Name == LocalHost }

// Host returns the policy's host named name.
func (p *Policy) Host(name string) (Host, bool) {
	for _, h := range p.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// HostNames lists the policy's hosts, LocalHost first.
func (p *Policy) HostNames() []string {
	names := make([]string, 0, len(p.Hosts))
	for _, h := range p.Hosts {
		names = append(names, h.Name)
	}
	return names
}

// defaultHosts is the hosts of a policy that names none: this machine.
func defaultHosts() []Host {
	return []Host{{Name: LocalHost, Enabled: true}}
}

var hostName = lazyre.New(`^[a-z][a-z0-9-]{0,31}$`)

// hosts reads `hosts:`, a list of hosts; an entry named local configures this machine.
func (r *policyReader) hosts(p *Policy, n *yaml.Node, path string) {
	if isNull(n) {
		p.Hosts = defaultHosts()
		return
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, path, "must be a list of hosts (each with name, ssh, dir)")
		return
	}
	out := defaultHosts()
	for i, item := range n.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		h, ok := r.host(item, at)
		if !ok {
			continue
		}
		if h.Local() {
			out[0] = h
			continue
		}
		if slices.ContainsFunc(out[1:], func(o Host) bool { return o.Name == h.Name }) {
			r.fail(item, at+".name", "host %q is named twice", h.Name)
			continue
		}
		out = append(out, h)
	}
	p.Hosts = out
}

// host reads one entry of `hosts:`; ok is false when it had a problem.
func (r *policyReader) host(n *yaml.Node, at string) (Host, bool) {
	before := len(r.problems)
	h := Host{Enabled: true}
	var nameNode *yaml.Node
	set := map[string]bool{}
	for _, kv := range r.entries(n, at) {
		key, val := kv[0].Value, kv[1]
		set[key] = true
		switch key {
		case "name":
			nameNode = val
			r.str(val, at+".name", &h.Name)
		case "ssh":
			r.str(val, at+".ssh", &h.SSH)
		case "sshCommand":
			r.str(val, at+".sshCommand", &h.SSHCommand)
		case "dir":
			r.str(val, at+".dir", &h.Dir)
		case "parallel":
			if v, ok := r.integer(val, at+".parallel"); ok && (v < 1 || v > 64) {
				r.fail(val, at+".parallel", "must be between 1 and 64, got %d", v)
			} else if ok {
				h.Parallel = v
			}
		case "agents":
			r.hostAgents(val, at+".agents", &h.Agents)
		case "enabled":
			r.boolean(val, at+".enabled", &h.Enabled)
		default:
			r.fail(kv[0], at+"."+key, "unknown key (keys: name, ssh, sshCommand, dir, parallel, agents, enabled)")
		}
	}
	if len(r.problems) > before {
		return h, false
	}
	if nameNode == nil {
		r.fail(n, at+".name", "every host needs a name")
		return h, false
	}
	if !hostName().MatchString(h.Name) {
		r.fail(nameNode, at+".name", "%q must be a lower-case name of letters, digits and -, up to 32 characters", h.Name)
		return h, false
	}
	if h.Local() {
		r.localHost(n, at, set)
	} else {
		r.remoteHost(n, at, &h)
	}
	return h, len(r.problems) == before
}

// localHost checks the entry that configures this machine: no ssh keys.
func (r *policyReader) localHost(n *yaml.Node, at string, set map[string]bool) {
	for _, k := range []string{"ssh", "sshCommand", "dir"} {
		if set[k] {
			r.fail(n, at+"."+k, "%q is reserved for this machine: it takes no %s (name a remote host otherwise)", LocalHost, k)
		}
	}
}

// remoteHost checks an ssh host's destination, command and work directory.
func (r *policyReader) remoteHost(n *yaml.Node, at string, h *Host) {
	switch {
	case strings.TrimSpace(h.SSH) == "":
		r.fail(n, at+".ssh", "host %q needs ssh: a destination such as user@example.com or an alias from ~/.ssh/config", h.Name)
	case strings.HasPrefix(h.SSH, "-") || strings.ContainsFunc(h.SSH, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		r.fail(n, at+".ssh", "%q is not an ssh destination (no leading -, spaces or control characters)", h.SSH)
	}
	if h.SSHCommand != "" {
		if words, err := shellword.Split(h.SSHCommand); err != nil || len(words) == 0 {
			r.fail(n, at+".sshCommand", "%q must be a command of plain words, such as ssh -F ~/.ssh/other_config", h.SSHCommand)
		} else if why, _ := SSHCommandProblem(words); why != "" {
			r.fail(n, at+".sshCommand", "%s: a committed workflow.yaml cannot weaken ssh's host-key checking or run a command beside ssh; set such options in your own ~/.ssh/config or STORY_AUTOMATOR_SSH_COMMAND", why)
		}
	}
	switch {
	case h.Dir == "":
		r.fail(n, at+".dir", "host %q needs dir: its work directory, an absolute path on that host", h.Name)
	case !strings.HasPrefix(h.Dir, "/"):
		r.fail(n, at+".dir", "%q must be an absolute path on the host, such as /home/me/story-automator (~ is not expanded)", h.Dir)
	case path.Clean(h.Dir) == "/" || strings.ContainsFunc(h.Dir, func(c rune) bool { return c < ' ' || c == 0x7f }):
		r.fail(n, at+".dir", "%q cannot be a work directory", h.Dir)
	default:
		h.Dir = path.Clean(h.Dir)
	}
	if h.Parallel == 0 {
		h.Parallel = 1
	}
}

// splitOrNil is an sshCommand's words, nil when it has none or cannot be split.
func splitOrNil(s string) []string {
	words, err := shellword.Split(s)
	if err != nil {
		return nil
	}
	return words
}

// hostAgents reads the agents ready on a host: one name or a list.
func (r *policyReader) hostAgents(n *yaml.Node, at string, dst *[]string) {
	var items []*yaml.Node
	switch {
	case n.Kind == yaml.ScalarNode && !isNull(n):
		items = []*yaml.Node{n}
	case n.Kind == yaml.SequenceNode:
		items = n.Content
	default:
		r.fail(n, at, "must be an agent name or a list of them")
		return
	}
	var names []string
	for _, c := range items {
		var a string
		before := len(r.problems)
		if r.agent(c, at, &a); a == "" {
			if len(r.problems) == before {
				r.fail(c, at, "an agent name cannot be empty")
			}
			return
		}
		if !slices.Contains(agent.RunAgents(), a) {
			r.fail(c, at, "no agent %q (agents: %s)", a, strings.Join(agent.RunAgents(), ", "))
			return
		}
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	*dst = names
}
