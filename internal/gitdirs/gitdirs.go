// Package gitdirs finds, from a checkout's files alone, the git directories
// a confined command may write and the files in them that make git run code.
package gitdirs

import (
	"os"
	"path/filepath"
	"strings"
)

// commitDirs are the folders of a repository's common git directory that a
// commit in a linked worktree writes.
var commitDirs = []string{"objects", "refs", "logs"}

// Writable are the git directories of the checkout at dir a confined
// command commits to: its .git folder; for a linked worktree, the
// worktree's own git directory and, of the repository's common one, only
// what a commit writes (objects, refs, logs). Never the common directory
// whole: its hooks and config run code in every later git command (the
// run's own, unconfined), and the run keeps the other stories' worktrees
// under it. Nil outside a checkout.
func Writable(dir string) []string {
	gd, isLink := gitDir(dir)
	if gd == "" {
		return nil
	}
	if !isLink {
		return []string{gd}
	}
	out := []string{gd}
	if common := commonDir(gd); common != "" {
		var shared []string
		for _, sub := range commitDirs {
			d := filepath.Join(common, sub)
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				shared = append(shared, d)
			}
		}
		out = append(shared, out...)
	}
	return out
}

// Guarded are the paths inside Writable(dir) that make git run code or
// point it elsewhere, which a confined command must not write: a whole
// .git's config, config.worktree, hooks and the linked worktrees' git
// directories (their config.worktree, commondir and gitdir files); a
// linked worktree's own config.worktree, commondir and gitdir.
func Guarded(dir string) []string {
	gd, isLink := gitDir(dir)
	switch {
	case gd == "":
		return nil
	case isLink:
		return []string{filepath.Join(gd, "config.worktree"), filepath.Join(gd, "commondir"), filepath.Join(gd, "gitdir")}
	}
	return []string{filepath.Join(gd, "config"), filepath.Join(gd, "config.worktree"),
		filepath.Join(gd, "hooks"), filepath.Join(gd, "worktrees")}
}

// gitDir is the git directory of the checkout at dir ("" outside one) and
// whether dir is a linked worktree (its .git a file naming the directory).
func gitDir(dir string) (string, bool) {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Stat(dotgit)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return dotgit, false
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", false
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return filepath.Clean(gd), true
}

// commonDir is the repository's common git directory a worktree's git
// directory names ("" when it names none).
func commonDir(gd string) string {
	cb, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return ""
	}
	common := strings.TrimSpace(string(cb))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gd, common)
	}
	return filepath.Clean(common)
}
