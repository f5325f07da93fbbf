package offline

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/coded"
)

// Error is a refused home (see coded.Error): exit 2 for a bad agent name or
// directory, 1 when writing failed.
type Error = coded.Error

// WriteHome writes a private home in dir that points agent's CLI at the
// model endpoint url, trusting the folders in trust, and returns the
// variables (NAME=value) that select it. Relative paths are made absolute;
// a trust folder that cannot be is left out.
func WriteHome(agent, dir, url string, trust []string) ([]string, error) {
	write, ok := For(agent)
	if !ok {
		return nil, &Error{Code: "usage_error", Message: fmt.Sprintf("--home-agent must be %s, got %q", orList(Agents()), agent), Exit: 2}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Code: "usage_error", Message: fmt.Sprintf("--home %q: %v", dir, err), Exit: 2}
	}
	var trusted []string
	for _, t := range trust {
		if a, err := filepath.Abs(t); err == nil {
			trusted = append(trusted, a)
		}
	}
	env, err := write(Config{Home: abs, BaseURL: url, Trusted: trusted})
	if err != nil {
		return nil, &Error{Code: "model_sim_home", Message: err.Error(), Exit: 1}
	}
	return env.Pairs(), nil
}

// orList joins names for a sentence: "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
