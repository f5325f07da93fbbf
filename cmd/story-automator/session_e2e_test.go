package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// sessionProject is a scratch project whose commands run the built binary
// against a private tmux server.
type sessionProject struct {
	t           testing.TB
	bin, root   string
	socket      string
	sessionsDir string
}

func newSessionProject(t testing.TB, socket string) *sessionProject {
	t.Helper()
	return newSessionProjectAt(t, socket, t.TempDir())
}

// newSessionProjectAt is newSessionProject in a given project directory.
func newSessionProjectAt(t testing.TB, socket, root string) *sessionProject {
	t.Helper()
	p := &sessionProject{t: t, bin: builtBinary(t), root: root, socket: socket,
		sessionsDir: filepath.Join(root, ".story-automator", "sessions")}
	t.Cleanup(func() { tmuxtest.Shutdown(socket, p.sessionsDir) })
	return p
}

func (p *sessionProject) cmd(env []string, args ...string) *exec.Cmd {
	c := exec.Command(p.bin, args...)
	c.Env = cleanEnv(append([]string{"PROJECT_ROOT=" + p.root, "STORY_AUTOMATOR_TMUX_SOCKET=" + p.socket}, env...)...)
	c.Dir = p.root
	return c
}

func (p *sessionProject) run(env []string, args ...string) (map[string]any, int) {
	p.t.Helper()
	out, err := p.cmd(env, args...).Output()
	var res map[string]any
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		p.t.Fatalf("%v: stdout %q (%v)", args, out, err)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return res, code
}

func (p *sessionProject) spawn(env []string, args ...string) string {
	p.t.Helper()
	res, code := p.run(env, append([]string{"session", "spawn", "--step", "dev", "--story", "1.2"}, args...)...)
	name, _ := res["session"].(string)
	if code != 0 || name == "" || !strings.HasPrefix(res["paneId"].(string), "%") {
		p.t.Fatalf("spawn %v: %d %v", args, code, res)
	}
	return name
}

