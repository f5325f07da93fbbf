// Package sessionstate owns the per-session state of child sessions: one
// JSON state file per session under the sessions directory, its lock, the
// completion stamps a child's Stop hook records, the output log beside it,
// and the environment a child is started with to find them.
package sessionstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/filelock"
	"github.com/story-automator/story-automator/marker"
)

// The errors a read or an update returns are marker's own values, so one
// errors.Is test (and marker.Code) serves both kinds of state file.
var (
	ErrNotFound    = marker.ErrNotFound
	ErrCorrupt     = marker.ErrCorrupt
	ErrLockTimeout = marker.ErrLockTimeout
)

// Per-session state: one JSON file per child session, shared by the spawner
// (lifecycle, pids, exit status), the child's Stop hook (completion stamp) and
// monitor-session (which watches the directory for changes).
const (
	// EnvChild is "true" in every child session's environment.
	EnvChild = "STORY_AUTOMATOR_CHILD"
	// EnvSession names the child session, so its Stop hook finds its state file.
	EnvSession = "STORY_AUTOMATOR_SESSION"
	// EnvStateDir is the absolute sessions directory handed to every child.
	EnvStateDir      = "STORY_AUTOMATOR_STATE_DIR"
	DefaultStateDir  = ".story-automator/sessions"
	MaxExcerptBytes  = 4096
	maxSessionBytes  = 1 << 20
	sessionLockWait  = 3 * time.Second
	LifecycleStarted = "running"
	LifecycleExited  = "exited"
	// DoneLine is the explicit completion line a child agent may print on a line of its own.
	DoneLine = "STORY_AUTOMATOR_DONE"
)

// ValidName reports whether name is safe as a session name and a file
// name: 1 to 200 characters of [A-Za-z0-9_-].
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 200 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// State is the state file of one child session.
type State struct {
	Name        string           `json:"name"`
	ProjectRoot string           `json:"projectRoot,omitempty"`
	Epic        string           `json:"epic,omitempty"`
	Story       string           `json:"story,omitempty"`
	Step        string           `json:"step,omitempty"`
	Cycle       int              `json:"cycle,omitempty"`
	Agent       string           `json:"agent,omitempty"`
	Lifecycle   string           `json:"lifecycle,omitempty"`
	PaneID      string           `json:"paneId,omitempty"`
	PanePid     int              `json:"panePid,omitempty"`
	AgentPid    int              `json:"agentPid,omitempty"`
	CreatedAt   string           `json:"createdAt,omitempty"`
	StartedAt   string           `json:"startedAt,omitempty"`
	ExitedAt    string           `json:"exitedAt,omitempty"`
	ExitCode    *int             `json:"exitCode,omitempty"`
	Signal      string           `json:"signal,omitempty"`
	OutputFile  string           `json:"outputFile,omitempty"`
	Completion  *CompletionStamp `json:"completion,omitempty"`
	// SendBaseline is where the session stood when text was last sent to it:
	// a monitor counts only the completion signals that come after it.
	SendBaseline *SendBaseline `json:"sendBaseline,omitempty"`
	// AcceptDialogs are the dialog kinds the user let the tool answer for
	// this session (--trust-project: trust_folder); AnsweredDialogs those it
	// has answered, each at most once.
	AcceptDialogs   []string `json:"acceptDialogs,omitempty"`
	AnsweredDialogs []string `json:"answeredDialogs,omitempty"`
	// Transcript is the agent's own record of the session (Claude Code's
	// transcript_path, as its Stop hook names it): where its usage is read.
	Transcript string `json:"transcript,omitempty"`
	// Limit is what the child's limit hook recorded when a turn ended in
	// an API error (Claude Code's StopFailure).
	Limit *LimitStamp `json:"limit,omitempty"`
}

