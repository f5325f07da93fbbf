package stophook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// Shell is the I/O around Decide: where input comes from, where output goes,
// which marker and environment apply, and what time it is.
type Shell struct {
	In          io.Reader
	Out         io.Writer
	Getenv      func(string) string
	Now         func() time.Time
	ProjectRoot string
	Log         Log
	// LockTimeout bounds the wait for the marker lock; past it the stop is allowed.
	LockTimeout time.Duration

	// decide is Decide; tests replace it to count the decisions of a call.
	decide func(Input, *marker.Marker, error, Env, time.Time) Decision
}

// DefaultLockTimeout is short: a hook that waits long delays every stop.
const DefaultLockTimeout = 2 * time.Second

// Run executes one Stop-hook call. It never returns an error and never blocks
// because of a failure of its own: anything unexpected lets the stop proceed.
//
// A call decides once, under the marker lock, on the marker as it is then;
// before that, only the owner gate (notOwnerStop) is applied to an unlocked
// read, so a stop that is not the owner's takes no lock and gathers nothing.
// A decision that needs a loop's advisor is finished with its verdict, the
// advisor run outside the lock (see advise).
func (s *Shell) Run(ctx context.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error("stop hook failed open", "panic", r)
		}
	}()
	env := EnvFrom(s.Getenv)
	raw, inErr := ReadInputBytes(s.In)
	if env.Child {
		in, _ := DecodeInput(raw)
		switch d := s.decideFn()(in, nil, nil, env, s.Now()); {
		case d.StampLimit:
			s.stampLimit(in, env)
		case d.StampChild:
			s.stampChild(in, env)
		}
		return
	}
	store := marker.NewStore(s.ProjectRoot, s.Getenv)
	switch {
	case s.LockTimeout > 0:
		store.LockTimeout = s.LockTimeout
	case s.Getenv(marker.EnvLockTimeout) == "":
		store.LockTimeout = DefaultLockTimeout
	}
	m, readErr := store.Read()
	if unknownVersion(m, readErr) {
		s.Log.Warn("the marker is of a version this hook does not know; allowing the stop",
			"version", m.Version, "known", marker.SchemaVersion)
		return
	}
	if noActiveMarker(m, readErr) {
		return // every stop proceeds: the input need not even be parsed
	}
	var in Input
	if inErr == nil {
		in, inErr = DecodeInput(raw)
	}
	if inErr != nil {
		s.Log.Warn("unreadable hook input; allowing the stop", "error", inErr)
		return
	}
	if notOwnerStop(in, m, readErr, env) != "" {
		return // Decide would let the stop through and write nothing
	}
	env.Loop = s.gatherLoopFacts(ctx, in, m)
	d, err := s.persist(ctx, store, in, raw, env)
	if err != nil {
		s.Log.Warn("cannot persist the hook's decision; allowing the stop", "error", err)
		// Without the lock: append only, never rotate (see RotateHistory).
		s.appendHistory(store, in, m, Decision{Kind: KindFailOpen, Reason: err.Error()}, false)
		return
	}
	s.print(d.Output)
}

// decideFn is the Decide the shell calls.
func (s *Shell) decideFn() func(Input, *marker.Marker, error, Env, time.Time) Decision {
	if s.decide != nil {
		return s.decide
	}
	return Decide
}

// persist decides under the lock, on the marker as it is now, writes the
// result and appends the history line before anything is printed (persist
// before act). Holding the lock across the append keeps the history in the
// order the marker changed. Decide runs once; a decision that needs the
// loop's advisor is finished by advise.
func (s *Shell) persist(ctx context.Context, store *marker.Store, in Input, raw []byte, env Env) (Decision, error) {
	unlock, err := store.Lock(ctx)
	if err != nil {
		return Decision{}, err
	}
	defer func() { unlock() }()
	cur, readErr := store.Read()
	d := s.decideFn()(in, cur, readErr, env, s.Now())
	if d.ConsultAdvisor {
		if d, cur, err = s.advise(ctx, store, &unlock, in, raw, env, cur, d); err != nil {
			return Decision{}, err
		}
	}
	switch {
	case d.Remove:
		_, err = store.RemoveLocked()
	case d.Next != nil:
		err = store.Write(d.Next)
	}
	if err != nil {
		return Decision{}, err
	}
	recorded := d.Next
	if recorded == nil {
		recorded = cur
	}
	s.appendHistory(store, in, recorded, d, true)
	return d, nil
}

// advise consults the loop's advisor for decision d, without the marker
// lock (an advisor may take seconds, and every other stop and command would
// wait for it), then takes the lock again (*unlock is its release) and
// finishes d with the verdict. A marker that changed meanwhile (a loop
// paused or cancelled from another terminal) lets this stop through
// unchanged: the next stop decides on the marker as it is then. It returns
// the marker as it is after the advisor too.
func (s *Shell) advise(ctx context.Context, store *marker.Store, unlock *func(), in Input, raw []byte, env Env, cur *marker.Marker, d Decision) (Decision, *marker.Marker, error) {
	(*unlock)()
	*unlock = func() {}
	v := s.consultAdvisor(ctx, raw, loopMessage(in, env), cur.Loop)
	relock, err := store.Lock(ctx)
	if err != nil {
		return Decision{}, cur, err
	}
	*unlock = relock
	now, readErr := store.Read()
	if readErr != nil || !reflect.DeepEqual(now, cur) {
		return Decision{Kind: KindFailOpen, Reason: "the marker changed while the loop's advisor ran; letting this stop through"}, now, nil //nolint:nilerr // the hook fails open: the decision says why
	}
	return d.Advised(v), cur, nil
}

func (s *Shell) stampChild(in Input, env Env) {
	if env.ChildSession == "" || !sessionstate.ValidName(env.ChildSession) {
		return
	}
	root := s.ProjectRoot
	dir := sessionstate.Dir(root, s.Getenv)
	if _, err := sessionstate.StampTurnOnce(dir, env.ChildSession, s.Now(), in.LastMessage(), in.TranscriptPath, in.TurnKey()); err != nil {
		s.Log.Warn("cannot record the child's completion", "error", err, "session", env.ChildSession)
	}
}

// stampLimit records the child's turn that ended in an API error.
func (s *Shell) stampLimit(in Input, env Env) {
	if !sessionstate.ValidName(env.ChildSession) {
		return
	}
	dir := sessionstate.Dir(s.ProjectRoot, s.Getenv)
	if _, err := sessionstate.StampLimit(dir, env.ChildSession, s.Now(), in.HookEventName, in.Error, in.LastMessage(), in.TranscriptPath); err != nil {
		s.Log.Warn("cannot record the child's limit", "error", err, "session", env.ChildSession)
	}
}

func (s *Shell) print(out *Output) {
	if out == nil {
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(out) != nil {
		return
	}
	_, _ = s.Out.Write(buf.Bytes())
}
