package workflows

import (
	"fmt"
	"path/filepath"
	"strings"
)

// EpicStory returns the story as the epics declare it, for a step that
// writes from them (create): ErrEpicsNotFound naming where epics were looked
// for when there are none, ErrStoryNotInEpics naming the files read when
// none declares the story.
func (p *Layout) EpicStory(k StoryKey) (EpicStory, error) {
	files, err := p.EpicFiles()
	if err != nil {
		return EpicStory{}, err
	}
	if len(files) == 0 {
		var looked []string
		for _, d := range p.rels(append([]string{p.ArtifactsDir}, p.PlanningDirs...)) {
			looked = append(looked, filepath.Join(d, "{epics.md,epic-*.md,epics/*.md}"))
		}
		return EpicStory{}, fmt.Errorf("%w: story %s needs them; looked for %s", ErrEpicsNotFound, k.Dotted(), strings.Join(looked, ", "))
	}
	epics, err := p.Epics()
	if err != nil {
		return EpicStory{}, err
	}
	for _, e := range epics {
		for _, s := range e.Stories {
			if s.Key == k {
				return s, nil
			}
		}
	}
	return EpicStory{}, fmt.Errorf("%w: story %s is not declared in %s", ErrStoryNotInEpics, k.Dotted(), strings.Join(p.rels(files), ", "))
}
