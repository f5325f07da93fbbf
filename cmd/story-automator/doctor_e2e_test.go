package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
)

type doctorReport struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Checks []struct {
		Name, Agent, Status, Detail, Fix string
	} `json:"checks"`
}

func runDoctor(t *testing.T, path string, args ...string) (doctorReport, int) {
	rep, code, _ := runDoctorIn(t, path, args...)
	return rep, code
}

// runDoctorIn is runDoctor that also returns the TMPDIR the doctor had.
func runDoctorIn(t *testing.T, path string, args ...string) (doctorReport, int, string) {
	t.Helper()
	root, tmp := t.TempDir(), t.TempDir()
	c := exec.Command(builtBinary(t), append([]string{"doctor", "--json"}, args...)...)
	c.Env = cleanEnv("PROJECT_ROOT="+root, "PATH="+path, "HOME="+t.TempDir(), "TMPDIR="+tmp)
	c.Dir = root
	var out bytes.Buffer
	c.Stdout = &out
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	var rep doctorReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		t.Fatalf("doctor output %q: %v (%v)", out.String(), jerr, err)
	}
	return rep, code, tmp
}

// doctor --offline --agent claude rehearses one real Claude Code turn in tmux
// against model-sim and passes.
func TestRealClaudeDoctorOfflinePasses(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	rep, code, tmp := runDoctorIn(t, filepath.Dir(cli)+":/usr/bin:/bin", "--offline", "--agent", "claude")
	if code != 0 || !rep.OK {
		t.Fatalf("doctor exit %d: %+v", code, rep)
	}
	// A passed rehearsal leaves no home, state or output of its own behind
	// (Claude Code keeps its own cc-socks and claude-<uid> there).
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		if strings.HasPrefix(e.Name(), "sa-doctor") {
			t.Fatalf("doctor left %s in TMPDIR", e.Name())
		}
	}
	var rehearsal string
	for _, c := range rep.Checks {
		if c.Name == "rehearsal" {
			rehearsal = c.Status + " " + c.Detail
		}
	}
	if !strings.HasPrefix(rehearsal, "ok ") || !strings.Contains(rehearsal, "stop_hook") {
		t.Fatalf("rehearsal: %q", rehearsal)
	}
}

// Without claude on the PATH, doctor fails that check with the install command.
func TestDoctorFailsWithTheFixWhenTheCLIIsMissing(t *testing.T) {
	t.Parallel()
	rep, code := runDoctor(t, t.TempDir()+":/usr/bin:/bin", "--offline", "--agent", "claude")
	if code != 1 || rep.OK || rep.Error != "doctor_failed" {
		t.Fatalf("doctor exit %d: %+v", code, rep)
	}
	for _, c := range rep.Checks {
		if c.Name == "cli" && c.Agent == "claude" {
			if c.Status != "fail" || !strings.Contains(c.Fix, "npm install -g @anthropic-ai/claude-code") {
				t.Fatalf("cli check %+v", c)
			}
			return
		}
	}
	t.Fatalf("no cli check: %+v", rep)
}

// doctor --offline rehearses one real turn of Codex, of Gemini CLI and of
// GitHub Copilot CLI.
func TestRealCodexAndGeminiDoctorOfflinePass(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"codex", "gemini", "copilot"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			cli := realagent.Require(t, agent)
			rep, code := runDoctor(t, filepath.Dir(cli)+":/usr/bin:/bin", "--offline", "--agent", agent)
			if code != 0 || !rep.OK {
				t.Fatalf("doctor exit %d: %+v", code, rep)
			}
			rehearsed := false
			for _, c := range rep.Checks {
				if c.Name == "rehearsal" && c.Status != "ok" {
					t.Fatalf("rehearsal: %+v", c)
				}
				rehearsed = rehearsed || c.Name == "rehearsal"
			}
			if !rehearsed {
				t.Fatalf("no rehearsal: %+v", rep)
			}
		})
	}
}

// doctor reports, per agent, whether its model can run blocking subagents:
// on by default; off, with the file and the fix, when the CLI's settings
// turn them off — in JSON and in text.
func TestRealGeminiDoctorSaysWhetherSubagentsRun(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "gemini")
	root, home := t.TempDir(), t.TempDir()
	doctor := func(args ...string) (string, int) {
		c := exec.Command(builtBinary(t), append([]string{"doctor", "--offline", "--no-rehearsal", "--agent", "gemini"}, args...)...)
		c.Env = cleanEnv("PROJECT_ROOT="+root, "PATH="+filepath.Dir(cli)+":/usr/bin:/bin", "HOME="+home, "TMPDIR="+t.TempDir())
		c.Dir = root
		out, err := c.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	subagents := func() (status, detail, fix string) {
		out, _ := doctor("--json")
		var rep doctorReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor output %q: %v", out, err)
		}
		for _, c := range rep.Checks {
			if c.Name == "subagents" && c.Agent == "gemini" {
				return c.Status, c.Detail, c.Fix
			}
		}
		t.Fatalf("no subagents check: %+v", rep)
		return
	}
	if status, detail, _ := subagents(); status != "ok" || !strings.Contains(detail, "invoke_agent") {
		t.Fatalf("on by default: %s %s", status, detail)
	}
	settings := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"experimental": {"enableAgents": false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, detail, fix := subagents(); !strings.Contains(detail, "experimental.enableAgents = false in "+settings) || !strings.Contains(fix, settings) {
		t.Fatalf("off: %s / %s", detail, fix)
	}
	text, _ := doctor()
	if !strings.Contains(text, "subagents are off: experimental.enableAgents = false") {
		t.Fatalf("text:\n%s", text)
	}
}
