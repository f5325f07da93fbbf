package monitor

import (
	"os/exec"
	"testing"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/sessionstate"
)

// Each test's deadline bounds a wake-up that never comes.

func TestWakeupsFireOnStateFileAndProcessExit(t *testing.T) {
	dir := t.TempDir()
	w := wake.New()
	defer w.Close()
	if err := watchState(w, dir, "sa-x"); err != nil {
		t.Fatal(err)
	}
	// No lock file yet: the directory is watched for the state file, which
	// an atomic write renames into place.
	if err := atomicfile.Write(sessionstate.StatePath(dir, "sa-x"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	<-w.C
	cmd := exec.Command("/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := w.Process(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-w.C
}

func TestWakeupsFireOnAnUpdateUnderTheLock(t *testing.T) {
	dir := t.TempDir()
	write := func() {
		if _, err := sessionstate.Update(dir, "sa-x", func(st *sessionstate.State) error {
			st.Lifecycle = sessionstate.LifecycleExited
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	write()
	w := wake.New()
	defer w.Close()
	if err := watchState(w, dir, "sa-x"); err != nil {
		t.Fatal(err)
	}
	write()
	<-w.C
}
