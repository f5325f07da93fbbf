package bmad

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// MinPython is the oldest Python BMAD 6.12's scripts run on.
const MinPython = "3.11"

// UVInstall is the line that installs uv.
const UVInstall = "curl -LsSf https://astral.sh/uv/install.sh | sh   (or: pipx install uv)"

// Codes of what BMAD 6.12's skills need on the machine.
const (
	CodeUVMissing       = "uv_missing"
	CodeUVPythonMissing = "uv_python_missing"
)

// UV is what this machine offers BMAD 6.12's skills: uv, which runs every
// script of theirs, and the Python it finds without downloading one.
type UV struct {
	// Path is uv's path ("" = not on the PATH), Version its --version line.
	Path, Version string
	// Python is the Python >= MinPython uv finds ("" = none), PythonVersion its version.
	Python, PythonVersion string
	// Detail is what uv said when it found no Python.
	Detail string
}

// Check is nil when uv and its Python are there, else a *orchestrator.Blocker
// (uv_missing, uv_python_missing) with the line that installs what is missing.
func (u UV) Check() error {
	if u.Path == "" {
		return &orchestrator.Blocker{Code: CodeUVMissing,
			Err:    errors.New("uv is not on the PATH: BMAD 6.12's skills run every script of theirs with `uv run`"),
			Action: "Install uv: " + UVInstall + "; make sure the run's PATH has it, then run again."}
	}
	if u.Python == "" {
		detail := ""
		if u.Detail != "" {
			detail = " (" + u.Detail + ")"
		}
		return &orchestrator.Blocker{Code: CodeUVPythonMissing,
			Err: fmt.Errorf("uv (%s) finds no Python >= %s without downloading one%s: BMAD 6.12's scripts need it", u.Path, MinPython, detail),
			Action: fmt.Sprintf("Install a Python %s or later where uv finds it (`uv python install %s`, or the system's python3), then run again.",
				MinPython, MinPython)}
	}
	return nil
}

// Text is one line for people.
func (u UV) Text() string {
	switch {
	case u.Path == "":
		return "uv: not on the PATH — install it: " + UVInstall
	case u.Python == "":
		return fmt.Sprintf("uv: %s (%s), but no Python >= %s it finds — `uv python install %s`", u.Version, u.Path, MinPython, MinPython)
	}
	return fmt.Sprintf("uv: %s (%s); Python %s (%s)", u.Version, u.Path, u.PythonVersion, u.Python)
}

// FindUV looks for uv on the PATH and asks it for a Python >= MinPython with
// downloads off, as the run's children will run it (UV_PYTHON_DOWNLOADS=never).
func FindUV(ctx context.Context) UV {
	var u UV
	path, err := exec.LookPath("uv")
	if err != nil {
		return u
	}
	u.Path = path
	run := func(name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "UV_PYTHON_DOWNLOADS=never")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return strings.TrimSpace(stderr.String()), err
		}
		return strings.TrimSpace(string(out)), nil
	}
	if v, err := run(path, "--version"); err == nil {
		u.Version = v
	}
	py, err := run(path, "python", "find", "--no-project", ">="+MinPython)
	if err != nil {
		u.Detail = firstLine(py)
		return u
	}
	u.Python = firstLine(py)
	if v, err := run(u.Python, "--version"); err == nil {
		u.PythonVersion = strings.TrimPrefix(v, "Python ")
	}
	return u
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
