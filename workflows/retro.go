package workflows

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Verdicts of a BMAD 6.12 retrospective, read from its document's
// frontmatter (never from the board).
const (
	VerdictAccepted          = "accepted"
	VerdictAcceptedOpenItems = "accepted-with-open-items"
	VerdictRejected          = "rejected"
)

// RetroFile is a stories-mode retrospective's document in its spec folder.
const RetroFile = "RETROSPECTIVE.md"

// ErrRetroInvalid marks a retrospective document without a verdict a
// machine can read.
var ErrRetroInvalid = errors.New("invalid retrospective document")

// Retro is what a retrospective document says a run acts on.
type Retro struct {
	Path    string
	Verdict string
	// ActionItems are the items of its "Action items" section, one line each.
	ActionItems []string
	// Summary is the first paragraph of its "Acceptance verdict" section,
	// on one line.
	Summary string
}

// FindSprintRetro returns the newest retrospective document of an epic in
// the artifacts folder (epic-<N>-retro-<date>.md), "" when there is none.
func FindSprintRetro(artifacts, epic string) (string, error) {
	found, err := filepath.Glob(filepath.Join(artifacts, "epic-"+epic+"-retro-*.md"))
	if err != nil || len(found) == 0 {
		return "", err
	}
	slices.SortFunc(found, func(a, b string) int {
		ia, _ := os.Stat(a)
		ib, _ := os.Stat(b)
		if ia != nil && ib != nil && !ia.ModTime().Equal(ib.ModTime()) {
			return ia.ModTime().Compare(ib.ModTime())
		}
		return strings.Compare(a, b)
	})
	return found[len(found)-1], nil
}

// ReadRetro reads a retrospective document: its frontmatter verdict (one of
// the three) and its action items.
func ReadRetro(path string) (Retro, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Retro{}, err
	}
	front, body, ok := cutFrontmatter(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if !ok {
		return Retro{}, fmt.Errorf("%w: %s: no frontmatter with a verdict", ErrRetroInvalid, path)
	}
	var meta struct {
		Verdict string `yaml:"verdict"`
	}
	if err := yaml.Unmarshal([]byte(front), &meta); err != nil {
		return Retro{}, fmt.Errorf("%w: %s: frontmatter: %v", ErrRetroInvalid, path, err)
	}
	r := Retro{Path: path, Verdict: strings.TrimSpace(meta.Verdict)}
	if !slices.Contains([]string{VerdictAccepted, VerdictAcceptedOpenItems, VerdictRejected}, r.Verdict) {
		return r, fmt.Errorf("%w: %s: verdict %q is none of %s, %s, %s", ErrRetroInvalid, path, r.Verdict,
			VerdictAccepted, VerdictAcceptedOpenItems, VerdictRejected)
	}
	in, verdictAt := 0, 0
	var summary []string
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if h := len(t) - len(strings.TrimLeft(t, "#")); h > 0 && strings.HasPrefix(t[h:], " ") {
			title := strings.TrimSpace(t[h:])
			switch {
			case strings.EqualFold(title, "action items"):
				in = h
			case in > 0 && h <= in:
				in = 0
			}
			switch {
			case strings.EqualFold(title, "acceptance verdict"):
				verdictAt = h
			case verdictAt > 0 && h <= verdictAt:
				verdictAt = -1
			}
			continue
		}
		if item, ok := strings.CutPrefix(t, "- "); ok && in > 0 {
			r.ActionItems = append(r.ActionItems, strings.TrimSpace(item))
		}
		if verdictAt > 0 {
			switch {
			case t != "":
				summary = append(summary, t)
			case len(summary) > 0:
				verdictAt = -1
			}
		}
	}
	r.Summary = strings.Join(summary, " ")
	if n := []rune(r.Summary); len(n) > 400 {
		r.Summary = string(n[:399]) + "…"
	}
	return r, nil
}
