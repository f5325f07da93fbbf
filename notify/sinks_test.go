package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

func TestTheWebhookSinkPostsTheBodyAndHeaders(t *testing.T) {
	type seen struct{ method, path, body, title, prio, ctype string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, string(b), r.Header.Get("Title"), r.Header.Get("Priority"), r.Header.Get("Content-Type")}
	}))
	defer srv.Close()
	w := &Webhook{Hook: workflows.Webhook{URL: srv.URL + "/$TOPIC", Format: workflows.WebhookNtfy},
		Machine: Machine{Environ: []string{"TOPIC=runs"}}, Client: srv.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev := Done(testRun, testNow, 2)
	if err := w.Send(ctx, ev); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/runs" || s.body != ev.Message || s.title != ev.Title || s.prio != "default" ||
		!strings.HasPrefix(s.ctype, "text/plain") {
		t.Fatalf("the server saw %+v", s)
	}
}

func TestTheWebhookSinkReportsAnErrorStatusInTheServersWordsWithoutTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "topic\nis full", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	w := &Webhook{Hook: workflows.Webhook{URL: srv.URL + "/services/secret", Format: workflows.WebhookJSON}, Client: srv.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := w.Send(ctx, Test(testRun, testNow))
	if err == nil || err.Error() != "HTTP 429 Too Many Requests: topic is full" {
		t.Fatalf("err %v", err)
	}
	srv.Close()
	if err := w.Send(ctx, Test(testRun, testNow)); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a refused connection: %v", err)
	}
}

// A server that fails twice and then takes the event gets it on the third
// try, and the outcome says so.
func TestAWebhookThatFailsThenRecoversGetsTheEvent(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		if len(bodies) < 3 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	hook := &Webhook{Hook: workflows.Webhook{URL: srv.URL + "/hook", Format: workflows.WebhookJSON}, Client: srv.Client()}
	clock := &fakeSleep{}
	s := &Sender{Sinks: []Sink{hook}, Timeout: 10 * time.Second, Sleep: clock.Sleep}
	ev := LimitResumed(testRun, testNow, "1.1", "dev", "claude")
	got := s.SendNow(context.Background(), ev)
	if len(got) != 1 || !got[0].OK || got[0].Tries != 3 || len(clock.waits) != 2 {
		t.Fatalf("outcome %+v, waits %v", got, clock.waits)
	}
	var last Event
	if len(bodies) != 3 || json.Unmarshal([]byte(bodies[2]), &last) != nil || last != ev {
		t.Fatalf("the server got %q", bodies)
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
