package main

import (
	"testing"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// Every package linked into the binary is loaded and initialised at every
// start of every command. The docs generators, kept out by the
// urfave_cli_no_docs tag, would cost that for nothing; so would net/http and
// its TLS stack (about 0.6 ms of CPU a start), which only model-sim's server
// needs, in its own program (story-automator-model-sim), and the webhook's
// POST, in its own (story-automator-notify). Linking modelsim itself, or the
// notifier's poster, would bring net/http along. The dashboard's terminal UI
// libraries (Charm's) cost about 0.7 ms of CPU a start: they live in the
// dashboard's own program (story-automator-dashboard). (The Stop hook's
// start-up is kept by its own small binary.)
func TestTheBinaryLinksNoHeavyPackages(t *testing.T) {
	forbidden := []string{
		"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man",
		"net/http", "crypto/tls", "github.com/story-automator/story-automator/modelsim/serve",
		"github.com/story-automator/story-automator/notify/webhook/post",
		"charm.land/", "github.com/charmbracelet/",
	}
	for _, pkg := range testbin.ForbiddenDeps(t, ".", forbidden) {
		t.Errorf("the binary links %s: its initialisation would run at every start", pkg)
	}
}
