package workflows

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func keysOf(stories []Story) string {
	var ks []string
	for _, s := range stories {
		ks = append(ks, s.Key.Dotted())
	}
	return strings.Join(ks, " ")
}

func TestStoriesMergeSprintStatusAndEpics(t *testing.T) {
	p := openProject(t)
	writeFiles(t, p.ArtifactsDir, map[string]string{"epic-3-payments.md": "## Epic 3: Payments\n### Story 3.1: Card Checkout\nDepends on: 1.2\n"})
	stories, err := p.Stories()
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(stories); got != "1.1 1.2 1.3 2.1 2.2 3.1" {
		t.Fatalf("stories = %s", got)
	}
	s := stories[1]
	if s.FullKey() != "1-2-user-login" || s.Title != "User Login" || s.Status != StatusReview || len(s.DependsOn) != 1 {
		t.Errorf("1.2 = %+v", s)
	}
	s = stories[5]
	if s.FullKey() != "3-1-card-checkout" || s.Status != "" || s.DependsOn[0] != (StoryKey{"1", 2}) {
		t.Errorf("3.1 (epics only) = %+v", s)
	}
	if got, err := p.Story(StoryKey{"2", 2}); err != nil || got.Slug != "product-search" {
		t.Errorf("Story(2.2) = %+v, %v", got, err)
	}
	writeFiles(t, p.ArtifactsDir, map[string]string{"4-1-orphan.md": "Status: backlog\n"})
	if got, err := p.Story(StoryKey{"4", 1}); err != nil || got.FullKey() != "4-1-orphan" {
		t.Errorf("Story(4.1) known only by its file = %+v, %v", got, err)
	}
	if _, err := p.Story(StoryKey{"9", 9}); !errors.Is(err, ErrStoryNotFound) || Code(err) != "story_not_found" {
		t.Errorf("Story(9.9) err = %v", err)
	}
}

func TestStoriesNeedsSomeSource(t *testing.T) {
	p := openProject(t)
	for _, f := range []string{p.SprintStatusPath(), p.Root + "/_bmad-output/planning-artifacts/epics.md"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Stories(); !errors.Is(err, ErrSprintNotFound) {
		t.Errorf("err = %v, want ErrSprintNotFound", err)
	}
}

func sampleStories() []Story {
	var out []Story
	for _, k := range []string{"1.1", "1.2", "1.3", "1.4", "1.5", "2.1", "2.2", "auth.1"} {
		key, _ := ParseStoryKey(k)
		out = append(out, Story{Key: key})
	}
	return out
}

func TestSelectStories(t *testing.T) {
	one := sampleStories()[:5]
	cases := []struct {
		stories    []Story
		epic, spec string
		want       string
	}{
		{sampleStories(), "", "all", "1.1 1.2 1.3 1.4 1.5 2.1 2.2 auth.1"},
		{sampleStories(), "", "", "1.1 1.2 1.3 1.4 1.5 2.1 2.2 auth.1"},
		{sampleStories(), "1", "ALL", "1.1 1.2 1.3 1.4 1.5"},
		{sampleStories(), "epic-2", "all", "2.1 2.2"},
		{sampleStories(), "1", "1-3", "1.1 1.2 1.3"},
		{sampleStories(), "1", "5,1,3", "1.1 1.3 1.5"},
		{sampleStories(), "1", "2,4-5,2", "1.2 1.4 1.5"},
		{sampleStories(), "auth", "1", "auth.1"},
		{sampleStories(), "", "2.2, 1-4-slug, auth-1", "1.4 2.2 auth.1"},
		{sampleStories(), "1", "1.2,3", "1.2 1.3"},
		{one, "", "2-3", "1.2 1.3"},
	}
	for _, c := range cases {
		got, err := SelectStories(c.stories, c.epic, c.spec)
		if err != nil {
			t.Errorf("epic %q spec %q: %v", c.epic, c.spec, err)
			continue
		}
		if keysOf(got) != c.want {
			t.Errorf("epic %q spec %q = %s, want %s", c.epic, c.spec, keysOf(got), c.want)
		}
	}
}

func TestSelectStoriesErrors(t *testing.T) {
	cases := []struct{ epic, spec, msg string }{
		{"", "1-3", "name the epic with --epic"},
		{"1", "3-1", "runs backwards"},
		{"1", "1-9", "epic 1 has no story 1.6"},
		{"1", "7", "epic 1 has no story 1.7"},
		{"1", "2.1", "story 2.1 is not in epic 1"},
		{"", "3.1", "no story 3.1"},
		{"9", "all", "epic 9 has no stories"},
		{"1", "1,,2", "empty item"},
		{"1", "x y", "neither a story number"},
		{"epic", "all", "invalid story key"},
	}
	for _, c := range cases {
		_, err := SelectStories(sampleStories(), c.epic, c.spec)
		if !errors.Is(err, ErrSelection) || Code(err) != "invalid_selection" || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("epic %q spec %q: err = %v, want invalid_selection containing %q", c.epic, c.spec, err, c.msg)
		}
	}
	if _, err := SelectStories(nil, "", "all"); !errors.Is(err, ErrSelection) {
		t.Errorf("no stories: err = %v", err)
	}
}
