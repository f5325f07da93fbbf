package gitvcs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The run's own git commands (its commits, rebases, landings, a worktree's
// checkout) run hooks, and no sandbox confines them. A child can write the
// hooks a relative core.hooksPath names (husky's .husky) in its folder, and
// Codex in the project can write .git/hooks. So a confined run copies the
// hooks at its start, before any child, to a folder under the user's cache
// no child can write, and every git command of the run names that copy
// (`-c core.hooksPath=<copy>`): a hook a child rewrote is never run by the
// run. With the sandbox off (KeepHooks(false)) the run's git runs the
// repository's hooks as they are.

// KeepHooks sets whether Prepare copies the hooks and the run's git runs
// the copy (on: a confined run) or the repository's own (off).
func (g *Git) KeepHooks(on bool) { g.liveHooks = !on }

// HooksCopy is the folder of hooks the run's git runs ("" = the repository's own).
func (g *Git) HooksCopy() string { return g.hooksCopy }

// copyHooks copies the hooks git would run in the project's working tree
// to the run's own folder and points hooksCopy at it. A relative
// core.hooksPath is resolved as git resolves it: against the top of the
// working tree a hook runs in (the project's here; a story's worktree has
// the same tracked files). Its whole first folder is copied (.husky for
// .husky/_), for hooks that call their siblings (husky's do).
func (g *Git) copyHooks(ctx context.Context) error {
	g.hooksCopy = ""
	if g.liveHooks {
		return nil
	}
	top, err := g.git(ctx, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	top = strings.TrimSpace(top)
	// src is copied to dst/copied; git runs dst/hooks from there.
	src, copied, hooks := filepath.Join(g.commonDir, "hooks"), "hooks", "hooks"
	if hp, _ := g.git(ctx, nil, "config", "--path", "core.hooksPath"); strings.TrimSpace(hp) != "" {
		hp = filepath.Clean(strings.TrimSpace(hp))
		switch {
		case filepath.IsAbs(hp):
			src = hp
		case hp == "." || hp == ".." || strings.HasPrefix(hp, ".."+string(filepath.Separator)):
			src = filepath.Join(top, hp)
		default:
			copied = strings.SplitN(filepath.ToSlash(hp), "/", 2)[0]
			src, hooks = filepath.Join(top, copied), hp
		}
	}
	dst, err := hooksCopyDir(g.commonDir)
	if err != nil {
		return err
	}
	sweepHooksCopies(filepath.Dir(dst))
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, copyOwnerFile), []byte(g.commonDir+"\n"), 0o600); err != nil {
		return err
	}
	if err := copyTree(src, filepath.Join(dst, copied)); err != nil {
		return fmt.Errorf("copy the repository's hooks from %s: %w", src, err)
	}
	g.hooksCopy = filepath.Join(dst, hooks)
	return nil
}

// hooksCopyDir is where a repository's hooks are copied: under the user's
// cache folder (no child's sandbox lets it write there), one folder per
// repository (its common git directory), made afresh at each run start.
func hooksCopyDir(commonDir string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no folder to copy the hooks to: %w", err)
	}
	sum := sha256.Sum256([]byte(commonDir))
	return filepath.Join(base, "story-automator", "hooks", hex.EncodeToString(sum[:8])), nil
}

// copyOwnerFile, in a copy's folder, names the repository (its common git
// directory) the hooks were copied from.
const copyOwnerFile = ".story-automator-repository"

// sweepHooksCopies removes the copies of repositories that are gone, so
// the folder does not grow with every repository ever run (a test makes
// one per run). A copy whose owner file is missing is left alone: another
// run may be making it.
func sweepHooksCopies(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		owner, err := os.ReadFile(filepath.Join(dir, copyOwnerFile))
		if err != nil {
			continue
		}
		if _, err := os.Stat(strings.TrimSpace(string(owner))); errors.Is(err, fs.ErrNotExist) {
			_ = os.RemoveAll(dir)
		}
	}
}

// copyTree copies the folder src to dst: folders, regular files with their
// modes, and what links point at (their content, so the copy does not
// follow a link a child may repoint). An absent src leaves an empty dst.
func copyTree(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == src {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		fi, err := os.Stat(path) // a link's target
		switch {
		case err != nil:
			return nil //nolint:nilerr // a dangling link runs nothing
		case fi.IsDir():
			return os.MkdirAll(to, 0o700)
		case !fi.Mode().IsRegular():
			return nil
		}
		// Links are followed on purpose (a hook may link to a script of
		// the project); this runs at the run's start, before any child.
		data, err := os.ReadFile(path) //nolint:gosec // G122: see above
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, fi.Mode().Perm()&0o755)
	})
}
