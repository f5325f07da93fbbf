package monitor

import (
	"context"
	"os"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/limit"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// Limited results: a child whose CLI gave up at a usage limit, a rate
// limit or an API fault ends "limited" at once, with the reason and the
// reset time its CLI gave (package limit reads them with the signs its
// profile lists), never by a timeout.

// transcriptGrace is how long after its limit hook ran a CLI's record may
// still lack the limit: Claude Code runs StopFailure as it writes the
// transcript line with the exact reset, so the monitor waits that long for it.
const transcriptGrace = 5 * time.Second

// hookLimit reads the limit the child's hook recorded (Claude Code's
// StopFailure) since the last text sent to it.
func (o *observer) hookLimit(st *sessionstate.State, now time.Time) *limit.Signal {
	if st == nil || st.Limit == nil {
		return nil
	}
	at, ok := marker.ParseTime(st.Limit.At)
	if !ok {
		return nil
	}
	if st.SendBaseline != nil {
		if sent, ok := marker.ParseTime(st.SendBaseline.At); ok && at.Before(sent) {
			return nil // a limit of a turn before the last send
		}
	}
	p, _ := agent.LookupProfile(st.Agent)
	sig, ok := limit.FromHook(p.Limits, st.Limit.Error, st.Limit.Message, st.Transcript, limit.Where{At: at})
	if !ok {
		return nil
	}
	if p.Limits.Record == agent.LimitRecordTranscript && st.Transcript != "" && now.Sub(at) < transcriptGrace {
		if _, recorded := limit.FromTranscript(st.Transcript); !recorded {
			if o.limitDue.IsZero() {
				o.limitDue, o.limitRecord = at.Add(transcriptGrace), st.Transcript
			}
			return nil
		}
	}
	return &sig
}

// exitLimit reads the last output of a child that exited non-zero for its
// CLI's signs of giving up; a retry delay counts from the exit.
func exitLimit(p agent.Profile, st *sessionstate.State, tail string, now time.Time) *limit.Signal {
	at := now
	if t, ok := marker.ParseTime(st.ExitedAt); ok {
		at = t
	}
	sig, ok := limit.FromExit(p.Limits, tail, limit.Where{At: at})
	if !ok {
		return nil
	}
	if p.Limits.Record == agent.LimitRecordRollout && sig.Reason == agent.LimitUsage {
		// The screen names the minute; the CLI's record the second.
		if reset, ok := limit.FromRollout(p.StateHome(os.Getenv), tail); ok {
			sig.ResetsAt = reset
		}
	}
	if p.Limits.Record == agent.LimitRecordOpenCodeDB && sig.Reason == agent.LimitUsage {
		// Its output names no reset; its database keeps the API's.
		if created, ok := marker.ParseTime(st.CreatedAt); ok {
			if reset, ok := limit.FromOpenCodeDB(p.StateHome(os.Getenv), created); ok {
				sig.ResetsAt = reset
			}
		}
	}
	return &sig
}

// stopAutoContinue keeps a limited child from running its turn again by
// itself at the reset (Claude Code's "continuing automatically at …"):
// once its screen shows that, within wait, the profile's cancel key is
// pressed until the screen says the cancel took (for at most wait again).
// Only a usage limit read from a live child can show it.
func (o *observer) stopAutoContinue(ctx context.Context, t Tmux, sig *limit.Signal, wait time.Duration) {
	st := o.last
	if sig == nil || sig.Reason != agent.LimitUsage || sig.Source == limit.SourceExit || st == nil ||
		st.Lifecycle == sessionstate.LifecycleExited {
		return
	}
	p, _ := agent.LookupProfile(st.Agent)
	l := p.Limits
	if l.AutoContinue == "" || l.CancelKey == "" || !o.screenShows(ctx, t, l.AutoContinue, wait) {
		return
	}
	for deadline := time.Now().Add(wait); ; {
		if t.SendKey(ctx, o.name, l.CancelKey) != nil || l.Cancelled == "" ||
			o.screenShows(ctx, t, l.Cancelled, cancelShowsWithin) || time.Now().After(deadline) {
			return
		}
	}
}

// cancelShowsWithin is how long a pressed cancel key has to show on screen
// before it is pressed again.
const cancelShowsWithin = 500 * time.Millisecond