// waitFile polls for a file's content to satisfy ok (an external condition).
func waitFile(t *testing.T, path string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && ok(string(b)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became as expected (last %q, %v)", path, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitSessionState(t *testing.T, dir, name string, ok func(*sessionstate.State) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := sessionstate.Read(dir, name)
		if err == nil && ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: state never as expected (last %+v, %v)", name, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hostilePrompt() string {
	return "-starts with a dash; \"double\" 'single' $(touch pwned) `touch pwned2` $HOME \\ \\n\n" +
		"\ttabbed line ünïcödé 日本語 🚀\r\nends with a separator;"
}

func TestE2EPromptsArriveByteExact(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	huge := strings.Repeat("The quick brown fox; $(jumps) over `the` \"lazy\" dög.\n", 2000)[:100*1024]
	hugeFile := filepath.Join(t.TempDir(), "huge.txt")
	if err := os.WriteFile(hugeFile, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	got := func(n string) string { return filepath.Join(p.root, n) }
	simEnv := func(file string) []string {
		return []string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_PROMPT_FILE=" + file}
	}
	p.spawn(simEnv(got("sim-hostile")), "--agent", "sim", "--prompt", hostilePrompt())
	p.spawn(simEnv(got("sim-huge")), "--agent", "sim", "--prompt-file", hugeFile)
	p.spawn(nil, "--agent", "custom", "--prompt", hostilePrompt(), "--command", `sh -c 'cat > "$0"' `+got("custom-stdin"))
	p.spawn(nil, "--agent", "custom", "--prompt-file", hugeFile, "--command", "cp {prompt_file} "+got("custom-file"))
	for file, want := range map[string]string{"sim-hostile": hostilePrompt(), "sim-huge": huge,
		"custom-stdin": hostilePrompt(), "custom-file": huge} {
		waitFile(t, got(file), func(s string) bool { return len(s) >= len(want) })
		if b, _ := os.ReadFile(got(file)); string(b) != want {
			t.Errorf("%s: prompt changed on the way (%d bytes, want %d)", file, len(b), len(want))
		}
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(got(f)); err == nil {
			t.Fatalf("a prompt was run by a shell: %s exists", f)
		}
	}
}

func TestE2ESessionCommandsKeepToTheirProject(t *testing.T) {
	t.Parallel()
	socket := tmuxtest.Socket(t)
	a, b := newSessionProject(t, socket), newSessionProject(t, socket)
	idle := []string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=idle"}
	a1, a2 := a.spawn(idle, "--agent", "sim"), a.spawn(idle, "--agent", "sim", "--cycle", "2")
	b1 := b.spawn(idle, "--agent", "sim")
	// A session that is not ours at all.
	if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", "users-own", "sleep 600").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	names := func(res map[string]any) []string {
		var ns []string
		for _, s := range res["sessions"].([]any) {
			ns = append(ns, s.(map[string]any)["session"].(string))
		}
		return ns
	}
	res, _ := a.run(nil, "session", "list", "--project-only")
	if got := names(res); len(got) != 2 || !strings.Contains(strings.Join(got, " "), a1) || !strings.Contains(strings.Join(got, " "), a2) {
		t.Fatalf("project list %v", got)
	}
	res, _ = a.run(nil, "session", "list")
	if got := names(res); len(got) != 3 {
		t.Fatalf("list %v", got)
	}
	res, code := a.run(nil, "session", "kill-all", "--project-only")
	if code != 0 || len(res["killed"].([]any)) != 2 {
		t.Fatalf("kill-all project: %d %v", code, res)
	}
	if res, _ := b.run(nil, "session", "status", b1); res["exists"] != true {
		t.Fatalf("the other project's session was touched: %v", res)
	}
	res, _ = a.run(nil, "session", "kill-all", "--all-projects")
	if k := res["killed"].([]any); len(k) != 1 || k[0] != b1 {
		t.Fatalf("kill-all all: %v", res)
	}
	if err := exec.Command("tmux", "-L", socket, "has-session", "-t", "=users-own").Run(); err != nil {
		t.Fatal("kill-all --all-projects killed a session that is not story-automator's")
	}
}

func TestE2ESessionStatusCaptureSendKill(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	typed := filepath.Join(p.root, "typed.txt")
	name := p.spawn([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=idle", "STORY_AUTOMATOR_SIM_INPUT_FILE=" + typed}, "--agent", "sim")
	waitSessionState(t, p.sessionsDir, name, func(st *sessionstate.State) bool { return st.Lifecycle == sessionstate.LifecycleStarted })
	res, code := p.run(nil, "session", "status", name)
	if code != 0 || res["exists"] != true || res["lifecycle"] != "running" {
		t.Fatalf("status %d %v", code, res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, _ = p.run(nil, "session", "capture", name, "--lines", "20")
		if strings.Contains(res["text"].(string), "agent-sim: ready") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture never showed the prompt: %v", res)
		}
		time.Sleep(20 * time.Millisecond)
	}
	text := `fix it; "now" $(whoami) ünï`
	res, code = p.run(nil, "session", "send", name, "--text", text)
	if code != 0 || res["delivered"] != true || res["enter"] != true {
		t.Fatalf("send %d %v", code, res)
	}
	waitFile(t, typed, func(s string) bool { return s == text+"\n" })
	res, code = p.run(nil, "session", "kill", name)
	if code != 0 || res["killed"] != true {
		t.Fatalf("kill %d %v", code, res)
	}
	waitSessionState(t, p.sessionsDir, name, func(st *sessionstate.State) bool { return st.Lifecycle == "killed" })
	res, code = p.run(nil, "session", "status", name)
	if code != 0 || res["exists"] != false || res["lifecycle"] != "killed" {
		t.Fatalf("status after kill %d %v", code, res)
	}
	res, code = p.run(nil, "session", "capture", name)
	if code != 0 || res["source"] != "outputFile" || !strings.Contains(res["text"].(string), "agent-sim: ready") {
		t.Fatalf("capture after kill %d %v", code, res)
	}
	if res, code = p.run(nil, "session", "kill", name); code != 1 || res["error"] != "session_not_found" {
		t.Fatalf("kill twice %d %v", code, res)
	}
	if res, code = p.run(nil, "session", "status", "sa-never-was"); code != 1 || res["error"] != "session_not_found" {
		t.Fatalf("status of nothing %d %v", code, res)
	}
}

func TestE2EAttachWithoutATerminalFailsCleanly(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	name := p.spawn([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=idle"}, "--agent", "sim")
	res, code := p.run(nil, "session", "attach", name)
	if code != 1 || res["error"] != "not_a_terminal" {
		t.Fatalf("attach %d %v", code, res)
	}
}

func TestE2ESendToAPaneThatIgnoresInputIsUnverified(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	// The agent shows the very text that will be sent, then turns its
	// terminal's echo off and never reads: the paste changes nothing on screen.
	name := p.spawn(nil, "--agent", "custom", "--prompt", "agent",
		"--command", `sh -c 'stty -echo; echo "please fix the bug"; exec sleep 600' {prompt}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, _ := p.run(nil, "session", "capture", name)
		if strings.Contains(res["text"].(string), "please fix the bug") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never showed its text: %v", res)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, code := p.run(nil, "session", "send", name, "--text", "please fix the bug")
	if code != 1 || res["error"] != "send_unverified" {
		t.Fatalf("send %d %v", code, res)
	}
	if st, err := sessionstate.Read(p.sessionsDir, name); err != nil || st.SendBaseline != nil {
		t.Fatalf("an unverified send moved the baseline: %+v %v", st, err)
	}
}

// A project whose directory is named "<slug>-<hash4>" of another project has
// session names that start with that project's whole prefix.
func TestE2EProjectOnlyIsNotFooledByASharedNamePrefix(t *testing.T) {
	t.Parallel()
	socket := tmuxtest.Socket(t)
	base := t.TempDir()
	shopRoot := filepath.Join(base, "shop")
	twinRoot := filepath.Join(base, "shop-"+child.ProjectHash(shopRoot))
	for _, d := range []string{shopRoot, twinRoot} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shop, twin := newSessionProjectAt(t, socket, shopRoot), newSessionProjectAt(t, socket, twinRoot)
	idle := []string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=idle"}
	mine, theirs := shop.spawn(idle, "--agent", "sim"), twin.spawn(idle, "--agent", "sim")
	if !strings.HasPrefix(theirs, child.ProjectPrefix(shopRoot)) {
		t.Fatalf("the test's premise is wrong: %s does not start with %s", theirs, child.ProjectPrefix(shopRoot))
	}
	// A session with this project's prefix but no state file here is not counted as this project's.
	stateless := child.ProjectPrefix(shopRoot) + "e1-s9-dev-none"
	if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", stateless, "sleep 600").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	res, _ := shop.run(nil, "session", "list", "--project-only")
	if got := res["sessions"].([]any); len(got) != 1 || got[0].(map[string]any)["session"] != mine {
		t.Fatalf("project list %v", got)
	}
	res, code := shop.run(nil, "session", "kill-all", "--project-only")
	if k := res["killed"].([]any); code != 0 || len(k) != 1 || k[0] != mine {
		t.Fatalf("kill-all --project-only: %d %v", code, res)
	}
	if res, _ := twin.run(nil, "session", "status", theirs); res["exists"] != true {
		t.Fatalf("the other project's session was killed: %v", res)
	}
	res, _ = shop.run(nil, "session", "kill-all", "--all-projects")
	if k := res["killed"].([]any); len(k) != 2 || (k[0] != stateless && k[1] != stateless) {
		t.Fatalf("kill-all --all-projects: %v", res)
	}
}
