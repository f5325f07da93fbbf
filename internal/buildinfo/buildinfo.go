// Package buildinfo says which build this binary is: the module version, the
// VCS revision and the Go version it was built with.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// InstallLine is the README's install line: both programs of the module
// (story-automator and story-automator-hook), static.
const InstallLine = "CGO_ENABLED=0 go install -tags urfave_cli_no_docs -trimpath -ldflags='-s -w' github.com/story-automator/story-automator/cmd/...@latest"

// Version is the module version and VCS revision this binary was built
// from, then the Go version. set, when not empty, is the version given at
// link time (-ldflags -X) for builds outside a module download; else the
// build info's module version, else "devel".
func Version(set string) string {
	return describe(set, debug.ReadBuildInfo)
}

func describe(set string, read func() (*debug.BuildInfo, bool)) string {
	v := set
	info, ok := read()
	if !ok {
		return orDevel(v)
	}
	if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	v = orDevel(v)
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += fmt.Sprintf(" (%s%s)", rev[:min(12, len(rev))], dirty)
	}
	return v + " " + info.GoVersion
}

func orDevel(v string) string {
	if v == "" {
		return "devel"
	}
	return v
}
