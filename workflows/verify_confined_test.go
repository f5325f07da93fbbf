package workflows

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/testtier"
)

// requireBwrap fails under CI=true, where bubblewrap must be installed.
func requireBwrap(t *testing.T) {
	t.Helper()
	testtier.Integration(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is missing: .ci/run installs it (%s)", confine.Install)
		}
		t.Skipf("bwrap is not installed (%s)", confine.Install)
	}
}

// varTmp is a new folder under /var/tmp, removed after the test.
func varTmp(t *testing.T, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// The project's command (its tests, which a child may have written) runs
// with the child's policy: it writes the project and its temp folder,
// nothing outside, not the repository's hooks, and reads none of the
// user's credentials; under `sandbox: off` the same command lands its write.
func TestCommandVerifierRunsTheCommandConfined(t *testing.T) {
	requireBwrap(t)
	p := openProject(t)
	// Outside /tmp, which the sandbox replaces (a home there would be hidden anyway).
	home := varTmp(t, "verify-home-")
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(p.Root, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := varTmp(t, "verify-outside-")
	escaped := filepath.Join(outside, "escaped")
	script := strings.Join([]string{
		"echo in > inside",
		"echo tmp > \"$TMPDIR/t\" && echo TMP-OK",
		"echo x > " + escaped + " || echo OUTSIDE-DENIED",
		"echo x > .git/hooks/pre-commit || echo HOOK-DENIED",
		"echo KEY=$(cat ~/.ssh/id_ed25519 2>/dev/null)",
		"true"}, "\n")
	pol := func(doc string) *Policy {
		pol, err := ParsePolicy("test", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		pol.Steps[StepDev].Command = script
		return pol
	}
	on := pol("testCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, on)
	r := c.Verify(context.Background())
	if !r.Verified {
		t.Fatalf("confined: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "inside")); err != nil {
		t.Fatalf("the project's own write did not land: %v", err)
	}
	// The verdict carries no output on success: rerun failing to see it.
	pol2 := pol("testCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	pol2.Steps[StepDev].Command = script + "\nexit 1"
	out := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol2).Verify(context.Background()).Detail
	for _, want := range []string{"TMP-OK", "OUTSIDE-DENIED", "HOOK-DENIED", "KEY=\n"} {
		if !strings.Contains(out+"\n", want) {
			t.Errorf("confined: %q missing in %q", want, out)
		}
	}
	if _, err := os.Stat(escaped); !os.IsNotExist(err) {
		t.Fatalf("the write outside the project landed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Fatalf("the hook landed: %v", err)
	}

	off := pol("sandbox: off\ntestCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	off.Steps[StepDev].Command = script + "\nexit 1"
	out = mustVerifier(t, p, StepDev, StoryKey{"1", 1}, off).Verify(context.Background()).Detail
	if !strings.Contains(out, "KEY=PRIVATE-KEY") {
		t.Errorf("control: unconfined, the key reads: %q", out)
	}
	if _, err := os.Stat(escaped); err != nil {
		t.Fatalf("control: unconfined, the write outside must land: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err != nil {
		t.Fatalf("control: unconfined, the hook must land: %v", err)
	}
}

// Without bubblewrap a confined command is not run: the verdict says why.
func TestCommandVerifierWithoutTheSandboxRunsNothing(t *testing.T) {
	p := openProject(t)
	t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+"/usr/bin:/bin")
	if _, err := exec.LookPath("bwrap"); err == nil {
		// bwrap in /usr/bin: hide it with a PATH of sh alone.
		dir := t.TempDir()
		sh, _ := exec.LookPath("sh")
		if err := os.Symlink(sh, filepath.Join(dir, "sh")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
	}
	pol, err := ParsePolicy("test", []byte("steps:\n  dev:\n    verifier: command\n    command: touch ran\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol).Verify(context.Background())
	if r.Verified || !strings.Contains(r.Detail, "does not work here") || !strings.Contains(r.Detail, "could not run") {
		t.Fatalf("without bwrap: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the command ran unconfined: %v", err)
	}
}

// At its time bound the confined command dies with everything it started
// (its sandbox's pid namespace goes with it).
func TestConfinedCommandVerifierKillsEverythingItStarted(t *testing.T) {
	requireBwrap(t)
	p := openProject(t)
	marker := "sleep 3" + randomDigits(t)
	pol, err := ParsePolicy("test", []byte("steps:\n  dev:\n    verifier: command\n    command: "+marker+" & echo started > started; wait\n    commandTimeout: 500ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	// A failure leaves no sleeper behind.
	t.Cleanup(func() {
		if pid := alive(marker); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	expectVerdict(t, mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol), false, "did not finish")
	if _, err := os.Stat(filepath.Join(p.Root, "started")); err != nil {
		t.Fatalf("the command never started its child: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(marker) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%q outlived the command's time bound", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive is the pid of a process that runs with cmdline (not a zombie), 0 when none.
func alive(cmdline string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") != cmdline {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(filepath.Dir(f), "stat")); err == nil && !strings.Contains(string(stat), ") Z ") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			return pid
		}
	}
	return 0
}

func randomDigits(t *testing.T) string {
	t.Helper()
	return strconv.Itoa(100000 + int(time.Now().UnixNano()%900000))
}

// The workflow's sandbox.readDeny hides its paths from the command too, and
// a confined command starts from the environment its sandbox gives (a
// child's allow-list) rather than the run's: a control file beside the
// denied one reads, and the same command with the sandbox off reads both.
func TestConfinedCommandHonoursReadDenyAndItsEnvironment(t *testing.T) {
	requireBwrap(t)
	p := openProject(t)
	home := varTmp(t, "verify-home-")
	t.Setenv("HOME", home)
	t.Setenv("VERIFY_SECRET", "run-secret")
	for name, body := range map[string]string{"private/token": "DENIED-TOKEN", "public/note": "PUBLIC-NOTE"} {
		f := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := ParsePolicy("test", []byte("sandbox: {readDeny: [~/private]}\ntestCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n"))
	if err != nil {
		t.Fatal(err)
	}
	pol.Steps[StepDev].Command = "echo T=$(cat ~/private/token 2>/dev/null) N=$(cat ~/public/note) S=$VERIFY_SECRET; exit 1"
	sb := pol.CommandSandbox()
	sb.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	c, err := p.ConfinedVerifier(StepDev, StoryKey{"1", 1}, pol, &sb)
	if err != nil {
		t.Fatal(err)
	}
	if out := c.Verify(context.Background()).Detail; !strings.Contains(out, "T= N=PUBLIC-NOTE S=") || strings.Contains(out, "run-secret") {
		t.Fatalf("confined: %q, want the readDeny path hidden, the note read, no secret", out)
	}
	off := sb
	off.Off = true
	c, err = p.ConfinedVerifier(StepDev, StoryKey{"1", 1}, pol, &off)
	if err != nil {
		t.Fatal(err)
	}
	if out := c.Verify(context.Background()).Detail; !strings.Contains(out, "T=DENIED-TOKEN N=PUBLIC-NOTE S=run-secret") {
		t.Fatalf("control, sandbox off: %q", out)
	}
}

// The workflow's hosts reach the project's command through this tool's
// proxy, and only they: the command fetches an allowed server and is
// refused another on this machine, which sees no request; with no hosts
// listed it reaches neither.
func TestCommandVerifierReachesOnlyTheWorkflowsHosts(t *testing.T) {
	requireBwrap(t)
	if _, err := exec.LookPath("curl"); err != nil {
		testtier.Missing(t, "curl is not installed")
	}
	p := openProject(t)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer allowed.Close()
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(allowed.URL, "http://"))
	cmd := "curl -sf --max-time 10 http://localhost:" + port + "/ && ! curl -sf --max-time 10 " + other.URL + "/"
	c := &commandCheck{dir: p.Root, command: cmd, limit: time.Minute, sb: CommandSandbox{Network: []string{"localhost"}, Exe: os.Args[0]}}
	if r := c.Verify(context.Background()); !r.Verified {
		t.Fatalf("with localhost allowed: %+v", r)
	}
	c.sb.Network = nil
	if r := c.Verify(context.Background()); r.Verified {
		t.Fatalf("with no host allowed, the allowed server was reached: %+v", r)
	}
	// The control reaches the other server directly.
	resp, err := http.Get(other.URL)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("control: %s", resp.Status)
	}
	if n := otherHits.Load(); n != 1 {
		t.Fatalf("the other server answered %d requests, want only the control's", n)
	}
}
