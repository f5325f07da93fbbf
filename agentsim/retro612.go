package agentsim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/workflows"
)

// BehaviourRetro acts out BMAD 6.12's headless retrospective,
// `bmad-retrospective -H <epic>` (or `-H <spec folder>`): it writes the
// retrospective's document with its frontmatter verdict and action items
// and, when told to, sets the board as BMAD's own script does. The bmad and
// build-auto behaviours hand a prompt that invokes the skill to it.
const BehaviourRetro = "retrospective"

// RetroSkill is the skill the retrospective behaviour answers to.
const RetroSkill = "bmad-retrospective"

// EnvRetro steers the retrospective: a comma-separated list of
// verdict=accepted|accepted-with-open-items|rejected (default accepted; an
// epic with a story not done is rejected whatever it says, as BMAD's is)
// and board (set epic-N-retrospective and append the action items, as
// BMAD's sprint_status.py does when its child may run it; without it the
// board is left as a confined child leaves it).
const EnvRetro = "STORY_AUTOMATOR_SIM_RETRO"

func init() {
	Register(Behaviour{Name: BehaviourRetro, Summary: "act out BMAD 6.12's headless " + RetroSkill +
		" -H EPIC|FOLDER (its document and verdict); steered by " + EnvRetro, Act: actRetro})
}

// invokesRetro reports whether the prompt runs the retrospective skill.
func invokesRetro(prompt string) bool { return strings.Contains(prompt, RetroSkill+" ") }

func actRetro(_ context.Context, s *Sim) int {
	out, err := holdRetro(s)
	if err != nil {
		fmt.Fprintf(s.Out, "agent-sim retrospective: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.Out, "agent-sim retrospective: %s\n", out)
	return 0
}

func holdRetro(s *Sim) (string, error) {
	root, err := workRoot(s)
	if err != nil {
		return "", err
	}
	_, after, ok := strings.Cut(s.Prompt, RetroSkill)
	line, _, _ := strings.Cut(after, "\n")
	arg, found := strings.CutPrefix(strings.TrimSpace(line), "-H ")
	if !ok || !found || strings.TrimSpace(arg) == "" {
		return "", fmt.Errorf("the prompt does not invoke %s -H <epic|folder>", RetroSkill)
	}
	arg = strings.TrimSpace(arg)
	verdict, board := workflows.VerdictAccepted, false
	for _, item := range strings.Split(s.Getenv(EnvRetro), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch k {
		case "verdict":
			verdict = v
		case "board":
			board = true
		}
	}
	p, err := workflows.Open(root)
	if err != nil {
		return "", err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	epic, stories := arg, "sprint"
	var path, summary string
	if _, err := workflows.ParseEpicID(arg); err != nil {
		stories = "stories"
		dir := arg
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		path = filepath.Join(dir, workflows.RetroFile)
		var allDone bool
		if summary, allDone, err = folderStoriesSummary(dir); err != nil {
			return "", err
		}
		if !allDone {
			verdict = workflows.VerdictRejected // BMAD: any story not done forces it
		}
	} else {
		path = filepath.Join(p.ArtifactsDir, fmt.Sprintf("epic-%s-retro-%s.md", epic, now().Format("2006-01-02")))
		all, err := p.Stories()
		if err != nil {
			return "", err
		}
		for _, st := range all {
			if st.Key.Epic == epic && st.Status != workflows.StatusDone {
				verdict = workflows.VerdictRejected // BMAD: any story not done forces it
			}
		}
	}
	items := map[string][]string{
		workflows.VerdictAccepted:          nil,
		workflows.VerdictAcceptedOpenItems: {"Add error handling to the sign-up form (owner: dev)", "Document the settings API (owner: pm)"},
		workflows.VerdictRejected:          {"Make the failing acceptance criterion pass (owner: dev)"},
	}[verdict]
	var b strings.Builder
	b.WriteString("---\n")
	if stories == "sprint" {
		fmt.Fprintf(&b, "epic: %s\n", epic)
	}
	fmt.Fprintf(&b, "date: %s\nverdict: %s\ncriteria: profiled\nheadless: true\n---\n\n", now().Format("01-02-2006 15:04"), verdict)
	fmt.Fprintf(&b, "# Retrospective: %s (simulated agent)\n\n## Epic summary\n\n%s mode, every story read.\n%s\n## Findings\n\n- No finding without a source (simulated).\n\n## Action items\n\n", arg, stories, summary)
	if len(items) == 0 {
		b.WriteString("None.\n")
	}
	for _, it := range items {
		b.WriteString("- " + it + "\n")
	}
	fmt.Fprintf(&b, "\n## Acceptance verdict\n\n%s: judged on the evidence alone (simulated).\n\n## Assumptions\n\n- Headless: epic %s from the invocation.\n", verdict, arg)
	if err := writeProjectFile(path, b.String()); err != nil {
		return "", err
	}
	done := fmt.Sprintf("wrote %s (verdict %s, %d action items)", p.Rel(path), verdict, len(items))
	if stories == "sprint" && board {
		r, err := workflows.ReadRetro(path)
		if err != nil {
			return "", err
		}
		if _, err := p.RecordRetro(epic, r, p.Rel(path), now()); err != nil {
			return "", err
		}
		done += "; set the board"
	}
	return done, nil
}

// folderStoriesSummary lists a spec folder's stories, in stories.yaml's
// order, each with its spec's status ("not started" without one), and
// reports whether every one is done.
func folderStoriesSummary(folder string) (string, bool, error) {
	entries, err := readFolderEntries(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return "", true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", filepath.Join(folder, workflows.StoriesFile), err)
	}
	var b strings.Builder
	allDone := true
	b.WriteString("\n")
	for _, e := range entries {
		status := "not started"
		found, err := storyFiles(folder, e.ID)
		if err != nil {
			return "", false, err
		}
		switch len(found) {
		case 0:
		case 1:
			if spec, err := workflows.ReadSpec(found[0]); err == nil {
				status = spec.Status
			} else {
				status = "unreadable"
			}
		default:
			status = "ambiguous"
		}
		if status != workflows.SpecDone {
			allDone = false
		}
		fmt.Fprintf(&b, "- Story %s (%s): %s\n", e.ID, e.Title, status)
	}
	return b.String(), allDone, nil
}
