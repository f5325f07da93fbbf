package tmuxsteps

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

// recordQuiet is how long an agent's own record (its transcript) must stay
// unchanged before the session is closed, and recordSettleMax the longest
// the close waits for that.
const (
	recordQuiet     = 300 * time.Millisecond
	recordSettleMax = 3 * time.Second
	recordPoll      = 50 * time.Millisecond
	// recordEndMax is the longest the close waits for an agent's record
	// to end with its profile's RecordEnd (the agent shutting down).
	recordEndMax = 15 * time.Second
)

// settleRecord waits, before a still-running agent is closed, until the
// transcript its Stop hook named stops growing. Claude Code runs its Stop
// hook before it has written the turn's last message to the transcript; a
// session closed at once (the hook's record wakes the monitor within
// milliseconds) lost that message, and with it the usage read from it.
// An agent that exited, or named no transcript, is not waited for.
func (t *Runner) settleRecord(ctx context.Context, name string) {
	st, err := sessionstate.Read(t.StateDir, name)
	if err != nil || st.Transcript == "" || st.Lifecycle == sessionstate.LifecycleExited {
		return
	}
	size := func() (int64, bool) {
		fi, err := os.Stat(st.Transcript)
		if err != nil {
			return 0, false
		}
		return fi.Size(), true
	}
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(recordPoll):
			return true
		}
	}
	if p, ok := agent.LookupProfile(st.Agent); ok && p.RecordEnd != "" {
		ended := func() bool { return recordEnds(st.Transcript, p.RecordEnd) }
		for start := time.Now(); !ended() && time.Since(start) < recordEndMax; {
			if !wait() {
				return
			}
		}
		return
	}
	settle(size, time.Now, wait, recordQuiet, recordSettleMax)
}

// recordEnds reports whether the last lines of the record at path hold end.
func recordEnds(path, end string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	const tail = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(-tail, io.SeekEnd); err != nil {
			return false
		}
	}
	data, err := io.ReadAll(f)
	return err == nil && bytes.Contains(data, []byte(end))
}

// settle returns once size has read the same for quiet (or could not be
// read), after max at the latest, or when wait reports the wait ended.
func settle(size func() (int64, bool), now func() time.Time, wait func() bool, quiet, max time.Duration) {
	start := now()
	last, ok := size()
	if !ok {
		return
	}
	since := start
	for wait() {
		n, ok := size()
		at := now()
		switch {
		case !ok:
			return
		case n != last:
			last, since = n, at
		case at.Sub(since) >= quiet:
			return
		}
		if at.Sub(start) >= max {
			return
		}
	}
}
