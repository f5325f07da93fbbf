package shellcmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunExitStatus(t *testing.T) {
	ctx := context.Background()
	if r := Run(ctx, Command{Script: "exit 0"}); r.Err != nil || r.CtxErr != nil {
		t.Fatalf("exit 0: %+v", r)
	}
	r := Run(ctx, Command{Script: "exit 3"})
	var ee *exec.ExitError
	if !errors.As(r.Err, &ee) || ee.ExitCode() != 3 || r.CtxErr != nil {
		t.Fatalf("exit 3: %+v", r)
	}
	r = Run(ctx, Command{Shell: filepath.Join(t.TempDir(), "no-such-shell"), Script: "true"})
	if r.Err == nil || errors.As(r.Err, &ee) {
		t.Fatalf("a missing shell must fail to start: %+v", r)
	}
}

func TestRunDirEnvStdinAndOutput(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	r := Run(context.Background(), Command{
		Script: `printf '%s|%s|' "$(pwd)" "$SHELLCMD_TEST"; cat; echo oops >&2`,
		Dir:    dir, Env: append(os.Environ(), "SHELLCMD_TEST=set"),
		Stdin: strings.NewReader("from stdin"), Stdout: &out, Stderr: &errOut,
	})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if got := out.String(); got != dir+"|set|from stdin" && got != real+"|set|from stdin" {
		t.Errorf("stdout %q", got)
	}
	if errOut.String() != "oops\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestRunTimeoutKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleeper.pid")
	r := Run(context.Background(), Command{Script: "sleep 30 & echo $! > " + pidFile + "; wait", Timeout: 300 * time.Millisecond})
	if !errors.Is(r.CtxErr, context.DeadlineExceeded) || r.Err == nil {
		t.Fatalf("result %+v", r)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(10 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %s outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Run(ctx, Command{Script: "sleep 30", Timeout: time.Minute})
	if !errors.Is(r.CtxErr, context.Canceled) || r.Err == nil {
		t.Fatalf("result %+v", r)
	}
}

func TestCappedBuffer(t *testing.T) {
	out := &CappedBuffer{Limit: 1000}
	r := Run(context.Background(), Command{Script: `head -c 200000 /dev/zero | tr '\0' x`, Stdout: out})
	if r.Err != nil {
		t.Fatalf("a full buffer must not fail the command: %v", r.Err)
	}
	if !out.Over() || len(out.Bytes()) != 1000 {
		t.Fatalf("over %v, kept %d bytes", out.Over(), len(out.Bytes()))
	}
	small := &CappedBuffer{Limit: 10}
	if n, err := small.Write([]byte("0123456789")); n != 10 || err != nil {
		t.Fatalf("write up to the limit: %d %v", n, err)
	}
	if small.Over() || small.String() != "0123456789" {
		t.Fatalf("exactly the limit is not over: %v %q", small.Over(), small.String())
	}
}

func TestTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 5, ""},
		{"  \n", 5, ""},
		{" short \n", 5, "short"},
		{"0123456789\n", 4, "…6789"},
	} {
		if got := Tail([]byte(c.in), c.n); got != c.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// running reports whether pid is a live (not zombie) process.
func running(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// Wrap puts a program before the shell (a sandbox); its error is the run's
// and nothing starts.
func TestRunWrapped(t *testing.T) {
	var out bytes.Buffer
	var got []string
	r := Run(context.Background(), Command{Script: "echo inner", Stdout: &out,
		Wrap: func(argv []string) ([]string, error) {
			got = argv
			return append([]string{"env", "WRAPPED=yes"}, append(argv[:2:2], "echo $WRAPPED; "+argv[2])...), nil
		}})
	if r.Err != nil || out.String() != "yes\ninner\n" || len(got) != 3 || got[0] != "sh" || got[1] != "-c" {
		t.Fatalf("wrapped: %+v %q (shell argv %q)", r, out.String(), got)
	}
	refused := errors.New("no sandbox here")
	dir := t.TempDir()
	r = Run(context.Background(), Command{Script: "touch ran", Dir: dir,
		Wrap: func([]string) ([]string, error) { return nil, refused }})
	if !errors.Is(r.Err, refused) {
		t.Fatalf("refused wrap: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the command ran although its wrap was refused: %v", err)
	}
}
