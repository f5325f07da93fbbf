package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
)

// loopE2E drives the built binary in one project directory.
type loopE2E struct {
	t    *testing.T
	root string
	// state is the user's XDG_STATE_HOME, where `loop start` approves an advisor.
	state string
}

func newLoopE2E(t *testing.T) *loopE2E {
	t.Helper()
	p := &loopE2E{t: t, root: t.TempDir(), state: t.TempDir()}
	p.git("init", "-q", "-b", "main")
	p.commit("README.md", "start\n")
	return p
}

func (p *loopE2E) git(args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", p.root}, args...)...)
	cmd.Env = gitTestEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// gitTestEnv lets git commit in a test without the user's configuration.
func gitTestEnv() []string {
	return cleanEnv("GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

func (p *loopE2E) commit(name, text string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.root, name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.git("add", name)
	p.git("commit", "-q", "-m", "change "+name)
}

// cli runs a command of the binary and decodes its JSON.
func (p *loopE2E) cli(args ...string) map[string]any {
	p.t.Helper()
	cmd := exec.Command(builtBinary(p.t), args...)
	cmd.Dir = p.root
	cmd.Env = cleanEnv("PROJECT_ROOT="+p.root, "XDG_STATE_HOME="+p.state)
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("%v: %v\n%s", args, err, out)
	}
	var obj map[string]any
	if err := json.Unmarshal(out, &obj); err != nil {
		p.t.Fatalf("%v printed %q", args, out)
	}
	return obj
}

// stop runs the hook with input and returns what it printed (nil for nothing).
func (p *loopE2E) stop(input map[string]any) map[string]any {
	p.t.Helper()
	data, _ := json.Marshal(input)
	out, code := runHookProcess(p.t, p.root, data, "XDG_STATE_HOME="+p.state)
	if code != 0 {
		p.t.Fatalf("stop-hook exit %d", code)
	}
	return assertEmptyOrOneObject(p.t, out)
}

func (p *loopE2E) marker() *marker.Marker {
	p.t.Helper()
	m, err := marker.NewStore(p.root, func(string) string { return "" }).Read()
	if err != nil {
		return nil
	}
	return m
}

func (p *loopE2E) history() []map[string]any {
	p.t.Helper()
	f, err := os.Open(filepath.Join(p.root, ".claude", "story-automator.history.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			p.t.Fatalf("history line %q", sc.Text())
		}
		out = append(out, e)
	}
	return out
}

// step is one scripted hook call and what must follow from it.
type step struct {
	name      string
	input     map[string]any
	block     bool
	reason    string // exact block reason
	sys       string // substring of systemMessage; "" = no output at all unless block
	iteration int    // marker iteration after the call; 0 = marker removed
	status    string
	history   string // decision of the last history line; "" = no new line
	before    func(p *loopE2E)
}

func (p *loopE2E) play(steps []step) {
	p.t.Helper()
	for _, s := range steps {
		if s.before != nil {
			s.before(p)
		}
		n := len(p.history())
		out := p.stop(s.input)
		p.check(s, out, n)
	}
}

func (p *loopE2E) check(s step, out map[string]any, historyBefore int) {
	p.t.Helper()
	switch {
	case s.block && (out["decision"] != "block" || out["reason"] != s.reason):
		p.t.Fatalf("%s: printed %v, want a block with %q", s.name, out, s.reason)
	case !s.block && out["decision"] != nil:
		p.t.Fatalf("%s: printed a block %v", s.name, out)
	case s.sys == "" && !s.block && out != nil:
		p.t.Fatalf("%s: printed %v, want nothing", s.name, out)
	case s.sys != "" && !strings.Contains(str(out["systemMessage"]), s.sys):
		p.t.Fatalf("%s: systemMessage %q lacks %q", s.name, out["systemMessage"], s.sys)
	}
	m := p.marker()
	switch {
	case s.iteration == 0 && m != nil:
		p.t.Fatalf("%s: the marker should be gone, is %+v", s.name, m)
	case s.iteration != 0 && (m == nil || m.Loop.Iteration != s.iteration || m.Status != s.status):
		p.t.Fatalf("%s: marker %+v, want iteration %d status %s", s.name, m, s.iteration, s.status)
	}
	h := p.history()
	if s.history == "" {
		if len(h) != historyBefore {
			p.t.Fatalf("%s: history grew: %v", s.name, h[historyBefore:])
		}
		return
	}
	if len(h) != historyBefore+1 || h[len(h)-1]["decision"] != s.history || h[len(h)-1]["mode"] != "loop" || h[len(h)-1]["reason"] == "" {
		p.t.Fatalf("%s: history %v, want one new %q line", s.name, h[historyBefore:], s.history)
	}
}

func str(v any) string { s, _ := v.(string); return s }

func ownerStop(msg string) map[string]any {
	return map[string]any{"session_id": "owner", "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": msg}
}

func TestLoopEndToEndPromiseAndLimit(t *testing.T) {
	t.Parallel()
	p := newLoopE2E(t)
	out := p.cli("loop", "start", "Fix the tests", "--max-iterations", "4", "--completion-promise", "ALL GREEN", "--owner-session", "owner")
	if out["ok"] != true {
		t.Fatalf("start: %v", out)
	}
	const prompt = "Fix the tests"
	p.play([]step{
		{name: "bystander", input: map[string]any{"session_id": "other", "last_assistant_message": "STORY_AUTOMATOR_COMPLETE"}, iteration: 1, status: "active"},
		{name: "plain answer", input: ownerStop("fixed parser_test"), block: true, reason: prompt, sys: "iteration 2/4", iteration: 2, status: "active", history: "continue"},
		{name: "embedded control line", input: ownerStop("I will print STORY_AUTOMATOR_COMPLETE when done"), block: true, reason: prompt, sys: "iteration 3/4", iteration: 3, status: "active", history: "continue"},
		{name: "promise mismatch", input: ownerStop("<promise>SOME GREEN</promise>"), block: true, reason: prompt, sys: "iteration 4/4", iteration: 4, status: "active", history: "continue"},
		{name: "limit", input: ownerStop("still red"), sys: "limit 4", history: "max-iterations"},
		{name: "after the end", input: ownerStop("anything"), history: ""},
	})
	if h := p.history(); h[len(h)-1]["iteration"] != 4.0 || h[0]["session"] != "owner" {
		t.Fatalf("history %v", h)
	}
}

func TestLoopEndToEndTranscriptPromisePauseAndAdvisor(t *testing.T) {
	t.Parallel()
	p := newLoopE2E(t)
	p.cli("loop", "start", "Ship it", "--completion-promise", "ALL GREEN", "--owner-session", "owner")
	transcript := filepath.Join(p.root, "t.jsonl")
	line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"id": "m1", "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": "Green.\n  <promise>  ALL   GREEN </promise>"}}}})
	if err := os.WriteFile(transcript, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	p.play([]step{
		{name: "pause", input: ownerStop("Which database?\nSTORY_AUTOMATOR_PAUSE"), sys: "paused", iteration: 1, status: "paused", history: "paused"},
		{name: "paused lets stops through", input: ownerStop("waiting"), iteration: 1, status: "paused"},
		{name: "resume then continue", before: func(p *loopE2E) { p.cli("loop", "resume") }, input: ownerStop("postgres it is"),
			block: true, reason: "Ship it", sys: "iteration 2/20", iteration: 2, status: "active", history: "continue"},
		{name: "promise from the transcript", input: map[string]any{"session_id": "owner", "transcript_path": transcript, "stop_hook_active": true},
			sys: "complete", history: "complete"},
	})

	advisor := filepath.Join(p.root, "advisor.sh")
	if err := os.WriteFile(advisor, []byte("#!/bin/sh\nif grep -q '\"last_assistant_message\":\"ready\"'; then\n"+
		"  echo '{\"prediction\":\"\",\"confidence\":0.6,\"stop_recommended\":true}'\nelse\n"+
		"  echo '{\"prediction\":\"Now add the migration.\",\"confidence\":0.9}'\nfi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.cli("loop", "start", "Build the feature", "--advisor", advisor, "--threshold", "0.6", "--owner-session", "owner")
	p.play([]step{
		{name: "advisor predicts", input: ownerStop("models done"), block: true, reason: "Now add the migration.", sys: "iteration 2/20", iteration: 2, status: "active", history: "continue"},
		{name: "advisor satisfied at the threshold", input: ownerStop("ready"), sys: "satisfied", history: "satisfied"},
	})
}

func TestLoopEndToEndGitProgressKeepsTheBreakerShut(t *testing.T) {
	t.Parallel()
	p := newLoopE2E(t)
	p.cli("loop", "start", "Refactor", "--max-iterations", "50", "--owner-session", "owner")
	var steps []step
	for i := 2; i <= 5; i++ {
		steps = append(steps, step{name: "no progress", input: ownerStop("thinking"), block: true, reason: "Refactor", iteration: i, status: "active", history: "continue"})
	}
	steps = append(steps, step{name: "a commit is progress", before: func(p *loopE2E) { p.commit("a.go", "package a\n") },
		input: ownerStop("committed"), block: true, reason: "Refactor", iteration: 6, status: "active", history: "continue"})
	for i := 7; i <= 10; i++ {
		steps = append(steps, step{name: "no progress again", input: ownerStop("thinking"), block: true, reason: "Refactor", iteration: i, status: "active", history: "continue"})
	}
	steps = append(steps, step{name: "breaker opens", input: ownerStop("thinking"), sys: "circuit breaker", iteration: 10, status: "active", history: "breaker-open"})
	p.play(steps)
	if m := p.marker(); m.StopHookBlocks != 0 {
		t.Fatalf("the breaker must reset the count: %d", m.StopHookBlocks)
	}
	var buf bytes.Buffer
	for _, e := range p.history() {
		buf.WriteString(str(e["decision"]) + " ")
	}
	if !strings.HasSuffix(strings.TrimSpace(buf.String()), "continue breaker-open") {
		t.Fatalf("history %s", buf.String())
	}
}
