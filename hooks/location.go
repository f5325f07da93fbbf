package hooks

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/agent"
)

// Provider is the agent whose settings are edited: an agent of the profile
// table with HookFiles (agent.HookProviders).
type Provider string

// Scope is which of a provider's settings files is edited.
type Scope string

// Scopes the installer knows.
const (
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
	ScopeUser    Scope = "user"
)

// EventStop is the hook event our entry is registered under unless the
// provider's profile names another (HookEvent).
const EventStop = "Stop"

// facts are the profile of provider p; ok is false when p takes no hook.
func facts(p Provider) (agent.Profile, bool) {
	prof, ok := agent.LookupProfile(string(p))
	return prof, ok && len(prof.HookFiles) > 0
}

// For returns h as provider p registers it: under the event that ends its
// turn, with its timeout in the unit it reads (its profile's HookEvent and
// HookMillis; Gemini CLI's AfterAgent, in milliseconds).
func (h Hook) For(p Provider) Hook {
	prof, _ := facts(p)
	h.Event, h.Millis, h.Flat = prof.HookEvent, prof.HookMillis, prof.HookFlat
	if h.Event == "" {
		h.Event = EventStop
	}
	return h
}

// ErrUnsupportedScope is returned for a provider/scope pair with no settings file.
var ErrUnsupportedScope = errors.New("unsupported scope")

// ErrNoHome is returned for the user scope when $HOME is not set.
var ErrNoHome = errors.New("HOME is not set")

// Location is one settings file that can hold our Stop hook.
type Location struct {
	Provider Provider `json:"provider"`
	Scope    Scope    `json:"scope"`
	Path     string   `json:"file"`
}

// Scopes lists the scopes a provider supports, in the order status reports them.
func Scopes(p Provider) []Scope {
	prof, _ := facts(p)
	var out []Scope
	for _, f := range prof.HookFiles {
		out = append(out, Scope(f.Scope))
	}
	return out
}

// Locate returns the settings file of provider p at scope s, as its
// profile's HookFiles place it: Claude Code reads
// <root>/.claude/settings.json, <root>/.claude/settings.local.json and
// ~/.claude/settings.json; Codex reads hooks.json next to its config.toml,
// in <root>/.codex/ and in $CODEX_HOME (default ~/.codex/), and has no
// local scope; Gemini CLI reads <root>/.gemini/settings.json and the
// user's .gemini/settings.json under $GEMINI_CLI_HOME (default $HOME).
func Locate(p Provider, s Scope, projectRoot string, getenv func(string) string) (Location, error) {
	loc := Location{Provider: p, Scope: s}
	prof, _ := facts(p)
	for _, f := range prof.HookFiles {
		if Scope(f.Scope) != s {
			continue
		}
		var err error
		if s == ScopeUser {
			loc.Path, err = userPath(prof, f.Path, getenv)
		} else {
			loc.Path = filepath.Join(projectRoot, f.Path)
		}
		return loc, err
	}
	return loc, fmt.Errorf("%w: provider %q has no %q settings file", ErrUnsupportedScope, p, s)
}

// userPath resolves a user-scope path of the profile: after "$NAME/"
// under $NAME (HOME when unset), else under the agent's state directory.
func userPath(prof agent.Profile, rel string, getenv func(string) string) (string, error) {
	if v, rest, ok := strings.Cut(rel, "/"); ok && strings.HasPrefix(v, "$") {
		if dir := getenv(v[1:]); dir != "" {
			return filepath.Join(dir, rest), nil
		}
		return underHome(getenv, rest)
	}
	return statePath(prof, rel, getenv)
}

// statePath is rel under the agent's state directory: $StateDirEnv when
// set, else StateDir under HOME.
func statePath(prof agent.Profile, rel string, getenv func(string) string) (string, error) {
	if prof.StateDirEnv != "" {
		if dir := getenv(prof.StateDirEnv); dir != "" {
			return filepath.Join(dir, rel), nil
		}
	}
	return underHome(getenv, prof.StateDir, rel)
}

func underHome(getenv func(string) string, parts ...string) (string, error) {
	home := getenv("HOME")
	if home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(append([]string{home}, parts...)...), nil
}
