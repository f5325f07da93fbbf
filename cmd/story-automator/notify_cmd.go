package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/notify"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

func notifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "notify",
		Usage: "the notifications a run sends (workflow.yaml's notify: desktop, command, webhooks)",
		Subcommands: []*cli.Command{{
			Name:   "test",
			Usage:  "send one test event to every sink workflow.yaml's notify: sets and say how each went (exit 1 when one failed); approves its command for run --resume",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON (the default when stdout is not a terminal)"}},
			Action: notifyTestAction,
		}},
	}
}

func notifyTestAction(c *cli.Context) error {
	if err := cliapp.NoArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return coded.Fail(workflows.Code(err), "%v", err)
	}
	if !pol.Notify.Configured() {
		return coded.Fail("notify_not_configured", "%s sets no notification sink", workflows.PolicyFile).
			WithAction("add a notify: section with desktop: true, command: or webhook: to %s (see docs/notify.md)", workflows.PolicyFile)
	}
	// You run this by hand: it approves the command a resumed run may run.
	st, stErr := approval.Open(e.Getenv)
	if _, warning := gateNotifyCommand(pol.Notify, st, stErr, true); warning != "" {
		e.Log.Warn().Msg(warning)
	}
	ev := notify.Test(notify.Run{Project: e.ProjectRoot}, e.Now())
	s := &notify.Sender{Sinks: notify.Sinks(pol.Notify, notifyMachine(e)), Timeout: pol.Notify.Timeout}
	outs := s.SendNow(c.Context, ev)
	failed, action := 0, ""
	for _, o := range outs {
		if !o.OK {
			failed++
			action = orString(action, o.Action)
		}
	}
	fields := map[string]any{"event": ev, "sinks": outs}
	if failed == 0 {
		return cliio.Emit(e.Out, cliio.OK(fields), func(w io.Writer) { writeOutcomes(w, outs) })
	}
	if cliio.IsTerminal(e.Out) && !c.Bool("json") {
		writeOutcomes(cliio.RawOut(e.Out), outs)
	}
	f := coded.Fail("notify_failed", "%d of %d notification sinks failed", failed, len(outs))
	f.Action = orString(action, "fix the failing sink in "+workflows.PolicyFile+"'s notify: (or the service it sends to), then run `story-automator notify test` again")
	f.Fields = fields
	return f
}

// writeOutcomes says, a sentence a sink, how the test went.
func writeOutcomes(w io.Writer, outs []notify.Outcome) {
	for _, o := range outs {
		if o.OK {
			fmt.Fprintf(w, "✓ %s: sent.\n", o.Sink)
			continue
		}
		fmt.Fprintf(w, "✗ %s: failed after %d %s: %s\n", o.Sink, o.Tries, map[bool]string{true: "try", false: "tries"}[o.Tries == 1], o.Error)
	}
}

func notifyMachine(e *runtimeEnv) notify.Machine {
	return notify.Machine{Environ: e.Environ(), Dir: e.ProjectRoot}
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runNotifier sends a run's notifications, when workflow.yaml sets any, and
// writes how each went into the run's action log.
type runNotifier struct {
	rep    *notify.RunReporter
	sender *notify.Sender
}

// newRunNotifier wraps next when workflow.yaml sets a notification sink; it
// returns nil otherwise. log is the run's action log. approve says the user
// typed this run (not --resume): its notify command is approved; a resumed
// run sends to it only when it was (gateNotifyCommand).
func newRunNotifier(e *runtimeEnv, next orchestrator.Reporter, log *orchestrator.ActionLog, approve bool) *runNotifier {
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil || !pol.Notify.Configured() {
		return nil // a policy that cannot be read stopped the run already
	}
	st, stErr := approval.Open(e.Getenv)
	n, warning := gateNotifyCommand(pol.Notify, st, stErr, approve)
	if warning != "" {
		e.Log.Warn().Str("file", filepath.Join(e.ProjectRoot, workflows.PolicyFile)).Msg(warning)
	}
	if !n.Configured() {
		return nil
	}
	pol.Notify = n
	s := &notify.Sender{Sinks: notify.Sinks(pol.Notify, notifyMachine(e)), Timeout: pol.Notify.Timeout}
	s.Record = func(o notify.Outcome) {
		if !o.OK {
			e.Log.Warn().Str("sink", o.Sink).Str("event", o.Event.Kind).Msg(o.String())
		}
		if err := log.Add(o.Event.Story, o.Event.Step, o.String()); err != nil {
			e.Log.Warn().Err(err).Msg("cannot write how a notification went into the action log")
		}
	}
	return &runNotifier{sender: s, rep: &notify.RunReporter{Next: next, Sender: s, Policy: pol.Notify, Project: e.ProjectRoot, Now: e.Now}}
}

// gateNotifyCommand applies the user's approval to workflow.yaml's notify
// command, which runs as the user and which a child can rewrite like any
// project file (docs/notify.md). approve (a run the user typed, or `notify
// test`) records the command as approved (internal/approval); otherwise (a
// resumed run) a command not approved is dropped from n. The warning says
// what happened, "" when nothing needs saying.
func gateNotifyCommand(n workflows.Notify, st approval.Store, stErr error, approve bool) (workflows.Notify, string) {
	if strings.TrimSpace(n.Command) == "" {
		return n, ""
	}
	if approve {
		err := stErr
		if err == nil {
			err = st.Approve(n.Command)
		}
		if err != nil {
			return n, fmt.Sprintf("cannot record your approval of the notify command (%v): it runs now, but a resumed run will skip it", err)
		}
		return n, ""
	}
	if stErr == nil && st.Approved(n.Command) {
		return n, ""
	}
	cmd := n.Command
	if len(cmd) > 80 {
		cmd = cmd[:80] + "…"
	}
	n.Command = ""
	return n, fmt.Sprintf("notify command %q is not one you approved (%s may have been changed since the run started): not run. "+
		"Check notify: command: in %s; if it is yours, `story-automator notify test` approves it", cmd, workflows.PolicyFile, workflows.PolicyFile)
}

// end notifies how the run ended and waits, boundedly, for every
// notification to be delivered: a dead webhook delays the exit, never the run.
func (n *runNotifier) end(res *orchestrator.Result, err error) {
	if n == nil {
		return
	}
	n.rep.End(res, err)
	ctx, cancel := context.WithTimeout(context.Background(), n.drainBound())
	defer cancel()
	n.sender.Close(ctx)
}

// drainBound is how long the last notification may take: every try and
// every wait between them, and a little more.
func (n *runNotifier) drainBound() time.Duration {
	try := n.sender.Timeout
	if try <= 0 {
		try = notify.DefaultTimeout
	}
	waits := notify.DefaultBackoff * (1<<(notify.DefaultTries-1) - 1)
	return try*notify.DefaultTries + waits + 5*time.Second
}
