// Package dashboard is the full-screen terminal view of a project's runs
// (`story-automator dashboard`): the run, its stories × steps and attempts,
// the working child's live pane, the runs and the prompt loops, with actions
// on keys that make the same calls as the commands.
package dashboard

import (
	"context"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Terminal is where the dashboard draws and reads keys.
type Terminal struct {
	In  io.Reader
	Out io.Writer
}

// frameRate is how often a changed frame reaches the terminal: the
// renderer wakes this often even when nothing changes (Bubble Tea's 60 would
// cost an idle dashboard about 1 % of a core), and a key's echo waits at
// most a frame.
const frameRate = 15

// Run shows the dashboard until the user quits.
func Run(ctx context.Context, src Source, ctl Controls, term Terminal) error {
	color := src.Getenv("NO_COLOR") == ""
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(term.In), tea.WithOutput(term.Out),
		tea.WithEnvironment(ctl.Environ), tea.WithFPS(frameRate)}
	if !color {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(New(src, ctl, color), opts...).Run()
	return err
}

// SystemTerminal is the process's own terminal.
func SystemTerminal() Terminal { return Terminal{In: os.Stdin, Out: os.Stdout} }
