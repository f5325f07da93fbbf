package main

import (
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/coded"
)

// A command that returns a coded error wrapped in plain context, with no
// conversion of its own, still prints the error's code and ends with its exit
// status: the mapping is in one place (cliio.ExitCode), not at each call site.
// Not parallel: it adds a command to the process-wide table for its duration.
func TestAWrappedCodedErrorKeepsItsCodeAndExitStatus(t *testing.T) {
	saved := commandFactories
	t.Cleanup(func() { commandFactories = saved })
	commandFactories = append(commandFactories[:len(saved):len(saved)], func() *cli.Command {
		return &cli.Command{Name: "probe", Action: func(c *cli.Context) error {
			if c.Bool("usage") {
				return fmt.Errorf("probe: %w", fmt.Errorf("read flags: %w", coded.Usage("--usage is not welcome")))
			}
			return fmt.Errorf("probe: %w", coded.Fail("probe_refused", "the probe was refused").WithAction("ask again"))
		}, Flags: []cli.Flag{&cli.BoolFlag{Name: "usage"}}}
	})
	res, code := runCLI(t, t.TempDir(), "probe")
	if code != 1 || res["ok"] != false || res["error"] != "probe_refused" || res["message"] != "the probe was refused" || res["action"] != "ask again" {
		t.Fatalf("failure: exit %d, %v", code, res)
	}
	res, code = runCLI(t, t.TempDir(), "probe", "--usage")
	if code != 2 || res["error"] != "usage_error" || res["message"] != "--usage is not welcome" {
		t.Fatalf("usage: exit %d, %v", code, res)
	}
}
