package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestE2EALockedUserIndexStopsRunAndResumeAtOnceWithTheFileAndTheAction(t *testing.T) {
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
