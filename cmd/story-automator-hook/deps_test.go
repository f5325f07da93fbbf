package main

import (
	"testing"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// The hook runs at every stop of every agent session, and each package it
// links is loaded and initialised at every start: it links what the hook's
// decision needs and nothing that the main binary may link freely.
func TestTheHookLinksOnlyWhatItsDecisionNeeds(t *testing.T) {
	forbidden := []string{
		"net", "net/http", "crypto/", "regexp", "mvdan.cc/", "github.com/urfave/cli",
		"github.com/rs/zerolog", "go.yaml.in/", "github.com/pelletier/go-toml",
		"github.com/story-automator/story-automator/tmux", "github.com/story-automator/story-automator/hooks",
		"github.com/story-automator/story-automator/spend", "github.com/story-automator/story-automator/orchestrator",
	}
	for _, pkg := range testbin.ForbiddenDeps(t, ".", forbidden) {
		t.Errorf("the hook links %s", pkg)
	}
}
