package bmad

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

var _ orchestrator.LeftoverPlanner = BuildAuto{}

// Codes of a run of leftovers.
const (
	// CodeDeferredWorkInvalid: deferred-work.md cannot be read; the run
	// never rewrites it.
	CodeDeferredWorkInvalid = "deferred_work_invalid"
	// CodeNoSuchItem: --only names an item that is not open.
	CodeNoSuchItem = "deferred_item_not_open"
	// CodeWorkSpecs: a sweep or action unit's dispatch left more than one new spec.
	CodeWorkSpecs = "build_auto_specs_ambiguous"
)

// WorkLine ends every dispatch of a sweep or action unit: the board and
// the ledger's done marks are the run's.
const WorkLine = "The run owns sprint-status.yaml and the done marks of deferred-work.md: do not edit either; the run marks these items done with this work's commit."

// Leftovers lays out a run of leftovers: one sweep unit per source spec of
// the open deferred findings (its findings share the spec's context and
// one review, and land as one commit), one action unit per open action
// item of the board.
func (p BuildAuto) Leftovers(_ context.Context, q orchestrator.Leftovers) ([]orchestrator.Leftover, error) {
	lay, err := workflows.Open(p.Root)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Leftover
	if q.Sweep {
		units, err := sweepUnits(lay, q)
		if err != nil {
			return nil, err
		}
		out = append(out, units...)
	}
	if q.ActionItems {
		items, err := lay.ReadActionItems()
		if err != nil {
			return nil, &orchestrator.Blocker{Code: workflows.Code(err), Err: err,
				Action: "Fix the action item the message names in " + lay.Rel(lay.SprintStatusPath()) + " (BMAD's `sprint_plan.py validate` checks it), then run again."}
		}
		for _, a := range items {
			if !a.Open() && a.Status != workflows.ActionInProgress {
				continue
			}
			out = append(out, orchestrator.Leftover{Key: a.ID, Kind: orchestrator.KindAction, Epic: fmt.Sprint(a.Epic), Dotted: a.ID,
				Title: a.Action, Work: orchestrator.Work{Source: a.Ref,
					Items: []orchestrator.WorkItem{{ID: a.ID, Summary: a.Action, Owner: a.Owner}}}})
		}
	}
	return out, nil
}

// ledgerBlocker is the refusal of a deferred-work.md the run cannot read.
func ledgerBlocker(err error) error {
	if !errors.Is(err, workflows.ErrDeferredWorkInvalid) {
		return err
	}
	return &orchestrator.Blocker{Code: CodeDeferredWorkInvalid, Err: err,
		Action: "Fix the line the message names in deferred-work.md (the run never rewrites a ledger it cannot read; `story-automator deferred` checks it), then run again."}
}

// sweepUnits groups the open findings q selects by their source spec, in
// the ledger's order.
func sweepUnits(lay *workflows.Layout, q orchestrator.Leftovers) ([]orchestrator.Leftover, error) {
	min := 0
	if q.MinSeverity != "" {
		r, err := workflows.ParseMinSeverity(q.MinSeverity)
		if err != nil {
			return nil, err
		}
		min = r
	}
	w, err := workflows.ReadDeferredWork(lay)
	if err != nil {
		return nil, ledgerBlocker(err)
	}
	open := w.Open(min)
	for _, id := range q.Only {
		if !slices.ContainsFunc(open, func(e workflows.DeferredEntry) bool { return e.ID == id }) {
			return nil, &orchestrator.Blocker{Code: CodeNoSuchItem,
				Err:    fmt.Errorf("--only %s: no open item of that id at that severity in %s", id, lay.Rel(w.Path)),
				Action: "List the open items with `story-automator deferred`, then give their ids."}
		}
	}
	var out []orchestrator.Leftover
	at := map[string]int{}
	for _, e := range open {
		if len(q.Only) > 0 && !slices.Contains(q.Only, e.ID) {
			continue
		}
		i, ok := at[e.SourceSpec]
		if !ok {
			i = len(out)
			at[e.SourceSpec] = i
			n := fmt.Sprint(i + 1)
			out = append(out, orchestrator.Leftover{Key: "sweep-" + n, Kind: orchestrator.KindSweep, Dotted: "sweep " + n,
				Title: "deferred findings of " + filepath.Base(e.SourceSpec), Work: orchestrator.Work{Source: e.SourceSpec}})
		}
		out[i].Work.Items = append(out[i].Work.Items, orchestrator.WorkItem{ID: e.ID, Summary: e.Summary, Evidence: e.Evidence,
			Location: e.Location, Severity: e.Severity})
	}
	return out, nil
}

