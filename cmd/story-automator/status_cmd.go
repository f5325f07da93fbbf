package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/stophook"
)

func init() { register(statusCommand) }

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the project's run from any terminal: marker, stories and steps, live sessions, the last hook decision",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON (one object per refresh with --watch)"},
			&cli.BoolFlag{Name: "watch", Usage: "refresh until Ctrl-C or until the run is done"},
			&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "refresh interval of --watch"},
			&cli.BoolFlag{Name: "wait", Usage: "block, without polling, until the run is done, escalates, pauses or dies, then print what happened and the one next command (exit 0 done, 3 needs you, 4 its process died, 6 no run, 8 --return-after passed)"},
			&cli.DurationFlag{Name: "return-after", Value: defaultWaitBound, Usage: "with --wait: return after this long with exit 8 (the default fits under Claude Code's 2-minute Bash tool cap; 0 = no bound)"},
		},
		Action: statusAction,
	}
}

// statusView is everything `status` shows.
type statusView struct {
	Marker       statusMarker         `json:"marker"`
	Orchestrator statusOrchestrator   `json:"orchestrator"`
	Run          *statusRun           `json:"run"`
	Sessions     []statusSession      `json:"sessions"`
	LastDecision *marker.LastDecision `json:"lastDecision"`
	// Warnings say what was found corrupt and moved aside.
	Warnings []string `json:"warnings,omitempty"`
}

type statusMarker struct {
	Exists bool           `json:"exists"`
	Path   string         `json:"path"`
	Error  string         `json:"error,omitempty"`
	Marker *marker.Marker `json:"marker,omitempty"`
}

type statusOrchestrator struct {
	Pid     int  `json:"pid,omitempty"`
	Alive   bool `json:"alive"`
	RunLock bool `json:"runLockHeld"`
}

type statusRun struct {
	RunID        string                   `json:"runId"`
	Status       string                   `json:"status"`
	StateFile    string                   `json:"stateFile"`
	StoriesDone  int                      `json:"storiesDone"`
	StoriesTotal int                      `json:"storiesTotal"`
	StartedAt    string                   `json:"startedAt"`
	UpdatedAt    string                   `json:"updatedAt"`
	PauseReason  string                   `json:"pauseReason,omitempty"`
	Escalation   *orchestrator.Escalation `json:"escalation,omitempty"`
	Usage        *spend.Total             `json:"usage"`
	Budget       *orchestrator.Budget     `json:"budget,omitempty"`
	Units        []statusUnit             `json:"units"`
}

type statusUnit struct {
	Story   string       `json:"story"`
	Title   string       `json:"title,omitempty"`
	Status  string       `json:"status"`
	Current string       `json:"currentStep,omitempty"`
	Steps   []statusStep `json:"steps"`
	Commit  string       `json:"commit,omitempty"`
	// Worktree is the story's own git worktree while it has one (--isolate worktree).
	Worktree string       `json:"worktree,omitempty"`
	Usage    *spend.Total `json:"usage"`
}

type statusStep struct {
	Name     string               `json:"name"`
	Status   string               `json:"status"`
	Usage    *spend.Total         `json:"usage"`
	Attempts []statusAttemptUsage `json:"attempts,omitempty"`
}

// statusAttemptUsage is one attempt's spend.
type statusAttemptUsage struct {
	N         int          `json:"n"`
	Agent     string       `json:"agent"`
	Model     string       `json:"model,omitempty"`
	Usage     *spend.Usage `json:"usage"`
	UsageNote string       `json:"usageNote,omitempty"`
}

