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
