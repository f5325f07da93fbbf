package child

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/sessionstate"
)

// rootSettingsBase is where a child's root-only settings file goes when
// its session folder is not root's alone (a project under /tmp).
const rootSettingsBase = "/run/story-automator"

// settingsPlace is the folder for a confined child's own settings file
// (Sandbox.SettingsEnv): "" when the user's own settings already turn the
// sandbox on, so none is needed. A CLI that reads such a file only when
// root alone can write it and every folder above it needs root and such a
// folder; without either the child cannot be confined (sandbox_unavailable).
func settingsPlace(p agent.Profile, filesDir, name string, getenv func(string) string) (string, error) {
	sb := p.Sandbox
	if sb.SettingsEnv == "" || userTurnsSandboxOn(p, getenv) {
		return "", nil
	}
	if !sb.SettingsRootOnly || rootOnly(filesDir) {
		return filesDir, nil
	}
	if os.Geteuid() == 0 && rootOnly(filepath.Dir(rootSettingsBase)) {
		dir := filepath.Join(rootSettingsBase, name)
		if err := atomicfile.EnsureDir(dir, 0o700); err == nil && rootOnly(dir) {
			return dir, nil
		}
	}
	return "", noSettingsPlace(p, getenv)
}

// noSettingsPlace says why a CLI that reads its sandbox setting only from
// root's files or the user's own cannot be confined per child here.
func noSettingsPlace(p agent.Profile, getenv func(string) string) error {
	return &AgentError{Code: CodeSandboxUnavailable, Agent: p.Name,
		Message: fmt.Sprintf("%s: %s takes its sandbox setting per run only from a file root alone can write, and this tool runs as uid %d",
			p.Name, p.Product, os.Geteuid()),
		Action: fmt.Sprintf("turn it on in your own %s settings (%s: true in %s)%s",
			p.Product, jsonPath(p.Sandbox.UserSetting), p.StatePath(p.Sandbox.UserSettingsFile, getenv), offHint)}
}

func jsonPath(keys []string) string {
	b, _ := json.Marshal(keys)
	return string(b)
}

// userTurnsSandboxOn reports whether the user's own settings file has the
// sandbox's key set to true.
func userTurnsSandboxOn(p agent.Profile, getenv func(string) string) bool {
	if p.Sandbox.UserSettingsFile == "" || len(p.Sandbox.UserSetting) == 0 {
		return false
	}
	data, err := os.ReadFile(p.StatePath(p.Sandbox.UserSettingsFile, getenv))
	if err != nil {
		return false
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	for _, k := range p.Sandbox.UserSetting {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	return v == true
}

// rootOnly reports whether dir and every folder above it are owned by
// root and writable by no one else.
func rootOnly(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// removeSandboxFiles removes a session's sandbox files wherever they went.
func removeSandboxFiles(stateDir, name string) {
	_ = os.RemoveAll(SandboxFilesPath(stateDir, name))
	if sessionstate.ValidName(name) {
		_ = os.RemoveAll(filepath.Join(rootSettingsBase, name))
	}
}
