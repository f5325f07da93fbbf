package tmux

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func fakeClient(socket string, h func(FakeCall) FakeResult) (*Client, *FakeExecutor) {
	fx := &FakeExecutor{Handle: h}
	return &Client{Exec: fx, Socket: socket}, fx
}

func TestNewSessionArgvIsExactAndPrefixedWithSocket(t *testing.T) {
	c, fx := fakeClient("sock1", func(FakeCall) FakeResult { return FakeResult{Stdout: "%7\n"} })
	pane, err := c.NewSession(context.Background(), NewSessionSpec{
		Name: "sa-p-1a2b-e1-s1-2-dev-x9z0", Width: 200, Height: 50,
		Argv: []string{"/bin/story-automator", "session-runner", "--state-dir", "/tmp/s", "sa-p-1a2b-e1-s1-2-dev-x9z0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if pane != "%7" {
		t.Fatalf("pane id %q", pane)
	}
	want := []string{"-L", "sock1", "new-session", "-d", "-s", "sa-p-1a2b-e1-s1-2-dev-x9z0", "-P", "-F", "#{pane_id}",
		"-x", "200", "-y", "50", "--", "/bin/story-automator", "session-runner", "--state-dir", "/tmp/s", "sa-p-1a2b-e1-s1-2-dev-x9z0"}
	if got := fx.Calls()[0].Args; !reflect.DeepEqual(got, want) {
		t.Fatalf("argv\n got %q\nwant %q", got, want)
	}
}

func TestNoSocketMeansNoDashL(t *testing.T) {
	c, fx := fakeClient("", nil)
	if err := c.KillSession(context.Background(), "abc"); err != nil {
		t.Fatal(err)
	}
	want := []string{"kill-session", "-t", "=abc"}
	if got := fx.Calls()[0].Args; !reflect.DeepEqual(got, want) {
		t.Fatalf("argv %q, want %q", got, want)
	}
}

func TestTargetsAreExact(t *testing.T) {
	c, fx := fakeClient("s", func(FakeCall) FakeResult { return FakeResult{Stdout: "a\nb\n"} })
	ctx := context.Background()
	if _, err := c.CapturePane(ctx, "name1", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HasSession(ctx, "name1"); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKey(ctx, "name1", "Enter"); err != nil {
		t.Fatal(err)
	}
	calls := fx.Calls()
	wants := [][]string{
		{"-L", "s", "capture-pane", "-p", "-J", "-t", "=name1:"},
		{"-L", "s", "has-session", "-t", "=name1"},
		{"-L", "s", "send-keys", "-t", "=name1:", "Enter"},
	}
	for i, w := range wants {
		if !reflect.DeepEqual(calls[i].Args, w) {
			t.Errorf("call %d: %q, want %q", i, calls[i].Args, w)
		}
	}
}

func TestPasteSendsTextOnStdinNeverInArgv(t *testing.T) {
	text := "rm -rf /; echo $(whoami) `id` \"q\" 'x'\nsecond line;"
	c, fx := fakeClient("s", nil)
	if err := c.Paste(context.Background(), "n", "sa-send-ab12", text); err != nil {
		t.Fatal(err)
	}
	calls := fx.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if !reflect.DeepEqual(calls[0].Args, []string{"-L", "s", "load-buffer", "-b", "sa-send-ab12", "-"}) || calls[0].Stdin != text {
		t.Fatalf("load-buffer call %+v", calls[0])
	}
	if !reflect.DeepEqual(calls[1].Args, []string{"-L", "s", "paste-buffer", "-d", "-p", "-b", "sa-send-ab12", "-t", "=n:"}) {
		t.Fatalf("paste-buffer call %q", calls[1].Args)
	}
	for _, call := range calls {
		for _, a := range call.Args {
			if strings.Contains(a, "whoami") {
				t.Fatalf("user text leaked into argv: %q", call.Args)
			}
		}
	}
}

func TestUnsafeArgumentsNeverReachTmux(t *testing.T) {
	c, fx := fakeClient("s", nil)
	ctx := context.Background()
	_, err := c.NewSession(ctx, NewSessionSpec{Name: "ok", Argv: []string{"/bin/prog", "arg;"}})
	if !errors.Is(err, ErrUnsafeArgument) {
		t.Fatalf("trailing ';' accepted: %v", err)
	}
	if err := c.KillSession(ctx, "bad;name"); !errors.Is(err, ErrUnsafeArgument) {
		t.Fatalf("bad name accepted: %v", err)
	}
	if err := c.SendKey(ctx, "ok", "echo hi"); !errors.Is(err, ErrUnsafeArgument) {
		t.Fatalf("free text accepted as a key: %v", err)
	}
	bad := &Client{Exec: fx, Socket: "-x"}
	if err := bad.KillServer(ctx); !errors.Is(err, ErrUnsafeArgument) {
		t.Fatalf("socket starting with '-' accepted: %v", err)
	}
	if n := len(fx.Calls()); n != 0 {
		t.Fatalf("tmux was called %d times", n)
	}
}

func TestErrorsAreClassifiedFromStderr(t *testing.T) {
	cases := []struct {
		stderr string
		want   error
		code   string
	}{
		{"no server running on /tmp/tmux-0/x\n", ErrNoServer, "tmux_no_server"},
		{"error connecting to /tmp/tmux-0/x (No such file or directory)\n", ErrNoServer, "tmux_no_server"},
		{"can't find session: abc\n", ErrNoSession, "session_not_found"},
		{"no sessions\n", ErrNoSession, "session_not_found"},
		{"can't find pane: %9\n", ErrNoSession, "session_not_found"},
		{"no current target\n", ErrNoSession, "session_not_found"},
		{"duplicate session: abc\n", ErrDuplicateSession, "session_exists"},
		{"open terminal failed: not a terminal\n", ErrNoTerminal, "not_a_terminal"},
	}
	for _, tc := range cases {
		c, _ := fakeClient("s", func(FakeCall) FakeResult { return FakeResult{Stderr: tc.stderr, Exit: 1} })
		err := c.KillSession(context.Background(), "abc")
		if !errors.Is(err, tc.want) || Code(err) != tc.code {
			t.Errorf("%q: got %v (%s), want %v", tc.stderr, err, Code(err), tc.want)
		}
	}
}

// A prompt-like word in argv must not change the classification: only stderr counts.
func TestClassificationIgnoresArgv(t *testing.T) {
	c, _ := fakeClient("no server running on", func(FakeCall) FakeResult { return FakeResult{Stderr: "unknown failure", Exit: 1} })
	err := c.KillSession(context.Background(), "abc")
	if errors.Is(err, ErrNoServer) || Code(err) != "tmux_failed" {
		t.Fatalf("classified from argv: %v", err)
	}
}

func TestHasSessionWithoutServerIsFalse(t *testing.T) {
	c, _ := fakeClient("s", func(FakeCall) FakeResult {
		return FakeResult{Stderr: "no server running on /tmp/tmux-0/s", Exit: 1}
	})
	ok, err := c.HasSession(context.Background(), "abc")
	if err != nil || ok {
		t.Fatalf("got %v %v", ok, err)
	}
	panes, err := c.ListPanes(context.Background())
	if err != nil || len(panes) != 0 {
		t.Fatalf("list without server: %v %v", panes, err)
	}
}

func TestMissingAndOldTmux(t *testing.T) {
	c, _ := fakeClient("", func(FakeCall) FakeResult { return FakeResult{NotInstalled: true} })
	if err := c.CheckVersion(context.Background()); !errors.Is(err, ErrNotInstalled) || Code(err) != "tmux_not_installed" {
		t.Fatalf("missing tmux: %v", err)
	}
	c, _ = fakeClient("", func(FakeCall) FakeResult { return FakeResult{Stdout: "tmux 2.9a\n"} })
	if err := c.CheckVersion(context.Background()); !errors.Is(err, ErrTooOld) || !strings.Contains(err.Error(), "2.9a") {
		t.Fatalf("old tmux: %v", err)
	}
	c, _ = fakeClient("", func(FakeCall) FakeResult { return FakeResult{Stdout: "tmux 3.0\n"} })
	if err := c.CheckVersion(context.Background()); err != nil {
		t.Fatalf("3.0 refused: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"tmux 3.3a\n":    {3, 3, "tmux 3.3a"},
		"tmux next-3.5":  {3, 5, "tmux next-3.5"},
		"tmux 2.8":       {2, 8, "tmux 2.8"},
		"tmux master":    {99, 0, "tmux master"},
		"tmux openbsd-7": {99, 0, "tmux openbsd-7"},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	if _, err := ParseVersion("screen 4.0"); err == nil {
		t.Error("non-tmux output accepted")
	}
}

func TestListPanesParsesFormat(t *testing.T) {
	c, fx := fakeClient("s", func(FakeCall) FakeResult {
		return FakeResult{Stdout: "sa-a\t%1\t100\t0\t1700000000\t1\nother\t%2\t200\t1\t1700000001\t0\n"}
	})
	panes, err := c.ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Pane{
		{Session: "sa-a", PaneID: "%1", PanePid: 100, Created: 1700000000, Attached: 1},
		{Session: "other", PaneID: "%2", PanePid: 200, Dead: true, Created: 1700000001},
	}
	if !reflect.DeepEqual(panes, want) {
		t.Fatalf("%+v", panes)
	}
	if got := fx.Calls()[0].Args; !reflect.DeepEqual(got, []string{"-L", "s", "list-panes", "-a", "-F", paneFormat}) {
		t.Fatalf("argv %q", got)
	}
}

func TestCaptureLinesKeepsTheTail(t *testing.T) {
	c, fx := fakeClient("s", func(FakeCall) FakeResult { return FakeResult{Stdout: "1\n2\n3\n4\n\n\n"} })
	out, err := c.CapturePane(context.Background(), "n", 2)
	if err != nil || out != "3\n4\n" {
		t.Fatalf("%q %v", out, err)
	}
	if got := fx.Calls()[0].Args; !reflect.DeepEqual(got, []string{"-L", "s", "capture-pane", "-p", "-J", "-t", "=n:", "-S", "-2"}) {
		t.Fatalf("argv %q", got)
	}
}

func TestAttachIsInteractiveAndUnnested(t *testing.T) {
	c, fx := fakeClient("s", nil)
	if err := c.Attach(context.Background(), "n", &Terminal{}); err != nil {
		t.Fatal(err)
	}
	call := fx.Calls()[0]
	if !call.Interactive || !reflect.DeepEqual(call.Args, []string{"-L", "s", "attach-session", "-t", "=n"}) {
		t.Fatalf("%+v", call)
	}
}

func TestListPanesOfAnExitingServerIsEmpty(t *testing.T) {
	for _, stderr := range []string{"no current target", "no server running on /tmp/tmux-0/s"} {
		c, _ := fakeClient("s", func(FakeCall) FakeResult { return FakeResult{Stderr: stderr, Exit: 1} })
		panes, err := c.ListPanes(context.Background())
		if err != nil || len(panes) != 0 {
			t.Fatalf("%q: %v %v", stderr, panes, err)
		}
	}
}

// A run checks tmux's version before each spawn: once it passed, tmux is
// not asked again; a failed check is asked again (tmux may be installed since).
func TestCheckVersionAsksOnceItPassed(t *testing.T) {
	installed := false
	c, fx := fakeClient("", func(FakeCall) FakeResult {
		if !installed {
			return FakeResult{NotInstalled: true}
		}
		return FakeResult{Stdout: "tmux 3.3a\n"}
	})
	if err := c.CheckVersion(context.Background()); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("missing tmux: %v", err)
	}
	installed = true
	for i := 0; i < 3; i++ {
		if err := c.CheckVersion(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fx.Calls()); n != 2 {
		t.Fatalf("tmux -V ran %d times, want 2 (the failed check, then one that passed)", n)
	}
}
