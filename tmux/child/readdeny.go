package child

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/confine"
)

// ReadDenied are the paths a confined child of agent p may not read: the
// user's credentials under the child's HOME (confine.CredentialPaths) and
// extra (workflow.yaml's sandbox.readDeny, "~/" under HOME), absolute and
// clean, once each. A path that holds one of the agent's own (its state
// directory, its credentials, its trust record) is left out: the agent
// must still sign in.
func ReadDenied(p agent.Profile, extra []string, getenv func(string) string) []string {
	home := getenv("HOME")
	var paths []string
	if home != "" {
		paths = confine.CredentialPaths(home)
	}
	for _, e := range extra {
		if rest, ok := strings.CutPrefix(e, "~/"); ok {
			if home == "" {
				continue
			}
			e = filepath.Join(home, rest)
		}
		if filepath.IsAbs(e) {
			paths = append(paths, e)
		}
	}
	own := ownPaths(p, getenv)
	seen := map[string]bool{}
	var out []string
	for _, d := range paths {
		d = filepath.Clean(d)
		if seen[d] || holdsAny(d, own) {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// ownPaths are the agent's own files a child must keep reading.
func ownPaths(p agent.Profile, getenv func(string) string) []string {
	if p.StateDir == "" && p.StateDirEnv == "" {
		return nil
	}
	own := []string{p.StateHome(getenv)}
	if p.TrustFile != "" {
		own = append(own, p.StatePath(p.TrustFile, getenv))
	}
	for _, f := range p.AuthFiles {
		own = append(own, p.StatePath(f, getenv))
	}
	return own
}

// holdsAny reports whether path is one of paths or a folder above one.
func holdsAny(path string, paths []string) bool {
	for _, o := range paths {
		o = filepath.Clean(o)
		if o == path || strings.HasPrefix(o, path+string(filepath.Separator)) || path == string(filepath.Separator) {
			return true
		}
	}
	return false
}

// cliWrites are the folders an agent CLI wrapped by this tool's bubblewrap
// (agent.HideWrap) writes itself, outside its own sandbox: HOME (its state
// directory and caches), the project (the session state its hook keeps)
// and the child's folder. Its tools stay inside the CLI's own sandbox.
//
// A CLI wrapped whole (agent.SandboxWrapped: the wrap is its only
// sandbox) writes less: the child's folder and its git dirs, its state
// directory, the folders it writes itself (wrappedOwnDirs), and the
// sessions' state folder only when a hook of ours runs inside the wrap
// (Profile.ChildHook) to stamp the turn there.
func cliWrites(p agent.Profile, r Request, c *Confine, getenv func(string) string) ([]string, error) {
	dirs := []string{getenv("HOME"), p.StateHome(getenv), r.ProjectRoot, r.StateDir, r.dir()}
	if p.Sandbox.Kind == agent.SandboxWrapped {
		own, err := wrappedOwnDirs(p, getenv)
		if err != nil {
			return nil, err
		}
		dirs = append([]string{c.Dir}, c.GitDirs...)
		if p.StateDir != "" || p.StateDirEnv != "" {
			dirs = append(dirs, p.StateHome(getenv))
		}
		if p.ChildHook != "" {
			dirs = append(dirs, r.StateDir)
		}
		dirs = append(dirs, own...)
	}
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		covered := false
		for _, w := range out {
			if d == w || strings.HasPrefix(d, w+string(filepath.Separator)) {
				covered = true
			}
		}
		if !covered {
			out = append(out, filepath.Clean(d))
		}
	}
	return out, nil
}

// wrappedOwnDirs are the folders a CLI wrapped whole writes itself besides
// its state directory (Sandbox.WrapWrites under HOME, Sandbox.CacheDir
// under the user's cache folder), made when absent: a CLI's first start
// fills them, and the sandbox mounts only what exists. A folder that
// would be relative (no HOME) is left out.
func wrappedOwnDirs(p agent.Profile, getenv func(string) string) ([]string, error) {
	var dirs []string
	for _, rel := range p.Sandbox.WrapWrites {
		dirs = append(dirs, filepath.Join(getenv("HOME"), rel))
	}
	if p.Sandbox.CacheDir != "" {
		dirs = append(dirs, filepath.Join(cacheHome(getenv), p.Sandbox.CacheDir))
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// cacheHome is the user's cache folder: $XDG_CACHE_HOME, else ~/.cache.
func cacheHome(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(getenv("HOME"), ".cache")
}

// privateCopies are the private copies a child wrapped whole gets of the
// folders its CLI writes and later sessions load from
// (Sandbox.WrapPrivate): each copied (but for Sandbox.PrivateSkip) into
// the child's sandbox folder, mounted over the real one (made when
// absent). Where the sandbox cannot mount (macOS) the real folders are
// returned as writable instead.
func privateCopies(p agent.Profile, c *Confine, getenv func(string) string) (over []confine.Mount, writable []string, err error) {
	for _, rel := range p.Sandbox.WrapPrivate {
		real := filepath.Join(getenv("HOME"), rel)
		if !filepath.IsAbs(real) {
			continue
		}
		if err := os.MkdirAll(real, 0o700); err != nil {
			return nil, nil, err
		}
		if runtime.GOOS != "linux" {
			writable = append(writable, real)
			continue
		}
		dst := filepath.Join(c.FilesDir, "private", strings.ReplaceAll(filepath.Clean(rel), string(filepath.Separator), "_"))
		if err := copyTree(real, dst, p.Sandbox.PrivateSkip); err != nil {
			return nil, nil, fmt.Errorf("a private copy of %s: %w", real, err)
		}
		over = append(over, confine.Mount{Src: dst, Dst: real})
	}
	return over, writable, nil
}

// copyTree copies the folder src to dst (made): its folders, regular
// files and symlinks, but for the top-level names in skip; anything else
// (a socket, a device) is left out. Both sides are opened as roots, so a
// symlink the copy meets is copied, never followed.
func copyTree(src, dst string, skip []string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	from, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	return fs.WalkDir(from.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || rel == "." {
			return err
		}
		if !strings.Contains(rel, "/") && slices.Contains(skip, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return to.Mkdir(rel, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := from.Readlink(rel)
			if err != nil {
				return err
			}
			return to.Symlink(target, rel)
		case d.Type().IsRegular():
			return copyFile(from, to, rel, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to *os.Root, rel string, mode fs.FileMode) error {
	in, err := from.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := to.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
