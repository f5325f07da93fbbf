// The same start-up settings as story-automator's (see its main.go).
//go:debug containermaxprocs=0

// Command story-automator-model-sim is `story-automator model-sim` in its own
// program, so that only it links net/http: story-automator hands its
// arguments over unchanged by replacing itself with this program.
package main

import (
	"os"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/modelsim/serve"
)

// version may be set with -ldflags -X main.version=…, as story-automator's.
var version string

func main() {
	os.Exit(serve.Run(os.Args[1:], cliio.SystemStreams(), version))
}
