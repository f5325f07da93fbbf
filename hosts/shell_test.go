package hosts_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/workflows"
)

// A line's words come back from a shell as they went in, whatever they hold.
func TestLineQuotesEachWordForTheShell(t *testing.T) {
	args := []string{"/srv/my sa/bin/story-automator", "--project-root", "it's $HOME", "`x`;rm -rf /", "", "a\nb"}
	got, err := shellword.Split(hosts.Line(args...))
	if err != nil || !slices.Equal(got, args) {
		t.Fatalf("split %q = %q %v", hosts.Line(args...), got, err)
	}
	if q := hosts.Quote("a\x00b"); q != "''" {
		t.Fatalf("a NUL quotes as %q", q)
	}
}

// A script reaches the host as `sh -c SCRIPT`, one quoted word, whatever
// the user's login shell; in a terminal too.
func TestAScriptRunsUnderShOnTheHost(t *testing.T) {
	script := `cd "$HOME" && echo 'hi'; exit 3`
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		if op := hoststest.Op(argv); op == "check" || op == "master" {
			return hoststest.Reply{}
		}
		return hoststest.Reply{Stdout: "hi\n", Exit: 3}
	}}
	h, err := hosts.New(workflows.Host{Name: "box", SSH: "me@box", Dir: "/srv/sa"},
		hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ctl"), Exec: fake})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Script(context.Background(), script, nil)
	var ee *hosts.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || string(res.Stdout) != "hi\n" {
		t.Fatalf("result %+v, err %v", res, err)
	}
	want := "sh -c " + shellword.MustQuote(script)
	calls := fake.Calls()
	if last := hoststest.Op(calls[len(calls)-1]); last != want {
		t.Fatalf("the host ran %q, want %q", last, want)
	}
	argv, err := h.TerminalScript(context.Background(), script)
	if err != nil || argv[len(argv)-1] != want || !slices.Contains(argv, "-t") {
		t.Fatalf("terminal argv %q: %v", argv, err)
	}
}
