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
func cliWrites(p agent.Profile, r Request, getenv func(string) string) []string {
	var out []string
	for _, d := range []string{getenv("HOME"), p.StateHome(getenv), r.ProjectRoot, r.StateDir, r.dir()} {
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
	return out
}

// wrapWrites are the folders an agent under this tool's sandbox alone
// (agent.SandboxWrap) writes itself (Sandbox.WrapWrites under HOME),
// created when absent so the sandbox can mount them.
func wrapWrites(p agent.Profile, getenv func(string) string) ([]string, error) {
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return nil, nil
	}
	var out []string
	for _, rel := range p.Sandbox.WrapWrites {
		d := filepath.Join(home, rel)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
