package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/workflows"
)

// remoteAttempt finds, in the project's latest run, where session name ran
// (or runs) on an ssh host and that host's spec; ok is false for a session
// of this machine.
func remoteAttempt(e *runtimeEnv, name string) (spec workflows.Host, w remotesession.Where, ok bool) {
	path := orchestrator.LatestState(marker.NewStore(e.ProjectRoot, e.Getenv), e.ProjectRoot)
	if path == "" {
		return spec, w, false
	}
	st, err := orchestrator.LoadState(path)
	if err != nil {
		return spec, w, false
	}
	if w, ok = remotesession.Find(st, name); !ok {
		return spec, w, false
	}
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return spec, w, false
	}
	spec, ok = pol.Host(w.Host)
	return spec, w, ok && !spec.Local()
}

// onRemoteHost runs do with the host of session name when it is a child of
// the run on an ssh host, over the project's connection to that host (the
// run's, while it is open; else one that ends with the command). handled
// is false for a session of this machine.
func onRemoteHost(ctx context.Context, e *runtimeEnv, name string,
	do func(h *hosts.Host, prefix string, w remotesession.Where) error) (handled bool, err error) {
	spec, w, ok := remoteAttempt(e, name)
	if !ok {
		return false, nil
	}
	h, err := openHost(e, spec)
	if err != nil {
		return true, err
	}
	defer func() {
		if h.Stats().Connects > 0 {
			_ = h.Close(context.WithoutCancel(ctx))
		}
	}()
	return true, do(h, remotesession.Prefix(ctx, e.ProjectRoot), w)
}

// remoteCapture is `session capture` of a child on an ssh host: the
// host's own capture.
func remoteCapture(ctx context.Context, e *runtimeEnv, name string, lines int, colors bool) (handled bool, err error) {
	return onRemoteHost(ctx, e, name, func(h *hosts.Host, prefix string, w remotesession.Where) error {
		out, err := remotesession.Capture(ctx, h, e.ProjectRoot, prefix, w, name, lines, colors)
		var ee *hosts.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			err = cliio.ExitStatus(ee.Code)
		default:
			return err
		}
		// The host printed its own JSON answer, success or failure.
		_, _ = e.Out.Write(out)
		return err
	})
}

// remoteAttach is `session attach` of a child on an ssh host: the host's
// own attach, with a terminal of its own (ssh -t).
func remoteAttach(ctx context.Context, e *runtimeEnv, name string, in io.Reader) (handled bool, err error) {
	return onRemoteHost(ctx, e, name, func(h *hosts.Host, prefix string, w remotesession.Where) error {
		argv, err := remotesession.AttachArgv(ctx, h, e.ProjectRoot, prefix, w, name)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, cliio.RawOut(e.Out), e.Err
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return cliio.ExitStatus(ee.ExitCode())
			}
			return fmt.Errorf("attach %s on %s: %w", name, h.Name, err)
		}
		return nil
	})
}
