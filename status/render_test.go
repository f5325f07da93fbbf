package status

import (
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

func TestStatusWatchRedrawsInPlace(t *testing.T) {
	got := RedrawFrame("a\nb\n")
	if got != "\x1b[Ha\x1b[K\nb\x1b[K\n\x1b[J" || strings.Contains(got, "\x1b[2J") {
		t.Fatalf("%q", got)
	}
}

// Each story says where it runs: status --json units carry "host" (local
// for a run from before hosts), and the text names a remote host.
func TestStatusNamesEachStorysHost(t *testing.T) {
	st := &orchestrator.State{RunID: "run-1", Status: orchestrator.RunRunning, Units: []*orchestrator.Unit{
		{Key: "1-1", Dotted: "1.1", Kind: orchestrator.KindStory, Status: orchestrator.StatusRunning, Host: "big"},
		{Key: "1-2", Dotted: "1.2", Kind: orchestrator.KindStory, Status: orchestrator.StatusPending},
	}}
	r := RunOf(st, "/p/.story-automator/runs/run-1.md")
	if r.Units[0].Host != "big" || r.Units[1].Host != "local" {
		t.Fatalf("hosts %q %q", r.Units[0].Host, r.Units[1].Host)
	}
	var b strings.Builder
	WriteText(&b, View{Run: r}, time.Now())
	if !strings.Contains(b.String(), "on host big") || strings.Contains(b.String(), "on host local") {
		t.Fatalf("status text:\n%s", b.String())
	}
}
