package sessionstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSessionStateRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	name := "sa-p-ab12-e1-s1-2-dev-zz99"
	if _, err := Update(dir, name, func(st *State) error { st.Lifecycle = LifecycleStarted; return nil }); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := StampCompletion(dir, name, now, "first"); err != nil {
		t.Fatal(err)
	}
	st, err := StampCompletion(dir, name, now, strings.Repeat("a", 10000))
	if err != nil {
		t.Fatal(err)
	}
	if st.Lifecycle != LifecycleStarted || st.Completion.Turns != 2 || len(st.Completion.Excerpt) != MaxExcerptBytes {
		t.Fatalf("%+v", st.Completion)
	}
	fi, _ := os.Stat(StatePath(dir, name))
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode(), di.Mode())
	}
	if _, err := Update(dir, "../x", func(*State) error { return nil }); err == nil {
		t.Fatal("path-traversing name accepted")
	}
}

// Two hook runs for the same named stop (an installed hook and the child's
// own) are one turn; the next stop is the next turn; an unnamed stop always counts.
func TestAStopNamedTwiceIsOneTurn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	name := "sa-p-ab12-e1-s1-2-dev-zz98"
	now := time.Unix(1_800_000_000, 0)
	for i, c := range []struct {
		turn  string
		turns int
	}{{"s@1", 1}, {"s@1", 1}, {"s@2", 2}, {"", 3}, {"", 4}} {
		st, err := StampTurnOnce(dir, name, now, "done", "/t/events.jsonl", c.turn)
		if err != nil || st.Completion.Turns != c.turns {
			t.Fatalf("stamp %d (%q): %+v %v, want %d turns", i, c.turn, st.Completion, err, c.turns)
		}
	}
}
