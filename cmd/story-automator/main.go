// Command story-automator runs autonomous story-automation runs and prompt loops for AI coding agents.
package main

import "os"

func main() {
	os.Exit(Run(os.Args[1:], SystemStreams()))
}
