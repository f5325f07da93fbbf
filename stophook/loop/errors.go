// Package loop holds a prompt loop's lifecycle rules: how a loop is shaped,
// started, imported from Ralph or Forge, paused, resumed, cancelled and
// reported, and what each state allows. The Stop hook (package stophook)
// drives a running loop; this package is what `story-automator loop` calls.
package loop

import "github.com/story-automator/story-automator/internal/coded"

var (
	fail  = coded.Fail
	usage = coded.Usage
)
