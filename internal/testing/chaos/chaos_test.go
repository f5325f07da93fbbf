//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// TestChaos (CHAOS_BIN: another build to play against) plays CHAOS_ROUNDS kill rounds (CHAOS_MODE: mixed, random,
// group-commit) seeded with CHAOS_SEED, plus the hostile rounds unless
// CHAOS_SPECIAL=0 (CHAOS_ONLY=name: only that one), and fails when any round lost work, left something
// behind or escalated. Every fifth kill round runs over local and a
// private sshd host unless CHAOS_REMOTE=0.
func TestChaos(t *testing.T) {
	tmuxtest.Require(t)
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	seed := envInt(t, "CHAOS_SEED", 1)
	bin := os.Getenv("CHAOS_BIN")
	if bin == "" {
		bin = testbin.Path(t)
	}
	cfg := Config{Bin: bin, Dir: t.TempDir(), Seed: int64(seed), Rounds: envInt(t, "CHAOS_ROUNDS", 20),
		Mode: os.Getenv("CHAOS_MODE"), Special: os.Getenv("CHAOS_SPECIAL") != "0", Only: os.Getenv("CHAOS_ONLY"), Log: os.Stdout}
	if os.Getenv("CHAOS_REMOTE") != "0" {
		cfg.SSHD = func() *sshd.Server { return sshd.Start(t) }
	}
	if keep := os.Getenv("CHAOS_KEEP"); keep != "" {
		cfg.Dir = keep // failed rounds' projects stay there to be looked at
	}
	fmt.Printf("chaos: seed %d, mode %q, %d kill rounds, special rounds %v\n", seed, cfg.Mode, cfg.Rounds, cfg.Special)
	sum := Run(cfg)
	for _, f := range sum.Failures {
		t.Errorf("%s", f)
	}
	fmt.Println(sum)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}
