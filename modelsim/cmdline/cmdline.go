// Package cmdline is `story-automator model-sim`: its flags and help, and
// its action (start the server, announce it, serve until a signal).
package cmdline

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// PointingHelp tells, per agent CLI, how to point it at a model-sim whose
// base URL is URL (for --help).
const PointingHelp = "Point the CLIs at it:\n" +
	"  claude:  ANTHROPIC_BASE_URL=URL ANTHROPIC_API_KEY=any\n" +
	"  codex:   config.toml model_provider with base_url = \"URL/v1\", wire_api = \"responses\", env_key\n" +
	"  gemini:  GOOGLE_GEMINI_BASE_URL=URL GEMINI_API_KEY=any, security.auth.selectedType = \"gemini-api-key\"\n" +
	"  copilot: COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=URL/v1 COPILOT_PROVIDER_WIRE_API=responses COPILOT_PROVIDER_API_KEY=any COPILOT_MODEL=gpt-5.4"

// Command is `story-automator model-sim` running action: the one definition
// of its flags and help.
func Command(action cli.ActionFunc) *cli.Command {
	return &cli.Command{
		Name:  "model-sim",
		Usage: "serve a scripted model endpoint on loopback (Anthropic Messages, OpenAI Responses, Gemini) for running the real agent CLIs offline",
		Description: "Prints its base URL, then serves until interrupted. The brain works through the CLI's own tools:\n" +
			"a story-automator step prompt makes the agent run `story-automator agent-sim --behaviour bmad` in its shell;\n" +
			"a prompt that says run `CMD` makes it run CMD; --script FILE adds rules (see docs/model-sim.md).\n\n" +
			PointingHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "loopback host:port to listen on (port 0 = any free port)"},
			&cli.StringFlag{Name: "script", Usage: "YAML or JSON rules the brain follows before its built-in behaviour"},
			&cli.StringFlag{Name: "record", Usage: "append every exchange (request and answer) to this file as JSON lines"},
			&cli.BoolFlag{Name: "json", Usage: "print the URLs as JSON even on a terminal"},
			&cli.StringFlag{Name: "home", Usage: "also write a private HOME in this directory that points --home-agent at this server (its onboarding, key approval and the trust of --trust settled); its environment is printed as `env` (JSON) or export lines"},
			&cli.StringFlag{Name: "home-agent", Value: agent.DefaultAgent(), Usage: "the agent CLI --home is written for: " + agent.OrList(offline.Agents())},
			&cli.StringSliceFlag{Name: "trust", Usage: "with --home: a project folder the CLI trusts (repeatable)"},
		},
		Action: action,
	}
}

// Serve is the command's action: it serves until SIGINT, SIGTERM or SIGHUP,
// printing the URLs (and, with --home, the environment) to out first. exe is
// the story-automator the agents model-sim drives run for a step.
func Serve(c *cli.Context, out io.Writer, exe string, log zerolog.Logger) error {
	opts := modelsim.Options{Listen: c.String("listen"), RecordFile: c.String("record"), Exe: exe}
	if f := c.String("script"); f != "" {
		script, err := modelsim.LoadScript(f)
		if err != nil {
			return err
		}
		opts.Script = script
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
	if err := cliio.Emit(out, cliio.OK(urls.Fields(os.Getpid(), envLines)), text); err != nil {
		return err
	}
	<-ctx.Done()
	u := srv.TotalUsage()
	log.Info().Int("exchanges", len(srv.Exchanges())).Int("inputTokens", u.InputTokens).
		Int("outputTokens", u.OutputTokens).Msg("model-sim stopped")
	return nil
}
