package child

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// CodeSandboxUnavailable: a child would run unconfined because its CLI's
// sandbox cannot work here.
const CodeSandboxUnavailable = "sandbox_unavailable"

// sandboxProbeBound bounds one probe (a CLI's sandbox runner starts in
// well under a second; the margin covers a loaded machine).
const sandboxProbeBound = 20 * time.Second

// offHint ends every sandbox refusal: the explicit way to run unconfined.
const offHint = " (or pass --sandbox off to run this agent unconfined)"

// CheckSandbox proves that the agent's own sandbox works on this machine
// with the environment its children get: it runs what the sandbox runs
// (bubblewrap and socat on Linux, the CLI's own sandbox runner for Codex,
// sandbox-exec on macOS) with a trivial command, never just a PATH lookup.
// An agent without a sandbox passes.
func CheckSandbox(ctx context.Context, name string, env []string) error {
	p, ok := agent.LookupProfile(name)
	if !ok || p.Sandbox.Kind == "" {
		return nil
	}
	if !p.Sandbox.SupportsOS(runtime.GOOS) {
		return unsupportedOS(p)
	}
	for _, probe := range sandboxProbes(p) {
		if err := runProbe(ctx, p, probe, env); err != nil {
			return err
		}
	}
	getenv := func(k string) string { return envValue(env, k) }
	if p.Sandbox.SettingsRootOnly && !userTurnsSandboxOn(p, getenv) &&
		!(os.Geteuid() == 0 && rootOnly(filepath.Dir(rootSettingsBase))) {
		return noSettingsPlace(p, getenv)
	}
	return nil
}

func unsupportedOS(p agent.Profile) error {
	return &AgentError{Code: CodeSandboxUnavailable, Agent: p.Name,
		Message: fmt.Sprintf("%s: %s has no sandbox on %s", p.Name, p.Product, runtime.GOOS),
		Action:  "run it with --sandbox off (children unconfined), or use an agent confined on " + runtime.GOOS}
}

// probe is one command that must succeed for the sandbox to work.
type probe struct {
	what string // what is missing when it fails
	argv []string
}

// sandboxProbes are the commands that prove p's sandbox works here.
func sandboxProbes(p agent.Profile) []probe {
	if p.Sandbox.Kind == agent.SandboxCodexProfile {
		// Codex brings its own bubblewrap (Linux) or uses Seatbelt (macOS).
		return []probe{{"Codex's sandbox runner", []string{p.Program, "sandbox",
			"-c", `default_permissions=":workspace"`, "--", "true"}}}
	}
	if runtime.GOOS == "darwin" {
		return []probe{{"sandbox-exec (Seatbelt)", []string{"sandbox-exec", "-p", "(version 1)(allow default)", "true"}}}
	}
	var out []probe
	for _, need := range p.Sandbox.Needs {
		switch need {
		case "bwrap":
			out = append(out, probe{"bubblewrap (bwrap)", []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
				"--proc", "/proc", "--unshare-net", "--die-with-parent", "true"}})
		case "socat":
			out = append(out, probe{"socat", []string{"socat", "-V"}})
		}
	}
	return out
}

func runProbe(ctx context.Context, p agent.Profile, pr probe, env []string) error {
	fail := func(why string) error {
		return &AgentError{Code: CodeSandboxUnavailable, Agent: p.Name,
			Message: fmt.Sprintf("%s: the sandbox %s needs does not work here: %s %s", p.Name, p.Product, pr.what, why),
			Action:  installAction(p) + offHint}
	}
	path, err := lookPath(pr.argv[0], envValue(env, "PATH"), "")
	if err != nil {
		return fail("is not on the PATH")
	}
	// A private temp dir, as a confined child gets: Codex refuses to set up
	// its sandbox helpers when its home lies under the temp dir.
	tmp, err := os.MkdirTemp("", "story-automator-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, sandboxProbeBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, pr.argv[1:]...)
	var out bytes.Buffer
	cmd.Env = ChildEnv(env, p, EnvPolicy{}, map[string]string{"TMPDIR": tmp})
	cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = tmp, &out, &out, time.Second
	if err := cmd.Run(); err != nil {
		return fail(fmt.Sprintf("failed (`%s`: %v: %s)", strings.Join(pr.argv, " "), err, lastWords(out.String())))
	}
	return nil
}

// installAction is how to get what p's sandbox needs on this system.
func installAction(p agent.Profile) string {
	if runtime.GOOS == "darwin" {
		return "sandbox-exec ships with macOS; check that it runs"
	}
	if p.Sandbox.Kind == agent.SandboxCodexProfile {
		return "install bubblewrap (" + p.Sandbox.Install + ") or reinstall Codex: " + p.Install
	}
	return "install it: " + p.Sandbox.Install
}

// lastWords is the end of a probe's output, on one line.
func lastWords(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return s
}
