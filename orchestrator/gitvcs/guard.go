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
	"slices"
	"strings"
)

// The files of a repository that make its git commands run code: its
// config (core.fsmonitor, filters, aliases, core.hooksPath…) and its hooks.
// A confined child may be able to write them (Codex in the project itself
// must write .git for git's index.lock), and the run's own git commands,
// which are not confined, would then run what it planted. The run sums
// them around each agent attempt (orchestrator.GitGuard) and reads them as
// files: a git command would already run a planted fsmonitor.

// guardPaths finds the config files and hooks folder GitFingerprint sums;
// Prepare calls it. Besides .git/config: config.worktree (git reads it once
// extensions.worktreeConfig is on), and the files the repository's config
// includes (include.path, includeIf), which may lie in the project.
func (g *Git) guardPaths(ctx context.Context) error {
	out, err := g.git(ctx, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	g.commonDir = strings.TrimSpace(out)
	g.hooksDir = filepath.Join(g.commonDir, "hooks")
	if hp, _ := g.git(ctx, nil, "config", "--path", "core.hooksPath"); strings.TrimSpace(hp) != "" {
		g.hooksDir = strings.TrimSpace(hp)
		if !filepath.IsAbs(g.hooksDir) {
			top, err := g.git(ctx, nil, "rev-parse", "--show-toplevel")
			if err != nil {
				return err
			}
			g.hooksDir = filepath.Join(strings.TrimSpace(top), g.hooksDir)
		}
	}
	g.configFiles = []string{filepath.Join(g.commonDir, "config"), filepath.Join(g.commonDir, "config.worktree")}
	list, _ := g.git(ctx, nil, "config", "--list", "--show-origin", "--show-scope", "--includes", "-z")
	// -z: scope, origin, then key and value, each ended by a NUL.
	fields := strings.Split(list, "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		scope, origin := fields[i], fields[i+1]
		file, ok := strings.CutPrefix(origin, "file:")
		if !ok || (scope != "local" && scope != "worktree") {
			continue
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(g.Root, file)
		}
		if file = filepath.Clean(file); !slices.Contains(g.configFiles, file) {
			g.configFiles = append(g.configFiles, file)
		}
	}
	return nil
}

// GitFingerprint sums the repository's config and hooks; "" before Prepare.
func (g *Git) GitFingerprint() (string, error) {
	if g.commonDir == "" {
		return "", nil
	}
	h := sha256.New()
	add := func(path string) error {
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "%s absent\n", path)
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			fmt.Fprintf(h, "%s -> %s\n", path, target)
			return err
		case fi.IsDir():
			fmt.Fprintf(h, "%s dir %v\n", path, fi.Mode())
			return nil
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(h, "%s %v %d\n", path, fi.Mode(), len(data))
		h.Write(data)
		return err
	}
	// A config file that is empty says what an absent one says: Claude
	// Code's sandbox creates an empty .git/config.worktree (to mount over
	// it) when there is none.
	addConfig := func(path string) error {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			fmt.Fprintf(h, "%s absent\n", path)
			return nil
		}
		return add(path)
	}
	for _, f := range g.configFiles {
		if err := addConfig(f); err != nil {
			return "", err
		}
	}
	// The worktrees' own config.worktree, those that say something: the
	// run adds and removes worktrees during an attempt, never this file.
	wts, _ := filepath.Glob(filepath.Join(g.commonDir, "worktrees", "*", "config.worktree"))
	for _, f := range wts {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			continue
		}
		if err := add(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	err := filepath.WalkDir(g.hooksDir, func(path string, _ fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return add(path)
	})
	if err != nil {
		return "", fmt.Errorf("read the repository's hooks: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
