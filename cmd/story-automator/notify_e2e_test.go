package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hookReceiver is a local webhook endpoint that keeps every request it gets
// and answers each with the next status of its script (200 when it runs out).
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []hookRequest
	statuses []int
}

type hookRequest struct {
	Path   string
	Header http.Header
	Body   string
}

func newHookReceiver(t *testing.T, statuses ...int) *hookReceiver {
	r := &hookReceiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, hookRequest{Path: req.URL.Path, Header: req.Header.Clone(), Body: string(body)})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) requests() []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookRequest(nil), r.got...)
}

// notifyProject is a directory whose workflow.yaml is policy.
func notifyProject(t *testing.T, policy string) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".story-automator", "workflow.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runNotifyTest(t *testing.T, dir string, env ...string) (map[string]any, int, string) {
	t.Helper()
	c := exec.Command(builtBinary(t), "notify", "test", "--json")
	c.Env, c.Dir = cleanEnv(append([]string{"PROJECT_ROOT=" + dir, "XDG_STATE_HOME=" + t.TempDir()}, env...)...), dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	code := exitCode(t, c, c.Run())
	return lastJSON(t, out.String(), errb.String()), code, errb.String()
}

func TestE2ENotifyTestReachesEverySinkInItsFormat(t *testing.T) {
	t.Parallel()
	plain, ntfy, slack := newHookReceiver(t), newHookReceiver(t), newHookReceiver(t)
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGV_FILE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := notifyProject(t, `notify:
  desktop: true
  command: "cat > event.json"
  webhook:
    - url: `+plain.URL+`/plain
    - {url: "`+ntfy.URL+`/$TOPIC", format: ntfy, headers: {Authorization: "Bearer $NTFY_TOKEN"}}
    - {url: "`+slack.URL+`/services/x", format: slack}
`)
	res, code, stderr := runNotifyTest(t, dir, "PATH="+bin+":"+os.Getenv("PATH"), "ARGV_FILE="+argv, "TOPIC=runs", "NTFY_TOKEN=tk_e2e")
	if code != 0 || res["ok"] != true {
		t.Fatalf("notify test exited %d: %v\n%s", code, res, stderr)
	}
	sinks := res["sinks"].([]any)
	if len(sinks) != 5 {
		t.Fatalf("sinks %v", sinks)
	}
	// json: the event itself.
	var ev map[string]any
	if got := plain.requests(); len(got) != 1 || got[0].Path != "/plain" || json.Unmarshal([]byte(got[0].Body), &ev) != nil ||
		ev["event"] != "test" || ev["project"] != dir || got[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("json receiver got %+v", got)
	}
	// ntfy: the message as the body, the title in a header, the topic from the environment.
	got := ntfy.requests()
	if len(got) != 1 || got[0].Path != "/runs" || got[0].Body != ev["message"] || got[0].Header.Get("Authorization") != "Bearer tk_e2e" ||
		got[0].Header.Get("Priority") == "" || !strings.Contains(got[0].Header.Get("Tags"), "story-automator") {
		t.Fatalf("ntfy receiver got %+v", got)
	}
	if title, _ := new(mime.WordDecoder).DecodeHeader(got[0].Header.Get("Title")); title != ev["title"] {
		t.Fatalf("ntfy title %q, want %q", title, ev["title"])
	}
	// slack: {"text": …} alone.
	var text map[string]string
	if got := slack.requests(); len(got) != 1 || json.Unmarshal([]byte(got[0].Body), &text) != nil || len(text) != 1 ||
		!strings.Contains(text["text"], ev["title"].(string)) {
		t.Fatalf("slack receiver got %+v", got)
	}
	// command: the same event on stdin; desktop: notify-send with the title and message.
	var cmdEv map[string]any
	if data, err := os.ReadFile(filepath.Join(dir, "event.json")); err != nil || json.Unmarshal(data, &cmdEv) != nil || cmdEv["title"] != ev["title"] {
		t.Fatalf("the command got %s (%v)", data, err)
	}
	if data, _ := os.ReadFile(argv); !strings.Contains(string(data), "--urgency=normal\n--\n"+ev["title"].(string)+"\n") {
		t.Fatalf("notify-send argv %q", data)
	}
}

