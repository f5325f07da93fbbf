package workflows

import (
	"os"
	"slices"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// Env is workflow.yaml's `env`: Pass names variables of the run's
// environment a child gets on top of the allow-list every child starts from
// (docs/sandbox.md).
type Env struct {
	Pass []string
}

var envName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// env reads `env: {pass: [NAME, …]}`.
func (r *policyReader) env(p *Policy, n *yaml.Node, path string) {
	if isNull(n) {
		p.Env = Env{}
		return
	}
	for _, kv := range r.entries(n, path) {
		at := path + "." + kv[0].Value
		switch kv[0].Value {
		case "pass":
			r.envPass(p, kv[1], at)
		default:
			r.fail(kv[0], at, "unknown key (keys: pass)")
		}
	}
}

func (r *policyReader) envPass(p *Policy, n *yaml.Node, at string) {
	if isNull(n) {
		p.Env.Pass = nil
		return
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, at, "must be a list of environment variable names")
		return
	}
	var names []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || !envName().MatchString(c.Value) {
			r.fail(c, at, "%q is not an environment variable name (letters, digits and _, not starting with a digit)", c.Value)
			continue
		}
		if !slices.Contains(names, c.Value) {
			names = append(names, c.Value)
		}
	}
	p.Env.Pass = names
}

// Vars are the environment variables the notify settings name (in a
// webhook's URL or header values), sorted: a run's secrets, never passed
// to a child.
func (n Notify) Vars() []string {
	var out []string
	for _, w := range n.Webhooks {
		out = append(out, VarsIn(w.URL)...)
		for _, v := range w.Headers {
			out = append(out, VarsIn(v)...)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// VarsIn are the variables ($VAR, ${VAR}) s names, as os.Expand reads them.
func VarsIn(s string) []string {
	var out []string
	os.Expand(s, func(name string) string {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		return ""
	})
	return out
}

// checkEnv refuses an `env.pass` name that `notify` names: a secret of the
// run never reaches a child.
func (p *Policy) checkEnv(pr *policyReader) {
	secret := p.Notify.Vars()
	for _, name := range p.Env.Pass {
		if slices.Contains(secret, name) {
			pr.problems = append(pr.problems, "env.pass: "+name+" is named by notify (a webhook's URL or headers): a notification secret is never passed to a child; remove it from env.pass")
		}
	}
}
