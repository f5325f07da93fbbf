package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestE2EALockedUserIndexStopsRunAndResumeAtOnceWithTheFileAndTheAction(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	lock := filepath.Join(p.root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{append([]string{"run", "--agent", "sim", "--json"}, fast...), {"run", "--resume", "--json"}} {
		res, code := p.run(nil, args...)
		action, _ := res["action"].(string)
		msg, _ := res["message"].(string)
		if code != 1 || res["error"] != "git_index_locked" || !strings.Contains(msg, lock) || !strings.Contains(action, "remove "+lock) {
			t.Fatalf("%v exited %d: %v", args[:2], code, res)
		}
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the user's index.lock was removed: %v", err)
	}
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); dirty != "" {
		t.Fatalf("the refused run left:\n%s", dirty)
	}
}

// A closed terminal kills the run's whole process group while git commits a
// story: the commit finishes on its own, and the resumed run finds it and
// ends done with the work tree clean and nothing escalated.
func TestE2EAProcessGroupKillMidCommitLeavesGitToFinishAndResumeEndsDone(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	for _, f := range []string{started, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The first commit's hook says it runs, then waits to be released.
	hook := "#!/bin/sh\n[ -e " + dir + "/once ] && exit 0\n: > " + dir + "/once\necho go > " + started + "\nread x < " + release + "\n"
	if err := os.WriteFile(filepath.Join(p.root, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	run := p.cmd(nil, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(started) // returns once the hook opened it for writing
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(f)
	f.Close()
	if err := syscall.Kill(-run.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	releaseHook(t, release)
	p.resumeToOneCommitAStory()
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); dirty != "" {
		t.Fatalf("status after the resume:\n%s", dirty)
	}
	if diff := p.git("diff", "--cached", "--name-only", "HEAD"); diff != "" {
		t.Fatalf("index differs from HEAD:\n%s", diff)
	}
}
