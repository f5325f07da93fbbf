package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/marker"
)

// Unit kinds for what earlier runs left for later: a sweep unit works
// deferred findings of deferred-work.md (run --sweep), an action unit one
// retrospective action item of the board (run --action-items). Both go
// through the pipeline's worker like a story: the same steps, attempts,
// verifiers, limits and landing.
const (
	KindSweep  = "sweep"
	KindAction = "action"
)

// Leftovers is what a run of leftovers takes up instead of stories
// (RunConfig.Leftovers): run --sweep, run --action-items.
type Leftovers struct {
	// Sweep: the open items of deferred-work.md whose severity ranks at
	// least MinSeverity ("" = every item), only those named by Only when
	// it is not empty.
	Sweep       bool     `json:"sweep,omitempty"`
	MinSeverity string   `json:"minSeverity,omitempty"`
	Only        []string `json:"only,omitempty"`
	// ActionItems: the board's open action items.
	ActionItems bool `json:"actionItems,omitempty"`
}

// Work is what a sweep or action unit hands its worker: the items, each
// marked done as the unit lands.
type Work struct {
	// Source is where the items came from: a sweep unit's source spec, an
	// action unit's retrospective document (project-relative).
	Source string     `json:"source,omitempty"`
	Items  []WorkItem `json:"items"`
	// Skipped are the items closed by hand after the run planned them,
	// left out of the dispatch or the marking.
	Skipped []string `json:"skipped,omitempty"`
	// Marked are the items the unit's landing marked done.
	Marked []string `json:"marked,omitempty"`
}

// WorkItem is one deferred finding or action item.
type WorkItem struct {
	ID       string `json:"id"`
	Summary  string `json:"summary"`
	Evidence string `json:"evidence,omitempty"`
	Location string `json:"location,omitempty"`
	Severity string `json:"severity,omitempty"`
	Owner    string `json:"owner,omitempty"`
}

// Leftover is one unit a LeftoverPlanner lays out.
type Leftover struct {
	Key, Kind, Epic, Dotted, Title string
	Work                           Work
}

// LeftoverPlanner is implemented by a Pipeline whose worker takes free
// text (BMAD 6.12's build-auto): it lays out the units of a run of
// leftovers, and its Dispatch, Outcome and Land hooks take them through.
type LeftoverPlanner interface {
	Leftovers(ctx context.Context, q Leftovers) ([]Leftover, error)
}

// CodeLeftoversUnsupported: a run of leftovers on a pipeline without a
// worker that takes free text.
const CodeLeftoversUnsupported = "leftovers_unsupported"

// pipelined reports whether the pipeline's hooks take the unit through
// its steps: stories, sweep and action units.
func (u *Unit) pipelined() bool {
	return u.Kind == KindStory || u.Kind == KindSweep || u.Kind == KindAction
}

// planLeftovers is a new run's state over leftovers instead of stories:
// one unit per Leftover the pipeline lays out, with the pipeline's story
// steps; no retrospective.
func planLeftovers(ctx context.Context, pl Pipeline, in PlanInput) (*State, error) {
	lp, ok := pl.(LeftoverPlanner)
	if !ok {
		return nil, &Blocker{Code: CodeLeftoversUnsupported,
			Err:    errors.New("run --sweep and --action-items need a pipeline whose worker takes free text, and this project's takes none"),
			Action: "Run them on a BMAD 6.12 project (the build-auto pipeline; `story-automator doctor` says which one a project takes)."}
	}
	got, err := lp.Leftovers(ctx, *in.Config.Leftovers)
	if err != nil {
		return nil, err
	}
	now := marker.Timestamp(in.Now)
	s := &State{Version: StateVersion, RunID: in.RunID, Status: RunRunning, ProjectRoot: in.ProjectRoot,
		StartedAt: now, UpdatedAt: now, Config: in.Config}
	items := 0
	for _, l := range got {
		u := storyUnit(StoryInfo{Key: l.Key, Epic: l.Epic, Dotted: l.Dotted, Title: l.Title}, in.Policy, in.Steps)
		u.Kind = l.Kind
		w := l.Work
		u.Work = &w
		items += len(w.Items)
		s.Units = append(s.Units, u)
	}
	s.addLog(in.Now, "", "", fmt.Sprintf("run planned over leftovers: %d units, %d items", len(s.Units), items))
	return s, nil
}

// mergeIDs is have with the ids of more it lacks added, in order.
func mergeIDs(have, more []string) []string {
	for _, id := range more {
		if !slices.Contains(have, id) {
			have = append(have, id)
		}
	}
	return have
}

// Lines describe the work for people, one line each: where its items came
// from, then each item (id, severity, summary), marked when the run skipped
// it as closed by hand meanwhile. A nil Work has none.
func (w *Work) Lines(kind string) []string {
	if w == nil {
		return nil
	}
	from := "deferred findings of " + w.Source + ":"
	if kind == KindAction {
		from = "retrospective action item of " + w.Source + ":"
	}
	out := []string{from}
	for _, it := range w.Items {
		line := "  " + it.ID
		if it.Severity != "" {
			line += " [" + it.Severity + "]"
		}
		summary := strings.Join(strings.Fields(it.Summary), " ")
		if r := []rune(summary); len(r) > 80 {
			summary = string(r[:79]) + "…"
		}
		line += " " + summary
		if slices.Contains(w.Skipped, it.ID) {
			line += " (closed by hand meanwhile: skipped)"
		}
		out = append(out, line)
	}
	return out
}
