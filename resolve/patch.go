package resolve

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// patchPath finds a path of a .patch or .diff file in text.
var patchPath = lazyre.New("[^\\s`'\"()<>\\[\\]]+\\.(?:patch|diff)\\b")

// IntentGapPatch is the patch of the change bmad-build-auto attempted
// before its review found an intent gap (BMAD 6.12 saves it in the
// implementation artifacts and names it in its triage log and its Auto
// Run Result; the name is the model's): the one the spec names, the last
// named first; else the newest .patch beside the spec that names the
// story's key. "" when there is none.
func (t *Target) IntentGapPatch() string {
	if t.Spec == "" {
		return ""
	}
	data, err := os.ReadFile(t.Spec)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(t.Spec)
	named := patchPath().FindAllString(string(data), -1)
	for i := len(named) - 1; i >= 0; i-- {
		p := strings.ReplaceAll(named[i], "{implementation_artifacts}", dir)
		for _, c := range []string{p, filepath.Join(t.Dir, p), filepath.Join(dir, p), filepath.Join(dir, filepath.Base(p))} {
			if filepath.IsAbs(c) && regular(c) {
				return c
			}
		}
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.patch"))
	var mine []string
	for _, f := range found {
		if strings.Contains(filepath.Base(f), t.Unit.Key) {
			mine = append(mine, f)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return modTime(mine[i]) > modTime(mine[j]) })
	if len(mine) > 0 {
		return mine[0]
	}
	return ""
}

func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func modTime(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixNano()
}
