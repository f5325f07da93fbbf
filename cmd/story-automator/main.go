// The runtime's default GOMAXPROCS reads the cgroup's CPU quota at start:
// four files, 5 % of a Stop-hook call. The tool mostly waits on other
// processes, so the machine's CPU count is as good a GOMAXPROCS.
//go:debug containermaxprocs=0

// Command story-automator runs autonomous story-automation runs and prompt loops for AI coding agents.
package main

import (
	"os"

	"github.com/story-automator/story-automator/internal/cliio"
)

func main() {
	os.Exit(Run(os.Args[1:], cliio.SystemStreams()))
}
