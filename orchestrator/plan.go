package orchestrator

import (
	"fmt"
	"slices"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// PlanInput is what a new run is planned from.
type PlanInput struct {
	RunID       string
	ProjectRoot string
	Config      RunConfig
	Policy      Policy
	Now         time.Time
	// Steps are a story unit's steps, in order (nil: StorySteps, the five).
	Steps []string
	// RetroGates: each epic's retrospective comes before the next epics'
	// stories (a pipeline whose retrospective gives a verdict).
	RetroGates bool
}

// NewPlan selects the run's stories and builds its initial state: one unit
// per story not yet done, with the steps it needs, and a retrospective unit
// for every epic the run finishes.
func NewPlan(p Backlog, in PlanInput) (*State, error) {
	selected, err := p.Select(in.Config.Epic, in.Config.Stories)
	if err != nil {
		return nil, err
	}
	now := marker.Timestamp(in.Now)
	s := &State{Version: StateVersion, RunID: in.RunID, Status: RunRunning, ProjectRoot: in.ProjectRoot,
		StartedAt: now, UpdatedAt: now, Config: in.Config}
	for _, info := range selected {
		if info.Status == StatusDone {
			s.addLog(in.Now, info.Dotted, "", "already done (its board entry or its spec says so); not part of the run")
			continue
		}
		s.Units = append(s.Units, storyUnit(info, in.Policy, in.Steps))
	}
	if err := resolveDependencies(p, s); err != nil {
		return nil, err
	}
	if err := addRetros(p, s, selected, in.Policy); err != nil {
		return nil, err
	}
	if in.RetroGates {
		gateOnRetros(s)
	}
	if err := checkCycles(s); err != nil {
		return nil, err
	}
	s.addLog(in.Now, "", "", fmt.Sprintf("run planned: %d stories selected, %d to do", len(selected), s.StoriesRemaining()))
	return s, nil
}

// storyUnit lays out one story's steps, skipping what the project already has.
func storyUnit(info StoryInfo, pol Policy, steps []string) *Unit {
	u := &Unit{Key: info.Key, Kind: KindStory, Epic: info.Epic, Dotted: info.Dotted, Title: info.Title,
		DependsOn: slices.Clone(info.DependsOn), Status: StatusPending}
	if steps == nil {
		steps = StorySteps()
	}
	for _, name := range steps {
		st := &StepState{Name: name, Status: StatusPending}
		switch {
		case name != StepCommit && !pol.Step(name).Enabled:
			st.Status, st.Note = StatusSkipped, "disabled by the workflow policy"
		case name == StepCreate && info.HasFile:
			st.Status, st.Note = StatusSkipped, "the story file exists"
		case name == StepDev && info.Status == "review":
			st.Status, st.Note = StatusSkipped, "the story is already in review"
		}
		u.Steps = append(u.Steps, st)
	}
	return u
}

// resolveDependencies keeps the dependencies on stories of the run and drops
// those already done; any other dependency cannot be met by this run.
func resolveDependencies(p Backlog, s *State) error {
	for _, u := range s.Units {
		var keep []string
		for _, d := range u.DependsOn {
			if s.Unit(d) != nil {
				keep = append(keep, d)
				continue
			}
			dep, err := p.Story(d)
			if err == nil && dep.Status == StatusDone {
				continue
			}
			name := d
			if err == nil {
				name = dep.Dotted
			}
			return fmt.Errorf("%w: story %s depends on %s; select it too or finish it first", ErrDependency, u.Dotted, name)
		}
		u.DependsOn = keep
	}
	return nil
}

// addRetros plans a retrospective for every epic of the selection whose
// stories are all done or part of the run.
func addRetros(p Backlog, s *State, selected []StoryInfo, pol Policy) error {
	if !pol.Step(StepRetro).Enabled {
		return nil
	}
	var epics []string
	for _, info := range selected {
		if !slices.Contains(epics, info.Epic) {
			epics = append(epics, info.Epic)
		}
	}
	for _, epic := range epics {
		done, err := p.RetroDone(epic)
		if err != nil {
			return fmt.Errorf("epic %s retrospective status: %w", epic, err)
		}
		all, err := p.EpicStories(epic)
		if err != nil {
			return fmt.Errorf("epic %s stories: %w", epic, err)
		}
		var deps []string
		complete := !done
		for _, st := range all {
			switch {
			case s.Unit(st.Key) != nil:
				deps = append(deps, st.Key)
			case st.Status != StatusDone:
				complete = false
			}
		}
		if complete {
			u := &Unit{Key: "epic-" + epic + "-retro", Kind: KindRetro, Epic: epic,
				Dotted: "epic " + epic, Title: "retrospective", DependsOn: deps, Status: StatusPending,
				Steps: []*StepState{{Name: StepRetro, Status: StatusPending}, {Name: StepCommit, Status: StatusPending}}}
			if t, ok := p.(RetroTargeter); ok {
				u.Target = t.RetroTarget(epic)
			}
			s.Units = append(s.Units, u)
		}
	}
	return nil
}

// gateOnRetros makes the stories of each epic after an epic with a
// retrospective in the run wait for that retrospective: its verdict decides
// whether the run goes on.
func gateOnRetros(s *State) {
	var order []string
	for _, u := range s.Units {
		if u.Kind == KindStory && !slices.Contains(order, u.Epic) {
			order = append(order, u.Epic)
		}
	}
	for _, r := range s.Units {
		if r.Kind != KindRetro {
			continue
		}
		at := slices.Index(order, r.Epic)
		for _, u := range s.Units {
			if u.Kind == KindStory && at >= 0 && slices.Index(order, u.Epic) > at && !slices.Contains(u.DependsOn, r.Key) {
				u.DependsOn = append(u.DependsOn, r.Key)
			}
		}
	}
}

// checkCycles refuses dependencies that can never all be met.
func checkCycles(s *State) error {
	const (
		unvisited = iota
		visiting
		visited
	)
	mark := map[string]int{}
	var visit func(u *Unit, path []string) error
	visit = func(u *Unit, path []string) error {
		switch mark[u.Key] {
		case visiting:
			return fmt.Errorf("%w: %v", ErrDependencyCycle, append(path, u.Dotted))
		case visited:
			return nil
		}
		mark[u.Key] = visiting
		for _, d := range u.DependsOn {
			if err := visit(s.Unit(d), append(path, u.Dotted)); err != nil {
				return err
			}
		}
		mark[u.Key] = visited
		return nil
	}
	for _, u := range s.Units {
		if err := visit(u, nil); err != nil {
			return err
		}
	}
	return nil
}

// Waves groups the unfinished units into the rounds --parallel can run
// side by side: every unit's dependencies lie in earlier waves.
func Waves(s *State) [][]*Unit {
	level := map[string]int{}
	var depth func(u *Unit) int
	depth = func(u *Unit) int {
		if l, ok := level[u.Key]; ok {
			return l
		}
		l := 0
		for _, d := range u.DependsOn {
			if dep := s.Unit(d); dep != nil && dep.Status != StatusDone {
				l = max(l, depth(dep)+1)
			}
		}
		level[u.Key] = l
		return l
	}
	var waves [][]*Unit
	for _, u := range s.Units {
		if u.Status == StatusDone {
			continue
		}
		l := depth(u)
		for len(waves) <= l {
			waves = append(waves, nil)
		}
		waves[l] = append(waves[l], u)
	}
	return waves
}
