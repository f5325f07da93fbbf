// Package testbin builds the story-automator binary and, beside it,
// story-automator-hook once per test process, for end-to-end tests that run
// them as real processes.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
)

// Tags are the build tags the Makefile builds with.
const Tags = "urfave_cli_no_docs"

// BuildFlags are the Makefile's BUILD_FLAGS (with CGO_ENABLED=0, its
// BUILD_ENV): the tests and benchmarks run the binary users run.
var BuildFlags = []string{"-tags", Tags, "-trimpath", "-ldflags", "-s -w"}

// EnvBinary names a binary to use instead of building one: benchmarks
// measure an older build (or an installed one) with it, side by side. Its
// hook binary is the one beside it, if any.
const EnvBinary = "STORY_AUTOMATOR_TEST_BINARY"

const (
	mainPkg = "github.com/story-automator/story-automator/cmd/story-automator"
	hookPkg = "github.com/story-automator/story-automator/cmd/story-automator-hook"
	// hookName is stophook.BinaryName (not imported: this package links no
	// product code).
	hookName = "story-automator-hook"
)

var (
	once sync.Once
	path string
	dir  string
	err  error
)

// Path returns the path of a freshly built story-automator, building it,
// story-automator-hook beside it on first use; a build failure fails the calling test.
// Under -short it skips the test: one that runs the binary is an
// integration test.
func Path(t testing.TB) string {
	t.Helper()
	testtier.Integration(t)
	once.Do(func() {
		if given := os.Getenv(EnvBinary); given != "" {
			path, err = filepath.Abs(given)
			return
		}
		if dir, err = os.MkdirTemp(binParent(), "story-automator-bin-"); err != nil {
			return
		}
		path = filepath.Join(dir, "story-automator")
		cmd := exec.Command("go", append(append([]string{"build"}, BuildFlags...), "-o", dir+string(filepath.Separator), mainPkg, hookPkg)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, buildErr := cmd.CombinedOutput()
		if buildErr != nil {
			err = fmt.Errorf("go build: %w\n%s", buildErr, out)
		}
	})
	if err != nil {
		t.Fatalf("build story-automator: %v", err)
	}
	return path
}

// binParent is where the binaries are built: under the user's cache, not
// the system temp dir, because a confined agent's shell may not see /tmp
// (Gemini CLI's tool sandbox gives it a private one) and a model-sim step
// runs this binary from there, as a user's installed binary would be run;
// "" (the temp dir) when there is no cache folder.
func binParent() string {
	cache, cerr := os.UserCacheDir()
	if cerr != nil {
		return ""
	}
	d := filepath.Join(cache, "story-automator", "testbin")
	if os.MkdirAll(d, 0o700) != nil {
		return ""
	}
	return d
}

// HookPath returns the path of story-automator-hook, beside Path's binary;
// the calling test fails when there is none there (an EnvBinary build
// without one).
func HookPath(t testing.TB) string {
	t.Helper()
	return beside(t, hookName)
}

func beside(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(Path(t)), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no %s beside the binary: %v", name, err)
	}
	return p
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
