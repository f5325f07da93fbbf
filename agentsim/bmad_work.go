package agentsim

import (
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/workflows"
)

// create writes the story file from the story's section of the epics, ready for dev.
func (j *bmadJob) create() (string, error) {
	if f, err := j.storyFile(); err != nil || f != "" {
		return "the story file exists: " + j.p.Rel(f), err
	}
	st, err := j.p.Story(j.key)
	if err != nil {
		return "", err
	}
	full := st.FullKey()
	if st.Slug == "" && st.Title != "" {
		full = j.key.String() + "-" + workflows.Slugify(st.Title)
	}
	path := filepath.Join(j.p.ArtifactsDir, full+".md")
	// A real agent writes the story from its section of the epics: without one it has nothing to write from.
	es, err := j.p.EpicStory(j.key)
	if err != nil {
		return "", err
	}
	body, source := epicBody(es), j.epicFile()
	text := fmt.Sprintf("# Story %s: %s\n\nStatus: ready-for-dev\n\n## Story\n\n%s\n\n## Tasks / Subtasks\n\n"+
		"- [ ] Implement story %s to its acceptance criteria\n- [ ] Write tests for every acceptance criterion\n\n"+
		"## Dev Notes\n\nDrafted by the simulated agent from %s.\n\n## Dev Agent Record\n\n### File List\n",
		j.key.Dotted(), st.Title, body, j.key.Dotted(), source)
	if err := writeProjectFile(path, text); err != nil {
		return "", err
	}
	if err := j.p.SetStoryStatus(j.key, workflows.StatusReadyForDev); err != nil {
		return "", err
	}
	return "wrote " + j.p.Rel(path), nil
}

// epicBody is the story's section of the epics without its heading.
func epicBody(s workflows.EpicStory) string {
	text := s.Text
	if i := strings.IndexByte(text, '\n'); i >= 0 && strings.HasPrefix(text, "#") {
		text = text[i+1:]
	}
	return strings.TrimSpace(text)
}

// epicFile is the epics file that declares the story's epic.
func (j *bmadJob) epicFile() string {
	epics, err := j.p.Epics()
	if err != nil {
		return "the epics"
	}
	for _, e := range epics {
		for _, s := range e.Stories {
			if s.Key == j.key {
				return j.p.Rel(e.File)
			}
		}
	}
	return "the epics"
}

// dev "implements" the story: a code file, ticked tasks, a file list, status review.
func (j *bmadJob) dev() (string, error) {
	story, err := j.needStoryFile()
	if err != nil {
		return "", err
	}
	if err := j.p.SetStoryStatus(j.key, workflows.StatusInProgress); err != nil {
		return "", err
	}
	code := filepath.Join(j.p.Root, SimWorkDir, strings.TrimSuffix(filepath.Base(story), ".md")+".txt")
	if err := appendLine(code, fmt.Sprintf("story %s implemented by the simulated agent (attempt %d)", j.key.Dotted(), j.attempt)); err != nil {
		return "", err
	}
	rel := j.p.Rel(code)
	err = editFile(story, func(t string) string {
		if unlisted(j.faults, j.step, j.key.String(), j.attempt) {
			return tickTasks(t)
		}
		return listFile(tickTasks(t), rel)
	})
	if err != nil {
		return "", err
	}
	if err := j.p.SetStoryStatus(j.key, workflows.StatusReview); err != nil {
		return "", err
	}
	return "implemented in " + rel + "; story in review", nil
}

// automate writes a test plan next to the code.
func (j *bmadJob) automate() (string, error) {
	story, err := j.needStoryFile()
	if err != nil {
		return "", err
	}
	plan := filepath.Join(j.p.Root, SimWorkDir, strings.TrimSuffix(filepath.Base(story), ".md")+".tests.md")
	text := fmt.Sprintf("# Tests for story %s\n\n- [x] every acceptance criterion has a test (simulated)\n", j.key.Dotted())
	if err := writeProjectFile(plan, text); err != nil {
		return "", err
	}
	rel := j.p.Rel(plan)
	if err := editFile(story, func(t string) string { return listFile(t, rel) }); err != nil {
		return "", err
	}
	return "wrote " + rel, nil
}

