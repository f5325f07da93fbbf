package stophook

import (
	"os"
	"path/filepath"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
)

// ProjectRoot is the project the hook guards: flag (--project-root), else
// $PROJECT_ROOT, else the project folder the agent CLI gives its hooks
// ($CLAUDE_PROJECT_DIR: the profile table's ProjectDirEnv), else the nearest directory at or
// above the working directory that holds a marker (an agent may have cd'd
// into a subdirectory), stopping at the repository root. ok is false when
// there is no usable directory (the hook then allows the stop).
func ProjectRoot(flag string, getenv func(string) string, getwd func() (string, error)) (root string, ok bool) {
	dirs := []string{flag, getenv("PROJECT_ROOT")}
	for _, v := range agent.ProjectDirVars() {
		dirs = append(dirs, getenv(v))
	}
	for _, dir := range dirs {
		if dir != "" {
			abs, err := filepath.Abs(dir)
			return abs, err == nil
		}
	}
	wd, err := getwd()
	if err != nil {
		return "", false
	}
	if filepath.IsAbs(getenv(marker.EnvMarkerPath)) {
		return wd, true
	}
	for dir := wd; ; {
		if _, err := os.Lstat(marker.ResolvePath(dir, getenv)); err == nil {
			return dir, true
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return wd, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd, true
		}
		dir = parent
	}
}
