package modelsim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

// A script's rule can read values off the conversation, the way a model
// reads a path out of a prompt or a command's output, and use them in the
// calls it makes: `capture` on a rule reads the user's turns (a skill's
// text the CLI expanded, the prompt), `capture` on a shell, write, read or
// skill action reads that call's tool output for the actions after it (a
// skill action that makes no call, the CLI having expanded the skill into
// the turn, reads the user's turns instead). Each
// value is the first non-empty group of its regexp (the whole match when
// it has none). A rule with any capture expands {{.name}} in its actions'
// strings. The brain stays stateless: every value is read again from the
// request at hand.

// capture is one named regexp.
type capture struct {
	name string
	re   *regexp.Regexp
}

// captures are a rule's or an action's, in name order.
type captures []capture

func compileCaptures(m map[string]string) (captures, error) {
	var out captures
	for name, expr := range m {
		if !validName(name) {
			return nil, fmt.Errorf("capture %q: use letters, digits and '_', starting with a letter", name)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("capture %s: %w", name, err)
		}
		out = append(out, capture{name, re})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func validName(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// find is the capture's value in text, and whether it matched.
func (c capture) find(text string) (string, bool) {
	m := c.re.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	for _, g := range m[1:] {
		if g != "" {
			return g, true
		}
	}
	return m[0], true
}

// fromTurns reads each capture off the latest of texts (the user's turns)
// it matches; missing names the first it found nowhere.
func (cs captures) fromTurns(texts []string, vars map[string]string) (missing string) {
	for _, c := range cs {
		found := false
		for i := len(texts) - 1; i >= 0 && !found; i-- {
			var v string
			if v, found = c.find(texts[i]); found {
				vars[c.name] = v
			}
		}
		if !found {
			return c.name
		}
	}
	return ""
}

// fromResult reads each capture off one tool output; missing names the
// first that did not match.
func (cs captures) fromResult(result string, vars map[string]string) (missing string) {
	for _, c := range cs {
		v, ok := c.find(result)
		if !ok {
			return c.name
		}
		vars[c.name] = v
	}
	return ""
}

// expand fills {{.name}} in s from vars; an unknown name is an error.
func expand(s string, vars map[string]string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := template.New("").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, vars); err != nil {
		return "", err
	}
	return b.String(), nil
}

// strings are the action's fields a template may fill.
func (a *Action) templates() []*string {
	out := []*string{&a.Shell, &a.Read, &a.Skill, &a.Subagent, &a.Reply}
	if a.Write != nil {
		out = append(out, &a.Write.Path, &a.Write.Content)
	}
	return out
}

// checkTemplates parses the action's templates.
func (a Action) checkTemplates() error {
	for _, s := range a.templates() {
		if strings.Contains(*s, "{{") {
			if _, err := template.New("").Parse(*s); err != nil {
				return err
			}
		}
	}
	return nil
}

// expanded is a copy of the action with its templates filled from vars.
func (a Action) expanded(vars map[string]string) (Action, error) {
	if a.Write != nil {
		w := *a.Write
		a.Write = &w
	}
	for _, s := range a.templates() {
		v, err := expand(*s, vars)
		if err != nil {
			return a, err
		}
		*s = v
	}
	return a, nil
}

// captureFailed ends a turn whose capture found nothing: the model says
// what it looked for and where, so a test sees why the script stopped.
func captureFailed(name, where, text string) string {
	return fmt.Sprintf("model-sim: no %s in %s: %q", name, where, tail(text, 400))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
