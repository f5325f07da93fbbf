package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The hook runs at every stop of every agent session, and each package it
// links is loaded and initialised at every start: it links what the hook's
// decision needs and nothing that the main binary may link freely.
func TestTheHookLinksOnlyWhatItsDecisionNeeds(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"net", "net/http", "crypto/", "regexp", "mvdan.cc/", "github.com/urfave/cli",
		"github.com/rs/zerolog", "go.yaml.in/", "github.com/pelletier/go-toml",
		"github.com/story-automator/story-automator/tmux", "github.com/story-automator/story-automator/hooks",
		"github.com/story-automator/story-automator/spend", "github.com/story-automator/story-automator/orchestrator",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f) || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("the hook links %s", pkg)
			}
		}
	}
}
