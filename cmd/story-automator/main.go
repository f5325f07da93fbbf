// GOMAXPROCS is the machine's CPU count, not the cgroup's quota: the tool
// mostly waits on other processes. (Go 1.26 still reads the cgroup files
// once at start, to count the setting's use; with the quota off it keeps no
// cgroup open and never reads them again while a monitor waits.)
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
