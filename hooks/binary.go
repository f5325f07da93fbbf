package hooks

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/buildinfo"
)

// transientBinary reports why exe is a binary that will vanish (a `go run`
// or `go test` build, or anything under the temp directory), "" when it is not.
// A hook pointing at such a path breaks silently the day it is cleaned up.
func transientBinary(exe string, getenv func(string) string) string {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return "it is a temporary build by `go run` or `go test`"
		}
	}
	roots := []string{getenv("GOCACHE")}
	if t := getenv("TMPDIR"); t != "" {
		roots = append(roots, t)
	} else {
		roots = append(roots, "/tmp", "/var/tmp")
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if rel, err := filepath.Rel(filepath.Clean(r), exe); err == nil && !strings.HasPrefix(rel, "..") {
			return "it is under the temporary directory " + r
		}
	}
	return ""
}

// binaryOnPath returns the story-automator found first on PATH, "" when none.
func binaryOnPath(getenv func(string) string) string {
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "story-automator")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// hookBinary picks the binary the installed hook runs: this one, unless it is
// transient — then the one on PATH, or with force this one after a loud
// warning, or else a failure saying how to install the tool.
func hookBinary(exe string, force bool, getenv func(string) string) (path, warning string, err error) {
	why := transientBinary(exe, getenv)
	if why == "" {
		return exe, "", nil
	}
	if p := binaryOnPath(getenv); p != "" && transientBinary(p, getenv) == "" {
		return p, "this binary (" + exe + ") is temporary: " + why + "; the hook runs " + p + " from PATH instead", nil
	}
	if force {
		return exe, "WARNING: the hook runs " + exe + ", which will vanish: " + why, nil
	}
	f := failure("binary_transient", "refusing to install a hook that runs %s: %s", exe, why)
	f.Action = "install the tool first (" + buildinfo.InstallLine + ", or make install) and run hooks install from it, or pass --force"
	return "", "", f
}
