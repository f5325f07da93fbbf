package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/sessionstate"
)

// Lifecycle values this package writes besides marker's "running" and "exited".
const (
	// LifecycleStarting: the spawner created the session; the runner has not reported yet.
	LifecycleStarting = "starting"
	// LifecycleKilled: the pane was killed from outside (tmux hangup) before the agent ended.
	LifecycleKilled = "killed"
)

// Spec is everything the runner needs to start the agent, handed over in a
// 0600 file so that no user text ever appears on a tmux command line.
type Spec struct {
	Name       string   `json:"name"`
	Dir        string   `json:"dir"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	Stdin      string   `json:"stdin,omitempty"`
	UseStdin   bool     `json:"useStdin,omitempty"`
	OutputFile string   `json:"outputFile"`
}

// SpecPath is where the spawner leaves a session's spec for its runner.
func SpecPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".spec.json")
}

// PromptPath is where a prompt goes when the agent reads it from a file.
func PromptPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".prompt")
}

// WriteSpec stores a spec atomically, 0600 (not fsynced: it lives as long as its child).
func WriteSpec(stateDir string, s Spec) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	return atomicfile.Replace(SpecPath(stateDir, s.Name), data, 0o600)
}

// TakeSpec reads a session's spec and deletes the file: it carries the
// prompt and the environment, which need not outlive the start.
func TakeSpec(stateDir, name string) (Spec, error) {
	var s Spec
	if !sessionstate.ValidName(name) {
		return s, fmt.Errorf("invalid session name %q", name)
	}
	p := SpecPath(stateDir, name)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return s, fmt.Errorf("open spec: %w", err)
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		return s, fmt.Errorf("decode spec %s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("remove spec: %w", err)
	}
	if len(s.Argv) == 0 {
		return s, fmt.Errorf("spec %s has no command", p)
	}
	return s, nil
}
