package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/orchestrator"
)

// deferredProject is a real BMAD 6.12 project with two done specs whose
// review deferred three findings (high, low; medium) and one blocked spec
// whose finding is not collected.
func deferredProject(t *testing.T) (root, ledger string) {
	t.Helper()
	root = realbmad.Project(t)
	dir := filepath.Join(root, "_bmad-output/implementation-artifacts")
	spec := func(name, status, deferred string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "---\ntitle: 'x'\nstatus: '" + status + "'\ndeferred:\n" + deferred + "---\n\n## Auto Run Result\n\nStatus: " + status + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec("spec-1-1-sign-up.md", "done", "  - summary: >-\n      Password rule allows spaces\n    evidence: |-\n      signup.go: no check\n"+
		"    location: >-\n      src/signup.go:40\n    severity: high\n"+
		"  - summary: >-\n      Log line is noisy\n    evidence: |-\n      seen in tests\n    severity: low\n")
	spec("spec-1-2-sign-in.md", "done", "  - summary: >-\n      Lockout counter never resets\n    evidence: |-\n      no reset path\n"+
		"    location: >-\n      src/lockout.go:12\n    severity: medium (unverified)\n")
	spec("spec-1-3-profile.md", "blocked", "  - summary: >-\n      Not done yet\n    evidence: |-\n      blocked\n    severity: high\n")
	return root, filepath.Join(dir, "deferred-work.md")
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

func openSummaries(t *testing.T, res map[string]any) []string {
	t.Helper()
	var out []string
	items, _ := res["open"].([]any)
	for _, it := range items {
		out = append(out, it.(map[string]any)["summary"].(string))
	}
	return out
}

// Piped, the command prints its JSON: what it collected, then the open
// items; a second call collects nothing and the file stays as it was.
func TestDeferredCollectsOnceAndPrintsJSONWhenPiped(t *testing.T) {
	root, ledger := deferredProject(t)
	res, code := runCLI(t, root, "--project-root", root, "deferred")
	collected, _ := res["collected"].(map[string]any)
	if code != 0 || res["ok"] != true || collected == nil || len(collected["added"].([]any)) != 3 || collected["specs"] != float64(2) {
		t.Fatalf("exit %d: %v", code, res)
	}
	want := "Password rule allows spaces|Log line is noisy|Lockout counter never resets"
	if got := strings.Join(openSummaries(t, res), "|"); got != want || res["path"] != ledger || res["total"] != float64(3) {
		t.Fatalf("open %q, want %q: %v", got, want, res)
	}
	first, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	res, code = runCLI(t, root, "--project-root", root, "deferred", "--json")
	if code != 0 || len(res["collected"].(map[string]any)["added"].([]any)) != 0 || len(openSummaries(t, res)) != 3 {
		t.Fatalf("second call: exit %d: %v", code, res)
	}
	if again, _ := os.ReadFile(ledger); string(again) != string(first) {
		t.Fatalf("a second call changed deferred-work.md:\n%s", again)
	}
}

// --min-severity lists the items at or above it; anything but low, medium
// or high is a usage error.
func TestDeferredMinSeverity(t *testing.T) {
	root, _ := deferredProject(t)
	for sev, want := range map[string]string{"low": "Password rule allows spaces|Log line is noisy|Lockout counter never resets",
		"medium": "Password rule allows spaces|Lockout counter never resets", "high": "Password rule allows spaces"} {
		res, code := runCLI(t, root, "--project-root", root, "deferred", "--min-severity", sev)
		if got := strings.Join(openSummaries(t, res), "|"); code != 0 || got != want {
			t.Fatalf("--min-severity %s: exit %d, %q, want %q", sev, code, got, want)
		}
	}
	res, code := runCLI(t, root, "--project-root", root, "deferred", "--min-severity", "urgent")
	if code != 2 || res["error"] != "usage_error" || !strings.Contains(res["message"].(string), "low, medium, high") {
		t.Fatalf("exit %d: %v", code, res)
	}
}

// On a terminal: a sentence on what was collected, then a table of the open
// items with their ids, severities, specs and locations.
func TestDeferredPrintsATableOnATerminal(t *testing.T) {
	root, ledger := deferredProject(t)
	out, code := runOnTerminal(t, root, "deferred", "--min-severity", "medium")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "Collected 3 new item(s) from 2 done spec(s) into _bmad-output/implementation-artifacts/deferred-work.md." ||
		lines[1] != "2 open item(s) of severity medium or above (3 in the file):" || strings.Contains(out, "{") {
		t.Fatalf("output:\n%s", out)
	}
	if !regexpMatch(`(?m)^ID\s+SEVERITY\s+SUMMARY\s+LOCATION\s+SPEC$`, out) ||
		!regexpMatch(`(?m)^dw-[0-9a-f]{8}\s+high\s+Password rule allows spaces\s+src/signup\.go:40\s+spec-1-1-sign-up\.md$`, out) ||
		!regexpMatch(`(?m)^dw-[0-9a-f]{8}\s+medium \(unverified\)\s+Lockout counter never resets\s+src/lockout\.go:12\s+spec-1-2-sign-in\.md$`, out) {
		t.Fatalf("table:\n%s", out)
	}
	if err := os.WriteFile(ledger, []byte("- done: abc\n  summary: x\n- source_spec: `x`\n  summary: a\n  summary: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runStreams(t, root, true, "deferred")
	if code != 1 || !strings.Contains(errOut, "deferred_work_invalid") || !strings.Contains(errOut, "line 5") || !strings.Contains(errOut, "fix the line named by hand") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	res := map[string]any{}
	piped, _, _ := runStreams(t, root, false, "deferred")
	if err := json.Unmarshal([]byte(piped), &res); err != nil || res["error"] != "deferred_work_invalid" {
		t.Fatalf("piped: %s", piped)
	}
}

// Outside a BMAD project it says so, and what to do.
func TestDeferredOutsideABMADProject(t *testing.T) {
	res, code := runCLI(t, t.TempDir(), "deferred")
	if code != 1 || res["error"] != "bmad_layout_not_found" || !strings.Contains(res["action"].(string), "--project-root") {
		t.Fatalf("exit %d: %v", code, res)
	}
}

// While a run holds the project's run lock, the command lists and writes
// nothing: the run collects into the tree it commits.
func TestDeferredOnlyListsWhileARunIsGoing(t *testing.T) {
	root, ledger := deferredProject(t)
	text := "- source_spec: `none`\n  summary: Split the settings page\n  evidence: too big\n"
	if err := os.WriteFile(ledger, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	out, errOut, code := runStreams(t, root, false, "deferred")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if got := strings.Join(openSummaries(t, res), "|"); got != "Split the settings page" || len(res["collected"].(map[string]any)["added"].([]any)) != 0 ||
		!strings.Contains(errOut, "a run is going") {
		t.Fatalf("open %q: %v\nstderr %s", got, res, errOut)
	}
	if now, _ := os.ReadFile(ledger); string(now) != text {
		t.Fatalf("deferred-work.md was written while a run holds its lock:\n%s", now)
	}
	lock.Release()
	if res, code := runCLI(t, root, "--project-root", root, "deferred"); code != 0 || len(res["collected"].(map[string]any)["added"].([]any)) != 3 {
		t.Fatalf("after the run: exit %d: %v", code, res)
	}
}
