package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/stophook/settings"
	"github.com/story-automator/story-automator/tmux/child"
)

func init() { register(loopCommand) }

// maxLoopFileBytes bounds what `loop import` and --prompt-file read.
const maxLoopFileBytes = 1 << 20

func loopCommand() *cli.Command {
	return &cli.Command{
		Name:  "loop",
		Usage: "run a prompt loop (Ralph / Forge style) on the owner session's Stop hook",
		Subcommands: []*cli.Command{
			{
				Name:      "start",
				Usage:     "start a loop: the owner's Stop hook re-injects PROMPT until an exit fires",
				ArgsUsage: "PROMPT",
				Flags: append(loopShapeFlags(),
					&cli.StringFlag{Name: "prompt-file", Usage: "read the prompt from this file (- = stdin) instead of PROMPT"}),
				Action: loopStart,
			},
			{Name: "status", Usage: "print the loop", Action: loopStatus},
			{
				Name:   "pause",
				Usage:  "pause the loop: the Stop hook lets every stop through until resume",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why the loop is paused (shown by loop status)"}},
				Action: loopPause,
			},
			{
				Name:   "resume",
				Usage:  "resume a paused loop (counters reset)",
				Flags:  []cli.Flag{&cli.IntFlag{Name: "max-iterations", Usage: fmt.Sprintf("raise or lower the iteration limit (1..%d)", marker.MaxIterationsCeiling)}},
				Action: loopResume,
			},
			{Name: "cancel", Usage: "end the loop and remove its marker", Action: loopCancel},
			loopImportCommand(),
		},
	}
}

// loopShapeFlags are the flags that shape a loop, shared by start and import.
func loopShapeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-iterations", Value: marker.DefaultMaxIterations, Usage: fmt.Sprintf("iteration limit, 1..%d (never unlimited)", marker.MaxIterationsCeiling)},
		&cli.StringFlag{Name: "completion-promise", Usage: "the loop ends when the agent writes <promise>TEXT</promise> on a line of its own"},
		&cli.StringFlag{Name: "exit-strategy", Usage: "auto, fix_plan, done_signals, circuit_breaker, composite or composite:a,b"},
		&cli.StringFlag{Name: "fix-plan", Usage: "markdown checklist the fix_plan strategy reads (relative to the project root)"},
		&cli.StringFlag{Name: "advisor", Usage: "command (run with sh -c) that predicts the next prompt; reads JSON on stdin"},
		&cli.DurationFlag{Name: "advisor-timeout", Value: stophook.DefaultAdvisorTimeout,
			Usage: fmt.Sprintf("bound on one advisor call (at most %s, below the Stop hook's own timeout)", stophook.MaxAdvisorTimeout)},
		&cli.Float64Flag{Name: "threshold", Value: marker.DefaultThreshold, Usage: "advisor confidence (0..1] the loop trusts"},
		&cli.StringFlag{Name: "owner-session", Usage: "owning agent session (default $CLAUDE_CODE_SESSION_ID, then $CODEX_THREAD_ID)"},
		&cli.BoolFlag{Name: "replace", Usage: "replace an active or paused loop or story run"},
	}
}

