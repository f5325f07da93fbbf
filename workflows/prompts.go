package workflows

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed prompts/*.md
var promptFS embed.FS

// PromptDir is where a project overrides prompts: <PromptDir>/<step>.md.
const PromptDir = StateDir + "/prompts"

// PromptVars are the parts of a prompt that depend on the run, not the files.
type PromptVars struct {
	// Cycle is the review cycle, from 1; 0 outside review.
	Cycle int
	// ReviewNotes are the open items the previous review cycle left.
	ReviewNotes string
}

// PromptData is what a prompt template sees. Paths are relative to the
// project root, except ProjectRoot. Templates may also call `join LIST SEP`.
type PromptData struct {
	Step        string
	Story       string // "1.2" (for retro: the epic id)
	Key         string // "1-2"
	FullKey     string // "1-2-user-login"
	Epic        string
	EpicTitle   string
	Title       string
	StoryFile   string // the story file, or where create must write it
	StoryText   string // the story's section of the epics
	EpicsFile   string
	EpicStories []string // full keys of the epic's stories (retro)

	ProjectRoot  string
	ArtifactsDir string
	SprintStatus string
	TestCommand  string

	Cycle       int
	MaxCycles   int
	ReviewNotes string
}

// Prompt renders the prompt of step for a story (for StepRetro, key names
// the epic or any of its stories): the project's
// .story-automator/prompts/<step>.md when it exists, else the built-in one.
func (p *Layout) Prompt(step string, key StoryKey, pol *Policy, vars PromptVars) (string, error) {
	if pol == nil {
		var err error
		if pol, err = LoadPolicy(p.Root); err != nil {
			return "", err
		}
	}
	if _, err := pol.Step(step); err != nil {
		return "", err
	}
	data, err := p.promptData(step, key, pol, vars)
	if err != nil {
		return "", err
	}
	name, text, err := p.promptTemplate(step)
	if err != nil {
		return "", err
	}
	return renderPrompt(name, text, data)
}

// promptTemplate returns the override file's name and text, or the built-in's.
func (p *Layout) promptTemplate(step string) (string, string, error) {
	rel := filepath.Join(PromptDir, step+".md")
	data, err := os.ReadFile(filepath.Join(p.Root, rel))
	if err == nil {
		return rel, string(data), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("read prompt override: %w", err)
	}
	data, err = promptFS.ReadFile("prompts/" + step + ".md")
	if err != nil {
		return "", "", fmt.Errorf("%w %q: no built-in prompt", ErrUnknownStep, step)
	}
	return "built-in " + step + ".md", string(data), nil
}

func renderPrompt(name, text string, data PromptData) (string, error) {
	t, err := template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"join": strings.Join}).Parse(text)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrPrompt, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%w: %v", ErrPrompt, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

func (p *Layout) promptData(step string, key StoryKey, pol *Policy, vars PromptVars) (PromptData, error) {
	cmd, _ := pol.CommandFor(pol.Steps[step])
	d := PromptData{
		Step: step, Epic: key.Epic, Story: key.Dotted(), Key: key.String(), FullKey: key.String(),
		ProjectRoot: p.Root, ArtifactsDir: p.Rel(p.ArtifactsDir), SprintStatus: p.Rel(p.SprintStatusPath()),
		TestCommand: cmd, Cycle: vars.Cycle, MaxCycles: pol.MaxReviewCycles(), ReviewNotes: strings.TrimSpace(vars.ReviewNotes),
	}
	epics, err := p.Epics()
	if err != nil {
		return d, err
	}
	for _, e := range epics {
		if e.ID == key.Epic {
			d.EpicTitle, d.EpicsFile = e.Title, p.Rel(e.File)
		}
	}
	if step == StepRetro {
		stories, err := p.epicStories(key.Epic)
		if err != nil {
			return d, err
		}
		if len(stories) == 0 {
			return d, fmt.Errorf("%w %s: no stories", ErrEpicNotFound, key.Epic)
		}
		for _, s := range stories {
			d.EpicStories = append(d.EpicStories, s.FullKey())
		}
		d.Story, d.Key, d.FullKey = key.Epic, key.Epic, "epic-"+key.Epic
		return d, nil
	}
	return p.storyPromptData(d, key, epics)
}

func (p *Layout) storyPromptData(d PromptData, key StoryKey, epics []Epic) (PromptData, error) {
	if key.IsEpic() {
		return d, fmt.Errorf("%w: step %s needs a story, got epic %s", ErrInvalidKey, d.Step, key.Epic)
	}
	s, err := p.Story(key)
	if err != nil {
		return d, err
	}
	d.Title, d.FullKey = s.Title, s.FullKey()
	d.StoryFile = p.Rel(filepath.Join(p.ArtifactsDir, s.FullKey()+".md"))
	if files, err := p.StoryFiles(key); err == nil && len(files) == 1 {
		d.StoryFile = p.Rel(files[0])
	}
	for _, e := range epics {
		for _, es := range e.Stories {
			if es.Key == key {
				d.StoryText = strings.TrimSpace(es.Text)
			}
		}
	}
	return d, nil
}

// ReviewNotes returns the open review items of a story: the unchecked "- [ ]"
// lines under its story file's "Review Follow-ups" heading, or "" when there
// are none or no single story file.
func (p *Layout) ReviewNotes(key StoryKey) (string, error) {
	files, err := p.StoryFiles(key)
	if err != nil || len(files) != 1 {
		return "", err
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return "", fmt.Errorf("read story file: %w", err)
	}
	var open []string
	level := 0
	for _, line := range strings.Split(string(data), "\n") {
		if h := headingLevel().FindStringSubmatch(line); h != nil {
			switch {
			case strings.Contains(strings.ToLower(line), "review follow-up"):
				level = len(h[1])
			case level > 0 && len(h[1]) <= level:
				level = 0
			}
			continue
		}
		if t := strings.TrimSpace(line); level > 0 && strings.HasPrefix(t, "- [ ]") {
			open = append(open, t)
		}
	}
	return strings.Join(open, "\n"), nil
}
