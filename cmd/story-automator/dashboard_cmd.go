package main

import (
	"fmt"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/dashboard/program"
	"github.com/story-automator/story-automator/internal/cliapp"
)

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:    "dashboard",
		Aliases: []string{"dash"},
		Usage:   "the full-screen view of the project's run: stories × steps, attempts, the working child's live pane, runs, loops; attach, pause, resume and stop on a key",
		Action:  dashboardAction,
	}
}

// dashboardAction replaces this process with the dashboard's program,
// naming the project, the tmux socket given and this binary (which the
// dashboard's resume key runs).
func dashboardAction(c *cli.Context) error {
	if err := cliapp.NoArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	exe, err := e.Exe()
	if err != nil {
		return fmt.Errorf("find story-automator's own path: %w", err)
	}
	prog, err := program.Path(exe)
	if err != nil {
		return err
	}
	argv := []string{prog, "--project-root", e.ProjectRoot, "--exe", exe}
	if e.TmuxSocket != "" {
		argv = append(argv, "--tmux-socket", e.TmuxSocket)
	}
	if err := syscall.Exec(prog, argv, e.Environ()); err != nil {
		return fmt.Errorf("start %s: %w", prog, err)
	}
	return nil
}
