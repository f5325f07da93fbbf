package child

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepFinishedRemovesOnlySessionsThatEndedLongAgo(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".story-automator", "sessions")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dead, live := deadPid(t), os.Getpid()
	prefix := ProjectPrefix(root)
	type session struct {
		lifecycle     string
		ended         time.Duration // before now; 0 = no exit time
		pane, agent   int
		root          string
		wantSwept     bool
		corruptOnDisk bool
	}
	sessions := map[string]session{
		"old-exited":        {lifecycle: sessionstate.LifecycleExited, ended: 25 * time.Hour, pane: dead, agent: dead, wantSwept: true},
		"old-lost":          {lifecycle: sessionstate.LifecycleLost, ended: 48 * time.Hour, pane: dead, wantSwept: true},
		"old-killed":        {lifecycle: LifecycleKilled, ended: 30 * time.Hour, pane: dead, wantSwept: true},
		"recent-exited":     {lifecycle: sessionstate.LifecycleExited, ended: 23 * time.Hour, pane: dead},
		"old-running-live":  {lifecycle: sessionstate.LifecycleStarted, ended: 0, pane: live},
		"old-running-dead":  {lifecycle: sessionstate.LifecycleStarted, ended: 0, pane: dead}, // not settled yet: not final
		"old-starting":      {lifecycle: LifecycleStarting, ended: 0},
		"old-exited-agent":  {lifecycle: sessionstate.LifecycleExited, ended: 25 * time.Hour, pane: dead, agent: live},
		"old-exited-kept":   {lifecycle: sessionstate.LifecycleExited, ended: 25 * time.Hour, pane: dead},
		"old-exited-theirs": {lifecycle: sessionstate.LifecycleExited, ended: 25 * time.Hour, pane: dead, root: "/elsewhere"},
		"old-corrupt":       {corruptOnDisk: true},
	}
	old := now.Add(-72 * time.Hour)
	for suffix, s := range sessions {
		name := prefix + suffix
		if s.corruptOnDisk {
			writeFileAt(t, sessionstate.StatePath(dir, name), "{", old)
			continue
		}
		if _, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error {
			st.Lifecycle, st.PanePid, st.AgentPid, st.ProjectRoot = s.lifecycle, s.pane, s.agent, root
			if s.root != "" {
				st.ProjectRoot = s.root
			}
			if s.ended > 0 {
				st.ExitedAt = marker.Timestamp(now.Add(-s.ended))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(sessionstate.StatePath(dir, name), old, old)
		for _, p := range []string{SpecPath(dir, name), PromptPath(dir, name), sessionstate.OutputPath(dir, name)} {
			writeFileAt(t, p, "x", old)
		}
	}
	other := "sa-other-project-ab12-e1-s1-1-dev-xxxx" // another project's session in a shared directory
	if _, err := sessionstate.Update(dir, other, func(st *sessionstate.State) error {
		st.Lifecycle, st.ExitedAt = sessionstate.LifecycleExited, marker.Timestamp(old)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got := SweepFinished(Sweep{Dir: dir, ProjectRoot: root, OlderThan: 24 * time.Hour, Now: now,
		Keep: func(name string) bool { return name == prefix+"old-exited-kept" }})
	slices.Sort(got)
	want := []string{prefix + "old-exited", prefix + "old-killed", prefix + "old-lost"}
	if !slices.Equal(got, want) {
		t.Fatalf("swept %v, want %v", got, want)
	}
	for suffix, s := range sessions {
		name := prefix + suffix
		for _, p := range []string{sessionstate.StatePath(dir, name), SpecPath(dir, name), PromptPath(dir, name),
			sessionstate.OutputPath(dir, name), sessionstate.StatePath(dir, name) + ".lock"} {
			_, err := os.Lstat(p)
			if s.wantSwept && !os.IsNotExist(err) {
				t.Errorf("%s left behind", filepath.Base(p))
			}
			if !s.wantSwept && p == sessionstate.StatePath(dir, name) && err != nil {
				t.Errorf("%s swept: %v", filepath.Base(p), err)
			}
		}
	}
	if _, err := os.Lstat(sessionstate.StatePath(dir, other)); err != nil {
		t.Errorf("another project's session was swept: %v", err)
	}
}

func writeFileAt(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
