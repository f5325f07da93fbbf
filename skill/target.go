package skill

import (
	"errors"

	"github.com/story-automator/story-automator/internal/coded"
)

// Target is where a provider reads the skill at a scope.
type Target struct {
	Provider, Scope, Root string
	Getenv                func(string) string
}

// path is the skill file of t and the directory uninstall stops removing
// empty folders at: the project root, or the user's home.
func (t Target) path() (path, stop string, err error) {
	p, err := Path(t.Provider, t.Scope, t.Root, t.Getenv)
	if err != nil {
		return "", "", coded.WrapUsage(err)
	}
	stop = t.Root
	if t.Scope == User {
		stop = t.Getenv("HOME")
	}
	return p, stop, nil
}

// InstallTo writes the skill where t's provider reads it (force replaces a
// different file there).
func InstallTo(t Target, force bool) (Result, error) {
	p, _, err := t.path()
	if err != nil {
		return Result{}, err
	}
	r, err := Install(p, force)
	return r, fileError(err)
}

// UninstallFrom removes the skill t's provider reads, when it is unchanged.
func UninstallFrom(t Target) (Result, error) {
	p, stop, err := t.path()
	if err != nil {
		return Result{}, err
	}
	r, err := Uninstall(p, stop)
	return r, fileError(err)
}

func fileError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotOurs):
		return coded.Wrap("skill_conflict", err)
	}
	return coded.Wrap("skill_io", err)
}
