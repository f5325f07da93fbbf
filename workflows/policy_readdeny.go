package workflows

import (
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// sandboxReadDeny reads `sandbox.readDeny`: paths a confined child may
// not read, each absolute or under the child's HOME ("~/…"); kept as
// written, since HOME is the child's (on an ssh host, that host's).
func (r *policyReader) sandboxReadDeny(p *Policy, n *yaml.Node, at string) {
	p.Sandbox.ReadDeny = nil
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, at, "must be a list of paths (absolute, or ~/ for your home folder)")
		return
	}
	for _, e := range n.Content {
		var v string
		if !r.str(e, at, &v) {
			continue
		}
		rest, home := strings.CutPrefix(v, "~/")
		switch {
		case !home && !strings.HasPrefix(v, "/"):
			r.fail(e, at, "%q is neither absolute nor under ~/ (write /abs/path or ~/path)", v)
		case path.Clean("/"+rest) == "/" || (!home && path.Clean(v) == "/"):
			r.fail(e, at, "%q would hide the whole home folder or filesystem: name the folders to hide", v)
		case strings.ContainsAny(v, "*?[\n"):
			r.fail(e, at, "%q: write a path, not a pattern", v)
		default:
			p.Sandbox.ReadDeny = append(p.Sandbox.ReadDeny, v)
		}
	}
}
