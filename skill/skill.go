// Package skill installs the instructions an agent session reads to run
// stories with story-automator: a Claude Code skill, and the same skill where
// Codex reads skills.
package skill

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
)

// Name is the skill's folder and frontmatter name.
const Name = "story-automator"

//go:embed SKILL.md
var text []byte

// Text is the SKILL.md this binary installs.
func Text() []byte { return append([]byte(nil), text...) }

// Scopes: a skill for this project, or for the user's every project. The
// providers are the agents whose profile names skill folders (Providers).
const (
	Project = "project"
	User    = "user"
)

// DefaultProvider is the provider an install targets when none is named.
func DefaultProvider() string { return agent.DefaultAgent() }

// Providers lists the agents that read the skills this tool installs.
func Providers() []string { return agent.SkillAgents() }

// Path is where provider reads a skill of this name at scope: its profile's
// skill folder for the scope, under the project root (project) or its state
// directory (user). Claude Code reads .claude/skills (project) and
// ~/.claude/skills; Codex 0.169 reads .agents/skills (project) and
// $CODEX_HOME/skills (checked against the pinned CLIs).
func Path(provider, scope, root string, getenv func(string) string) (string, error) {
	p, _ := agent.LookupProfile(provider)
	dir, ok := p.SkillDirs[scope]
	if !ok || (scope != Project && scope != User) {
		return "", fmt.Errorf("unknown provider %q or scope %q (providers: %s; scopes: %s, %s)",
			provider, scope, strings.Join(Providers(), ", "), Project, User)
	}
	var base string
	if scope == Project {
		base = filepath.Join(root, dir)
	} else {
		base = p.StatePath(dir, getenv)
	}
	return filepath.Join(base, Name, "SKILL.md"), nil
}

// Result says what an install or uninstall did.
type Result struct {
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
}

// ErrNotOurs is returned when a file at the skill's path was not written by
// this tool (or was edited since): it is left alone.
var ErrNotOurs = errors.New("a different skill file is in the way")

// Install writes the skill; an identical file is left as it is. A different
// file at that path is the user's and is not overwritten unless force.
func Install(path string, force bool) (Result, error) {
	r := Result{Path: path}
	cur, err := os.ReadFile(path)
	switch {
	case err == nil && string(cur) == string(text):
		return r, nil
	case err == nil && !force:
		return r, fmt.Errorf("%w: %s (use --force to replace it)", ErrNotOurs, path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return r, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: the project's own folders, readable as git would leave them
		return r, err
	}
	if err := atomicfile.Write(path, text, 0o644); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// Uninstall removes the skill when it is the file Install writes, then the
// folders left empty by that (the skill's own, skills/, and .claude/ or
// .agents/), so the user's tree is as it was. A file the user changed stays.
func Uninstall(path string, stopAt string) (Result, error) {
	r := Result{Path: path}
	cur, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if string(cur) != string(text) {
		return r, fmt.Errorf("%w: %s differs from the skill this binary installs; remove it by hand if you mean to", ErrNotOurs, path)
	}
	if err := os.Remove(path); err != nil {
		return r, err
	}
	r.Changed = true
	for dir := filepath.Dir(path); dir != stopAt && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty: the user's
		}
	}
	return r, nil //nolint:nilerr // the folders left are not empty: the user's
}
