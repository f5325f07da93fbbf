package agentsim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/stophook"
)

func init() {
	for _, b := range []Behaviour{
		{Name: "finish", Summary: "work for --delay, create --artifact if given, exit 0", Act: actFinish},
		{Name: "fail", Summary: "exit with --exit-code (default 1)", Act: actFail},
		{Name: "hang", Summary: "print that it is working, then never finish", Act: actHang},
		{Name: "silent", Summary: "start, then print nothing and never finish", Act: actSilent},
		{Name: "signal", Summary: "die by --signal (default TERM)", Act: actSignal},
		{Name: "claude-screen", Summary: "draw a Claude Code screen, finish the turn after --delay, idle at the prompt", Act: actClaudeScreen},
		{Name: "late-artifact", Summary: "exit 0 at once; --artifact appears --delay later", Act: actLateArtifact},
		{Name: "write-artifact", Summary: "helper: wait --delay, then create --artifact", Act: actWriteArtifact},
		{Name: "stop-hook", Summary: "finish the turn as Claude Code does: run the Stop hook, then idle; each line typed is another turn", Act: actStopHook},
		{Name: "done-line", Summary: "print the explicit done line, then idle", Act: actDoneLine},
		{Name: "idle", Summary: "print a prompt and record every line typed in --input-file", Act: actIdle},
	} {
		Register(b)
	}
}

func actFinish(ctx context.Context, s *Sim) int {
	fmt.Fprintln(s.Out, "agent-sim: working on the step")
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	if err := writeArtifact(s.Options.Artifact); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: %v\n", err)
		return 1
	}
	fmt.Fprintln(s.Out, "agent-sim: finished")
	return 0
}

func actFail(ctx context.Context, s *Sim) int {
	code := s.Options.ExitCode
	if code == 0 {
		code = 1
	}
	fmt.Fprintf(s.Out, "agent-sim: failing with exit code %d\n", code)
	Sleep(ctx, s.Options.Delay)
	return code
}

func actHang(ctx context.Context, s *Sim) int {
	fmt.Fprintln(s.Out, "agent-sim: working…")
	Forever(ctx)
	return 1
}

func actSilent(ctx context.Context, _ *Sim) int {
	Forever(ctx)
	return 1
}

func actSignal(ctx context.Context, s *Sim) int {
	name := strings.ToUpper(s.Options.Signal)
	if name == "" {
		name = "TERM"
	}
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig := unix.SignalNum(name)
	if sig == 0 {
		fmt.Fprintf(s.Out, "agent-sim: unknown signal %q\n", s.Options.Signal)
		return 2
	}
	fmt.Fprintf(s.Out, "agent-sim: dying by %s\n", name)
	Sleep(ctx, s.Options.Delay)
	_ = syscall.Kill(os.Getpid(), sig)
	Forever(ctx)
	return 1
}

func actLateArtifact(ctx context.Context, s *Sim) int {
	if s.Options.Artifact == "" {
		fmt.Fprintln(s.Out, "agent-sim: late-artifact needs --artifact")
		return 2
	}
	cmd := exec.Command(s.Exe, "agent-sim", "--behaviour", "write-artifact",
		"--artifact", s.Options.Artifact, "--delay", s.Options.Delay.String())
	// The helper must outlive this process and its terminal, and must not
	// overwrite the recorded prompt.
	cmd.Env = append(os.Environ(), EnvPromptFile+"=", EnvBehaviour+"=write-artifact")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: start helper: %v\n", err)
		return 1
	}
	_ = cmd.Process.Release()
	fmt.Fprintln(s.Out, "agent-sim: finished (the artifact is still being written)")
	return 0
}

func actWriteArtifact(ctx context.Context, s *Sim) int {
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	if err := writeArtifact(s.Options.Artifact); err != nil {
		return 1
	}
	return 0
}

func actStopHook(ctx context.Context, s *Sim) int {
	if !stopHookTurn(ctx, s) {
		return 1
	}
	return idleWith(ctx, s, func() { stopHookTurn(ctx, s) })
}

// stopHookTurn works for --delay, writes the artifact and ends the turn by
// running the Stop hook, as Claude Code does; it reports whether it got that far.
func stopHookTurn(ctx context.Context, s *Sim) bool {
	fmt.Fprintln(s.Out, "agent-sim: working on the step")
	if !Sleep(ctx, s.Options.Delay) {
		return false
	}
	if err := writeArtifact(s.Options.Artifact); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: %v\n", err)
		return false
	}
	in, _ := json.Marshal(map[string]any{
		"session_id": fmt.Sprintf("agent-sim-%d", os.Getpid()), "hook_event_name": "Stop",
		"stop_hook_active": false, "last_assistant_message": "The step is done.",
	})
	// The hook a child's settings name (stophook.Program), as Claude Code runs it.
	argv := stophook.Program(s.Exe)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	fmt.Fprintf(s.Out, "agent-sim: turn finished; stop hook said %q (err %v)\n", strings.TrimSpace(string(out)), err)
	return true
}

func actDoneLine(ctx context.Context, s *Sim) int {
	fmt.Fprintln(s.Out, "agent-sim: working on the step")
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	if err := writeArtifact(s.Options.Artifact); err != nil {
		return 1
	}
	fmt.Fprintln(s.Out, sessionstate.DoneLine)
	return idle(ctx, s)
}

func actIdle(ctx context.Context, s *Sim) int {
	fmt.Fprintln(s.Out, "agent-sim: ready")
	return idle(ctx, s)
}

// idle waits at a prompt for the rest of its life, recording typed lines.
func idle(ctx context.Context, s *Sim) int { return idleWith(ctx, s, nil) }

// idleWith is idle that also calls onLine (when set) after each typed line.
func idleWith(ctx context.Context, s *Sim, onLine func()) int {
	if s.In != nil {
		var got strings.Builder
		sc := bufio.NewScanner(s.In)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			got.WriteString(sc.Text() + "\n")
			if s.Options.InputFile != "" {
				_ = atomicfile.Replace(s.Options.InputFile, []byte(got.String()), 0o600)
			}
			if onLine != nil {
				onLine()
			}
		}
	}
	Forever(ctx)
	return 0
}

func writeArtifact(path string) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.Replace(path, []byte("written by agent-sim at "+time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		return fmt.Errorf("write artifact: %w", err)
	}
	return nil
}
