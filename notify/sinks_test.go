package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/notify/webhook"
	"github.com/story-automator/story-automator/workflows"
)

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func machine(dir string, extra ...string) Machine {
	return Machine{Dir: dir, Environ: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, extra...)}
}

func TestTheCommandSinkGetsTheEventAsJSONOnStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got")
	c := &Command{Script: `cat > got; echo "$STORY_AUTOMATOR_NOTIFY_EVENT $(pwd)" > env`, Machine: machine(dir)}
	ev := BudgetPaused(testRun, testNow, "1.3", "dev", "spent $2.01 of limit $2", "raise --max-cost")
	if err := c.Send(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	var got Event
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &got); err != nil || got != ev {
		t.Fatalf("stdin %s (%v), want %+v", data, err, ev)
	}
	if env, _ := os.ReadFile(filepath.Join(dir, "env")); strings.TrimSpace(string(env)) != "budget_paused "+dir {
		t.Fatalf("env and dir %q", env)
	}
}

func TestAFailingCommandSaysWhatItPrinted(t *testing.T) {
	c := &Command{Script: `cat >/dev/null; echo "no route to pager" >&2; exit 3`, Machine: machine(t.TempDir())}
	err := c.Send(context.Background(), Test(testRun, testNow))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no route to pager") {
		t.Fatalf("err %v", err)
	}
	slow := &Command{Script: `sleep 30`, Machine: machine(t.TempDir())}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := slow.Send(ctx, Test(testRun, testNow)); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("slow command: %v", err)
	}
}

// argvRecorder is a fake notifier program that writes its arguments, one a line.
const argvRecorder = `for a in "$@"; do printf '%s\n' "$a"; done > "$ARGV_FILE"`

func TestTheDesktopSinkRunsNotifySendFoundOnThePath(t *testing.T) {
	bin, dir := t.TempDir(), t.TempDir()
	writeScript(t, filepath.Join(bin, "notify-send"), argvRecorder)
	argv := filepath.Join(dir, "argv")
	d := &Desktop{Machine: Machine{GOOS: "linux", Environ: []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "ARGV_FILE=" + argv}}}
	ev := Escalated(testRun, testNow, "1.1", "dev", "dev story of 1.1: crashed", "-fix it")
	if err := d.Send(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(argv)
	want := strings.Join([]string{"--app-name=story-automator", "--urgency=critical", "--", ev.Title, ev.Message}, "\n") + "\n"
	if string(got) != want {
		t.Fatalf("argv\n%s\nwant\n%s", got, want)
	}
}

func TestTheDesktopSinkOnMacOSRunsOsascriptWithTheTextsAsArguments(t *testing.T) {
	bin, dir := t.TempDir(), t.TempDir()
	writeScript(t, filepath.Join(bin, "osascript"), argvRecorder)
	argv := filepath.Join(dir, "argv")
	d := &Desktop{Machine: Machine{GOOS: "darwin", Environ: []string{"PATH=" + bin, "ARGV_FILE=" + argv}}}
	ev := Done(testRun, testNow, 1)
	ev.Title = `say "hi" & quit`
	if err := d.Send(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(mustRead(t, argv)), "\n")
	if len(lines) < 8 || lines[6] != ev.Title || !strings.HasPrefix(lines[7], "Run "+testRun.ID) {
		t.Fatalf("argv %q", lines)
	}
}

func TestTheDesktopSinkSaysWhenThereIsNoNotifier(t *testing.T) {
	d := &Desktop{Machine: Machine{GOOS: "linux", Environ: []string{"PATH=" + t.TempDir()}}}
	if err := d.Send(context.Background(), Test(testRun, testNow)); err == nil || !strings.Contains(err.Error(), "notify-send is not installed") {
		t.Fatalf("err %v", err)
	}
}

func TestTheWebhookSinkHandsTheRequestToTheNotifyProgram(t *testing.T) {
	bin, dir := t.TempDir(), t.TempDir()
	exe := filepath.Join(bin, "story-automator")
	writeScript(t, filepath.Join(bin, webhook.BinaryName), `cat > "$REQ_FILE"; echo '{"ok":false,"status":500,"error":"HTTP 500 Internal Server Error: down"}'; exit 1`)
	req := filepath.Join(dir, "req")
	w := &Webhook{Hook: workflows.Webhook{URL: "https://ntfy.example/topic", Format: workflows.WebhookNtfy},
		Machine: Machine{Exe: func() (string, error) { return exe, nil }, Environ: []string{"REQ_FILE=" + req}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := w.Send(ctx, Done(testRun, testNow, 2))
	if err == nil || err.Error() != "HTTP 500 Internal Server Error: down" {
		t.Fatalf("err %v", err)
	}
	var got webhook.Request
	if err := json.Unmarshal(mustRead(t, req), &got); err != nil {
		t.Fatal(err)
	}
	if got.URL != "https://ntfy.example/topic" || got.Headers["Priority"] != "default" || got.TimeoutMs <= 0 || got.TimeoutMs > 5000 {
		t.Fatalf("request %+v", got)
	}
	if w.Name() != "webhook ntfy.example (ntfy)" {
		t.Fatalf("name %q", w.Name())
	}
}

func TestTheWebhookSinkWithoutItsProgramSaysHowToInstallIt(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "story-automator")
	w := &Webhook{Hook: workflows.Webhook{URL: "http://127.0.0.1:1/x", Format: workflows.WebhookJSON},
		Machine: Machine{Exe: func() (string, error) { return exe, nil }}}
	rec := &outcomes{}
	s := &Sender{Sinks: []Sink{w}, Sleep: (&fakeSleep{}).Sleep, Record: rec.Record}
	got := s.SendNow(context.Background(), Test(testRun, testNow))
	// Trying again cannot help: one try, and the way out.
	if len(got) != 1 || got[0].OK || got[0].Tries != 1 || !strings.Contains(got[0].Error, webhook.BinaryName) ||
		!strings.Contains(got[0].Action, "make build") {
		t.Fatalf("outcomes %+v", got)
	}
}

func TestSinksFollowThePolicy(t *testing.T) {
	n := workflows.Notify{Desktop: true, Command: "true", Webhooks: []workflows.Webhook{
		{URL: "https://a.example/x", Format: "json"}, {URL: "https://hooks.example/services/secret", Format: "slack"}}}
	var names []string
	for _, s := range Sinks(n, Machine{}) {
		names = append(names, s.Name())
	}
	if got := strings.Join(names, "|"); got != "desktop|command|webhook 1 a.example (json)|webhook 2 hooks.example (slack)" {
		t.Fatalf("sinks %s", got)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
