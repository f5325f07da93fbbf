package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/tmux"
)

// resolveCommand is `resolve STORY`: the dashboard's resolve, confirm and
// replan keys call the same resolve.Resolver.
func resolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "talk a story the run escalated or parked through with an agent, in tmux, then re-arm it for `run --resume`",
		ArgsUsage: "STORY",
		Description: "Opens an interactive session of the run's agent (confined as the run's children are) seeded with why the story " +
			"stopped: its spec, the blocking condition, the verifier's word, its last attempts' output, the intent-gap patch. " +
			"When the session ends normally (the agent exits 0) the story is re-armed: a blocked spec goes back to draft when its " +
			"plan changed or was never implemented, else to ready-for-dev (a status you set yourself is kept), and its unit and " +
			"step are pending again in the run's state. A session killed or left re-arms nothing. STORY is the story's key (1-2), " +
			"number (1.2) or board key, as `status` shows it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-interactive", Usage: "no session: re-arm the story after a fix you made yourself"},
			&cli.StringFlag{Name: "message", Usage: "what you did, for the run's log"},
			&cli.BoolFlag{Name: "restore-patch", Usage: "an intent gap you accept as it is: re-apply the patch the worker saved (git apply) and set the spec in-review, so the review resumes without implementing again"},
			&cli.BoolFlag{Name: "resume", Usage: "then run `run --resume`"},
			&cli.BoolFlag{Name: "trust-project", Usage: "answer the agent CLI's \"trust this folder?\" for the project folder"},
		},
		Action: resolveAction,
	}
}

func resolveAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return coded.Usage("resolve needs exactly one STORY (its key, number or board key, as `status` shows it)")
	}
	e := envOf(c)
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	r := resolve.Resolver{Root: e.ProjectRoot, Getenv: e.Getenv, Now: e.Now}
	interactive := !c.Bool("no-interactive") && !c.Bool("restore-patch")
	if interactive {
		exe, err := e.Exe()
		if err != nil {
			return fmt.Errorf("find story-automator's own path: %w", err)
		}
		in := e.In
		if in == nil {
			in = os.Stdin
		}
		r.Session = resolve.TmuxSession{Tmux: tmux.New(projectSocket(e)), Exe: exe, Environ: e.Environ(), StateDir: sessionStateDir(e),
			TrustProject: c.Bool("trust-project"), Terminal: &tmux.Terminal{In: in, Out: cliio.RawOut(e.Out), Err: e.Err},
			Started: func(name string) {
				fmt.Fprintf(e.Err, "resolve session %s: end it (exit the agent) when the story is fixed; it is re-armed then\n", name)
			}}
	}
	res, err := r.Resolve(ctx, resolve.Options{Story: c.Args().First(), RestorePatch: c.Bool("restore-patch"), Message: c.String("message")})
	if err != nil {
		return err
	}
	fields := map[string]any{"story": res.Story, "step": res.Step, "stateFile": res.StateFile, "next": res.Resume}
	for k, v := range map[string]string{"spec": res.Spec, "specFrom": res.SpecFrom, "specTo": res.SpecTo, "patch": res.Patch} {
		if v != "" {
			fields[k] = v
		}
	}
	text := func(w io.Writer) {
		fmt.Fprintf(w, "Re-armed story %s: its %s step is pending again.\n", res.Story, res.Step)
		if res.Patch != "" {
			fmt.Fprintf(w, "Re-applied %s.\n", res.Patch)
		}
		if res.SpecTo != "" {
			fmt.Fprintf(w, "Spec %s: %s → %s.\n", res.Spec, res.SpecFrom, res.SpecTo)
		}
		if !c.Bool("resume") {
			fmt.Fprintf(w, "Next: %s\n", res.Resume)
		}
	}
	if err := cliio.Emit(e.Out, cliio.OK(fields), text); err != nil || !c.Bool("resume") {
		return err
	}
	def := monitor.DefaultOptions()
	return runAction(c, &runOptions{Resume: true, JSON: c.Bool("json"), Parallel: 1, CompletionRechecks: def.Rechecks, RecheckGrace: def.RecheckGrace,
		IsSet: func(string) bool { return false }})
}
