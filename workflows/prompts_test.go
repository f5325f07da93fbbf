package workflows

import (
	"errors"
	"strings"
	"testing"
)

func TestBuiltInPromptsRender(t *testing.T) {
	p := openProject(t)
	pol, err := ParsePolicy("test", []byte("testCommand: make test\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		step string
		key  StoryKey
		vars PromptVars
		want []string
	}{
		{StepCreate, StoryKey{"2", 1}, PromptVars{}, []string{
			`story 2.1 "Product List" of epic 2 "Catalogue"`,
			"`_bmad-output/implementation-artifacts/2-1-product-list.md`",
			"Status: ready-for-dev", "_bmad-output/planning-artifacts/epics.md",
			"### Story 2.1: Product List", "So that I can choose one.", "end your turn",
		}},
		{StepDev, StoryKey{"1", 3}, PromptVars{}, []string{
			"`_bmad-output/implementation-artifacts/1-3-password-reset.md`", "The test command is `make test`",
			"set the story to `review`", "`_bmad-output/implementation-artifacts/sprint-status.yaml`", "end your turn",
		}},
		{StepAutomate, StoryKey{"1", 3}, PromptVars{}, []string{"Run `make test`", "end your turn"}},
		{StepReview, StoryKey{"1", 2}, PromptVars{Cycle: 2, ReviewNotes: "- [ ] handle a locked account\n"}, []string{
			"review cycle 2 of 5", "- [ ] handle a locked account", "set the story to `done`", "set the story to `in-progress`", "end your turn",
		}},
		{StepCommit, StoryKey{"1", 2}, PromptVars{}, []string{"story 1.2: User Login", "end your turn"}},
		{StepRetro, StoryKey{Epic: "1"}, PromptVars{}, []string{
			`epic 1 "Accounts"`, "1-1-user-registration, 1-2-user-login, 1-3-password-reset",
			"`_bmad-output/implementation-artifacts/epic-1-retro-", "epic-1-retrospective", "end your turn",
		}},
		{StepRetro, StoryKey{"1", 3}, PromptVars{}, []string{`epic 1 "Accounts"`}},
	}
	for _, c := range cases {
		got, err := p.Prompt(c.step, c.key, pol, c.vars)
		if err != nil {
			t.Errorf("%s %s: %v", c.step, c.key, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s prompt lacks %q:\n%s", c.step, c.key, w, got)
			}
		}
		if strings.Contains(got, "<no value>") {
			t.Errorf("%s prompt has an unfilled field:\n%s", c.step, got)
		}
	}
}

func TestReviewPromptWithoutNotesOmitsThem(t *testing.T) {
	p := openProject(t)
	got, err := p.Prompt(StepReview, StoryKey{"1", 2}, DefaultPolicy(), PromptVars{Cycle: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "previous review cycle") || strings.Contains(got, "test command") {
		t.Errorf("review prompt mentions absent notes or test command:\n%s", got)
	}
}

func TestPromptOverride(t *testing.T) {
	p := openProject(t)
	writeFiles(t, p.Root, map[string]string{
		PromptDir + "/dev.md": "Implement {{.FullKey}} ({{.Title}}) from {{.StoryFile}}; cycle {{.Cycle}}.\n",
	})
	got, err := p.Prompt(StepDev, StoryKey{"1", 3}, nil, PromptVars{Cycle: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got != "Implement 1-3-password-reset (Password Reset) from _bmad-output/implementation-artifacts/1-3-password-reset.md; cycle 0.\n" {
		t.Errorf("override rendered %q", got)
	}
	if other, err := p.Prompt(StepCreate, StoryKey{"1", 3}, nil, PromptVars{}); err != nil || !strings.Contains(other, "Scrum Master") {
		t.Errorf("other steps keep the built-in prompt: %v", err)
	}
}

func TestPromptErrors(t *testing.T) {
	p := openProject(t)
	writeFiles(t, p.Root, map[string]string{
		PromptDir + "/dev.md":    "{{.Nope}}\n",
		PromptDir + "/review.md": "{{if}}\n",
	})
	cases := []struct {
		step string
		key  StoryKey
		want error
		msg  string
	}{
		{StepDev, StoryKey{"1", 1}, ErrPrompt, "Nope"},
		{StepReview, StoryKey{"1", 1}, ErrPrompt, ".story-automator/prompts/review.md"},
		{"deploy", StoryKey{"1", 1}, ErrUnknownStep, "deploy"},
		{StepCreate, StoryKey{"7", 1}, ErrStoryNotFound, "7.1"},
		{StepCreate, StoryKey{Epic: "1"}, ErrInvalidKey, "needs a story"},
		{StepRetro, StoryKey{Epic: "7"}, ErrEpicNotFound, "7"},
	}
	for _, c := range cases {
		_, err := p.Prompt(c.step, c.key, nil, PromptVars{})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %s: err = %v, want %v containing %q", c.step, c.key, err, c.want, c.msg)
		}
	}
}

func TestReviewNotes(t *testing.T) {
	p := openProject(t)
	writeFiles(t, p.ArtifactsDir, map[string]string{"1-2-user-login.md": `# Story 1.2: User Login

Status: in-progress

## Tasks / Subtasks

- [ ] not a review item

## Senior Developer Review (AI)

### Review Follow-ups (AI)

- [x] [High] fixed already
- [ ] [High] lock the account after 5 failures
  - [ ] [Low] log the lockout

### Notes

- [ ] not under follow-ups
`})
	got, err := p.ReviewNotes(StoryKey{"1", 2})
	if err != nil || got != "- [ ] [High] lock the account after 5 failures\n- [ ] [Low] log the lockout" {
		t.Errorf("ReviewNotes = %q, %v", got, err)
	}
	if got, err := p.ReviewNotes(StoryKey{"2", 1}); got != "" || err != nil {
		t.Errorf("no story file: %q, %v", got, err)
	}
}
