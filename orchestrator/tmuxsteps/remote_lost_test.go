package tmuxsteps

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/workflows"
)

// flakyHost is a Remote whose host answers a connection only when up
// says so; killed hears each `session kill` of the lost child.
func flakyHost(t *testing.T, up func(op string) bool, killed chan<- struct{}) (*Remote, *hoststest.Executor) {
	t.Helper()
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		op := hoststest.Op(argv)
		switch {
		case (op == "check" || op == "master") && !up(op):
			return hoststest.Reply{Exit: 255, Stderr: "ssh: connect to host box port 22: Connection refused"}
		case op == "check" || op == "master":
			return hoststest.Reply{}
		case strings.Contains(op, "session kill sa-lost-1"):
			if killed != nil {
				killed <- struct{}{}
			}
			return hoststest.Reply{Stdout: `{"ok":true}`}
		}
		t.Errorf("unexpected ssh call %q", argv)
		return hoststest.Reply{Exit: 1}
	}}
	h, err := hosts.New(workflows.Host{Name: "box", SSH: "me@box", Dir: "/srv/sa"}, hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ssh"), Exec: fake})
	if err != nil {
		t.Fatal(err)
	}
	return NewRemote(&Runner{}, h, "proj-12345678", nil), fake
}

func kills(fake *hoststest.Executor) int {
	n := 0
	for _, c := range fake.Calls() {
		if strings.Contains(hoststest.Op(c), "session kill sa-lost-1") {
			n++
		}
	}
	return n
}

// A child left on a lost host is ended once the host answers again, and
// tried no more after that; while the host is down it stays on the list.
func TestALostHostsChildIsEndedWhenItAnswersAgain(t *testing.T) {
	var up atomic.Bool
	r, fake := flakyHost(t, func(string) bool { return up.Load() }, nil)
	r.reaping = true // this test tries by hand, no background reaper
	r.abandon("run-1", "/srv/sa/worktrees/p/run-1/1-1", "sa-lost-1")
	if left := r.endLost(context.Background(), time.Minute); left != 1 || kills(fake) != 0 {
		t.Fatalf("host down: %d left, %d kills; want 1 and 0", left, kills(fake))
	}
	up.Store(true)
	if left := r.EndLost(context.Background()); len(left) != 0 || kills(fake) != 1 {
		t.Fatalf("host back: left %v, %d kills; want none and 1", left, kills(fake))
	}
	if left := r.endLost(context.Background(), time.Minute); left != 0 || kills(fake) != 1 || r.reaping {
		t.Fatalf("after the kill: %d left, %d kills, reaping %v", left, kills(fake), r.reaping)
	}
}

// The background reaper keeps trying the host and ends the child as soon
// as it answers, with no call from the run.
func TestTheReaperEndsALostChildWhenTheHostComesBack(t *testing.T) {
	// Down for the first two connections the reaper tries, then back.
	var tries atomic.Int32
	killed := make(chan struct{}, 1)
	r, fake := flakyHost(t, func(op string) bool { return op == "master" && tries.Add(1) > 2 }, killed)
	r.ReapEvery = 5 * time.Millisecond
	r.abandon("run-1", "/srv/sa/worktrees/p/run-1/1-1", "sa-lost-1")
	select {
	case <-killed:
	case <-time.After(30 * time.Second):
		t.Fatalf("the child was not ended once the host answered: %q", fake.Calls())
	}
	if n := tries.Load(); n < 3 {
		t.Fatalf("the child was ended after %d connection tries, while the host was still down", n)
	}
}
