package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/runview/timeline"
)

// codeHTMLWriteFailed: `runs show --html FILE` could not write FILE.
const codeHTMLWriteFailed = "html_write_failed"

// writeRunHTML draws the run as an HTML page into file (- is stdout) and
// has its state document name the file.
func writeRunHTML(c *cli.Context, st *orchestrator.State, stateFile, file string) error {
	e := envOf(c)
	if file == "" {
		return coded.Usage("--html needs a file name (or - for stdout)")
	}
	now := e.Now()
	// Only a run whose orchestrator still holds the lock (running, or
	// waiting out a limit) is drawn up to now.
	live := st.Status != orchestrator.RunDone && st.Status != orchestrator.RunPaused &&
		st.Status != orchestrator.RunSuperseded && orchestrator.RunLockHeld(e.ProjectRoot)
	page, err := timeline.Render(st, timeline.Options{Live: live, Now: now, StateFile: stateFile})
	if err != nil {
		return err
	}
	if file == "-" {
		_, err := e.Out.Write(page)
		return err
	}
	path, err := absPath(file, e.Getwd)
	if err == nil {
		err = atomicfile.Write(path, page, 0o644)
	}
	if err != nil {
		// The cause without the temp file's name the atomic write used.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return coded.Wrap(codeHTMLWriteFailed, fmt.Errorf("write the timeline of run %s to %s: %w", st.RunID, path, err)).
			WithAction("give --html a file in a directory you can write to, or - to print the page")
	}
	linkErr := orchestrator.LinkTimeline(e.ProjectRoot, stateFile, path, now)
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		out := map[string]any{"runId": st.RunID, "html": path, "stateFile": stateFile, "linked": linkErr == nil}
		if linkErr != nil {
			out["notice"] = linkNotice(linkErr)
		}
		return cliio.OKJSON(e.Out, out)
	}
	fmt.Fprintf(e.Out, "Wrote the timeline of run %s to %s\n", st.RunID, path)
	if linkErr != nil {
		fmt.Fprintln(e.Out, linkNotice(linkErr))
		return nil
	}
	fmt.Fprintf(e.Out, "The state document names it: %s\n", stateFile)
	return nil
}

// absPath is file, relative to the working directory.
func absPath(file string, getwd func() (string, error)) (string, error) {
	if filepath.IsAbs(file) {
		return filepath.Clean(file), nil
	}
	wd, err := getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, file), nil
}

// linkNotice says why the state document does not name the page.
func linkNotice(err error) string {
	if errors.Is(err, orchestrator.ErrRunActive) {
		return "The state document does not name it: a run of this project holds the run lock and owns the document; " +
			"run this again when the run has ended."
	}
	return "The state document does not name it: " + err.Error()
}
