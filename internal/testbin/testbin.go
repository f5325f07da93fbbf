// Package testbin builds the story-automator binary once per test process, for
// end-to-end tests that run it as a real process.
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
// measure an older build (or an installed one) with it, side by side.
const EnvBinary = "STORY_AUTOMATOR_TEST_BINARY"

const mainPkg = "github.com/story-automator/story-automator/cmd/story-automator"

var (
	once sync.Once
	path string
	dir  string
	err  error
)

// Path returns the path of a freshly built binary, building it on first use;
// a build failure fails the calling test. Under -short it skips the test:
// one that runs the binary is an integration test.
func Path(t testing.TB) string {
	t.Helper()
	testtier.Integration(t)
	once.Do(func() {
		if given := os.Getenv(EnvBinary); given != "" {
			path, err = filepath.Abs(given)
			return
		}
		if dir, err = os.MkdirTemp("", "story-automator-bin-"); err != nil {
			return
		}
		path = filepath.Join(dir, "story-automator")
		cmd := exec.Command("go", append(append([]string{"build"}, BuildFlags...), "-o", path, mainPkg)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, buildErr := cmd.CombinedOutput()
		if buildErr != nil {
			err = fmt.Errorf("go build: %v\n%s", buildErr, out)
		}
	})
	if err != nil {
		t.Fatalf("build story-automator: %v", err)
	}
	return path
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
