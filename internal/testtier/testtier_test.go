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
