package main

import (
	"fmt"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/modelsim/cmdline"
)

// modelSimCommand is model-sim's command line; its server runs in its own
// program beside this one (cmdline.BinaryName), so that this binary does not
// link net/http: every other command starts faster.
func modelSimCommand() *cli.Command { return cmdline.Command(modelSimAction) }

// modelSimAction replaces this process with model-sim's program, handing the
// arguments over unchanged: the pid, the signals and the output a caller
// sees stay model-sim's.
func modelSimAction(c *cli.Context) error {
	e := envOf(c)
	exe, err := e.Exe()
	if err != nil {
		return fmt.Errorf("find story-automator's own path: %w", err)
	}
	prog, err := cmdline.Program(exe)
	if err != nil {
		return err
	}
	if err := syscall.Exec(prog, append([]string{prog}, e.Args...), e.Environ()); err != nil {
		return fmt.Errorf("start %s: %w", prog, err)
	}
	return nil
}
