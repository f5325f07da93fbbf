package main

import (
	"io"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/status"
)

// printStatus prints one status frame: JSON for machines (--json, or stdout
// not a terminal), text for a person, redrawn in place under --watch.
func printStatus(e *runtimeEnv, v status.View, watching bool) error {
	fields, err := v.Fields()
	if err != nil {
		return err
	}
	return cliio.Emit(e.Out, cliio.OK(fields), func(w io.Writer) { status.WriteFrame(w, v, e.Now(), watching) })
}