// stillOpen re-reads a unit's items where they are kept and splits them:
// those still open, and those closed (or removed) by hand since the run
// planned them.
func stillOpen(s *story, d orchestrator.StoryDispatch) (open []orchestrator.WorkItem, closed []string, err error) {
	isOpen := map[string]bool{}
	if d.Kind == orchestrator.KindAction {
		items, err := s.lay.ReadActionItems()
		if err != nil {
			return nil, nil, err
		}
		for _, a := range items {
			isOpen[a.ID] = a.Status != workflows.ActionDone
		}
	} else {
		w, err := workflows.ReadDeferredWork(s.lay)
		if err != nil {
			return nil, nil, ledgerBlocker(err)
		}
		for _, e := range w.Items {
			isOpen[e.ID] = e.Open()
		}
	}
	for _, it := range d.Work.Items {
		if isOpen[it.ID] {
			open = append(open, it)
		} else {
			closed = append(closed, it.ID)
		}
	}
	return open, closed, nil
}

// dispatchWork sends a sweep or action unit's worker: free text naming
// the items still open (a fresh sprint-mode spec, BMAD-FACTS §5), then by
// the spec's path once it is known. A unit whose items were all closed by
// hand before its first dispatch skips its step.
func (p BuildAuto) dispatchWork(ctx context.Context, d orchestrator.StoryDispatch) (orchestrator.Dispatched, error) {
	var out orchestrator.Dispatched
	s, err := p.open(d)
	if err != nil {
		return out, err
	}
	open, closed, err := stillOpen(s, d)
	if err != nil {
		return out, err
	}
	out.Skipped = closed
	var spec workflows.Spec
	if d.Spec != "" {
		if spec, err = workflows.ReadSpec(s.abs(d.Spec)); err != nil {
			return out, err
		}
	}
	switch {
	case d.Step == orchestrator.StepReview && (d.Spec == "" || !spec.FollowupReviewRecommended):
		out.Skip = "the worker recommended no follow-up review"
		return out, nil
	case d.Spec == "" && len(open) == 0:
		out.Skip = "every item was closed by hand meanwhile: " + strings.Join(closed, ", ")
		return out, nil
	}
	if s.git == nil {
		return out, errors.New("the build-auto pipeline has no git")
	}
	if d.Base == "" {
		if out.Base, err = s.git.Head(ctx); err != nil {
			return out, err
		}
		specs, err := workflows.SprintSpecs(s.specs)
		if err != nil {
			return out, err
		}
		out.Before = []string{}
		for _, sp := range specs {
			out.Before = append(out.Before, s.rel(sp))
		}
	}
	if d.Kind == orchestrator.KindAction {
		if err := p.actionStatus(ctx, s, d, workflows.ActionInProgress, true); err != nil {
			return out, err
		}
	}
	prompt, err := workerPrompt(d, workText(d, open), spec, d.PlanCheckpoint, &out)
	if err != nil {
		return out, err
	}
	out.Prompt = prompt + "\n" + workContext(d, open) + WorkLine
	return out, nil
}

// workText is the free text a unit's first dispatch gives the worker: one
// line that names the work and its items' ids, never a path (a path would
// be taken for a spec to resume).
func workText(d orchestrator.StoryDispatch, open []orchestrator.WorkItem) string {
	ids := make([]string, len(open))
	for i, it := range open {
		ids[i] = it.ID
	}
	if d.Kind == orchestrator.KindAction {
		return "Carry out retrospective action item " + strings.Join(ids, ", ") + ": " + oneLine(open[0].Summary)
	}
	return "Fix deferred review findings " + strings.Join(ids, ", ") + " (listed below)"
}

