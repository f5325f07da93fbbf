package agentsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// BehaviourBMAD is the behaviour a `run --agent sim` child acts out: the
// work of its workflow step, done on the project's files.
const BehaviourBMAD = "bmad"

// SimWorkDir is where the BMAD behaviour writes the "code" and test plans it produces.
const SimWorkDir = "sim-work"

func init() {
	Register(Behaviour{Name: BehaviourBMAD, Summary: "do the BMAD step named by " + child.EnvStep +
		" on the project's files (create, dev, automate, review, retro); faults from " + EnvFaults, Act: actBMAD})
}

// bmadJob is one step the behaviour acts out.
type bmadJob struct {
	s       *Sim
	p       *workflows.Layout
	step    string
	key     workflows.StoryKey
	attempt int
	cycle   int
	faults  []Fault
}

func actBMAD(ctx context.Context, s *Sim) int {
	if invokesRetro(s.Prompt) {
		return actRetro(ctx, s)
	}
	if strings.Contains(s.Prompt, workflows.BuildAutoSkill) {
		// A run on the build-auto pipeline sends BMAD 6.12's worker skill:
		// the sim runs it as an agent CLI runs the skill it is sent.
		return actBuildAuto(ctx, s)
	}
	j, err := newBMADJob(s)
	if err != nil {
		fmt.Fprintf(s.Out, "agent-sim bmad: %v\n", err)
		return 2
	}
	fmt.Fprintf(s.Out, "agent-sim bmad: %s %s (attempt %d, cycle %d)\n", j.step, j.key.Dotted(), j.attempt, j.cycle)
	if f, ok := faultFor(j.faults, j.step, j.key.String(), j.attempt); ok {
		j.log("fault-" + f.Kind)
		return j.misbehave(ctx, f)
	}
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	outcome, err := j.work()
	if err != nil {
		j.log("error")
		fmt.Fprintf(s.Out, "agent-sim bmad: %s failed: %v\n", j.step, err)
		return 1
	}
	j.log(outcome)
	fmt.Fprintf(s.Out, "agent-sim bmad: %s\n", outcome)
	return 0
}

func newBMADJob(s *Sim) (*bmadJob, error) {
	root, err := workRoot(s)
	if err != nil {
		return nil, err
	}
	p, err := workflows.Open(root)
	if err != nil {
		return nil, err
	}
	faults, err := ParseFaults(s.Getenv(EnvFaults))
	if err != nil {
		return nil, err
	}
	j := &bmadJob{s: s, p: p, step: s.Getenv(child.EnvStep), faults: faults,
		attempt: atoiOr(s.Getenv(child.EnvAttempt), 1), cycle: atoiOr(s.Getenv(child.EnvCycle), 0)}
	if j.step == workflows.StepRetro {
		epic, err := workflows.ParseEpicID(s.Getenv(child.EnvEpic))
		if err != nil {
			return nil, fmt.Errorf("retro needs %s: %w", child.EnvEpic, err)
		}
		j.key = workflows.StoryKey{Epic: epic}
		return j, nil
	}
	if j.key, err = workflows.ParseStoryKey(s.Getenv(child.EnvStory)); err != nil {
		return nil, fmt.Errorf("%s: %w", child.EnvStory, err)
	}
	return j, nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

// misbehave acts out an injected fault.
func (j *bmadJob) misbehave(ctx context.Context, f Fault) int {
	switch f.Kind {
	case FaultCrash:
		fmt.Fprintln(j.s.Out, "agent-sim bmad: crashing (injected fault)")
		if pid := j.s.Options.CrashKills; pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return 1
	case FaultFalse:
		fmt.Fprintln(j.s.Out, "agent-sim bmad: all done! (a false completion: nothing was written)")
		return 0
	}
	fmt.Fprintln(j.s.Out, "agent-sim bmad: working… (injected hang)")
	Forever(ctx)
	return 1
}

// work does the step on the files and says what it did.
func (j *bmadJob) work() (string, error) {
	switch j.step {
	case workflows.StepCreate:
		return j.create()
	case workflows.StepDev:
		return j.dev()
	case workflows.StepAutomate:
		return j.automate()
	case workflows.StepReview:
		return j.review()
	case workflows.StepRetro:
		return j.retro()
	}
	return "", fmt.Errorf("no BMAD work for step %q", j.step)
}

// simLogLine is one line of the behaviour's log.
type simLogLine struct {
	Step    string `json:"step"`
	Story   string `json:"story"`
	Attempt int    `json:"attempt"`
	Cycle   int    `json:"cycle,omitempty"`
	Role    string `json:"role,omitempty"`
	Outcome string `json:"outcome"`
}

// log appends one JSON line to $STORY_AUTOMATOR_SIM_LOG. Lines are small and
// written with O_APPEND in one call, so concurrent children never interleave.
func (j *bmadJob) log(outcome string) {
	path := j.s.Getenv(EnvSimLog)
	if path == "" {
		return
	}
	data, _ := json.Marshal(simLogLine{Step: j.step, Story: j.key.String(), Attempt: j.attempt, Cycle: j.cycle,
		Role: j.s.Getenv(child.EnvRole), Outcome: outcome})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(data, '\n'))
}

// storyFile returns the story's file, or "" when it has none.
func (j *bmadJob) storyFile() (string, error) {
	f, err := j.p.StoryFile(j.key)
	if errors.Is(err, workflows.ErrStoryFileNotFound) {
		return "", nil
	}
	return f, err
}

// editFile rewrites a file through fn, atomically, keeping its mode.
func editFile(path string, fn func(string) string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.Replace(path, []byte(fn(string(data))), mode)
}

// writeProjectFile writes a project file (0644, directories 0755), atomically.
func writeProjectFile(path, text string) error {
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Replace(path, []byte(text), 0o644)
}

func appendSection(text, section string) string {
	return strings.TrimRight(text, "\n") + "\n\n" + strings.TrimRight(section, "\n") + "\n"
}

// workRoot is the folder the simulated agent works in: a story's own git
// worktree when it has one (the project root is then only where the run's
// state lives), else the project root, else the current folder.
func workRoot(s *Sim) (string, error) {
	if root := s.Getenv(child.EnvWorkDir); root != "" {
		return root, nil
	}
	if root := s.Getenv("PROJECT_ROOT"); root != "" {
		return root, nil
	}
	return os.Getwd()
}
