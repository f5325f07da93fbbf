package workflows

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
)

// parseCache remembers what the project's planning files parsed to, keyed
// by their content: a file is still read on every use (agents change them
// behind the run's back, and a file's size and time can stay the same
// across an edit), but parsed again only when its bytes changed. A run asks
// for its stories several times per step; with 200 stories parsing
// sprint-status.yaml and the epics each time was most of a step's cost.
type parseCache struct {
	mu sync.Mutex
	// sprint is the last sprint-status.yaml read, and what it parsed to.
	sprintData []byte
	sprint     *SprintStatus
	sprintErr  error
	sprintGen  int
	// epics are the last epic files read (path and content, in order).
	epicFiles []cachedFile
	epics     []Epic
	epicsGen  int
	// stories were made from the sprint status and epics of these generations.
	stories       []Story
	storiesErr    error
	storiesSprint int
	storiesEpics  int
}

type cachedFile struct {
	path string
	data []byte
}

// newParseCache is set by Open; a Layout made by hand parses every time.
func newParseCache() *parseCache { return &parseCache{sprintGen: 1, epicsGen: 1} }

// sprintView reads sprint-status.yaml for reading only: the result is
// shared, never to be changed (ReadSprintStatus returns one to edit).
func (p *Layout) sprintView() (*SprintStatus, int, error) {
	if p.cache == nil {
		ss, err := p.ReadSprintStatus()
		return ss, 0, err
	}
	path := p.SprintStatusPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, -1, fmt.Errorf("%w: %s", ErrSprintNotFound, p.Rel(path))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	c := p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sprintData == nil || !bytes.Equal(c.sprintData, data) {
		c.sprint, c.sprintErr = ParseSprintStatus(path, data)
		c.sprintData = data
		c.sprintGen++
	}
	return c.sprint, c.sprintGen, c.sprintErr
}

// cachedEpics returns the epics parsed from files (read just now), and the
// generation of that parse; ok is false without a cache.
func (p *Layout) cachedEpics(files []cachedFile) (epics []Epic, gen int, ok bool) {
	if p.cache == nil {
		return nil, 0, false
	}
	c := p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	same := slices.EqualFunc(c.epicFiles, files, func(a, b cachedFile) bool {
		return a.path == b.path && bytes.Equal(a.data, b.data)
	})
	if !same || c.epics == nil {
		c.epics, c.epicFiles = parseEpicFiles(files), files
		c.epicsGen++
	}
	return c.epics, c.epicsGen, true
}

// cachedStories returns the stories made from the given generations of
// sprint status and epics, making them with build when they changed.
func (p *Layout) cachedStories(sprintGen, epicsGen int, build func() ([]Story, error)) ([]Story, error) {
	if p.cache == nil || sprintGen == 0 || epicsGen == 0 {
		return build()
	}
	c := p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stories == nil || c.storiesSprint != sprintGen || c.storiesEpics != epicsGen {
		c.stories, c.storiesErr = build()
		c.storiesSprint, c.storiesEpics = sprintGen, epicsGen
	}
	return slices.Clone(c.stories), c.storiesErr
}