// LimitStamp is what a child's hook records when its turn ended in an API
// error: the event, the error it names ("rate_limit") and the CLI's last
// words (the text it showed).
type LimitStamp struct {
	At      string `json:"at"`
	Event   string `json:"event"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// SendBaseline is a session's completion turns and output size at a `session send`.
type SendBaseline struct {
	At           string `json:"at"`
	Turns        int    `json:"turns"`
	OutputOffset int64  `json:"outputOffset"`
}

// CompletionStamp is what a child's Stop hook records at the end of each turn.
type CompletionStamp struct {
	At      string `json:"at"`
	Turns   int    `json:"turns"`
	Excerpt string `json:"excerpt,omitempty"`
	// Turn names the turn the stamp is for, when the hook's input does
	// (StampTurnOnce): a second hook run for that same turn is not a new turn.
	Turn string `json:"turn,omitempty"`
}

// Dir is where session state and output logs live:
// $STORY_AUTOMATOR_STATE_DIR, else <project-root>/.story-automator/sessions.
func Dir(projectRoot string, getenv func(string) string) string {
	if getenv != nil {
		if v := getenv(EnvStateDir); v != "" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(projectRoot, v)
			}
			return filepath.Clean(v)
		}
	}
	return filepath.Join(projectRoot, DefaultStateDir)
}

// StatePath is the state file of one session.
func StatePath(dir, name string) string { return filepath.Join(dir, name+".json") }

// OutputPath is the log that receives the session's whole pane output.
func OutputPath(dir, name string) string { return filepath.Join(dir, name+".log") }

// Read loads a session's state file.
func Read(dir, name string) (*State, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("invalid session name %q", name)
	}
	p := StatePath(dir, name)
	f, err := atomicfile.OpenRegular(p, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNotFound
		}
		if errors.Is(err, atomicfile.ErrNotRegular) || errors.Is(err, syscall.ELOOP) {
			return nil, &corruptSession{path: p, detail: err}
		}
		return nil, fmt.Errorf("read session state %s: %w", p, err)
	}
	defer f.Close()
	var st State
	dec := json.NewDecoder(&limitedReader{f: f, n: maxSessionBytes})
	if err := dec.Decode(&st); err != nil {
		return nil, &corruptSession{path: p, detail: err}
	}
	return &st, nil
}

// corruptSession is a state file that cannot be read as one (ErrCorrupt).
type corruptSession struct {
	path   string
	detail error
}

func (c *corruptSession) Error() string {
	return fmt.Sprintf("%v: session state %s: %v", ErrCorrupt, c.path, c.detail)
}

func (c *corruptSession) Is(target error) bool { return target == ErrCorrupt }

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("session state too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// MovedAside is a corrupt session state file that was moved out of the way
// (to "<name>.json.corrupt-<UTC time>"). As an error it is ErrNotFound: the
// reader goes on as if the session had no state, and says so with Error.
type MovedAside struct {
	Path, To string
	// Cause is why it could not be read.
	Cause error
}

func (m *MovedAside) Error() string {
	return fmt.Sprintf("%s was corrupt (%v); moved it aside to %s", m.Path, m.Cause, m.To)
}

// Is makes a moved-aside state read as a missing one.
func (m *MovedAside) Is(target error) bool { return target == ErrNotFound }

// ReadOrMoveAside reads a session's state like Read, but a
// corrupt file (bad JSON, too large, not a regular file) is moved aside
// under the state file's lock and a *MovedAside returned: it can never be
// read, so keeping it in place only makes every later reader fail too.
func ReadOrMoveAside(dir, name string, now time.Time) (*State, error) {
	st, err := Read(dir, name)
	if !errors.Is(err, ErrCorrupt) {
		return st, err
	}
	p := StatePath(dir, name)
	release, lerr := filelock.Acquire(context.Background(), p+".lock", sessionLockWait)
	if lerr != nil {
		return nil, err
	}
	defer release()
	st, err = Read(dir, name) // a writer may have replaced it meanwhile
	if !errors.Is(err, ErrCorrupt) {
		return st, err
	}
	return nil, moveAside(p, now, err)
}

func moveAside(p string, now time.Time, cause error) error {
	to, err := atomicfile.MoveAside(p, now)
	if err != nil {
		return errors.Join(cause, err)
	}
	var c *corruptSession
	if errors.As(cause, &c) {
		cause = c.detail
	}
	return &MovedAside{Path: p, To: to, Cause: cause}
}

// Update changes a session's state under its own lock and writes it
// atomically (0600, in a 0700 directory). A missing file starts empty. A
// corrupt one is an error: a writer records a part of the state (a pane id,
// an exit, a completion), and that part alone, written over what is lost,
// would pass for the whole; the next settling reader moves it aside
// (ReadOrMoveAside).
func Update(dir, name string, fn func(st *State) error) (*State, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("invalid session name %q", name)
	}
	if err := atomicfile.EnsureDir(dir, 0o700); err != nil {
		return nil, err
	}
	p := StatePath(dir, name)
	release, err := filelock.Acquire(context.Background(), p+".lock", sessionLockWait)
	if err != nil {
		return nil, fmt.Errorf("lock session state %s: %w", p, errors.Join(err, ErrLockTimeout))
	}
	defer release()
	st, err := Read(dir, name)
	if errors.Is(err, ErrNotFound) {
		st, err = &State{Name: name}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := fn(st); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Replace(p, append(data, '\n'), 0o600); err != nil {
		return nil, err
	}
	return st, nil
}

// StampCompletion records that the child finished a turn, with a bounded excerpt of its last message.
func StampCompletion(dir, name string, now time.Time, lastMessage string) (*State, error) {
	return StampTurn(dir, name, now, lastMessage, "")
}

// StampTurn is StampCompletion that also records the agent's transcript
// path when the hook input names one.
func StampTurn(dir, name string, now time.Time, lastMessage, transcript string) (*State, error) {
	return StampTurnOnce(dir, name, now, lastMessage, transcript, "")
}

// StampTurnOnce is StampTurn for the turn named turn ("" = unnamed): when
// the last stamp is already that turn's (the CLI ran two hooks of ours for
// it: an installed one and the child's own), it is left as it is.
func StampTurnOnce(dir, name string, now time.Time, lastMessage, transcript, turn string) (*State, error) {
	return Update(dir, name, func(st *State) error {
		if turn != "" && st.Completion != nil && st.Completion.Turn == turn {
			return nil
		}
		if transcript != "" {
			st.Transcript = transcript
		}
		turns := 0
		if st.Completion != nil {
			turns = st.Completion.Turns
		}
		st.Completion = &CompletionStamp{At: marker.Timestamp(now), Turns: turns + 1, Excerpt: Excerpt(lastMessage, MaxExcerptBytes), Turn: turn}
		return nil
	})
}

// StampLimit records that the child's turn ended in an API error (a usage
// or rate limit, an overload), and the transcript the hook names.
func StampLimit(dir, name string, now time.Time, event, apiError, lastMessage, transcript string) (*State, error) {
	return Update(dir, name, func(st *State) error {
		if transcript != "" {
			st.Transcript = transcript
		}
		st.Limit = &LimitStamp{At: marker.Timestamp(now), Event: event, Error: apiError, Message: Excerpt(lastMessage, MaxExcerptBytes)}
		return nil
	})
}

// RecordTranscript names the agent's own record of the session (an agent
// that writes it without a Stop hook: agent-sim).
func RecordTranscript(dir, name, transcript string) error {
	_, err := Update(dir, name, func(st *State) error {
		st.Transcript = transcript
		return nil
	})
	return err
}

// Excerpt returns the tail of s within max bytes, cut on a rune boundary:
// the end of an agent's message is where it says whether it is done.
func Excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// LifecycleLost is a session whose runner process died (SIGKILL, a crashed
// machine) without recording how its agent ended.
const LifecycleLost = "lost"

// Reconcile settles, once and under the state file's lock, a session
// recorded as running whose runner process is gone: it becomes "lost" with
// the time it was found so, and is then final for every reader (session
// status/list, status, the monitor). gone reports whether a pid has exited.
// A corrupt state file is moved aside (see ReadOrMoveAside).
func Reconcile(dir, name string, now time.Time, gone func(pid int) bool) (*State, error) {
	st, err := ReadOrMoveAside(dir, name, now)
	if err != nil || !runnerLost(st, gone) {
		return st, err
	}
	return Update(dir, name, func(cur *State) error {
		if runnerLost(cur, gone) { // checked again under the lock
			cur.Lifecycle, cur.ExitedAt = LifecycleLost, marker.Timestamp(now)
		}
		return nil
	})
}

func runnerLost(st *State, gone func(pid int) bool) bool {
	return st != nil && (st.Lifecycle == LifecycleStarted || st.Lifecycle == "starting") && st.PanePid > 0 && gone(st.PanePid)
}