type statusSession struct {
	Session   string `json:"session"`
	Story     string `json:"story,omitempty"`
	Step      string `json:"step,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
	Attached  bool   `json:"attached"`
}

func statusAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	if c.Duration("interval") <= 0 {
		return usageError("--interval must be positive")
	}
	if c.Bool("wait") {
		return statusWait(c, e)
	}
	if !c.Bool("watch") {
		return printStatus(e, collectStatus(e), c.Bool("json"), false)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(c.Duration("interval"))
	defer tick.Stop()
	for {
		v := collectStatus(e)
		if err := printStatus(e, v, c.Bool("json"), true); err != nil {
			return err
		}
		if v.Run != nil && v.Run.Status == orchestrator.RunDone {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// collectStatus gathers the view; every part that cannot be read is left empty.
func collectStatus(e *runtimeEnv) statusView {
	store := marker.NewStore(e.ProjectRoot, e.Getenv)
	v := statusView{Marker: statusMarker{Path: store.Path}, Sessions: []statusSession{}}
	m, err := store.Read()
	switch {
	case err == nil:
		v.Marker.Exists, v.Marker.Marker = true, m
		v.LastDecision = m.LastDecision
		v.Orchestrator.Pid = m.OwnerPid
		v.Orchestrator.Alive = marker.OwnerAlive(m)
	case !errors.Is(err, marker.ErrNotFound):
		v.Marker.Exists, v.Marker.Error = true, err.Error()
	}
	v.Orchestrator.RunLock = orchestrator.RunLockHeld(e.ProjectRoot)
	if v.LastDecision == nil {
		v.LastDecision = lastHistoryDecision(filepath.Join(store.Dir(), stophook.HistoryFile))
	}
	st, path, warnings := orchestrator.ReadLatestState(store, e.ProjectRoot, e.Now)
	for _, w := range warnings {
		fmt.Fprintf(e.Err, "story-automator: warning: %s\n", w)
	}
	if st != nil {
		v.Run = statusRunOf(st, path)
	}
	v.Sessions, v.Warnings = liveSessions(e)
	v.Warnings = append(warnings, v.Warnings...)
	return v
}

func statusRunOf(st *orchestrator.State, path string) *statusRun {
	done, total := st.StoryCounts()
	usage := st.Spend()
	r := &statusRun{RunID: st.RunID, Status: st.Status, StateFile: path, StoriesDone: done, StoriesTotal: total,
		StartedAt: st.StartedAt, UpdatedAt: st.UpdatedAt, PauseReason: st.PauseReason, Escalation: st.Escalation,
		Usage: &usage, Budget: st.Config.Budget, Units: []statusUnit{}}
	for _, u := range st.Units {
		su := statusUnit{Story: u.Dotted, Title: u.Title, Status: u.Status, Commit: u.Commit, Worktree: u.Worktree, Usage: u.Usage}
		if cur := u.CurrentStep(); cur != nil && u.Status != orchestrator.StatusDone {
			su.Current = cur.Name
		}
		for _, s := range u.Steps {
			ss := statusStep{Name: s.Name, Status: s.Status, Usage: s.Usage}
			for _, a := range s.Attempts {
				ss.Attempts = append(ss.Attempts, statusAttemptUsage{N: a.N, Agent: a.Agent, Model: a.Model, Usage: a.Usage, UsageNote: a.UsageNote})
			}
			su.Steps = append(su.Steps, ss)
		}
		r.Units = append(r.Units, su)
	}
	return r
}

// liveSessions lists this project's child sessions on the tmux server.
func liveSessions(e *runtimeEnv) ([]statusSession, []string) {
	out := []statusSession{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sessions, warnings, err := childSessions(ctx, e)
	if err != nil {
		return out, nil
	}
	for _, s := range sessions {
		if !s.Mine {
			continue
		}
		out = append(out, statusSession{Session: s.Pane.Session, Attached: s.Pane.Attached > 0,
			Story: s.State.Story, Step: s.State.Step, Agent: s.State.Agent, Lifecycle: s.State.Lifecycle})
	}
	return out, warnings
}

// lastHistoryDecision reads the Stop hook's last decision from its history
// file, for when the marker (which keeps it too) is gone.
func lastHistoryDecision(path string) *marker.LastDecision {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			last = sc.Text()
		}
	}
	var h struct {
		TS       string `json:"ts"`
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if last == "" || json.Unmarshal([]byte(last), &h) != nil || h.Decision == "" {
		return nil
	}
	return &marker.LastDecision{At: h.TS, Decision: h.Decision, Reason: h.Reason}
}
