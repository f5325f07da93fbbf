package cliapp

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
)

// A leaf command that names no arguments refuses them before it runs; one
// that names some, or a group, is left to take them.
func TestALeafCommandWithoutArgsUsageRefusesArguments(t *testing.T) {
	ran := map[string]int{}
	act := func(name string) cli.ActionFunc { return func(*cli.Context) error { ran[name]++; return nil } }
	app := New(App{Name: "tool", Streams: &cliio.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}},
		Commands: []*cli.Command{
			{Name: "show", Action: act("show")},
			{Name: "get", ArgsUsage: "NAME", Action: act("get")},
			{Name: "group", Subcommands: []*cli.Command{{Name: "list", Action: act("list")}}},
		}})
	for _, args := range [][]string{{"show"}, {"get", "x"}, {"group", "list"}} {
		if err := Run(app, args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	for _, args := range [][]string{{"show", "extra"}, {"group", "list", "extra"}} {
		var f *coded.Error
		if err := Run(app, args); !errors.As(err, &f) || f.Exit != 2 || !strings.Contains(f.Message, "takes no arguments") {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if ran["show"] != 1 || ran["get"] != 1 || ran["list"] != 1 {
		t.Errorf("actions ran %v: a refused call must not run its command", ran)
	}
}
