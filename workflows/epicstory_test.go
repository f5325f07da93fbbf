package workflows

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestEpicStoryNamesWhatItLookedFor(t *testing.T) {
	p := openProject(t)
	files, err := p.EpicFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("epic files %v %v", files, err)
	}
	if _, err := p.EpicStory(StoryKey{Epic: "99", Num: 1}); !errors.Is(err, ErrStoryNotInEpics) || Code(err) != "story_not_in_epics" ||
		!strings.Contains(err.Error(), "epics.md") {
		t.Fatalf("undeclared story: %v (%s)", err, Code(err))
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	_, err = p.EpicStory(StoryKey{Epic: "1", Num: 1})
	if !errors.Is(err, ErrEpicsNotFound) || Code(err) != "epics_not_found" || !strings.Contains(err.Error(), "epics.md") {
		t.Fatalf("no epics: %v (%s)", err, Code(err))
	}
}
