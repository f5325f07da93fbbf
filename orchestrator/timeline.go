package orchestrator

import (
	"time"

	"github.com/story-automator/story-automator/marker"
)

// LinkTimeline records in a run's state document (at stateFile) that an
// HTML timeline of the run was written to path at now, so the document
// names it. It holds the project's run lock while it rewrites the document,
// so it never races a run: while one holds the lock it changes nothing and
// returns ErrRunActive.
func LinkTimeline(root, stateFile, path string, now time.Time) error {
	lock, err := AcquireRunLock(root)
	if err != nil {
		return err
	}
	defer lock.Release()
	st, err := LoadState(stateFile)
	if err != nil {
		return err
	}
	st.Timeline = &TimelineFile{Path: path, WrittenAt: marker.Timestamp(now)}
	return SaveState(stateFile, st)
}
