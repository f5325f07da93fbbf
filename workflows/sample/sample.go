// Package sample embeds a small BMAD project (one epic of four stories, a
// shell app and its tests) for the demo and for end-to-end tests.
package sample

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

//go:embed all:project
var project embed.FS

// buildAuto holds what makes the sample a BMAD 6.12-shaped project on the
// build-auto pipeline: a config.toml with the build skills' paths, a
// stand-in worker skill the simulated agent acts out, the pinned policy.
// None of it is BMAD's own files.
//
//go:embed all:buildauto
var buildAuto embed.FS

// Stories are the sample's story keys, in order. 1.2 and 1.4 depend on 1.1,
// and 1.3 on 1.2.
var Stories = []string{"1-1", "1-2", "1-3", "1-4"}

// TestCommand is the sample's test command, as its workflow policy names it.
const TestCommand = "sh tests/run.sh"

// WriteSample copies the sample project into dir (created when missing). It
// refuses to overwrite any existing file. Scripts are made executable, and
// .story-automator/ gets mode 0700 like every state directory. It does not
// initialise git.
func WriteSample(dir string) error {
	root, err := fs.Sub(project, "project")
	if err != nil {
		return err
	}
	return write(dir, root, nil)
}

// WriteBuildAutoSample writes the sample shaped as a BMAD 6.12 project on
// the build-auto pipeline (what the demo runs): the same epic, board, app
// and tests, with a _bmad/config.toml, a stand-in bmad-build-auto skill the
// simulated agent acts out, and a policy that pins the pipeline.
func WriteBuildAutoSample(dir string) error {
	root, err := fs.Sub(project, "project")
	if err != nil {
		return err
	}
	over, err := fs.Sub(buildAuto, "buildauto")
	if err != nil {
		return err
	}
	return write(dir, root, over)
}

func listFiles(root fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sample project: %w", err)
	}
	return files, nil
}

// write copies root's files into dir, over's in place of root's where both
// have one.
func write(dir string, root, over fs.FS) error {
	files, err := listFiles(root)
	if err != nil {
		return err
	}
	from := map[string]fs.FS{}
	for _, f := range files {
		from[f] = root
	}
	if over != nil {
		extra, err := listFiles(over)
		if err != nil {
			return err
		}
		for _, f := range extra {
			if from[f] == nil {
				files = append(files, f)
			}
			from[f] = over
		}
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err == nil {
			return fmt.Errorf("write sample project: %s already exists", filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: a project for the user, readable as git would leave it
		return fmt.Errorf("write sample project: %w", err)
	}
	for _, f := range files {
		if err := writeOne(from[f], dir, f); err != nil {
			return err
		}
	}
	return nil
}

func writeOne(root fs.FS, dir, name string) error {
	data, err := fs.ReadFile(root, name)
	if err != nil {
		return fmt.Errorf("sample project: %w", err)
	}
	dst := filepath.Join(dir, filepath.FromSlash(name))
	parent := path.Dir(name)
	perm := os.FileMode(0o755)
	if parent == ".story-automator" || strings.HasPrefix(parent, ".story-automator/") {
		perm = 0o700
	}
	if err := os.MkdirAll(filepath.Dir(dst), perm); err != nil {
		return fmt.Errorf("write sample project: %w", err)
	}
	mode := os.FileMode(0o644)
	if bytes.HasPrefix(data, []byte("#!")) {
		mode = 0o755
	}
	if err := atomicfile.Write(dst, data, mode); err != nil {
		return fmt.Errorf("write sample project: %w", err)
	}
	return nil
}
