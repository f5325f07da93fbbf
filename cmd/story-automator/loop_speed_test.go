package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// loopBenchProject is a git repository with one commit and a loop started in it.
func loopBenchProject(b *testing.B, startArgs ...string) string {
	b.Helper()
	root := b.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "start"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = gitTestEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if len(startArgs) > 0 {
		runQuiet(b, root, startArgs...)
	}
	return root
}

func ownerStopInput(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "owner", "hook_event_name": "Stop", "stop_hook_active": true,
		"transcript_path": "/nonexistent.jsonl", "last_assistant_message": msg})
	return b
}

// BenchmarkLoopHookProcess measures the built binary's wall time per stop-hook
// call in loop mode, without an advisor (issue 5: median ≤ 5 ms).
func BenchmarkLoopHookProcess(b *testing.B) {
	progress := "Fixed TestParseQuoted in internal/parser: the lexer now keeps escaped quotes. 41 passed, 2 failed. Next, I will look at the two failures in cmd/."
	start := []string{"loop", "start", "Make every test pass.", "--max-iterations", "1000", "--owner-session", "owner", "--completion-promise", "ALL GREEN"}
	// A cap above the calls between heartbeats keeps every call a block.
	cases := []struct {
		name     string
		strategy string
		msg      string
	}{
		{"continue", "", progress},
		{"continue-auto-analyzer", "auto", progress},
		{"continue-circuit-breaker-git", "circuit_breaker", progress},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			args := start
			if tc.strategy != "" {
				args = append(append([]string{}, start...), "--exit-strategy", tc.strategy)
			}
			root := loopBenchProject(b, args...)
			env := cleanEnv("PROJECT_ROOT="+root, "STORY_AUTOMATOR_MAX_STOP_BLOCKS=100")
			setup := func(i int) {
				if i%90 == 0 {
					runQuiet(b, root, "marker", "heartbeat")
				}
				if tc.strategy == "circuit_breaker" {
					// An edit every iteration is progress, so the strategy never pauses the loop.
					if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(fmt.Sprintf("package main\n// %d\n", i)), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			measureProcess(b, hookCalls, setup, []string{"stop-hook"}, env, ownerStopInput(tc.msg)).report(b)
		})
	}
	b.Run("promise-complete", func(b *testing.B) {
		root := loopBenchProject(b)
		env := cleanEnv("PROJECT_ROOT=" + root)
		restart := func(int) { runQuiet(b, root, append(append([]string{}, start...), "--replace")...) }
		measureProcess(b, hookCalls/3, restart, []string{"stop-hook"}, env, ownerStopInput("Done.\n<promise>ALL GREEN</promise>")).report(b)
	})
	b.Run("transcript-fallback-5MB", func(b *testing.B) {
		root := loopBenchProject(b, start...)
		transcript := filepath.Join(root, "t.jsonl")
		writeBenchTranscript(b, transcript, 5<<20)
		in, _ := json.Marshal(map[string]any{"session_id": "owner", "hook_event_name": "Stop", "stop_hook_active": true, "transcript_path": transcript})
		env := cleanEnv("PROJECT_ROOT="+root, "STORY_AUTOMATOR_MAX_STOP_BLOCKS=100")
		heartbeat := func(i int) {
			if i%90 == 0 {
				runQuiet(b, root, "marker", "heartbeat")
			}
		}
		measureProcess(b, hookCalls, heartbeat, []string{"stop-hook"}, env, in).report(b)
	})
}

// writeBenchTranscript writes a Claude Code style transcript of about size
// bytes, streaming it so the benchmark process itself stays small (a child's
// peak RSS on Linux includes its parent's at fork time).
func writeBenchTranscript(b *testing.B, path string, size int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	result := strings.Repeat("ok  \tpkg\t0.01s\n", 40)
	for i := 0; w.Size() > 0; i++ {
		if fi, _ := f.Stat(); fi != nil && fi.Size()+int64(w.Buffered()) >= int64(size) {
			break
		}
		if err := enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprint(i), "content": result}}}}); err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(map[string]any{"type": "assistant", "message": map[string]any{"id": fmt.Sprint("m", i), "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprint("Working on step ", i)}}}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
}
