package marker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests below re-run this test binary as helper processes, so the lock is
// exercised across real processes, not goroutines.
const helperEnv = "MARKER_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "increment":
		os.Exit(helperIncrement())
	case "rewrite":
		os.Exit(helperRewrite())
	}
	os.Exit(m.Run())
}

// helperIncrement adds 1 to the "hammer" field N times, each under the lock.
func helperIncrement() int {
	s := &Store{Path: os.Getenv("MARKER_PATH"), LockTimeout: time.Minute}
	n, _ := strconv.Atoi(os.Getenv("MARKER_N"))
	for i := 0; i < n; i++ {
		_, err := s.Modify(context.Background(), func(m *Marker) error {
			var v int
			if err := json.Unmarshal(m.Extra["hammer"], &v); err != nil {
				return fmt.Errorf("hammer: %w", err)
			}
			m.Extra["hammer"] = json.RawMessage(strconv.Itoa(v + 1))
			m.Touch(time.Now())
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// helperRewrite rewrites a large marker forever; each generation's padding
// length encodes its counter, so a torn write would be detectable.
func helperRewrite() int {
	s := &Store{Path: os.Getenv("MARKER_PATH"), LockTimeout: time.Minute}
	for {
		_, err := s.Modify(context.Background(), func(m *Marker) error {
			m.StoriesRemaining++
			m.Extra["pad"] = json.RawMessage(strconv.Quote(strings.Repeat("x", 200000+m.StoriesRemaining%1000)))
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

func helper(mode, path string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "MARKER_PATH="+path, "MARKER_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

func TestSixteenProcessesLoseNoUpdate(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	m := sample()
	m.Extra = map[string]json.RawMessage{"hammer": json.RawMessage("0")}
	if _, err := s.Create(ctx, m, false); err != nil {
		t.Fatal(err)
	}
	const procs, each = 16, 25
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		c := helper("increment", s.Path, each)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper failed: %v", err)
		}
	}
	got, err := s.Read()
	if err != nil {
		t.Fatalf("marker invalid after contention: %v", err)
	}
	if string(got.Extra["hammer"]) != strconv.Itoa(procs*each) {
		t.Fatalf("hammer = %s, want %d: updates were lost", got.Extra["hammer"], procs*each)
	}
}

func TestSIGKILLMidWriteLeavesOldOrNewMarker(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	m := sample()
	m.StoriesRemaining = 0
	m.Extra = map[string]json.RawMessage{"pad": json.RawMessage(`""`)}
	if _, err := s.Create(ctx, m, false); err != nil {
		t.Fatal(err)
	}
	last := -1
	for round := 0; round < 8; round++ {
		c := helper("rewrite", s.Path, 0)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it get through some generations, then kill it wherever it is.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if cur, err := s.Read(); err == nil && cur.StoriesRemaining > last+3 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(round) * 3 * time.Millisecond)
		if err := c.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("round %d: the rewriter ended before the kill: %v", round, err)
		}
		var exit *exec.ExitError
		if err := c.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the rewriter was not ended by SIGKILL: %v", round, err)
		}
		cur, err := s.Read()
		if err != nil {
			t.Fatalf("round %d: marker broken after SIGKILL: %v", round, err)
		}
		var pad string
		if err := json.Unmarshal(cur.Extra["pad"], &pad); err != nil {
			t.Fatal(err)
		}
		if cur.StoriesRemaining > 0 && len(pad) != 200000+cur.StoriesRemaining%1000 {
			t.Fatalf("round %d: generation %d has a pad of %d bytes: torn write", round, cur.StoriesRemaining, len(pad))
		}
		if cur.StoriesRemaining < last {
			t.Fatalf("round %d: went back from %d to %d", round, last, cur.StoriesRemaining)
		}
		last = cur.StoriesRemaining
	}
	if last <= 0 {
		t.Fatal("the writer never wrote")
	}
}
