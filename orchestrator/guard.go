package orchestrator

import "fmt"

// CodeGitTampered is a step whose attempt changed the files that make the
// repository's git commands run code (its config, its hooks).
const CodeGitTampered = "git_tampered"

// gitFingerprint sums the repository's config and hooks ("" = no check).
func (e *Engine) gitFingerprint() string {
	g, ok := e.Git.(GitGuard)
	if !ok {
		return ""
	}
	sum, err := g.GitFingerprint()
	if err != nil {
		e.Log.Warn().Err(err).Msg("sum the repository's config and hooks")
		return ""
	}
	return sum
}

// gitUntouched is the blocker of an attempt during which the repository's
// config or hooks changed (before is their sum when it started): the run's
// own git commands, which no sandbox confines, would run what was planted.
func (e *Engine) gitUntouched(before string) *Blocker {
	if before == "" {
		return nil
	}
	if after := e.gitFingerprint(); after == "" || after == before {
		return nil
	}
	return &Blocker{Code: CodeGitTampered,
		Err:    fmt.Errorf("the repository's .git/config or hooks changed during the attempt; the run's own git, which no sandbox confines, would run them"),
		Action: "look at .git/config and the hooks (git does not track them) and undo what you did not change yourself, then run `" + ResumeCommand + "`"}
}
