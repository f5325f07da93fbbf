// Package status gathers a project's status (its marker, latest run, live
// child sessions and the Stop hook's last decision), renders it as text, and
// waits on a run for `status --wait`.
package status

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/workflows"
)

// View is everything `status` shows.
type View struct {
	Marker       MarkerInfo           `json:"marker"`
	Orchestrator Orchestrator         `json:"orchestrator"`
	Run          *Run                 `json:"run"`
	Sessions     []Session            `json:"sessions"`
	LastDecision *marker.LastDecision `json:"lastDecision"`
	// Warnings say what was found corrupt and moved aside.
	Warnings []string `json:"warnings,omitempty"`
	// Pipeline is the pipeline a run on the project takes and why, as its
	// BMAD files and workflow.yaml say now; PipelineError says why that
	// cannot be told.
	Pipeline      *workflows.PipelineChoice `json:"pipeline,omitempty"`
	PipelineError string                    `json:"pipelineError,omitempty"`
	// ActionItems are the board's retrospective action items not yet done
	// (open or in-progress): what `run --action-items` takes up.
	ActionItems []workflows.ActionItem `json:"actionItems,omitempty"`
}

type MarkerInfo struct {
	Exists bool           `json:"exists"`
	Path   string         `json:"path"`
	Error  string         `json:"error,omitempty"`
	Marker *marker.Marker `json:"marker,omitempty"`
}

type Orchestrator struct {
	Pid     int  `json:"pid,omitempty"`
	Alive   bool `json:"alive"`
	RunLock bool `json:"runLockHeld"`
}

type Run struct {
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
	// TmuxSocket is the tmux server (-L) the run's child sessions live on
	// ("" = the default server).
	TmuxSocket string `json:"tmuxSocket,omitempty"`
	// Resume is the command that carries an interrupted or paused run on.
	Resume string `json:"resume,omitempty"`
	// Sandbox is whether the run's children are confined (on, off) and
	// SandboxNetwork the hosts they may reach.
	Sandbox        string   `json:"sandbox"`
	SandboxNetwork []string `json:"sandboxNetwork,omitempty"`
	// SandboxExceptions are the run's agents the setting does not cover
	// (orchestrator.RunConfig.SandboxExceptions).
	SandboxExceptions []string `json:"sandboxExceptions,omitempty"`
	// Wait is the limit the run waits out, while it does.
	Wait  *Waiting `json:"wait,omitempty"`
	Units []Unit   `json:"units"`
}

// Waiting is a run's wait on an agent's limit: the reason, the agent, when
// it lifts and when the run goes on, and how long that is from now.
type Waiting struct {
	orchestrator.LimitWait
	RemainingSeconds int64 `json:"remainingSeconds"`
}

type Unit struct {
	Story   string `json:"story"`
	Title   string `json:"title,omitempty"`
	Status  string `json:"status"`
	Current string `json:"currentStep,omitempty"`
	Steps   []Step `json:"steps"`
	Commit  string `json:"commit,omitempty"`
	// Worktree is the story's own git worktree while it has one (--isolate worktree).
	Worktree string `json:"worktree,omitempty"`
	// Host is the machine the story runs (or ran) on: local or a `hosts:` name.
	Host  string       `json:"host"`
	Usage *spend.Total `json:"usage"`
	// Retro is an epic's retrospective's verdict, its document and action
	// items, once the run read it (BMAD 6.12).
	Retro *orchestrator.RetroVerdict `json:"retro,omitempty"`
	// Kind and Work are a sweep or action unit's (run --sweep,
	// --action-items): its kind and the items it takes up.
	Kind string             `json:"kind,omitempty"`
	Work *orchestrator.Work `json:"work,omitempty"`
	// Parked is why a parked story is parked, what to do, and the ref its
	// work is kept at.
	Parked *orchestrator.Parked `json:"parked,omitempty"`
}

type Step struct {
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Usage    *spend.Total   `json:"usage"`
	Attempts []AttemptUsage `json:"attempts,omitempty"`
}

// AttemptUsage is one attempt's spend.
type AttemptUsage struct {
	N         int          `json:"n"`
	Agent     string       `json:"agent"`
	Model     string       `json:"model,omitempty"`
	Usage     *spend.Usage `json:"usage"`
	UsageNote string       `json:"usageNote,omitempty"`
}

