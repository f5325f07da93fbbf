package chaos

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows/sample"
)

// Findings are what a round's checks found wrong.
type Findings struct {
	// Lost: a story not done, or not committed exactly once by the run.
	Lost []string
	// Leftovers: anything the run left that the user would see or trip on.
	Leftovers []string
}

// OK reports whether nothing was found.
func (f Findings) OK() bool { return len(f.Lost) == 0 && len(f.Leftovers) == 0 }

func (f *Findings) lost(format string, a ...any) { f.Lost = append(f.Lost, fmt.Sprintf(format, a...)) }
func (f *Findings) left(format string, a ...any) {
	f.Leftovers = append(f.Leftovers, fmt.Sprintf(format, a...))
}

// Check inspects a project whose run should have finished: the run done,
// one commit per story with the run's trailers, the work tree clean, the
// index equal to HEAD, no temp or lock file, no marker, no session left.
func Check(p *Sample) Findings {
	var f Findings
	store := marker.NewStore(p.Root, func(string) string { return "" })
	path := orchestrator.LatestState(store, p.Root)
	st, err := orchestrator.LoadState(path)
	switch {
	case err != nil:
		f.lost("no state document: %v", err)
	case st.Status != orchestrator.RunDone:
		f.lost("run %s ended %s", st.RunID, st.Status)
	}
	if st != nil {
		checkCommits(p, st.RunID, &f)
	}
	if out, err := p.Git("status", "--porcelain", "--untracked-files=all"); err != nil || strings.TrimSpace(out) != "" {
		f.left("git status: %s%v", strings.TrimSpace(out), errOrNil(err))
	}
	if out, err := p.Git("diff", "--cached", "--name-status", "HEAD"); err != nil || strings.TrimSpace(out) != "" {
		f.left("index differs from HEAD: %s%v", strings.TrimSpace(out), errOrNil(err))
	}
	if out, err := p.Git("worktree", "list", "--porcelain"); err != nil || strings.Count(out, "worktree ") != 1 {
		f.left("git worktrees: %s%v", strings.TrimSpace(out), errOrNil(err))
	}
	if out, err := p.Git("branch", "--list", "story-automator/*"); err != nil || strings.TrimSpace(out) != "" {
		f.left("run branches: %s%v", strings.TrimSpace(out), errOrNil(err))
	}
	for _, t := range stray(p.Root) {
		f.left("left behind: %s", t)
	}
	if _, err := os.Lstat(store.Path); err == nil {
		f.left("marker still there: %s", store.Path)
	}
	if s := sessions(p); s != "" {
		f.left("tmux sessions still running: %s", s)
	}
	return f
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// checkCommits wants each sample story committed exactly once, by the run.
func checkCommits(p *Sample, runID string, f *Findings) {
	out, err := p.Git("log", "--format=%H%x00%(trailers:key=Story-Automator-Run,valueonly,separator=%x01)%x00%(trailers:key=Story-Automator-Story,valueonly,separator=%x01)")
	if err != nil {
		f.lost("git log: %v", err)
		return
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.Split(line, "\x00")
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			continue
		}
		if run := strings.TrimSpace(parts[1]); run != runID {
			f.lost("commit %s carries run %q, not %s", parts[0][:10], run, runID)
		}
		counts[strings.TrimSpace(parts[2])]++
	}
	units := sample.Stories
	if p.Units != nil {
		units = p.Units
	}
	for _, s := range units {
		if counts[s] != 1 {
			f.lost("story %s has %d commits", s, counts[s])
		}
	}
}

// stray lists temp files of atomic writes anywhere in the project (git's
// own directory and the tool's included) and lock files git or the run left.
func stray(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable entry is no stray file
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if _, ok := atomicfile.TempTarget(name); ok {
			out = append(out, rel)
		}
		if strings.HasPrefix(rel, ".git"+string(filepath.Separator)) &&
			(strings.HasSuffix(name, ".lock") || strings.HasPrefix(name, "story-automator-index")) {
			out = append(out, rel)
		}
		if d.IsDir() && rel == filepath.Join(".git", "story-automator-git") {
			if entries, _ := os.ReadDir(path); len(entries) > 0 {
				out = append(out, rel+"/*")
			}
			return filepath.SkipDir
		}
		if d.IsDir() && rel == filepath.Join(".git", "objects") {
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// sessions lists the tmux sessions still on the project's server.
func sessions(p *Sample) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", "-L", p.Socket, "list-sessions", "-F", "#{session_name}").Output()
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
