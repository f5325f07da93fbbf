package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// Sixteen real processes of the built binary interleave read-modify-writes of
// one marker: owner stop-hook calls (each one adds a block) and heartbeats with
// a story name. With the lock, no update is lost: the final block count
// equals the hook calls made since the last heartbeat the hook saw, and
// every call left a history line and a valid marker.
func TestSixteenBinaryProcessesInterleaveWithoutLosingUpdates(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	root := t.TempDir()
	ownedMarker(t, root)
	env := cleanEnv("PROJECT_ROOT="+root, "STORY_AUTOMATOR_MAX_STOP_BLOCKS=100")
	const hookProcs, beatProcs, each = 8, 8, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lastBeat time.Time
	errs := make(chan error, (hookProcs+beatProcs)*each)
	run := func(stdin string, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, root
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			errs <- fmt.Errorf("%v: %v", args, err)
			return
		}
		if args[0] == "marker" {
			var res struct {
				OK     bool                       `json:"ok"`
				Marker struct{ Heartbeat string } `json:"marker"`
			}
			if json.Unmarshal(out, &res) != nil || !res.OK {
				errs <- fmt.Errorf("heartbeat output %q", out)
				return
			}
			mu.Lock()
			if hb, ok := marker.ParseTime(res.Marker.Heartbeat); ok && hb.After(lastBeat) {
				lastBeat = hb
			}
			mu.Unlock()
		}
	}
	for p := 0; p < hookProcs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				run(`{"session_id":"owner","stop_hook_active":true}`, "stop-hook")
			}
		}()
	}
	for p := 0; p < beatProcs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				run("", "marker", "heartbeat", "--story", fmt.Sprintf("p%d-%d", p, i))
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	m, err := marker.NewStore(root, func(string) string { return "" }).Read()
	if err != nil {
		t.Fatalf("marker invalid after contention: %v", err)
	}
	hist, _ := os.ReadFile(filepath.Join(root, ".claude", "story-automator.history.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(hist)), "\n")
	if len(lines) != hookProcs*each {
		t.Fatalf("history has %d lines, want %d", len(lines), hookProcs*each)
	}
	// Replay: the hook's count after the last hook call must equal the number
	// of hook calls after the last heartbeat it saw change, minus the reset.
	var last struct{ Blocks int }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if m.StopHookBlocks != last.Blocks {
		t.Fatalf("marker blocks %d != last recorded decision %d", m.StopHookBlocks, last.Blocks)
	}
	blocks := 0
	for _, l := range lines {
		var e struct {
			Blocks   int
			Decision string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Decision == "fail-open" {
			// A hook that did not get the lock in time (a loaded machine)
			// allowed its stop and recorded what it had read, unlocked.
			continue
		}
		if e.Blocks != 0 && e.Blocks != blocks+1 {
			t.Fatalf("block count jumped from %d to %d: a hook update was lost", blocks, e.Blocks)
		}
		blocks = e.Blocks
	}
	// Heartbeats are taken under the lock, so the newest one written must be
	// the one on disk: a hook call that rewrote a stale copy would lose it.
	if onDisk, _ := marker.ParseTime(m.Heartbeat); !onDisk.Equal(lastBeat) {
		t.Fatalf("heartbeat on disk %q, newest written %q: a heartbeat was lost", m.Heartbeat, lastBeat)
	}
}
