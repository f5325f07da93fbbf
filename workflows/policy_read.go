package workflows

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/spend"
)

// policyReader walks a policy document, applying each key it knows and
// collecting a problem, with its key path and line, for each it does not.
type policyReader struct {
	problems []string
}

func (r *policyReader) fail(n *yaml.Node, path, format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf("%s: %s (line %d)", path, fmt.Sprintf(format, args...), n.Line))
}

// entries yields the key/value pairs of a mapping node, or reports that it is not one.
func (r *policyReader) entries(n *yaml.Node, path string) [][2]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "must be a mapping")
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func (r *policyReader) top(p *Policy, n *yaml.Node) {
	for _, kv := range r.entries(n, "policy") {
		key, val := kv[0].Value, kv[1]
		switch key {
		case "version":
			if v, ok := r.integer(val, key); ok && v != 1 {
				r.fail(val, key, "unsupported version %d (this binary reads version 1)", v)
			}
		case "testCommand":
			r.str(val, key, &p.TestCommand)
		case "testTimeout":
			r.duration(val, key, &p.TestTimeout, false)
		case "steps":
			for _, skv := range r.entries(val, key) {
				name := skv[0].Value
				s, ok := p.Steps[name]
				if !ok {
					r.fail(skv[0], "steps."+name, "unknown step (steps: %s)", strings.Join(AllSteps(), ", "))
					continue
				}
				if !isNull(skv[1]) {
					r.step(s, skv[1], "steps."+name)
				}
			}
		case "prices":
			r.prices(p, val, key)
		case "budget":
			r.budget(p, val, key)
		case "notify":
			r.notify(p, val, key)
		case "hosts":
			r.hosts(p, val, key)
		case "onLimit":
			r.onLimit(p, val, key)
		case "maxWait":
			r.maxWait(p, val, key)
		case "sandbox":
			r.sandbox(p, val, key)
		case "env":
			r.env(p, val, key)
		case "pipeline":
			r.pipeline(p, val, key)
		case "planCheckpoint":
			r.boolean(val, key, &p.PlanCheckpoint)
		case "retroGate":
			r.retroGate(p, val, key)
		case "onEscalation":
			r.onEscalation(p, val, key)
		default:
			r.fail(kv[0], key, "unknown key (keys: version, testCommand, testTimeout, steps, prices, budget, notify, hosts, onLimit, maxWait, sandbox, env, pipeline, planCheckpoint, retroGate, onEscalation)")
		}
	}
}

func (r *policyReader) step(s *Step, n *yaml.Node, path string) {
	for _, kv := range r.entries(n, path) {
		key, val := kv[0].Value, kv[1]
		at := path + "." + key
		switch key {
		case "enabled":
			r.boolean(val, at, &s.Enabled)
		case "optional":
			r.boolean(val, at, &s.Optional)
		case "action":
			r.action(s, val, at)
		case "agent":
			r.agent(val, at, &s.Agent)
		case "fallbackAgent":
			r.agent(val, at, &s.FallbackAgent)
		case "timeout":
			r.duration(val, at, &s.Timeout, false)
		case "commandTimeout":
			r.duration(val, at, &s.CommandTimeout, false)
		case "backoff":
			r.duration(val, at, &s.Backoff, true)
		case "command":
			r.str(val, at, &s.Command)
		case "verifier":
			r.verifiers(val, at, &s.Verifiers)
		case "retries":
			if v, ok := r.integer(val, at); ok && (v < 0 || v > 20) {
				r.fail(val, at, "must be between 0 and 20, got %d", v)
			} else if ok {
				s.Retries = v
			}
		case "maxCycles":
			r.maxCycles(s, val, at)
		case "model":
			if r.str(val, at, &s.Model) && val.Tag != "!!null" && strings.TrimSpace(s.Model) == "" {
				r.fail(val, at, "must be a model name, or null for the agent's default")
			}
		default:
			r.fail(kv[0], at, "unknown key (keys: enabled, action, agent, fallbackAgent, model, timeout, verifier, command, commandTimeout, retries, backoff, optional, maxCycles)")
		}
	}
}

