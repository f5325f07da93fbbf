package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/workflows"
)

// remoteSnapshot is the fixture run with story 1.2 working on the ssh host
// gpu1: its child is in the host's tmux, listed from the run's state.
func remoteSnapshot() Snapshot {
	st := fixtureState(4)
	st.Units[0].Host = workflows.LocalHost
	st.Units[1].Host = "gpu1"
	snap := snapshotOf(st)
	snap.Status.Sessions = nil
	snap.Remote = remoteSessions(&snap)
	return snap
}

// The live view of a child on an ssh host is that host's `session
// capture`, over one kept connection: refreshing it runs the capture again
// and logs in no more.
func TestLiveViewReadsARemoteChildOverTheHostsConnection(t *testing.T) {
	root := remotePolicyRoot(t)
	screens, gone := 0, false
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		op := hoststest.Op(argv)
		switch {
		case op == "check":
			return hoststest.Reply{Exit: 255, Stderr: "Control socket connect: No such file or directory"}
		case op == "master":
			return hoststest.Reply{}
		case strings.Contains(op, "session capture sa-demo-1-2-dev-2") && gone:
			return hoststest.Reply{Exit: 1, Stdout: `{"ok":false,"error":"session_not_found","message":"no session sa-demo-1-2-dev-2"}`}
		case strings.Contains(op, "session capture sa-demo-1-2-dev-2") && strings.Contains(op, "--colors"):
			screens++
			return hoststest.Reply{Stdout: `{"ok":true,"session":"sa-demo-1-2-dev-2","source":"pane","text":"screen ` + strings.Repeat("#", screens) + ` of the host\n"}`}
		}
		t.Errorf("unexpected ssh call %q", argv)
		return hoststest.Reply{Exit: 1}
	}}
	src := fixedSource()
	src.Root = root
	src.Hosts = &remotesession.Pool{Root: root, Getenv: src.Getenv, Exec: fake}
	m := New(src, Controls{}, false).WithSnapshot(remoteSnapshot(), 80, 24)
	m.view = viewLive
	for want := 1; want <= 3; want++ {
		next, _ := m.Update(m.capture()())
		m = next.(Model)
		frame := ansi.Strip(m.Render())
		if !strings.Contains(frame, "screen "+strings.Repeat("#", want)+" of the host") || !strings.Contains(frame, "on gpu1") {
			t.Fatalf("refresh %d: the frame does not show the host's screen:\n%s", want, frame)
		}
	}
	masters := 0
	for _, c := range fake.Calls() {
		if hoststest.Op(c) == "master" {
			masters++
		}
	}
	if masters != 1 || screens != 3 {
		t.Fatalf("3 refreshes made %d connections and %d captures, want 1 and 3: %q", masters, screens, fake.Calls())
	}
	// A session the host no longer has: its own word for it.
	gone = true
	next, _ := m.Update(m.capture()())
	if frame := ansi.Strip(next.(Model).Render()); !strings.Contains(frame, "on host gpu1: no session sa-demo") {
		t.Fatalf("the host's refusal is not shown:\n%s", frame)
	}
}

// A dashboard that reaches no host says so in the live view, not a blank.
func TestLiveViewWithoutHostsSaysWhy(t *testing.T) {
	m := New(fixedSource(), Controls{}, false).WithSnapshot(remoteSnapshot(), 80, 24)
	m.view = viewLive
	next, _ := m.Update(m.capture()())
	if frame := next.(Model).Render(); !strings.Contains(frame, "on an ssh host, not reached") {
		t.Fatalf("the frame does not say why the screen is missing:\n%s", frame)
	}
}

// Find names the host, run and story of a remote child, and nothing for a local one.
func TestFindTellsRemoteFromLocal(t *testing.T) {
	st := remoteSnapshot().State
	if w, ok := remotesession.Find(st, "sa-demo-1-2-dev-2"); !ok || w.Host != "gpu1" || w.Story != "1-2" || w.Run != st.RunID {
		t.Fatalf("remote child: %+v %v", w, ok)
	}
	st.Units[1].Host = workflows.LocalHost
	if _, ok := remotesession.Find(st, "sa-demo-1-2-dev-2"); ok {
		t.Fatal("a local child was taken for a remote one")
	}
}

// `a` on a child of an ssh host attaches through the host: its own
// `session attach` in the story's clone, with a terminal (ssh -t), over the
// pool's connection.
func TestAttachToARemoteChildGoesThroughTheHost(t *testing.T) {
	root := remotePolicyRoot(t)
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		if op := hoststest.Op(argv); op == "check" {
			return hoststest.Reply{Exit: 255, Stderr: "Control socket connect: No such file or directory"}
		}
		return hoststest.Reply{}
	}}
	src := fixedSource()
	src.Root = root
	src.Hosts = &remotesession.Pool{Root: root, Getenv: src.Getenv, Exec: fake}
	m := New(src, Controls{}, false).WithSnapshot(remoteSnapshot(), 80, 24)
	next, cmd := m.key(keyPress("a"))
	if got := next.(Model).note.text; cmd == nil || !strings.Contains(got, "on gpu1") {
		t.Fatalf("note %q, command %v", got, cmd)
	}
	if msg, ok := cmd().(handOver); !ok || msg.cmd == nil {
		t.Fatalf("attach gave %#v, want the terminal handed over", msg)
	}
	w := next.(Model).snap.Remote["sa-demo-1-2-dev-2"]
	argv, err := src.Hosts.AttachArgv(t.Context(), w, "sa-demo-1-2-dev-2")
	line := strings.Join(argv, " ")
	if err != nil || !strings.Contains(line, " -t -- me@gpu1.example ") || !strings.Contains(line, "session attach sa-demo-1-2-dev-2") ||
		!strings.Contains(line, w.Run) {
		t.Fatalf("attach argv %q, %v", argv, err)
	}
	// Without a way to the host, the dashboard says so.
	m = New(fixedSource(), Controls{}, false).WithSnapshot(remoteSnapshot(), 80, 24)
	_, cmd = m.key(keyPress("a"))
	if msg, ok := cmd().(noteMsg); !ok || msg.err == nil {
		t.Fatalf("attach with no hosts: %#v", msg)
	}
}

// remotePolicyRoot is a project whose workflow.yaml names the host gpu1.
func remotePolicyRoot(t *testing.T) string {
	root := t.TempDir()
	policy := "hosts:\n  - name: gpu1\n    ssh: me@gpu1.example\n    dir: /srv/sa\n"
	if err := os.MkdirAll(filepath.Join(root, workflows.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}
