package bmad

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"

	"github.com/story-automator/story-automator/workflows"
)

// resultGlob names the worker's result files: what it writes, outside
// folder mode, when it halts with no spec path known.
const resultGlob = workflows.BuildAutoSkill + "-result-*.md"

// resultEntry is how a story's Before list records a result file there
// was at its first dispatch: its folder-relative path and the sum of what
// it held. A file of that name written later (the name is the model's
// choice, so a later halt may reuse it) holds something else and counts
// as new.
func resultEntry(rel string, data []byte) string {
	sum := sha256.Sum256(data)
	return rel + "#sha256=" + hex.EncodeToString(sum[:])
}

// results lists the result files in the story's specs folder with their
// entries.
func (s *story) results() (paths, entries []string) {
	found, _ := filepath.Glob(filepath.Join(s.specs, resultGlob))
	for _, r := range found {
		data, err := os.ReadFile(r)
		if err != nil {
			continue
		}
		paths = append(paths, r)
		entries = append(entries, resultEntry(s.rel(r), data))
	}
	return paths, entries
}

// newResults are the result files not there, as they are, at the story's
// first dispatch (before: its Before list).
func (s *story) newResults(before []string) []string {
	paths, entries := s.results()
	var out []string
	for i, r := range paths {
		if !slices.Contains(before, entries[i]) {
			out = append(out, r)
		}
	}
	return out
}
