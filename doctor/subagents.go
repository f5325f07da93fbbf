package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/workflows"
)

// subagentsOff is a settings file that turns an agent's subagents off.
type subagentsOff struct {
	file string
	// what is the rule or setting found there.
	what string
}

// checkSubagents reports whether the agent's model can run the blocking
// subagents BMAD 6.12's worker launches, from the switch its table entry
// names in the CLI's settings files; ok is false for an agent whose entry
// has none (it runs no model of its own).
func checkSubagents(agentName string, o Options) (Check, bool) {
	p, _ := agent.LookupProfile(agentName)
	s := p.Subagents
	if len(s.Tools) == 0 {
		return Check{}, false
	}
	c := Check{Name: "subagents", Agent: agentName}
	off, err := subagentsState(p, o.Root, o.Getenv)
	switch {
	case err != nil:
		c.Status, c.Detail = Warn, "cannot tell whether subagents are on: "+err.Error()
		c.Fix = "fix that file, then run `story-automator doctor` again"
		return c, true
	case off == nil:
		c.Status = OK
		c.Detail = "blocking subagents: " + s.How
		return c, true
	}
	c.Detail = "subagents are off: " + off.what + " in " + off.file + "; BMAD 6.12's worker (bmad-build-auto) halts `blocked` with `no subagents` without them"
	c.Fix = s.On + " " + off.file
	c.Status = Warn
	if choice, err := workflows.ProjectPipeline(o.Root); err == nil && choice.Pipeline == workflows.PipelineBuildAuto {
		c.Status = Fail
	} else if err == nil && choice.Generation != workflows.GenerationSkills {
		c.Status = OK
		c.Detail += " (only BMAD 6.12's worker needs them)"
	}
	return c, true
}

// subagentsState reads the agent's settings files under root and the
// environment getenv reads, in the order the CLI layers them: off is the
// one that turns its subagents off (nil: they are on). A file that cannot
// be read or parsed is an error naming it.
func subagentsState(p agent.Profile, root string, getenv func(string) string) (*subagentsOff, error) {
	s := p.Subagents
	var off *subagentsOff
	for _, f := range s.Files {
		path := filepath.Join(root, f.Path)
		if f.Scope == "user" {
			path = p.StatePath(f.Path, getenv)
		}
		doc, err := readSettings(path, s.Format)
		if err != nil {
			return nil, err
		}
		switch s.Switch {
		case agent.SubagentsDenyRule:
			// Deny rules add up across the files.
			perms, _ := doc["permissions"].(map[string]any)
			deny, _ := perms["deny"].([]any)
			for _, r := range deny {
				if rule, ok := r.(string); ok && slices.Contains(s.Key, strings.TrimSpace(rule)) {
					off = &subagentsOff{file: path, what: fmt.Sprintf("permissions.deny has %q", rule)}
				}
			}
		case agent.SubagentsPermission:
			// The last file that denies or allows the tool wins; the
			// legacy "tools" map's false denies it too.
			for _, k := range s.Key {
				perms, _ := doc["permission"].(map[string]any)
				rule := perms[k]
				if m, ok := rule.(map[string]any); ok {
					rule = m["*"]
				}
				tools, _ := doc["tools"].(map[string]any)
				switch legacy, isBool := tools[k].(bool); {
				case rule == "deny":
					off = &subagentsOff{file: path, what: fmt.Sprintf("permission.%s = \"deny\"", k)}
				case isBool && !legacy:
					off = &subagentsOff{file: path, what: fmt.Sprintf("tools.%s = false", k)}
				case rule != nil:
					off = nil
				}
			}
		case agent.SubagentsSetting:
			// The last file that sets it wins.
			var v any = doc
			for _, k := range s.Key {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			if on, ok := v.(bool); ok {
				off = nil
				if !on {
					off = &subagentsOff{file: path, what: strings.Join(s.Key, ".") + " = false"}
				}
			}
		}
	}
	return off, nil
}

// readSettings parses a settings file; a missing one is empty.
func readSettings(path, format string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if format == agent.SettingsTOML {
		err = toml.Unmarshal(data, &doc)
	} else {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// checkSkillNeeds reports whether the programs the agent's skill tool runs
// (agent.Facts.SkillNeeds) are on the PATH getenv reads: without them the
// CLI downloads one, which offline or confined fails, and BMAD 6.12's worker
// never starts. ok is false for an agent whose skill tool needs none.
func checkSkillNeeds(agentName string, o Options) (Check, bool) {
	p, _ := agent.LookupProfile(agentName)
	if len(p.SkillNeeds) == 0 {
		return Check{}, false
	}
	c := Check{Name: "skill tool", Agent: agentName, Status: OK}
	var missing []string
	for _, prog := range p.SkillNeeds {
		if !onPath(prog, o.Getenv("PATH")) {
			missing = append(missing, prog)
		}
	}
	if len(missing) == 0 {
		c.Detail = "its skill tool finds " + strings.Join(p.SkillNeeds, ", ") + " on PATH"
		return c, true
	}
	c.Status = Warn
	c.Detail = p.Product + "'s skill tool needs " + strings.Join(missing, ", ") + " on PATH, and downloads it otherwise: offline or confined that fails and no skill (BMAD 6.12's worker) loads"
	c.Fix = "install " + strings.Join(missing, ", ") + " (apt-get install ripgrep, brew install ripgrep)"
	return c, true
}

// onPath reports whether an executable prog is in one of path's folders.
func onPath(prog, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, prog)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
