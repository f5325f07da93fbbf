package main

import (
	"testing"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// Every package linked into the binary is loaded and initialised at every
// start of every command. The docs generators, kept out by the
// urfave_cli_no_docs tag, would cost that for nothing. (The Stop hook, the
// one command on a hot path, has its own small binary and its own test.)
func TestTheBinaryLinksNoDocsGenerators(t *testing.T) {
	forbidden := []string{"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man"}
	for _, pkg := range testbin.ForbiddenDeps(t, ".", forbidden) {
		t.Errorf("the binary links %s: its initialisation would run at every start", pkg)
	}
}