// workContext is the planning context after the skill's line: each item
// with what is known of it.
func workContext(d orchestrator.StoryDispatch, open []orchestrator.WorkItem) string {
	var b strings.Builder
	if d.Kind == orchestrator.KindAction {
		fmt.Fprintf(&b, "Action item of the retrospective %s (epic %s):\n", d.Work.Source, d.Story.Epic)
	} else {
		fmt.Fprintf(&b, "Deferred findings from the review of the spec %s, recorded in deferred-work.md:\n", d.Work.Source)
	}
	for _, it := range open {
		fmt.Fprintf(&b, "- %s: %s\n", it.ID, oneLine(it.Summary))
		for _, f := range [][2]string{{"evidence", it.Evidence}, {"location", it.Location}, {"severity", it.Severity}, {"owner", it.Owner}} {
			if f[1] != "" {
				fmt.Fprintf(&b, "  %s: %s\n", f[0], oneLine(f[1]))
			}
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// actionStatus moves an action unit's item forward on the board; commit
// commits the board when that changed it (the worker starts on a clean tree).
func (p BuildAuto) actionStatus(ctx context.Context, s *story, d orchestrator.StoryDispatch, status string, commit bool) error {
	changed, err := s.lay.AdvanceActionItem(d.Story.Key, status, p.now())
	if err != nil || !changed || !commit {
		return err
	}
	msg := fmt.Sprintf("story-automator: action item %s %s\n\nThe run moved it on the board before dispatching %s.", d.Story.Key, status, workflows.BuildAutoSkill)
	return s.git.CommitPaths(ctx, msg, []string{s.board()})
}

// newWorkSpec is the spec a sweep or action unit's first dispatch wrote:
// the one spec-*.md that was not there before ("" when none).
func (s *story) newWorkSpec(d orchestrator.StoryDispatch) (string, *orchestrator.Blocker) {
	specs, err := workflows.SprintSpecs(s.specs)
	if err != nil {
		return "", &orchestrator.Blocker{Code: CodeBuildAutoBlocked, Err: err, Action: "Check the implementation artifacts folder, then run `story-automator run --resume`."}
	}
	var found []string
	for _, sp := range specs {
		if rel := s.rel(sp); !slices.Contains(d.Before, rel) {
			found = append(found, rel)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", &orchestrator.Blocker{Code: CodeWorkSpecs,
		Err:    fmt.Errorf("%s of %s left %d new specs: %s", workflows.BuildAutoSkill, d.Story.Dotted, len(found), strings.Join(found, ", ")),
		Action: "Keep the one spec of this work, delete the others, then run `story-automator run --resume`."}
}

// landWork makes a sweep or action unit's one commit and marks its items
// done: an action item done on the board in that commit; deferred findings
// marked `done: <the commit's id>` in deferred-work.md afterwards (a
// commit cannot name itself), that mark committed on its own. Items closed
// by hand meanwhile are left as they are. A run killed anywhere in between
// lands again without a second commit: the unit's commit is found by its
// trailers, a mark already there is not written twice.
func (p BuildAuto) landWork(ctx context.Context, d orchestrator.StoryDispatch, req *orchestrator.CommitRequest) error {
	s, err := p.open(d)
	if err != nil {
		return err
	}
	open, _, err := stillOpen(s, d)
	if err != nil {
		return err
	}
	ids := make([]string, len(open))
	for i, it := range open {
		ids[i] = it.ID
	}
	var msgs []string
	if d.Spec != "" {
		if spec, err := workflows.ReadSpec(s.abs(d.Spec)); err == nil && spec.BaselineRevision != "" {
			msgs, _ = s.git.Messages(ctx, spec.BaselineRevision)
		}
	}
	paths := []string{}
	if d.Kind == orchestrator.KindAction {
		req.Subject = "action item " + d.Story.Key + ": " + oneLine(d.Story.Title)
		if err := p.actionStatus(ctx, s, d, workflows.ActionDone, false); err != nil {
			return err
		}
		paths = append(paths, s.board())
	} else {
		req.Subject = "sweep: deferred findings of " + filepath.Base(d.Work.Source)
	}
	body := fmt.Sprintf("Built by %s (spec %s) for %s; story-automator squashed the worker's commits:", workflows.BuildAutoSkill, d.Spec, strings.Join(ids, ", "))
	for _, m := range msgs {
		body += "\n\n" + m
	}
	req.Body = body
	sha, found, err := s.git.Find(ctx, *req)
	if err != nil {
		return err
	}
	if !found {
		if sha, err = s.git.Squash(ctx, d.Base, *req, paths); err != nil {
			return err
		}
	}
	if d.Kind == orchestrator.KindAction {
		return nil
	}
	return p.markSwept(ctx, s, ids, sha)
}

// markSwept marks the sweep's items done with its commit and commits the
// ledger when it is dirty (marked now, or by a run killed before its commit).
func (p BuildAuto) markSwept(ctx context.Context, s *story, ids []string, sha string) error {
	if _, err := workflows.MarkDeferredDone(s.lay, ids, sha); err != nil {
		return ledgerBlocker(err)
	}
	path, err := workflows.DeferredWorkPath(s.lay)
	if err != nil {
		return err
	}
	dirty, err := s.git.Dirty(ctx)
	if err != nil {
		return err
	}
	ledger := s.rel(path)
	if !slices.Contains(dirty, ledger) {
		return nil
	}
	msg := fmt.Sprintf("story-automator: deferred items done in %s\n\nThe run marked the items the sweep's commit %s fixed done in %s.", shortID(sha), sha, ledger)
	return s.git.CommitPaths(ctx, msg, []string{ledger})
}

func shortID(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
