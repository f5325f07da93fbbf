package offline

import (
	"path/filepath"

	agentpkg "github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
)

// WriteHome writes a private home in dir that points agent's CLI at the
// model endpoint url, trusting the folders in trust, and returns the
// variables (NAME=value) that select it. Relative paths are made absolute;
// a trust folder that cannot be is left out. A bad agent name or directory
// is a usage error (exit 2), a failed write model_sim_home (exit 1).
func WriteHome(agent, dir, url string, trust []string) ([]string, error) {
	write, ok := For(agent)
	if !ok {
		return nil, coded.Usage("--home-agent must be %s, got %q", agentpkg.OrList(Agents()), agent)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, coded.Usage("--home %q: %v", dir, err)
	}
	var trusted []string
	for _, t := range trust {
		if a, err := filepath.Abs(t); err == nil {
			trusted = append(trusted, a)
		}
	}
	env, err := write(Config{Home: abs, BaseURL: url, Trusted: trusted})
	if err != nil {
		return nil, coded.Wrap("model_sim_home", err)
	}
	return env.Pairs(), nil
}
