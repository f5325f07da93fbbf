// Package remotesession reaches a run's child sessions on ssh hosts: which
// host a session is on, and its screen read there over the project's ssh
// connection to that host.
package remotesession

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/workflows"
)

// Where is the place of a child session on an ssh host: the host's name,
// the run and the story whose clone there the session works in.
type Where struct {
	Host, Run, Story string
}

// Find is where session name ran (or runs) in run st: ok is false for a
// session of this machine or one st does not know.
func Find(st *orchestrator.State, name string) (w Where, ok bool) {
	if st == nil {
		return w, false
	}
	for _, u := range st.Units {
		if u.Host == "" || u.Host == workflows.LocalHost {
			continue
		}
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				if a.Session == name {
					return Where{Host: u.Host, Run: st.RunID, Story: u.Key}, true
				}
			}
		}
	}
	return w, false
}

// Open is the ssh Host for a policy host of the project at root, its
// control socket the one the project's runs use, so that a connection a run
// holds open is the one reused. exec is nil outside tests.
func Open(root string, getenv func(string) string, spec workflows.Host, exec hosts.Executor) (*hosts.Host, error) {
	state := filepath.Join(root, workflows.StateDir)
	return hosts.New(spec, hosts.Options{ControlDir: hosts.ControlDir(state), Getenv: getenv, Exec: exec})
}

// Prefix is the project's directory within its repository ("" at its top),
// which a story's clone on a host has too.
func Prefix(ctx context.Context, root string) string {
	_, prefix, _ := gitvcs.TopOf(ctx, root)
	return prefix
}

// Capture runs `session capture NAME --lines N [--colors]` on h in w's
// clone and returns the host's JSON answer, printed there on success or
// failure; a command that ran and failed is a *hosts.ExitError.
func Capture(ctx context.Context, h *hosts.Host, root, prefix string, w Where, name string, lines int, colors bool) ([]byte, error) {
	args := []string{"session", "capture", name, "--lines", strconv.Itoa(lines)}
	if colors {
		args = append(args, "--colors")
	}
	line := tmuxsteps.CloneCommand(h, wire.ProjectName(root), prefix, w.Run, w.Story, args...)
	res, err := h.Script(ctx, line, nil)
	return res.Stdout, err
}

// AttachArgv is the ssh command line that attaches a terminal to session
// name at w: the host's own `session attach` in w's clone, with a terminal
// of its own, over h's connection.
func AttachArgv(ctx context.Context, h *hosts.Host, root, prefix string, w Where, name string) ([]string, error) {
	line := tmuxsteps.CloneCommand(h, wire.ProjectName(root), prefix, w.Run, w.Story, "session", "attach", name)
	return h.TerminalScript(ctx, line)
}

// Text is the screen in a Capture answer; ok is false when the answer
// carries none.
func Text(answer []byte) (text string, ok bool) {
	var doc struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(answer, &doc) != nil || doc.Text == nil {
		return "", false
	}
	return *doc.Text, true
}

// Pool keeps one Host per policy host for a long-lived reader (the
// dashboard): each connects once, on first use, and Close ends only the
// connections the pool opened.
type Pool struct {
	Root   string
	Getenv func(string) string
	// Exec runs ssh (nil: the system's).
	Exec hosts.Executor

	mu     sync.Mutex
	hosts  map[string]*hosts.Host
	prefix *string
}

// Capture is the screen of session name at w, with its colours, read over
// w's host's connection.
func (p *Pool) Capture(ctx context.Context, w Where, name string, lines int) (string, error) {
	h, prefix, err := p.host(ctx, w.Host)
	if err != nil {
		return "", err
	}
	answer, err := Capture(ctx, h, p.Root, prefix, w, name, lines, true)
	if text, ok := Text(answer); ok && err == nil {
		return text, nil
	}
	var refused struct{ Message string }
	if json.Unmarshal(answer, &refused) == nil && refused.Message != "" {
		return "", errRefused(h.Name, refused.Message)
	}
	if err == nil {
		err = errNoText(h.Name, answer)
	}
	return "", err
}

// AttachArgv is AttachArgv over w's host's connection.
func (p *Pool) AttachArgv(ctx context.Context, w Where, name string) ([]string, error) {
	h, prefix, err := p.host(ctx, w.Host)
	if err != nil {
		return nil, err
	}
	return AttachArgv(ctx, h, p.Root, prefix, w, name)
}

// host is the pool's Host named name, opened on first use, and the project's prefix.
func (p *Pool) host(ctx context.Context, name string) (*hosts.Host, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prefix == nil {
		s := Prefix(ctx, p.Root)
		p.prefix = &s
	}
	if h := p.hosts[name]; h != nil {
		return h, *p.prefix, nil
	}
	pol, err := workflows.LoadPolicy(p.Root)
	if err != nil {
		return nil, "", err
	}
	spec, ok := pol.Host(name)
	if !ok || spec.Local() {
		return nil, "", errUnknownHost(name)
	}
	h, err := Open(p.Root, p.Getenv, spec, p.Exec)
	if err != nil {
		return nil, "", err
	}
	if p.hosts == nil {
		p.hosts = map[string]*hosts.Host{}
	}
	p.hosts[name] = h
	return h, *p.prefix, nil
}

// Close ends the connections the pool opened itself (a run's stay open).
func (p *Pool) Close(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.hosts {
		if h.Stats().Connects > 0 {
			_ = h.Close(ctx)
		}
	}
	p.hosts = nil
}