// loopShape validates the shaping flags into a loop state (without prompt and
// iteration) and returns the warnings a user should see.
func loopShape(c *cli.Context) (*marker.LoopState, []string, error) {
	e := envOf(c)
	n := c.Int("max-iterations")
	if n < 1 || n > marker.MaxIterationsCeiling {
		return nil, nil, cliio.UsageError("--max-iterations must be 1..%d (a loop is never unlimited), got %d", marker.MaxIterationsCeiling, n)
	}
	th := c.Float64("threshold")
	if !(th > 0 && th <= 1) {
		return nil, nil, cliio.UsageError("--threshold must be in (0, 1], got %v", th)
	}
	to := c.Duration("advisor-timeout")
	if to <= 0 || to > stophook.MaxAdvisorTimeout {
		return nil, nil, cliio.UsageError("--advisor-timeout must be in (0, %s] so the advisor ends before the agent kills the Stop hook (%ds), got %s",
			stophook.MaxAdvisorTimeout, settings.DefaultTimeout, to)
	}
	l := &marker.LoopState{MaxIterations: n, CompletionPromise: strings.TrimSpace(c.String("completion-promise")),
		ExitStrategy: strings.TrimSpace(c.String("exit-strategy")), Threshold: th}
	if fp := c.String("fix-plan"); fp != "" {
		if !filepath.IsAbs(fp) {
			fp = filepath.Join(e.ProjectRoot, fp)
		}
		l.FixPlan = filepath.Clean(fp)
	}
	members, err := stophook.ParseExitStrategy(l.ExitStrategy, l.FixPlan != "")
	if err != nil {
		return nil, nil, cliio.UsageError("--exit-strategy: %v", err)
	}
	var warnings []string
	for _, m := range members {
		if m == stophook.StrategyFixPlan && l.FixPlan == "" {
			return nil, nil, cliio.UsageError("--exit-strategy %s needs --fix-plan FILE", l.ExitStrategy)
		}
	}
	if l.FixPlan != "" {
		if _, err := os.Stat(l.FixPlan); err != nil {
			warnings = append(warnings, fmt.Sprintf("fix plan %s does not exist yet", l.FixPlan))
		}
	}
	if a := strings.TrimSpace(c.String("advisor")); a != "" {
		l.Advisor, l.AdvisorTimeout = a, to.String()
	}
	return l, warnings, nil
}

func loopOwner(c *cli.Context, fromFile string) string {
	if c.IsSet("owner-session") {
		return strings.TrimSpace(c.String("owner-session"))
	}
	if fromFile != "" {
		return fromFile
	}
	return child.AgentSessionID(envOf(c).Getenv)
}

func loopStart(c *cli.Context) error {
	prompt, err := loopPrompt(c)
	if err != nil {
		return err
	}
	l, warnings, err := loopShape(c)
	if err != nil {
		return err
	}
	l.Prompt, l.Iteration = prompt, 1
	m := newLoopMarker(c, l, loopOwner(c, ""))
	return createLoop(c, m, warnings, nil)
}

// loopPrompt is the PROMPT words joined by spaces, or --prompt-file's text.
func loopPrompt(c *cli.Context) (string, error) {
	words := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	file := c.String("prompt-file")
	switch {
	case file != "" && words != "":
		return "", cliio.UsageError("give the prompt as PROMPT or --prompt-file, not both")
	case file == "" && words == "":
		return "", cliio.UsageError("loop start needs a PROMPT")
	case file == "":
		return words, nil
	}
	data, err := readLimited(envOf(c), file)
	if err != nil {
		return "", cliio.Fail("prompt_file", "%v", err)
	}
	if p := strings.TrimSpace(string(data)); p != "" {
		return p, nil
	}
	return "", cliio.UsageError("--prompt-file %s is empty", file)
}

func readLimited(e *runtimeEnv, path string) ([]byte, error) {
	var r io.Reader = e.In
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxLoopFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxLoopFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxLoopFileBytes)
	}
	return data, nil
}

// newLoopMarker builds an active loop marker owned by owner, with the git
// fingerprint the hook will compare against for progress.
func newLoopMarker(c *cli.Context, l *marker.LoopState, owner string) *marker.Marker {
	e := envOf(c)
	now := marker.Timestamp(e.Now())
	if l.StartedAt == "" {
		l.StartedAt = now
	}
	l.GitFingerprint = stophook.GitFingerprint(context.Background(), e.ProjectRoot, stophook.StrategyNeedsWorkTree(l.ExitStrategy))
	return &marker.Marker{
		Version: marker.SchemaVersion, Mode: marker.ModeLoop, Status: marker.StatusActive,
		OwnerSession: owner, CreatedAt: now, Heartbeat: now, StopHookSeenHeartbeat: now, Loop: l,
	}
}

