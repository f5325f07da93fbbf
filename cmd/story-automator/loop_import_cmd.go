package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
)

// loopImportCommand is `loop import FILE`: it takes over a Ralph or Forge
// loop's state file so a user migrates without losing the loop.
func loopImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "take over a Ralph (.claude/ralph-loop.local.md) or Forge (.claude/forge-loop.*.local.md) loop",
		ArgsUsage: "FILE",
		Flags: append(loopShapeFlags(),
			&cli.BoolFlag{Name: "keep-source", Usage: "leave FILE in place (by default it is renamed to FILE.imported so the old hook stops acting on it)"}),
		Action: loopImport,
	}
}

func loopImport(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliio.UsageError("loop import needs exactly one FILE")
	}
	e := envOf(c)
	path := c.Args().First()
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.ProjectRoot, path)
	}
	data, err := readLimited(e, path)
	if err != nil {
		return cliio.Fail("import_unreadable", "%v", err)
	}
	src, err := stophook.ParseLoopFile(path, data)
	if err != nil {
		return cliio.Fail("import_invalid", "%v", err)
	}
	l, warnings, err := loopShape(c)
	if err != nil {
		return err
	}
	warnings = append(warnings, importLimits(c, src, l)...)
	l.Prompt, l.Iteration, l.StartedAt, l.ImportedFrom = src.Prompt, max(src.Iteration, 1), src.StartedAt, path
	if !c.IsSet("completion-promise") {
		l.CompletionPromise = src.CompletionPromise
	}
	m := newLoopMarker(c, l, loopOwner(c, src.OwnerSession))
	if src.Active != "true" {
		m.Pause(fmt.Sprintf("imported %s loop was %s", src.Format, src.Active))
	}
	extra := map[string]any{"importedFrom": path, "format": src.Format}
	return importAndRetire(c, m, warnings, extra, path)
}

// importLimits sets the imported loop's iteration limit: the flag, else the
// file's (capped at the ceiling), else the default; never unlimited.
func importLimits(c *cli.Context, src stophook.ImportedLoop, l *marker.LoopState) []string {
	switch {
	case c.IsSet("max-iterations"):
		return nil
	case src.MaxIterations == 0:
		return []string{fmt.Sprintf("the source loop had no iteration limit; this one stops at %d (use --max-iterations to change it)", l.MaxIterations)}
	case src.MaxIterations > marker.MaxIterationsCeiling:
		l.MaxIterations = marker.MaxIterationsCeiling
		return []string{fmt.Sprintf("max_iterations %d is above the ceiling; capped at %d", src.MaxIterations, marker.MaxIterationsCeiling)}
	}
	l.MaxIterations = src.MaxIterations
	return nil
}

// importAndRetire creates the loop and then renames the source file out of
// the old hook's sight, so the two hooks never drive the same loop.
func importAndRetire(c *cli.Context, m *marker.Marker, warnings []string, extra map[string]any, path string) error {
	if !c.Bool("keep-source") {
		if err := refuseImportOver(c); err != nil {
			return err
		}
		retired := path + ".imported"
		if err := os.Rename(path, retired); err != nil {
			return cliio.Fail("import_retire", "cannot rename %s out of the old hook's way: %v (pass --keep-source to leave it)", path, err)
		}
		extra["sourceRenamedTo"] = retired
		err := createLoop(c, m, warnings, extra)
		if err != nil {
			_ = os.Rename(retired, path) // the import failed: give the old loop back
		}
		return err
	}
	return createLoop(c, m, warnings, extra)
}

// refuseImportOver checks before the source is touched that a loop may be created.
func refuseImportOver(c *cli.Context) error {
	m, err := markerStore(c).Read()
	if errors.Is(err, marker.ErrCorrupt) && !c.Bool("replace") {
		return cliio.Fail("marker_corrupt", "%v (use --replace to overwrite it)", err)
	}
	return refuseOver(m, c.Bool("replace"))
}