func (r *policyReader) action(s *Step, val *yaml.Node, at string) {
	var a string
	if !r.str(val, at, &a) {
		return
	}
	switch {
	case a != ActionAgent && a != ActionGitCommit:
		r.fail(val, at, "must be %s or %s, got %q", ActionAgent, ActionGitCommit, a)
	case a == ActionGitCommit && s.Name != StepCommit:
		r.fail(val, at, "%s is only for the commit step", ActionGitCommit)
	default:
		s.Action = a
	}
}

func (r *policyReader) maxCycles(s *Step, val *yaml.Node, at string) {
	v, ok := r.integer(val, at)
	switch {
	case !ok:
	case s.Name != StepReview:
		r.fail(val, at, "only the review step has cycles")
	case v < 1 || v > 50:
		r.fail(val, at, "must be between 1 and 50, got %d", v)
	default:
		s.MaxCycles = v
	}
}

func (r *policyReader) scalar(n *yaml.Node, at, want string) bool {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		r.fail(n, at, "must be %s", want)
		return false
	}
	return true
}

func (r *policyReader) str(n *yaml.Node, at string, dst *string) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		*dst = ""
		return true
	}
	if !r.scalar(n, at, "a string") {
		return false
	}
	*dst = n.Value
	return true
}

func (r *policyReader) boolean(n *yaml.Node, at string, dst *bool) {
	var b bool
	if !r.scalar(n, at, "true or false") {
		return
	}
	if err := n.Decode(&b); err != nil || n.Tag != "!!bool" {
		r.fail(n, at, "must be true or false, got %q", n.Value)
		return
	}
	*dst = b
}

