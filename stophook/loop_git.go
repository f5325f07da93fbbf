package stophook

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitWorkTreeTimeout bounds the git commands of a work-tree fingerprint.
const gitWorkTreeTimeout = 5 * time.Second

// GitFingerprint identifies the state of the git repository holding root, or
// returns "" outside a repository. The cheap form reads HEAD (branch and
// commit) and the index checksum straight from .git, with no git process, so
// a commit or a staged change shows; with workTree it also hashes
// `git status --porcelain` and `git diff HEAD`, so an unstaged edit shows too
// (two git processes). The two forms never compare equal to each other.
// The hash is FNV-1a, 128 bits: it detects change, it need not resist an
// attacker, and a cryptographic hash would cost the hook's every start the
// initialisation of Go's crypto packages (g1/g2 fingerprints were SHA-256:
// a marker holding one sees a change once).
func GitFingerprint(ctx context.Context, root string, workTree bool) string {
	gitDir, ok := findGitDir(root)
	if !ok {
		return ""
	}
	h := fnv.New128a()
	head := readSmall(filepath.Join(gitDir, "HEAD"))
	fmt.Fprintf(h, "head:%s\n", head)
	if ref, isRef := strings.CutPrefix(head, "ref: "); isRef {
		fmt.Fprintf(h, "commit:%s\n", resolveRef(gitDir, strings.TrimSpace(ref)))
	}
	writeIndexChecksum(h, filepath.Join(gitDir, "index"))
	prefix := "g3:"
	if workTree {
		prefix = "g4:"
		hashGitOutput(ctx, h, root, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
		hashGitOutput(ctx, h, root, "diff", "HEAD", "--no-color", "--no-ext-diff", "--binary")
	}
	return prefix + hex.EncodeToString(h.Sum(nil))[:32]
}

// findGitDir walks up from root to the repository's git directory; a `.git`
// file (worktrees, submodules) points at it with "gitdir: PATH".
func findGitDir(root string) (string, bool) {
	dir, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return p, true
			}
			if target, ok := strings.CutPrefix(readSmall(p), "gitdir: "); ok {
				target = strings.TrimSpace(target)
				if !filepath.IsAbs(target) {
					target = filepath.Join(dir, target)
				}
				return target, true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// resolveRef finds the commit a ref names: a loose ref file in the git dir or
// its common dir (worktrees), else packed-refs.
func resolveRef(gitDir, ref string) string {
	dirs := []string{gitDir}
	if common := readSmall(filepath.Join(gitDir, "commondir")); common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, common)
	}
	for _, d := range dirs {
		if v := readSmall(filepath.Join(d, filepath.FromSlash(ref))); v != "" {
			return v
		}
	}
	for _, d := range dirs {
		if v := packedRef(filepath.Join(d, "packed-refs"), ref); v != "" {
			return v
		}
	}
	return ""
}

func packedRef(path, ref string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 8<<20))
	for sc.Scan() {
		if sha, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return sha
		}
	}
	return ""
}

// writeIndexChecksum hashes the index's size and trailing checksum, which git
// rewrites whenever the index changes.
func writeIndexChecksum(h hash.Hash, path string) {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(h, "index:none\n")
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	tail := make([]byte, min(fi.Size(), 32))
	_, _ = f.ReadAt(tail, fi.Size()-int64(len(tail)))
	fmt.Fprintf(h, "index:%d:%x\n", fi.Size(), tail)
}

// hashGitOutput streams a git command's output into h. GIT_OPTIONAL_LOCKS=0
// keeps `git status` from refreshing the index, which would itself change the
// fingerprint.
func hashGitOutput(ctx context.Context, h hash.Hash, root string, args ...string) {
	ctx, cancel := context.WithTimeout(ctx, gitWorkTreeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	fmt.Fprintf(h, "git %s:\n", args[0])
	cmd.Stdout = h
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(h, "error:%v\n", err)
	}
}

// readSmall reads the first 4 KiB of a small git file, trimmed; "" when unreadable.
func readSmall(path string) string {
	const limit = 4096
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, limit))
	return strings.TrimSpace(string(b))
}