// review approves the story (done) or, when a fault says the cycle does not
// pass, leaves an open follow-up and sets it back to in-progress.
func (j *bmadJob) review() (string, error) {
	story, err := j.needStoryFile()
	if err != nil {
		return "", err
	}
	cycle := max(j.cycle, 1)
	if reviewPasses(j.faults, j.key.String(), cycle) {
		err = editFile(story, func(t string) string {
			t = strings.ReplaceAll(t, "- [ ] [review cycle", "- [x] [review cycle")
			return appendSection(t, fmt.Sprintf("### Review cycle %d: approved\n\nEvery acceptance criterion is met (simulated review).", cycle))
		})
		if err == nil {
			err = j.p.SetStoryStatus(j.key, workflows.StatusDone)
		}
		return fmt.Sprintf("review cycle %d approved; story done", cycle), err
	}
	err = editFile(story, func(t string) string {
		if !strings.Contains(t, "### Review Follow-ups (AI)") {
			t = appendSection(t, "## Senior Developer Review (AI)\n\n### Review Follow-ups (AI)")
		}
		return appendSection(t, fmt.Sprintf("- [ ] [review cycle %d] handle one more edge case (simulated finding)", cycle))
	})
	if err == nil {
		err = j.p.SetStoryStatus(j.key, workflows.StatusInProgress)
	}
	return fmt.Sprintf("review cycle %d: changes requested", cycle), err
}

// retro appends a retrospective note and marks the retrospective done.
func (j *bmadJob) retro() (string, error) {
	now := time.Now
	if j.s.Now != nil {
		now = j.s.Now
	}
	path := filepath.Join(j.p.ArtifactsDir, fmt.Sprintf("epic-%s-retro-%s.md", j.key.Epic, now().UTC().Format("2006-01-02")))
	note := fmt.Sprintf("## Retrospective of epic %s (simulated agent, %s)\n\n- Went well: every story passed its verifiers.\n- To improve: nothing worth noting in a simulation.",
		j.key.Epic, now().UTC().Format(time.RFC3339))
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	text := note + "\n"
	if len(old) > 0 {
		text = appendSection(string(old), note)
	}
	if err := writeProjectFile(path, text); err != nil {
		return "", err
	}
	err = j.p.UpdateSprintStatus(func(s *workflows.SprintStatus) error {
		return s.Set("epic-"+j.key.Epic+"-retrospective", workflows.StatusDone)
	})
	return "appended a retrospective to " + j.p.Rel(path), err
}

func (j *bmadJob) needStoryFile() (string, error) {
	f, err := j.storyFile()
	if err == nil && f == "" {
		err = fmt.Errorf("story %s has no story file yet (create comes first)", j.key.Dotted())
	}
	return f, err
}

// openTask is an unticked task line outside the review follow-ups.
var openTask = lazyre.New(`(?m)^(\s*[-*] )\[ \](\s)`)

// tickTasks ticks every open task above the review section.
func tickTasks(text string) string {
	head, tail := text, ""
	if i := strings.Index(text, "## Senior Developer Review"); i >= 0 {
		head, tail = text[:i], text[i:]
	}
	return openTask().ReplaceAllString(head, "${1}[x]${2}") + tail
}

// fileListHeading opens the story file's list of changed files, which the
// orchestrator reads to tell parallel stories' changes apart.
const fileListHeading = "### File List"

// listFile adds rel to the story's File List (once), creating the section
// at the end when the story file has none.
func listFile(text, rel string) string {
	item := "- " + filepath.ToSlash(rel)
	i := strings.Index(text, fileListHeading+"\n")
	if i < 0 {
		return appendSection(text, fileListHeading+"\n\n"+item)
	}
	body := i + len(fileListHeading) + 1
	end := len(text)
	if j := strings.Index(text[body:], "\n#"); j >= 0 {
		end = body + j + 1
	}
	section := text[body:end]
	if strings.Contains(section, item+"\n") {
		return text
	}
	section = strings.TrimRight(section, "\n") + "\n" + item + "\n"
	if end < len(text) {
		section += "\n"
	}
	return text[:body] + section + text[end:]
}

// appendLine adds a line to a project file, creating it when missing.
func appendLine(path, line string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return writeProjectFile(path, string(old)+line+"\n")
}
