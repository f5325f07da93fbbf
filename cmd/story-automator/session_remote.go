package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/workflows"
)

// remoteAttempt finds, in the project's latest run, the story whose
// attempt ran (or runs) in session name on an ssh host: its host spec,
// run and story; ok is false for a session of this machine.
func remoteAttempt(e *runtimeEnv, name string) (spec workflows.Host, run, story string, ok bool) {
	path := orchestrator.LatestState(marker.NewStore(e.ProjectRoot, e.Getenv), e.ProjectRoot)
	if path == "" {
		return spec, "", "", false
	}
	st, err := orchestrator.LoadState(path)
	if err != nil {
		return spec, "", "", false
	}
	for _, u := range st.Units {
		if u.Host == "" || u.Host == workflows.LocalHost {
			continue
		}
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				if a.Session != name {
					continue
				}
				pol, err := workflows.LoadPolicy(e.ProjectRoot)
				if err != nil {
					return spec, "", "", false
				}
				spec, ok = pol.Host(u.Host)
				return spec, st.RunID, u.Key, ok && !spec.Local()
			}
		}
	}
	return spec, "", "", false
}

// remoteCapture is `session capture` of a child on an ssh host: the
// host's own capture, over the project's connection to it (the run's,
// while it is open). handled is false for a session of this machine.
func remoteCapture(ctx context.Context, e *runtimeEnv, name string, lines int) (handled bool, err error) {
	spec, run, story, ok := remoteAttempt(e, name)
	if !ok {
		return false, nil
	}
	h, err := openHost(e, spec)
	if err != nil {
		return true, err
	}
	_, prefix, _ := gitvcs.TopOf(ctx, e.ProjectRoot)
	line := tmuxsteps.CloneCommand(h, wire.ProjectName(e.ProjectRoot), prefix, run, story,
		"session", "capture", name, "--lines", strconv.Itoa(lines))
	var out bytes.Buffer
	_, err = h.Run(ctx, hosts.Request{Args: []string{"sh", "-c", line}, Stdout: &out})
	if h.Stats().Connects > 0 {
		// No run had a connection open: this one ends with the command.
		_ = h.Close(context.WithoutCancel(ctx))
	}
	var ee *hosts.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		err = cliio.ExitStatus(ee.Code)
	default:
		return true, err
	}
	// The host printed its own JSON answer, success or failure.
	_, _ = e.Out.Write(out.Bytes())
	return true, err
}
