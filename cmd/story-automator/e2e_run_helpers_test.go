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
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
	"github.com/story-automator/story-automator/workflows/sample"
)

// runProject is a git-initialised copy of the sample BMAD project whose
// `run` and `status` go through the built binary, a private tmux server and
// the simulated agent.
type runProject struct {
	t      testing.TB
	bin    string
	root   string
	socket string
	simLog string
	// sprintBefore is sprint-status.yaml as committed before any run.
	sprintBefore string
}

func newRunProject(t testing.TB) *runProject {
	t.Helper()
	return newRunProjectAt(t, t.TempDir())
}

// newRunProjectAt writes the sample project into root, an empty folder.
func newRunProjectAt(t testing.TB, root string) *runProject {
	t.Helper()
	socket := tmuxtest.Socket(t)
	p := &runProject{t: t, bin: builtBinary(t), root: root, socket: socket, simLog: filepath.Join(t.TempDir(), "sim.jsonl")}
	t.Cleanup(func() { tmuxtest.Shutdown(socket, filepath.Join(root, ".story-automator", "sessions")) })
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	p.git("init", "-q")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "sample")
	data, err := os.ReadFile(p.sprintPath())
	if err != nil {
		t.Fatal(err)
	}
	p.sprintBefore = string(data)
	return p
}

func (p *runProject) git(args ...string) string {
	p.t.Helper()
	c := exec.Command("git", append([]string{"-C", p.root}, args...)...)
	c.Env = cleanEnv("GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := c.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *runProject) sprintPath() string {
	return filepath.Join(p.root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
}

// cmd is the binary with the project, the private socket and the sim log;
// env adds variables (faults) for this call only.
func (p *runProject) cmd(env []string, args ...string) *exec.Cmd {
	c := exec.Command(p.bin, args...)
	c.Env = cleanEnv(append([]string{"PROJECT_ROOT=" + p.root, "STORY_AUTOMATOR_TMUX_SOCKET=" + p.socket,
		"STORY_AUTOMATOR_SIM_LOG=" + p.simLog}, env...)...)
	c.Dir = p.root
	return c
}

// run runs a command to its end and returns the last JSON line of stdout and the exit code.
func (p *runProject) run(env []string, args ...string) (map[string]any, int) {
	p.t.Helper()
	var out, errb bytes.Buffer
	c := p.cmd(env, args...)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := exitCode(p.t, c, err)
	return lastJSON(p.t, out.String(), errb.String()), code
}

func lastJSON(t testing.TB, out, stderr string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last stdout line is not JSON: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	return res
}

// state loads the newest state document.
func (p *runProject) state() *orchestrator.State {
	p.t.Helper()
	path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
	st, err := orchestrator.LoadState(path)
	if err != nil {
		p.t.Fatalf("state document: %v", err)
	}
	return st
}

func (p *runProject) marker() *marker.Marker {
	m, err := marker.NewStore(p.root, func(string) string { return "" }).Read()
	if err != nil {
		return nil
	}
	return m
}

// storyCommits counts the commits that carry each story's trailer.
func (p *runProject) storyCommits() map[string]int {
	counts := map[string]int{}
	for _, l := range strings.Split(p.git("log", "--format=%B"), "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(l), "Story-Automator-Story: "); ok {
			counts[k]++
		}
	}
	return counts
}

// simLine is one step the simulated agent acted out.
type simLine struct {
	Step, Story, Role, Outcome string
	Attempt, Cycle             int
}

func (p *runProject) simRuns() []simLine {
	p.t.Helper()
	f, err := os.Open(p.simLog)
	if err != nil {
		p.t.Fatalf("sim log: %v", err)
	}
	defer f.Close()
	var out []simLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l simLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			p.t.Fatalf("sim log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// sprintWithStatuses is sprint-status.yaml as committed, with each listed
// key's status replaced: what a run must leave, comments and order intact.
func (p *runProject) sprintWithStatuses(set map[string]string) string {
	lines := strings.Split(p.sprintBefore, "\n")
	for i, l := range lines {
		key, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		status, ok2 := set[key]
		if !ok || !ok2 {
			continue
		}
		old := strings.Fields(rest)[0]
		lines[i] = strings.Replace(l, ": "+old, ": "+status, 1)
	}
	return strings.Join(lines, "\n")
}

// waitFor polls the state document until cond holds (deadline 30s).
func (p *runProject) waitFor(what string, cond func(*orchestrator.State) bool) {
	p.t.Helper()
	path := func() string {
		return orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if f := path(); f != "" {
			if st, err := orchestrator.LoadState(f); err == nil && cond(st) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s", what)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// resumeToOneCommitAStory runs `run --resume` and checks it ends done with
// one commit for each of the sample's stories.
func (p *runProject) resumeToOneCommitAStory() {
	p.t.Helper()
	res, code := p.run(nil, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		p.t.Fatalf("resume exited %d: %v", code, res)
	}
	for _, k := range sample.Stories {
		if n := p.storyCommits()[k]; n != 1 {
			p.t.Fatalf("story %s has %d commits", k, n)
		}
	}
}

// releaseHook lets the hook that waits on the FIFO release go on, if the kill
// left it alive: opening the FIFO for writing returns once the hook has
// opened it to read (it may not have got that far when the kill came). A
// hook the kill took with it never opens it: after a minute that fails the
// test, and opening the FIFO to read ends the wait.
func releaseHook(t *testing.T, release string) {
	t.Helper()
	opened := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(release, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.WriteString("done\n")
			w.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Errorf("release the hook: %v", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("the kill took git's hook with it: nothing opened %s to read", release)
		// Our writer waits in its open: opening to read meets it at once.
		if r, err := os.Open(release); err == nil {
			if err := <-opened; err != nil {
				t.Log(err)
			}
			r.Close()
		}
	}
}
