package main

import (
	"testing"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// Every package linked into the binary is loaded and initialised at every
// start. The docs generators, kept out by the urfave_cli_no_docs tag, cost
// every command their initialisation for nothing. (The Stop hook's own
// start-up floor is kept by its small binary, not by this one.)
func TestTheBinaryLinksNoHeavyPackages(t *testing.T) {
	forbidden := []string{"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man"}
	for _, pkg := range testbin.ForbiddenDeps(t, ".", forbidden) {
		t.Errorf("the binary links %s: its initialisation would run at every Stop-hook call", pkg)
	}
}

// model-sim's server runs in its own program (story-automator-model-sim):
// net/http and TLS cost every start of every command about 0.6 ms of CPU.
func TestTheBinaryLinksNoHTTPServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := map[string]bool{"net/http": true, "crypto/tls": true,
		"github.com/story-automator/story-automator/modelsim":       true,
		"github.com/story-automator/story-automator/modelsim/serve": true}
	for _, pkg := range strings.Fields(string(out)) {
		if forbidden[pkg] {
			t.Errorf("the binary links %s", pkg)
		}
	}
}
