package main

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/cliio"
)

// testStreams is a cliio.Streams for in-process command tests: no environment, a
// fixed clock, the given project root as working directory.
func testStreams(root string, out *bytes.Buffer) *cliio.Streams {
	return &cliio.Streams{
		In: strings.NewReader(""), Out: out, Err: io.Discard,
		Getenv:  func(string) string { return "" },
		Environ: func() []string { return nil },
		Now:     func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) },
		Getwd:   func() (string, error) { return root, nil },
		Exe:     func() (string, error) { return "/usr/local/bin/story-automator", nil },
	}
}