// createLoop writes m unless an active or paused run or loop is in the way
// (--replace replaces it), and prints the result.
func createLoop(c *cli.Context, m *marker.Marker, warnings []string, extra map[string]any) error {
	e := envOf(c)
	st := markerStore(c)
	if err := atomicfile.EnsureDir(st.Dir(), 0o700); err != nil {
		return cliio.Fail("marker_io", "%v", err)
	}
	var replaced *marker.Marker
	_, err := st.Update(context.Background(), func(cur *marker.Marker, readErr error) (*marker.Marker, error) {
		if errors.Is(readErr, marker.ErrCorrupt) && !c.Bool("replace") {
			return nil, cliio.Fail("marker_corrupt", "%v (use --replace to overwrite it)", readErr)
		}
		if err := refuseOver(cur, c.Bool("replace")); err != nil {
			return nil, err
		}
		replaced = cur
		return m, nil
	})
	if err != nil {
		return markerFailure(err)
	}
	if m.OwnerSession == "" {
		warnings = append(warnings, "no owner session: the loop holds every session in this project; pass --owner-session or start it from inside the agent session")
	}
	if m.Loop.GitFingerprint == "" && stophook.StrategyNeedsWorkTree(m.Loop.ExitStrategy) {
		warnings = append(warnings, "not a git repository: circuit_breaker sees only heartbeats, so it opens after 3 iterations")
	}
	if w := claudeBlockCapWarning(m.Loop.MaxIterations, e.Getenv); w != "" {
		warnings = append(warnings, w)
	}
	out := map[string]any{"path": st.Path, "marker": m, "historyFile": filepath.Join(st.Dir(), stophook.HistoryFile), "replaced": replaced != nil}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	for k, v := range extra {
		out[k] = v
	}
	return cliio.OKJSON(e.Out, out)
}

// refuseOver says why a new loop may not replace cur.
func refuseOver(cur *marker.Marker, replace bool) error {
	if cur == nil || replace {
		return nil
	}
	live := cur.Status == marker.StatusActive || cur.Status == marker.StatusPaused
	switch {
	case cur.Mode == marker.ModeLoop && live:
		return cliio.Fail("loop_active", "a loop is already running here (%s, iteration %d); cancel it with `story-automator loop cancel` or pass --replace", cur.Status, loopIteration(cur))
	case cur.Mode != marker.ModeLoop && live && cur.StoriesRemaining > 0:
		return cliio.Fail("story_run_active", "a story run owns this project (%s, %d stories remaining); pass --replace to replace it", cur.Status, cur.StoriesRemaining)
	}
	return nil
}

func loopIteration(m *marker.Marker) int {
	if m.Loop == nil {
		return 0
	}
	return m.Loop.Iteration
}

func loopStatus(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	st := markerStore(c)
	m, err := st.Read()
	if errors.Is(err, marker.ErrNotFound) {
		return cliio.OKJSON(e.Out, map[string]any{"exists": false, "active": false, "path": st.Path})
	}
	if err != nil {
		return markerFailure(err)
	}
	out := map[string]any{"exists": true, "active": m.IsLoop() && m.Active(), "path": st.Path, "mode": m.Mode,
		"status": m.Status, "ownerSession": m.OwnerSession, "loop": m.Loop, "stopHookBlocks": m.StopHookBlocks,
		"historyFile": filepath.Join(st.Dir(), stophook.HistoryFile)}
	if m.LastDecision != nil {
		out["lastDecision"] = m.LastDecision
	}
	if m.PauseReason != "" {
		out["pauseReason"] = m.PauseReason
	}
	return cliio.OKJSON(e.Out, out)
}

// modifyLoop changes the loop under the lock; a missing or story-mode marker is refused.
func modifyLoop(c *cli.Context, fn func(m *marker.Marker) error) error {
	e := envOf(c)
	st := markerStore(c)
	if err := requireMarkerDir(st); err != nil {
		return err
	}
	m, err := st.Update(context.Background(), func(m *marker.Marker, readErr error) (*marker.Marker, error) {
		if err := requireLoop(m, readErr); err != nil {
			return nil, err
		}
		return m, fn(m)
	})
	if err != nil {
		return markerFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"path": st.Path, "marker": m})
}

