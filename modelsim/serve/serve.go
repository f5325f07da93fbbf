// Package serve is story-automator-model-sim: the model-sim command's real
// action (start the server, announce it, serve until a signal), in the
// program that alone links modelsim and net/http.
package serve

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/cmdline"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// MainName is the story-automator program beside this one: the binary the
// agents model-sim drives run for a step.
const MainName = "story-automator"

// Run runs `story-automator ARGS…` where ARGS name model-sim, as the main
// binary hands them over (global flags included), and returns the exit code.
// Run directly, the command's name may be left out.
func Run(args []string, s *cliio.Streams, version string) int {
	if slices.Equal(args, []string{"--version"}) {
		fmt.Fprintln(s.Out, cmdline.BinaryName, buildinfo.Version(version))
		return 0
	}
	s = cliio.HumanStreams(s, args)
	cmd := cmdline.Command(nil)
	if _, first := cliapp.LeadingFlags(cliapp.GlobalFlags(), args); first != cmd.Name {
		args = append([]string{cmd.Name}, args...)
	}
	var log zerolog.Logger
	cmd.Action = func(c *cli.Context) error { return action(c, s, log) }
	app := cliapp.New(cliapp.App{
		Name:     MainName,
		Version:  buildinfo.Version(version),
		Usage:    "the scripted model endpoint of story-automator model-sim",
		Flags:    cliapp.GlobalFlags(),
		Commands: []*cli.Command{cmd},
		Streams:  s,
		Before: func(c *cli.Context) (err error) {
			log, err = cliapp.Logger(c.String(cliapp.FlagLogLevel), c.String(cliapp.FlagLogFile), s.Err)
			return err
		},
	})
	return cliio.ExitCode(s, cliapp.Run(app, args))
}

func action(c *cli.Context, s *cliio.Streams, log zerolog.Logger) error {
	opts := modelsim.Options{Listen: c.String("listen"), RecordFile: c.String("record")}
	if f := c.String("script"); f != "" {
		script, err := modelsim.LoadScript(f)
		if err != nil {
			return err
		}
		opts.Script = script
	}
	if self, err := s.Exe(); err == nil {
		opts.Exe = filepath.Join(filepath.Dir(self), MainName)
	}
	srv, err := modelsim.Start(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	// Before the URLs are printed: whoever reads them may stop us at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	urls := modelsim.BaseURLs(srv.URL())
	var envLines []string
	if c.String("home") != "" {
		if envLines, err = offline.WriteHome(c.String("home-agent"), c.String("home"), srv.URL(), c.StringSlice("trust")); err != nil {
			return err
		}
	}
	text := func(w io.Writer) { urls.WriteText(w, envLines) }
	if err := cliio.Emit(s.Out, cliio.OK(urls.Fields(os.Getpid(), envLines)), text); err != nil {
		return err
	}
	<-ctx.Done()
	u := srv.TotalUsage()
	log.Info().Int("exchanges", len(srv.Exchanges())).Int("inputTokens", u.InputTokens).
		Int("outputTokens", u.OutputTokens).Msg("model-sim stopped")
	return nil
}
