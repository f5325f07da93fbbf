package stophook

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
)

func TestParseAdvisorAnswer(t *testing.T) {
	cases := []struct {
		out  string
		want AdvisorAnswer
		bad  bool
	}{
		{out: `{"prediction":"run the tests","confidence":0.8,"stop_recommended":false}`, want: AdvisorAnswer{Prediction: "run the tests", Confidence: 0.8}},
		{out: `{"prediction":"","confidence":1,"stop_recommended":true}`, want: AdvisorAnswer{Confidence: 1, StopRecommended: true}},
		{out: `{"prediction":"p","confidence":0.7}`, want: AdvisorAnswer{Prediction: "p", Confidence: 0.7}}, // missing stop_recommended = false
		{out: "thinking...\nstill thinking\n{\"prediction\":\"p\",\"confidence\":0.5}\n", want: AdvisorAnswer{Prediction: "p", Confidence: 0.5}},
		{out: "I think you should stop", bad: true},
		{out: "", bad: true},
		{out: `{"prediction":"p"}`, bad: true},
		{out: `{"prediction":"p","confidence":1.5}`, bad: true},
		{out: `{"prediction":"p","confidence":-0.1}`, bad: true},
		{out: `{"prediction":"p","confidence":"high"}`, bad: true},
		{out: `{"prediction":"p","confidence":0.9,"stop_recommended":"yes"}`, bad: true},
		{out: `[0.9]`, bad: true},
	}
	for _, tc := range cases {
		got, err := ParseAdvisorAnswer([]byte(tc.out))
		if tc.bad {
			if !errors.Is(err, ErrAdvisorMalformed) {
				t.Errorf("%q: err = %v, want malformed", tc.out, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v %v, want %+v", tc.out, got, err, tc.want)
		}
	}
}

func TestAdvisorRequestCarriesHookInputAndLoop(t *testing.T) {
	raw := []byte(`{"session_id":"s1","transcript_path":"/t.jsonl","hook_event_name":"Stop","extra":{"k":1}}`)
	req, err := AdvisorRequest(raw, "from the transcript", &marker.LoopState{Prompt: "p", Iteration: 3, MaxIterations: 9})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		SessionID string          `json:"session_id"`
		Extra     json.RawMessage `json:"extra"`
		Last      string          `json:"last_assistant_message"`
		Loop      struct {
			Prompt    string `json:"prompt"`
			Iteration int    `json:"iteration"`
		} `json:"loop"`
	}
	if err := json.Unmarshal(req, &got); err != nil {
		t.Fatal(err)
	}
	if got.SessionID != "s1" || string(got.Extra) != `{"k":1}` || got.Last != "from the transcript" || got.Loop.Prompt != "p" || got.Loop.Iteration != 3 {
		t.Fatalf("request = %s", req)
	}
	req, _ = AdvisorRequest([]byte(`{"last_assistant_message":"own"}`), "other", &marker.LoopState{})
	if !strings.Contains(string(req), `"last_assistant_message":"own"`) {
		t.Errorf("the input's own message must win: %s", req)
	}
}

func TestRunAdvisor(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	req := []byte(`{"session_id":"s1","loop":{"iteration":4}}`)
	t.Run("answers from stdin", func(t *testing.T) {
		cmd := `read -r line; case "$line" in *'"iteration":4'*) echo '{"prediction":"saw iteration 4","confidence":0.75}';; *) echo nope;; esac`
		v := RunAdvisor(ctx, cmd, dir, req, 5*time.Second)
		if v.Err != nil || v.Answer.Prediction != "saw iteration 4" || v.Answer.Confidence != 0.75 || v.Answer.StopRecommended {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("runs in the project root and is marked as a child", func(t *testing.T) {
		cmd := `printf '{"prediction":"%s|%s","confidence":1}' "$(pwd)" "$STORY_AUTOMATOR_CHILD"`
		v := RunAdvisor(ctx, cmd, dir, req, 5*time.Second)
		real, _ := filepath.EvalSymlinks(dir)
		if v.Err != nil || (v.Answer.Prediction != dir+"|true" && v.Answer.Prediction != real+"|true") {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("timeout kills the process group", func(t *testing.T) {
		pidFile := filepath.Join(dir, "sleeper.pid")
		v := RunAdvisor(ctx, "sleep 30 & echo $! > "+pidFile+"; wait", dir, req, 300*time.Millisecond)
		if v.Err == nil || !strings.Contains(v.Err.Error(), "timed out") {
			t.Fatalf("verdict %+v", v)
		}
		data, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid := strings.TrimSpace(string(data))
		deadline := time.Now().Add(10 * time.Second)
		for processRunning(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the advisor's child %s outlived the timeout", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("non-zero exit", func(t *testing.T) {
		v := RunAdvisor(ctx, `echo boom >&2; exit 3`, dir, req, 5*time.Second)
		if v.Err == nil || !strings.Contains(v.Err.Error(), "boom") {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		v := RunAdvisor(ctx, `echo 'the answer is 42'`, dir, req, 5*time.Second)
		if !errors.Is(v.Err, ErrAdvisorMalformed) {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("flood of output", func(t *testing.T) {
		v := RunAdvisor(ctx, `head -c 200000 /dev/zero | tr '\0' x`, dir, req, 5*time.Second)
		if !errors.Is(v.Err, ErrAdvisorMalformed) {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("a well-formed answer over the output cap", func(t *testing.T) {
		cmd := `printf '{"confidence":1,"prediction":"'; head -c 70000 /dev/zero | tr '\0' x; printf '"}'`
		v := RunAdvisor(ctx, cmd, dir, req, 5*time.Second)
		if !errors.Is(v.Err, ErrAdvisorMalformed) || !strings.Contains(v.Err.Error(), "bytes of output") {
			t.Fatalf("err %v, a prediction of %d bytes", v.Err, len(v.Answer.Prediction))
		}
	})
}

func TestAdvisorTimeoutFromLoop(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultAdvisorTimeout, "2s": 2 * time.Second, "junk": DefaultAdvisorTimeout,
		"-1s": DefaultAdvisorTimeout, MaxAdvisorTimeout.String(): MaxAdvisorTimeout,
		// A bound over the cap (an older marker, a hand edit) is cut to the cap.
		"2m": MaxAdvisorTimeout, "1h": MaxAdvisorTimeout} {
		if got := AdvisorTimeout(&marker.LoopState{AdvisorTimeout: in}); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// processRunning reports whether pid exists and is not a zombie.
func processRunning(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// The agent kills a hook that outlives the timeout hooks install gives it:
// no history line, no escalation, an orphaned advisor. The advisor's cap
// leaves the hook room for the lock wait, git, the kill and the write.
func TestMaxAdvisorTimeoutFitsTheInstalledHook(t *testing.T) {
	hook := time.Duration(agent.HookTimeout) * time.Second
	if MaxAdvisorTimeout <= DefaultAdvisorTimeout || MaxAdvisorTimeout+advisorHookMargin > hook {
		t.Fatalf("MaxAdvisorTimeout %s: want above the default %s and at least %s below the hook timeout %s",
			MaxAdvisorTimeout, DefaultAdvisorTimeout, advisorHookMargin, hook)
	}
	if advisorHookMargin < 5*time.Second {
		t.Fatalf("margin %s is too thin for the lock wait (%s) and the kill", advisorHookMargin, DefaultLockTimeout)
	}
}
