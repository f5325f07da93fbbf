package main

import (
	"io"
	"strings"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/status"
)

// printStatus prints one status frame: JSON for machines (--json, or stdout
// not a terminal), text for a person, redrawn in place under --watch.
func printStatus(e *runtimeEnv, v status.View, asJSON, watching bool) error {
	if asJSON || !cliio.IsTerminal(e.Out) {
		fields, err := v.Fields()
		if err != nil {
			return err
		}
		return cliio.OKJSON(e.Out, fields)
	}
	if !watching {
		status.WriteText(e.Out, v, e.Now())
		return nil
	}
	var frame strings.Builder
	status.WriteText(&frame, v, e.Now())
	_, err := io.WriteString(e.Out, status.RedrawFrame(frame.String()))
	return err
}