// requireMarkerDir refuses early when the marker's directory does not exist
// (no loop was ever started), rather than creating a lock file there.
func requireMarkerDir(st *marker.Store) error {
	if _, err := os.Lstat(st.Dir()); errors.Is(err, os.ErrNotExist) {
		return cliio.Fail("loop_not_found", "no loop is running in this project")
	}
	return nil
}

func requireLoop(m *marker.Marker, readErr error) error {
	switch {
	case errors.Is(readErr, marker.ErrNotFound):
		return cliio.Fail("loop_not_found", "no loop is running in this project")
	case readErr != nil:
		return readErr
	case !m.IsLoop():
		return cliio.Fail("not_a_loop", "the marker belongs to a %s run, not a loop; use `story-automator marker …` for it", m.Mode)
	}
	return nil
}

func loopPause(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	return modifyLoop(c, func(m *marker.Marker) error {
		reason := c.String("reason")
		if reason == "" {
			reason = "paused with `story-automator loop pause`"
		}
		m.Pause(reason)
		return nil
	})
}

func loopResume(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	n := c.Int("max-iterations")
	if c.IsSet("max-iterations") && (n < 1 || n > marker.MaxIterationsCeiling) {
		return cliio.UsageError("--max-iterations must be 1..%d, got %d", marker.MaxIterationsCeiling, n)
	}
	now := envOf(c).Now()
	return modifyLoop(c, func(m *marker.Marker) error {
		m.Resume()
		m.Loop.NoProgressIterations = 0
		// A fresh heartbeat: the pause is not a sign of a dead loop.
		m.Touch(now)
		if c.IsSet("max-iterations") {
			m.Loop.MaxIterations = n
		}
		return nil
	})
}

func loopCancel(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	st := markerStore(c)
	m, err := removeLoop(st)
	if err != nil {
		return markerFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"path": st.Path, "removed": true, "iteration": m.Loop.Iteration, "maxIterations": m.Loop.MaxIterations})
}

// removeLoop deletes the marker under the lock if, and only if, it is a loop.
func removeLoop(st *marker.Store) (*marker.Marker, error) {
	if err := requireMarkerDir(st); err != nil {
		return nil, err
	}
	unlock, err := st.Lock(context.Background())
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, readErr := st.Read()
	if err := requireLoop(m, readErr); err != nil {
		return nil, err
	}
	if _, err := st.RemoveLocked(); err != nil {
		return nil, err
	}
	return m, nil
}

// Claude Code 2.1.x ends a turn after more than CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// (default 8) consecutive Stop-hook blocks, whatever the hook says (read from
// the pinned CLI). A loop's first iteration is the user's prompt and each
// further one is a block, so a Claude session runs at most cap+1 iterations.
const (
	claudeBlockCapVar     = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
	claudeDefaultBlockCap = 8
)

// claudeBlockCapWarning tells, at loop start, when Claude Code's own cap on
// consecutive Stop-hook blocks will end the loop before maxIterations, and
// how to raise it. The cap is read from this process's environment, which is
// the Claude session's own when the loop is started from inside it.
func claudeBlockCapWarning(maxIterations int, getenv func(string) string) string {
	if getenv("CODEX_THREAD_ID") != "" && getenv("CLAUDE_CODE_SESSION_ID") == "" {
		return "" // a Codex session: Claude Code's cap does not apply
	}
	limit := claudeDefaultBlockCap
	if v, err := strconv.Atoi(strings.TrimSpace(getenv(claudeBlockCapVar))); err == nil {
		limit = v
	}
	if limit <= 0 || maxIterations <= limit+1 {
		return ""
	}
	return fmt.Sprintf("in Claude Code this loop ends after %d iterations, not %d: Claude Code ends a turn after %d consecutive Stop-hook blocks; "+
		"start Claude Code with %s=%d (or more) to run all %d", limit+1, maxIterations, limit, claudeBlockCapVar, maxIterations-1, maxIterations)
}
