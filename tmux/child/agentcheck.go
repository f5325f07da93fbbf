package child

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// Codes of an agent CLI that cannot run.
const (
	CodeAgentNotFound    = "agent_not_found"
	CodeAgentUnsupported = "agent_unsupported"
)

// AgentError says why an agent CLI cannot be used and how to fix it.
type AgentError struct {
	Code, Agent, Message, Action string
}

func (e *AgentError) Error() string { return e.Message }

// AsAgentError returns the AgentError in err's chain, if any.
func AsAgentError(err error) (*AgentError, bool) {
	var ae *AgentError
	ok := errors.As(err, &ae)
	return ae, ok
}

// versionCheckBound bounds `<cli> --version` when the CLI's npm package
// cannot tell (a Node CLI can take seconds to start on a loaded machine).
const versionCheckBound = 15 * time.Second

// cliVersion reads the CLI's version from its npm package.json (the command
// resolves into node_modules/<pkg>/…): instant, where starting a Node CLI
// takes seconds. Otherwise it asks `<cli> --version`.
func cliVersion(ctx context.Context, path, pkg string, env []string) (string, error) {
	if v := packageVersion(path, pkg); v != "" {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, versionCheckBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env, cmd.WaitDelay = env, time.Second
	out, err := cmd.Output()
	return semver().FindString(string(out)), err
}

// packageVersion finds the package.json of npm package pkg above the real
// file of path and returns its version ("" when there is none).
func packageVersion(path, pkg string) string {
	if pkg == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(real)
	for range 4 {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var meta struct{ Name, Version string }
			if json.Unmarshal(b, &meta) == nil && meta.Name == pkg {
				return semver().FindString(meta.Version)
			}
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

var semver = lazyre.New(`(\d+)\.(\d+)\.(\d+)`)

// CheckAgent finds the agent's CLI on the PATH of env (the environment its
// children get) and checks its version against the profile's supported
// range. It returns the CLI's path and version; agents without a program
// (sim, custom) pass at once.
func CheckAgent(ctx context.Context, name string, env []string) (path, version string, err error) {
	p, ok := agent.LookupProfile(name)
	if !ok {
		return "", "", fmt.Errorf("unknown agent %q (agents: %s)", name, strings.Join(agent.AgentNames(), ", "))
	}
	if p.Program == "" {
		return "", "", nil
	}
	path, err = lookPath(p.Program, envValue(env, "PATH"), "")
	if err != nil {
		return "", "", &AgentError{Code: CodeAgentNotFound, Agent: name,
			Message: fmt.Sprintf("%s: %s is not on the PATH", name, p.Program), Action: "install it: " + p.Install}
	}
	if p.MinVersion == "" {
		return path, "", nil
	}
	version, runErr := cliVersion(ctx, path, p.Package, env)
	if runErr != nil || version == "" {
		return path, "", &AgentError{Code: CodeAgentUnsupported, Agent: name,
			Message: fmt.Sprintf("%s: `%s --version` did not say its version (%v)", name, path, runErr),
			Action:  "reinstall it: " + p.Install}
	}
	if compareVersions(version, p.MinVersion) < 0 {
		return path, version, &AgentError{Code: CodeAgentUnsupported, Agent: name,
			Message: fmt.Sprintf("%s %s is older than the oldest supported version, %s", name, version, p.MinVersion),
			Action:  "upgrade it: " + p.Install}
	}
	return path, version, nil
}

// compareVersions compares two x.y.z versions.
func compareVersions(a, b string) int {
	pa, pb := semver().FindStringSubmatch(a), semver().FindStringSubmatch(b)
	for i := 1; i <= 3 && len(pa) > 3 && len(pb) > 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
