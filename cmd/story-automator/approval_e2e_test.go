package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
)

// issue 34: the loop marker lies in the project's .claude/, which a child
// working in the project can write. Each hook program runs the advisor
// `loop start` approved (the positive control) and not one the marker was
// rewritten to name: the stop goes through and says why.
func TestLoopEndToEndARewrittenAdvisorIsNotRun(t *testing.T) {
	t.Parallel()
	for name, argv := range hookBinaries(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newLoopE2E(t)
			approvedRan := filepath.Join(p.root, "approved-ran")
			advisor := filepath.Join(p.root, "advisor.sh")
			if err := os.WriteFile(advisor, []byte("#!/bin/sh\ntouch '"+approvedRan+"'\n"+
				"echo '{\"prediction\":\"Now add the migration.\",\"confidence\":0.9}'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.cli("loop", "start", "Build the feature", "--advisor", advisor, "--owner-session", "owner")
			stop := func(msg string) map[string]any {
				t.Helper()
				data, _ := json.Marshal(ownerStop(msg))
				out, _, code := runHookEnv(t, argv, p.root, string(data), "XDG_STATE_HOME="+p.state)
				if code != 0 {
					t.Fatalf("hook exit %d", code)
				}
				return assertEmptyOrOneObject(t, out)
			}
			if out := stop("models done"); out["decision"] != "block" || out["reason"] != "Now add the migration." {
				t.Fatalf("the approved advisor did not decide: %v", out)
			}
			if _, err := os.Stat(approvedRan); err != nil {
				t.Fatalf("the approved advisor did not run: %v", err)
			}

			// The child's rewrite, as a file write in the project.
			planted := filepath.Join(p.root, "planted-ran")
			path := marker.ResolvePath(p.root, func(string) string { return "" })
			var m map[string]any
			data, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(data, &m)
			}
			if err != nil {
				t.Fatal(err)
			}
			m["loop"].(map[string]any)["advisor"] = "touch '" + planted + "'; echo '{\"prediction\":\"x\",\"confidence\":1}'"
			if data, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}

			out := stop("migration done")
			if out == nil || out["decision"] != nil || !strings.Contains(str(out["systemMessage"]), "not a command you approved") {
				t.Fatalf("a rewritten advisor must let the stop through and say why: %v", out)
			}
			if _, err := os.Stat(planted); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the rewritten advisor ran: %v", err)
			}
			h := p.history()
			if last := h[len(h)-1]; last["decision"] != stophook.KindEscalateAdvisor || !strings.Contains(str(last["reason"]), "not a command you approved") {
				t.Fatalf("history %v", last)
			}
			if mk := p.marker(); mk == nil || mk.Status != marker.StatusActive {
				t.Fatalf("the loop must stay: %+v", mk)
			}
		})
	}
}
