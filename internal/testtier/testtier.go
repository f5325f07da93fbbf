// Package testtier sorts tests into tiers: `go test -short` runs the unit
// tests alone, and every integration test skips itself there.
package testtier

import (
	"os"
	"testing"
)

// Integration marks t as an integration test (it starts tmux, builds or
// runs a binary, runs a real agent CLI or a whole run): under -short it is
// skipped. `make test` (no -short) and CI run it.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped under -short (make test runs it)")
	}
}

// Missing ends a test whose prerequisite (a program such as tmux or git)
// is not installed: skipped with msg, or failed when CI=true, where CI
// installs every prerequisite and a skip would hide a gap.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: a missing prerequisite fails)")
	}
	t.Skip(msg)
}
