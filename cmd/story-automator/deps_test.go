package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Every package linked into the binary is loaded and initialised at every
// start, the Stop hook's too (it runs at each turn end of every agent
// session in the project). These were linked once and cost the hook about
// a millisecond a call: net/http and its TLS stack (model-sim now serves
// with internal/loophttp), a shell parser (internal/shellword splits hook
// commands) and a width table built at init (internal/textline measures).
func TestTheBinaryLinksNoHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"net/http", "crypto/tls", "crypto/x509", "mvdan.cc/sh/", "github.com/mattn/go-runewidth",
		"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f) || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("the binary links %s: its initialisation would run at every Stop-hook call", pkg)
			}
		}
	}
}