func TestE2ENotifyTestSaysWhichSinkFailedAndExitsOne(t *testing.T) {
	t.Parallel()
	down := newHookReceiver(t, 500, 500, 500)
	dir := notifyProject(t, "notify:\n  webhook: "+down.URL+"/hook\n  command: \"cat >/dev/null\"\n")
	res, code, _ := runNotifyTest(t, dir)
	if code != 1 || res["error"] != "notify_failed" || res["action"] == "" {
		t.Fatalf("notify test exited %d: %v", code, res)
	}
	sinks := res["sinks"].([]any)
	cmd, hook := sinks[0].(map[string]any), sinks[1].(map[string]any)
	if cmd["ok"] != true || hook["ok"] != false || hook["tries"] != float64(3) || !strings.Contains(hook["error"].(string), "HTTP 500") {
		t.Fatalf("sinks %v", sinks)
	}
	if n := len(down.requests()); n != 3 {
		t.Fatalf("the webhook was tried %d times", n)
	}
	// No sink at all is its own refusal.
	res, code, _ = runNotifyTest(t, notifyProject(t, "version: 1\n"))
	if code != 1 || res["error"] != "notify_not_configured" {
		t.Fatalf("without notify: exited %d: %v", code, res)
	}
}

// addPolicy appends to the sample project's workflow.yaml and commits it.
func (p *runProject) addPolicy(extra string) {
	p.t.Helper()
	path := filepath.Join(p.root, ".story-automator", "workflow.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, []byte(extra)...), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "notify")
}

func TestE2ERunNotifiesItsEndToAWebhook(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t)
	p := newRunProject(t)
	p.addPolicy("notify:\n  webhook: " + hook.URL + "/hook\n")
	res, code := p.run(nil, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	got := hook.requests()
	var ev map[string]any
	if len(got) != 1 || json.Unmarshal([]byte(got[0].Body), &ev) != nil {
		t.Fatalf("the receiver got %+v", got)
	}
	if ev["event"] != "done" || ev["runId"] != res["runId"] || ev["project"] != p.root || !strings.Contains(ev["command"].(string), "runs show") {
		t.Fatalf("done event %v", ev)
	}
	if doc := readFile(t, res["stateFile"].(string)); !strings.Contains(doc, "notified done to webhook 127.0.0.1") {
		t.Fatalf("the action log does not say the notification went out:\n%s", doc)
	}
}

func TestE2EARunWhoseWebhookIsDownEndsDoneAndRecordsTheFailure(t *testing.T) {
	t.Parallel()
	down := newHookReceiver(t, 503, 503, 503)
	p := newRunProject(t)
	p.addPolicy("notify:\n  webhook: " + down.URL + "/hook\n  format: slack\n")
	res, code := p.run(nil, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	if n := len(down.requests()); n != 3 {
		t.Fatalf("the webhook was tried %d times, want 3", n)
	}
	st := p.state()
	var line string
	for _, l := range st.Log {
		if strings.Contains(l.Message, "notification done") {
			line = l.Message
		}
	}
	if !strings.Contains(line, "FAILED after 3 tries") || !strings.Contains(line, "HTTP 503") {
		t.Fatalf("the action log's line on the notification: %q (log %+v)", line, st.Log)
	}
}

func TestE2EAnEscalatedRunNotifiesOnceWithTheCommandThatResumesIt(t *testing.T) {
	t.Parallel()
	hook := newHookReceiver(t)
	p := newRunProject(t)
	p.addPolicy("notify:\n  webhook: " + hook.URL + "/hook\n")
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=review-never@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--max-cycles", "1", "--on-escalation", "pause", "--json"}, fast...)...)
	if code != 1 || res["error"] != "run_escalated" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	got := hook.requests()
	var ev map[string]any
	if len(got) != 1 || json.Unmarshal([]byte(got[0].Body), &ev) != nil {
		t.Fatalf("the receiver got %+v", got)
	}
	if ev["event"] != "escalated" || ev["story"] != "1.1" || ev["step"] != "review" || ev["action"] == "" ||
		!strings.HasSuffix(ev["command"].(string), " run --resume") || !strings.Contains(ev["message"].(string), ev["command"].(string)) {
		t.Fatalf("escalated event %v", ev)
	}
}
