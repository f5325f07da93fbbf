package child

import (
	"os"
	"path/filepath"
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
