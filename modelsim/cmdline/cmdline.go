// Package cmdline is the model-sim command line both binaries share (its
// flags and help, and where its own program is), linking neither modelsim
// nor net/http, so the main binary can offer the command without their start-up cost.
package cmdline

import (
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// BinaryName is model-sim's own program, installed beside story-automator.
const BinaryName = "story-automator-model-sim"

// PointingHelp tells, per agent CLI, how to point it at a model-sim whose
// base URL is URL (for --help).
const PointingHelp = "Point the CLIs at it:\n" +
	"  claude:  ANTHROPIC_BASE_URL=URL ANTHROPIC_API_KEY=any\n" +
	"  codex:   config.toml model_provider with base_url = \"URL/v1\", wire_api = \"responses\", env_key\n" +
	"  gemini:  GOOGLE_GEMINI_BASE_URL=URL GEMINI_API_KEY=any, security.auth.selectedType = \"gemini-api-key\""

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

// Program is the path of model-sim's own program beside the story-automator
// at exe; a coded model_sim_missing error says how to install it when it is
// not there (a regular, executable file).
func Program(exe string) (string, error) {
	prog := filepath.Join(filepath.Dir(exe), BinaryName)
	fi, err := os.Stat(prog)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return prog, nil
	}
	return "", coded.Fail("model_sim_missing", "model-sim runs as its own program, %s, and there is none beside %s", BinaryName, exe).
		WithAction("build it with `make build`, or install all three programs with: " + InstallLine)
}

// InstallLine is the README's install line (buildinfo.InstallLine).
const InstallLine = buildinfo.InstallLine
