// Package testtier sorts tests into tiers: `go test -short` runs the unit
// tests alone, and every integration test skips itself there.
package testtier

import "testing"

// Integration marks t as an integration test (it starts tmux, builds or
// runs a binary, runs a real agent CLI or a whole run): under -short it is
// skipped. `make test` (no -short) and CI run it.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped under -short (make test runs it)")
	}
}
