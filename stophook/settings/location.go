package settings

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Provider is the agent whose settings are edited.
type Provider string

// Scope is which of a provider's settings files is edited.
type Scope string

// Providers and scopes the installer knows.
const (
	Claude Provider = "claude"
	Codex  Provider = "codex"
	Gemini Provider = "gemini"

	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
	ScopeUser    Scope = "user"
)

// Hook events our entry is registered under: Claude Code's and Codex's
// Stop, and Gemini CLI's AfterAgent, which ends its agent turn the same way
// (a "block" decision sends the reason back as the next prompt).
const (
	EventStop       = "Stop"
	EventAfterAgent = "AfterAgent"
)

// For returns h as provider p registers it: Gemini CLI reads it under
// AfterAgent with its timeout in milliseconds; the others under Stop, in seconds.
func (h Hook) For(p Provider) Hook {
	h.Event, h.Millis = EventStop, false
	if p == Gemini {
		h.Event, h.Millis = EventAfterAgent, true
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
	switch p {
	case Claude:
		return []Scope{ScopeProject, ScopeLocal, ScopeUser}
	case Codex, Gemini:
		return []Scope{ScopeProject, ScopeUser}
	}
	return nil
}

// Locate returns the settings file of provider p at scope s. Claude Code reads
// <root>/.claude/settings.json, <root>/.claude/settings.local.json and
// ~/.claude/settings.json; Codex reads hooks.json next to its config.toml, in
// <root>/.codex/ and in $CODEX_HOME (default ~/.codex/), and has no local scope;
// Gemini CLI reads <root>/.gemini/settings.json and the user's
// .gemini/settings.json under $GEMINI_CLI_HOME (default $HOME).
func Locate(p Provider, s Scope, projectRoot string, getenv func(string) string) (Location, error) {
	loc := Location{Provider: p, Scope: s}
	var err error
	switch {
	case p == Claude && s == ScopeProject:
		loc.Path = filepath.Join(projectRoot, ".claude", "settings.json")
	case p == Claude && s == ScopeLocal:
		loc.Path = filepath.Join(projectRoot, ".claude", "settings.local.json")
	case p == Claude && s == ScopeUser:
		loc.Path, err = underHome(getenv, ".claude", "settings.json")
	case p == Codex && s == ScopeProject:
		loc.Path = filepath.Join(projectRoot, ".codex", "hooks.json")
	case p == Codex && s == ScopeUser:
		if ch := getenv("CODEX_HOME"); ch != "" {
			loc.Path = filepath.Join(ch, "hooks.json")
		} else {
			loc.Path, err = underHome(getenv, ".codex", "hooks.json")
		}
	case p == Gemini && s == ScopeProject:
		loc.Path = filepath.Join(projectRoot, ".gemini", "settings.json")
	case p == Gemini && s == ScopeUser:
		if gh := getenv("GEMINI_CLI_HOME"); gh != "" {
			loc.Path = filepath.Join(gh, ".gemini", "settings.json")
		} else {
			loc.Path, err = underHome(getenv, ".gemini", "settings.json")
		}
	default:
		err = fmt.Errorf("%w: provider %q has no %q settings file", ErrUnsupportedScope, p, s)
	}
	return loc, err
}

func underHome(getenv func(string) string, parts ...string) (string, error) {
	home := getenv("HOME")
	if home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(append([]string{home}, parts...)...), nil
}