type Session struct {
	Session   string `json:"session"`
	Story     string `json:"story,omitempty"`
	Step      string `json:"step,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
	Attached  bool   `json:"attached"`
	// Host is the ssh host whose tmux the session lives in ("" = this machine's).
	Host string `json:"host,omitempty"`
}

// Gather gathers the view, every part that cannot be read left empty, and
// hands back the latest run's whole state (nil when there is none): its
// recorded tmux socket, and more than status shows. live lists the sessions.
func Gather(root string, getenv func(string) string, now func() time.Time, warn io.Writer, live func() ([]Session, []string)) (View, *orchestrator.State) {
	store := marker.NewStore(root, getenv)
	v := View{Marker: MarkerInfo{Path: store.Path}, Sessions: []Session{}}
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
	v.Orchestrator.RunLock = orchestrator.RunLockHeld(root)
	if c, err := workflows.ProjectPipeline(root); err == nil {
		v.Pipeline = &c
	} else {
		v.PipelineError = err.Error()
	}
	_, v.ActionItems, _ = OpenActionItems(root)
	if v.LastDecision == nil {
		v.LastDecision = LastHistoryDecision(store.HistoryPath())
	}
	st, path, warnings := orchestrator.ReadLatestState(store, root, now)
	for _, w := range warnings {
		fmt.Fprintf(warn, "story-automator: warning: %s\n", w)
	}
	if v.Pipeline != nil && v.Pipeline.Pipeline == workflows.PipelineBuildAuto {
		v.Pipeline.Mode = StoriesMode(root, st)
	}
	if st != nil {
		v.Run = RunOf(st, path)
		v.Run.Status = st.SeenStatus(v.Orchestrator.RunLock)
		if v.Run.Status == orchestrator.RunInterrupted || v.Run.Status == orchestrator.RunPaused {
			v.Run.Resume = orchestrator.ResumeCommand
		}
		if w := v.Run.Wait; w != nil {
			w.RemainingSeconds = int64(w.Remaining(now()).Seconds())
		}
	}
	v.Sessions, v.Warnings = live()
	v.Warnings = append(warnings, v.Warnings...)
	return v, st
}

func RunOf(st *orchestrator.State, path string) *Run {
	done, total := st.StoryCounts()
	usage := st.Spend()
	r := &Run{RunID: st.RunID, Status: st.Status, StateFile: path, StoriesDone: done, StoriesTotal: total,
		StartedAt: st.StartedAt, UpdatedAt: st.UpdatedAt, PauseReason: st.PauseReason, Escalation: st.Escalation,
		Usage: &usage, Budget: st.Config.Budget, TmuxSocket: st.Config.TmuxSocket, Units: []Unit{},
		Sandbox: st.Config.SandboxMode(), SandboxNetwork: st.Config.SandboxNetwork, SandboxExceptions: st.Config.SandboxExceptions()}
	if st.Wait != nil {
		r.Wait = &Waiting{LimitWait: *st.Wait}
	}
	for _, u := range st.Units {
		su := Unit{Story: u.Dotted, Title: u.Title, Status: u.Status, Commit: u.Commit, Worktree: u.Worktree, Usage: u.Usage,
			Host: u.Host, Retro: u.Retro, Work: u.Work, Parked: u.Parked}
		if u.Work != nil {
			su.Kind = u.Kind
		}
		if su.Host == "" {
			su.Host = orchestrator.LocalHost
		}
		if cur := u.CurrentStep(); cur != nil && u.Status != orchestrator.StatusDone {
			su.Current = cur.Name
		}
		for _, s := range u.Steps {
			ss := Step{Name: s.Name, Status: s.Status, Usage: s.Usage}
			for _, a := range s.Attempts {
				ss.Attempts = append(ss.Attempts, AttemptUsage{N: a.N, Agent: a.Agent, Model: a.Model, Usage: a.Usage, UsageNote: a.UsageNote})
			}
			su.Steps = append(su.Steps, ss)
		}
		r.Units = append(r.Units, su)
	}
	return r
}

// LastHistoryDecision reads the Stop hook's last decision from its history
// file, for when the marker (which keeps it too) is gone.
func LastHistoryDecision(path string) *marker.LastDecision {
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

// StoriesMode is the pipeline's mode a build-auto project shows: the
// latest run's spec folder, else the one a run would find (no board, one
// spec folder with a stories.yaml); "" is sprint mode, or a project a run
// would refuse (several folders).
func StoriesMode(root string, st *orchestrator.State) string {
	if st != nil && st.Config.Spec != "" {
		return workflows.StoriesModeText(st.Config.Spec)
	}
	proj, err := workflows.Open(root)
	if err != nil {
		return ""
	}
	found, _, err := proj.DiscoverSpecFolder()
	if err != nil || found == "" {
		return ""
	}
	rel, err := filepath.Rel(proj.Root, found)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = found
	}
	return workflows.StoriesModeText(filepath.ToSlash(rel))
}
