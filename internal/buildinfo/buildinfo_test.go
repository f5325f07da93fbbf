package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersionNamesTheModuleRevisionAndGo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	read := func() (*debug.BuildInfo, bool) { return info, true }
	if got := describe("", read); got != "devel (0123456789ab-dirty) go1.99" {
		t.Fatalf("devel build: %q", got)
	}
	info.Main.Version = "v1.2.3"
	if got := describe("", read); got != "v1.2.3 (0123456789ab-dirty) go1.99" {
		t.Fatalf("module build: %q", got)
	}
	if got := describe("v9", func() (*debug.BuildInfo, bool) { return nil, false }); got != "v9" {
		t.Fatalf("no build info: %q", got)
	}
}
