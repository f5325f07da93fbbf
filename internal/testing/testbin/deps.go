package testbin

import (
	"os/exec"
	"strings"
	"testing"
)

// ForbiddenDeps returns the packages that the package in dir links, built
// with Tags, and that forbidden names: a name ending in "/" stands for every
// package below it; any other for that package and the packages below it.
func ForbiddenDeps(t testing.TB, dir string, forbidden []string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", Tags, ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var linked []string
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f) || strings.HasPrefix(pkg, f+"/") {
				linked = append(linked, pkg)
				break
			}
		}
	}
	return linked
}
