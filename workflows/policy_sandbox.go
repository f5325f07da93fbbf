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
			p.Sandbox.Network = append(p.Sandbox.Network, host)
		}
	}
}
