package testtier

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Under -short an integration test ends skipped before its next line; without
// it, it runs on. Each case runs this test binary again with the flag or not.
func TestIntegrationSkipsOnlyUnderShort(t *testing.T) {
	if os.Getenv("TESTTIER_CHILD") == "1" {
		Integration(t)
		t.Log("ran past Integration")
		return
	}
	for _, short := range []bool{true, false} {
		args := []string{"-test.run=^TestIntegrationSkipsOnlyUnderShort$", "-test.v"}
		if short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTTIER_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("short=%v: %v\n%s", short, err, out)
		}
		skipped, ran := strings.Contains(string(out), "--- SKIP"), strings.Contains(string(out), "ran past Integration")
		if skipped != short || ran == short {
			t.Fatalf("short=%v: skipped %v, ran on %v\n%s", short, skipped, ran, out)
		}
	}
}

// A missing prerequisite skips a test, and fails it under CI=true.
func TestMissingFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTTIER_CHILD") == "1" {
		Missing(t, "frobnicator is not installed")
		t.Log("ran past Missing")
		return
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTTIER_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		failed := err != nil && strings.Contains(string(out), "--- FAIL")
		skipped := err == nil && strings.Contains(string(out), "--- SKIP")
		if (ci == "true") != failed || (ci == "") != skipped || strings.Contains(string(out), "ran past Missing") ||
			!strings.Contains(string(out), "frobnicator is not installed") {
			t.Fatalf("CI=%q: err %v\n%s", ci, err, out)
		}
	}
}
