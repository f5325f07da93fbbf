package workflows

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sandbox is workflow.yaml's `sandbox`: `off` runs every child unconfined;
// `{network: [hosts]}` lets a confined child's tools reach those hosts (a
// package registry); left out, children are confined with no network.
type Sandbox struct {
	Off     bool
	Network []string
	// ReadDeny are paths a confined child may not read, besides the
	// user's credentials every child is denied: absolute, or "~/…" (the
	// child's HOME), as written.
	ReadDeny []string
}

// sandbox reads `sandbox: on|off` or `sandbox: {enabled: BOOL, network: [HOST…], readDeny: [PATH…]}`.
func (r *policyReader) sandbox(p *Policy, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		switch strings.ToLower(n.Value) {
		case "off", "false":
			p.Sandbox.Off = true
		case "on", "true":
			p.Sandbox.Off = false
		default:
			r.fail(n, path, "must be on, off or a mapping {enabled, network, readDeny}, got %q", n.Value)
		}
		return
	}
	if isNull(n) {
		return
	}
	for _, kv := range r.entries(n, path) {
		at := path + "." + kv[0].Value
		switch kv[0].Value {
		case "enabled":
			var on bool
			r.boolean(kv[1], at, &on)
			p.Sandbox.Off = !on
		case "network":
			r.sandboxNetwork(p, kv[1], at)
		case "readDeny":
			r.sandboxReadDeny(p, kv[1], at)
		default:
			r.fail(kv[0], at, "unknown key (keys: enabled, network, readDeny)")
		}
	}
}

// sandboxNetwork reads `sandbox.network`: the host names a confined child's tools may reach.
func (r *policyReader) sandboxNetwork(p *Policy, n *yaml.Node, at string) {
	if isNull(n) {
		p.Sandbox.Network = nil
		return
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, at, "must be a list of host names")
		return
	}
	p.Sandbox.Network = nil
	for _, h := range n.Content {
		var host string
		if r.str(h, at, &host) && host != "" {
			if strings.ContainsAny(host, " /:") {
				r.fail(h, at, "%q is not a host name (no scheme, port or path; *.example.com is allowed)", host)
				continue
			}
			if !wildcardOK(host) {
				r.fail(h, at, "%q is too wide: a wildcard is only *. before a domain of at least two labels (*.example.com), never * alone", host)
				continue
			}
			p.Sandbox.Network = append(p.Sandbox.Network, host)
		}
	}
}

// wildcardOK reports whether a sandbox.network host's wildcard, if any, is
// "*." before at least two non-empty labels with no other "*".
func wildcardOK(host string) bool {
	if !strings.Contains(host, "*") {
		return true
	}
	rest, ok := strings.CutPrefix(host, "*.")
	if !ok || strings.Contains(rest, "*") {
		return false
	}
	labels := strings.Split(rest, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
	}
	return true
}

// NetworkWarning says, for a policy whose children may reach hosts, that
// each of them takes what a child sends as well as what it fetches: a
// package registry accepts uploads (npm publish, twine upload) too. ""
// when no host is allowed.
func (s Sandbox) NetworkWarning() string {
	if s.Off || len(s.Network) == 0 {
		return ""
	}
	return "sandbox.network lets a confined child reach " + strings.Join(s.Network, ", ") +
		": a host a child can fetch from also takes what it sends (a package registry accepts uploads), so allow only hosts you would let the project's code talk to"
}