func (r *policyReader) integer(n *yaml.Node, at string) (int, bool) {
	if !r.scalar(n, at, "a whole number") {
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || n.Tag != "!!int" {
		r.fail(n, at, "must be a whole number, got %q", n.Value)
		return 0, false
	}
	return v, true
}

func (r *policyReader) duration(n *yaml.Node, at string, dst *time.Duration, zeroOK bool) {
	if !r.scalar(n, at, "a duration such as 90s or 30m") {
		return
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < 0 || (d == 0 && !zeroOK) {
		r.fail(n, at, "must be a positive duration such as 90s or 30m, got %q", n.Value)
		return
	}
	*dst = d
}

func (r *policyReader) agent(n *yaml.Node, at string, dst *string) {
	var a string
	if !r.str(n, at, &a) {
		return
	}
	if a != "" && !agentName().MatchString(a) {
		r.fail(n, at, "agent %q must be a lower-case name such as claude, codex, gemini or sim", a)
		return
	}
	*dst = a
}

// verifiers reads one verifier name or a list of them.
func (r *policyReader) verifiers(n *yaml.Node, at string, dst *[]string) {
	var names []string
	switch {
	case n.Kind == yaml.ScalarNode && !isNull(n):
		names = []string{n.Value}
	case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				r.fail(c, at, "must list verifier names")
				return
			}
			names = append(names, c.Value)
		}
	default:
		r.fail(n, at, "must be a verifier name or a list of them")
		return
	}
	for _, v := range names {
		if !slices.Contains(VerifierNames(), v) {
			r.fail(n, at, "unknown verifier %q (verifiers: %s)", v, strings.Join(VerifierNames(), ", "))
			return
		}
	}
	*dst = names
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// prices reads `prices: {MODEL: {input, output, cacheRead, cacheWrite}}`,
// USD per million tokens; kinds left out are 0.
func (r *policyReader) prices(p *Policy, n *yaml.Node, path string) {
	for _, kv := range r.entries(n, path) {
		model := kv[0].Value
		at := path + "." + model
		var pr spend.Price
		for _, f := range r.entries(kv[1], at) {
			dst := map[string]*float64{"input": &pr.Input, "output": &pr.Output, "cacheRead": &pr.CacheRead, "cacheWrite": &pr.CacheWrite}[f[0].Value]
			if dst == nil {
				r.fail(f[0], at+"."+f[0].Value, "unknown key (keys: input, output, cacheRead, cacheWrite: USD per million tokens)")
				continue
			}
			r.number(f[1], at+"."+f[0].Value, dst)
		}
		if p.Prices == nil {
			p.Prices = spend.PriceTable{}
		}
		p.Prices[model] = pr
	}
}

// budget reads `budget: {run: LIMITS, story: LIMITS}`.
func (r *policyReader) budget(p *Policy, n *yaml.Node, path string) {
	for _, kv := range r.entries(n, path) {
		at := path + "." + kv[0].Value
		switch kv[0].Value {
		case "run":
			r.limits(&p.RunBudget, kv[1], at)
		case "story":
			r.limits(&p.StoryBudget, kv[1], at)
		default:
			r.fail(kv[0], at, "unknown key (keys: run, story)")
		}
	}
}

func (r *policyReader) limits(l *spend.Limits, n *yaml.Node, path string) {
	if isNull(n) {
		*l = spend.Limits{}
		return
	}
	for _, kv := range r.entries(n, path) {
		at := path + "." + kv[0].Value
		switch kv[0].Value {
		case "maxCost":
			r.number(kv[1], at, &l.MaxCostUSD)
		case "maxTokens":
			if v, ok := r.integer(kv[1], at); ok && v < 0 {
				r.fail(kv[1], at, "must not be negative, got %d", v)
			} else if ok {
				l.MaxTokens = int64(v)
			}
		case "maxDuration":
			r.duration(kv[1], at, &l.MaxDuration, true)
		default:
			r.fail(kv[0], at, "unknown key (keys: maxCost, maxTokens, maxDuration)")
		}
	}
}

func (r *policyReader) number(n *yaml.Node, at string, dst *float64) {
	if !r.scalar(n, at, "a number") {
		return
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || (n.Tag != "!!int" && n.Tag != "!!float") || v < 0 {
		r.fail(n, at, "must be a number ≥ 0, got %q", n.Value)
		return
	}
	*dst = v
}

// onLimit reads `onLimit: fallback|wait|escalate`.
// MinMaxWait is the shortest maxWait (and run --max-wait): a limit lifts
// in minutes or hours, so a shorter bound only turns every limit into an
// escalation, which `onLimit: escalate` says plainly.
const MinMaxWait = time.Minute

func (r *policyReader) maxWait(p *Policy, n *yaml.Node, at string) {
	var d time.Duration
	if r.duration(n, at, &d, false); d == 0 {
		return
	}
	if d < MinMaxWait {
		r.fail(n, at, "must be at least %s (a limit lifts in minutes or hours; onLimit: escalate stops at once), got %q", MinMaxWait, n.Value)
		return
	}
	p.MaxWait = d
}

func (r *policyReader) onLimit(p *Policy, n *yaml.Node, at string) {
	var v string
	if !r.str(n, at, &v) {
		return
	}
	switch v {
	case "", OnLimitFallback, OnLimitWait, OnLimitEscalate:
		p.OnLimit = v
	default:
		r.fail(n, at, "must be %s, %s or %s, got %q", OnLimitFallback, OnLimitWait, OnLimitEscalate, v)
	}
}

// onEscalation reads `onEscalation: park|pause`.
func (r *policyReader) onEscalation(p *Policy, n *yaml.Node, at string) {
	var v string
	if !r.str(n, at, &v) {
		return
	}
	switch v {
	case "", OnEscalationPark, OnEscalationPause:
		p.OnEscalation = v
	default:
		r.fail(n, at, "must be %s or %s, got %q", OnEscalationPark, OnEscalationPause, v)
	}
}

// pipeline reads `pipeline: build-auto|five-step`.
func (r *policyReader) pipeline(p *Policy, n *yaml.Node, at string) {
	var v string
	if !r.str(n, at, &v) {
		return
	}
	if v != "" && !slices.Contains(Pipelines(), v) {
		r.fail(n, at, "must be %s, got %q", strings.Join(Pipelines(), " or "), v)
		return
	}
	p.Pipeline = v
}

// retroGate reads `retroGate: on|off`.
func (r *policyReader) retroGate(p *Policy, n *yaml.Node, at string) {
	var v string
	if !r.str(n, at, &v) {
		return
	}
	switch v {
	case RetroGateOn, RetroGateOff:
		p.RetroGateOff = v == RetroGateOff
	default:
		r.fail(n, at, "must be %s or %s, got %q", RetroGateOn, RetroGateOff, v)
	}
}
