package cliapp

import (
	"reflect"
	"testing"

	"github.com/urfave/cli/v2"
)

func fakeGlobals() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "project-root"}, &cli.StringFlag{Name: "log-level"}, &cli.BoolFlag{Name: "quiet"}}
}

func fakeApp() *cli.App {
	return &cli.App{
		Flags: fakeGlobals(),
		Commands: []*cli.Command{
			{Name: "monitor-session", Flags: []cli.Flag{&cli.StringFlag{Name: "timeout"}, &cli.BoolFlag{Name: "json"}}},
			{Name: "loop", Subcommands: []*cli.Command{
				{Name: "start", Flags: []cli.Flag{&cli.IntFlag{Name: "max-iterations", Aliases: []string{"n"}}}},
			}},
		},
	}
}

func TestReorder(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"monitor-session", "NAME", "--timeout", "3s"}, []string{"monitor-session", "--timeout", "3s", "--", "NAME"}},
		{[]string{"monitor-session", "--timeout=3s", "NAME", "--json"}, []string{"monitor-session", "--timeout=3s", "--json", "--", "NAME"}},
		{[]string{"loop", "start", "do the thing", "--max-iterations", "3"}, []string{"loop", "start", "--max-iterations", "3", "--", "do the thing"}},
		{[]string{"loop", "start", "-n", "3", "-x-prompt-starting-with-dash"}, []string{"loop", "start", "-n", "3", "-x-prompt-starting-with-dash"}},
		{[]string{"loop", "start", "--", "--not-a-flag", "--max-iterations"}, []string{"loop", "start", "--", "--not-a-flag", "--max-iterations"}},
		{[]string{"monitor-session", "N", "--project-root", "/p"}, []string{"--project-root", "/p", "monitor-session", "--", "N"}},
		{[]string{"--log-level", "debug", "monitor-session", "N"}, []string{"--log-level", "debug", "monitor-session", "--", "N"}},
		{[]string{"--quiet", "monitor-session", "N", "--log-level=info"}, []string{"--quiet", "--log-level=info", "monitor-session", "--", "N"}},
		{[]string{"unknown", "x", "--y"}, []string{"unknown", "x", "--y"}},
	}
	for _, tc := range cases {
		in := append([]string(nil), tc.in...)
		if got := Reorder(fakeApp(), in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Reorder(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("Reorder(%q) changed its argument to %q", tc.in, in)
		}
	}
}

func TestHelpAsFlag(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "loop", "start"}, []string{"loop", "start", "--help"}},
		{[]string{"--project-root", "help", "help", "loop"}, []string{"--project-root", "help", "loop", "--help"}},
		{[]string{"loop", "help"}, []string{"loop", "help"}},
	}
	for _, tc := range cases {
		if got := HelpAsFlag(fakeApp(), tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HelpAsFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLeadingFlagsReadsOnlyTheFlagsBeforeTheCommandAndNeverFails(t *testing.T) {
	cases := []struct {
		in    []string
		want  map[string]string
		first string
	}{
		{[]string{"stop-hook"}, map[string]string{}, "stop-hook"},
		{[]string{"--project-root", "/p", "--log-level=debug", "stop-hook", "--log-level", "x"},
			map[string]string{"project-root": "/p", "log-level": "debug"}, "stop-hook"},
		{[]string{"--quiet", "--bogus", "--project-root=/q", "run"}, map[string]string{"project-root": "/q"}, "run"},
		{[]string{"--project-root"}, map[string]string{}, ""},
		{nil, map[string]string{}, ""},
	}
	for _, tc := range cases {
		got, first := LeadingFlags(fakeGlobals(), tc.in)
		if !reflect.DeepEqual(got, tc.want) || first != tc.first {
			t.Errorf("LeadingFlags(%q) = %v, %q; want %v, %q", tc.in, got, first, tc.want, tc.first)
		}
	}
}
