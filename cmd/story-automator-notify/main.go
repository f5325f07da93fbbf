// The same start-up settings as story-automator's (see its main.go).
//go:debug containermaxprocs=0

// Command story-automator-notify makes one webhook POST for story-automator
// (the request as JSON on stdin, the reply as JSON on stdout), so that only
// it links net/http and its TLS stack: story-automator runs it for each try
// of each webhook, with a deadline.
package main

import (
	"os"

	"github.com/story-automator/story-automator/notify/webhook/post"
)

func main() {
	os.Exit(post.Run(os.Stdin, os.Stdout, os.Stderr))
}
