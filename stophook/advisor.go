package stophook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/shellcmd"
	"github.com/story-automator/story-automator/marker"
)

// Advisor limits.
const (
	// DefaultAdvisorTimeout bounds an advisor call unless the loop says otherwise.
	DefaultAdvisorTimeout = 10 * time.Second
	// MaxAdvisorTimeout is the longest bound a loop may ask for: safely below
	// the timeout `hooks install` gives the hook, because an agent that kills
	// the hook loses its decision and history line and orphans the advisor.
	MaxAdvisorTimeout = time.Duration(agent.HookTimeout)*time.Second - advisorHookMargin
	// advisorHookMargin is the part of the hook's timeout kept for the hook
	// itself: the lock wait, git, killing the advisor and writing the marker.
	advisorHookMargin = 5 * time.Second
	// maxAdvisorOutput bounds what is read from an advisor's stdout.
	maxAdvisorOutput = 64 << 10
)

// AdvisorAnswer is what an advisor prints: its prediction of the next prompt,
// its confidence (0..1), and whether it recommends letting the session stop.
type AdvisorAnswer struct {
	Prediction      string  `json:"prediction"`
	Confidence      float64 `json:"confidence"`
	StopRecommended bool    `json:"stop_recommended"`
}

// AdvisorVerdict is the outcome of one advisor call: an answer, or why there is none.
type AdvisorVerdict struct {
	Answer AdvisorAnswer
	Err    error
}

// ErrAdvisorMalformed marks an advisor answer that is not the protocol's JSON.
var ErrAdvisorMalformed = errors.New("advisor answer is malformed")

// ParseAdvisorAnswer reads an advisor's stdout: one JSON object (or, after
// other output, a JSON object on the last non-empty line). confidence is
// required and within 0..1; a missing stop_recommended is false.
func ParseAdvisorAnswer(out []byte) (AdvisorAnswer, error) {
	var raw struct {
		Prediction      *string  `json:"prediction"`
		Confidence      *float64 `json:"confidence"`
		StopRecommended *bool    `json:"stop_recommended"`
	}
	text := bytes.TrimSpace(out)
	if err := json.Unmarshal(text, &raw); err != nil {
		lines := bytes.Split(text, []byte("\n"))
		last := bytes.TrimSpace(lines[len(lines)-1])
		if len(lines) == 1 || json.Unmarshal(last, &raw) != nil {
			return AdvisorAnswer{}, fmt.Errorf("%w: not a JSON object: %q", ErrAdvisorMalformed, clip(string(text), 120))
		}
	}
	if raw.Confidence == nil {
		return AdvisorAnswer{}, fmt.Errorf("%w: no confidence", ErrAdvisorMalformed)
	}
	c := *raw.Confidence
	if math.IsNaN(c) || c < 0 || c > 1 {
		return AdvisorAnswer{}, fmt.Errorf("%w: confidence %v is outside 0..1", ErrAdvisorMalformed, c)
	}
	a := AdvisorAnswer{Confidence: c}
	if raw.Prediction != nil {
		a.Prediction = *raw.Prediction
	}
	if raw.StopRecommended != nil {
		a.StopRecommended = *raw.StopRecommended
	}
	return a, nil
}

// AdvisorRequest is the JSON an advisor reads on stdin: the hook input as the
// agent sent it, its last_assistant_message filled in from the transcript
// when absent, plus the loop state under "loop".
func AdvisorRequest(rawInput []byte, msg string, loop *marker.LoopState) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(rawInput); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(t, &obj); err != nil {
			obj = map[string]json.RawMessage{}
		}
	}
	if _, ok := obj["last_assistant_message"]; !ok {
		b, _ := json.Marshal(msg)
		obj["last_assistant_message"] = b
	}
	lb, err := json.Marshal(loop)
	if err != nil {
		return nil, fmt.Errorf("encode loop state: %w", err)
	}
	obj["loop"] = lb
	return json.Marshal(obj)
}

// AdvisorTimeout is the loop's advisor bound, cut to MaxAdvisorTimeout, or
// the default when the loop has none (or an unreadable one).
func AdvisorTimeout(l *marker.LoopState) time.Duration {
	d, err := time.ParseDuration(l.AdvisorTimeout)
	if err != nil || d <= 0 {
		return DefaultAdvisorTimeout
	}
	return min(d, MaxAdvisorTimeout)
}

// RunAdvisor runs the user's advisor command with `sh -c` in dir, request on
// stdin, and waits at most timeout; on timeout the whole process group is
// killed. The advisor's environment marks it as a child of story-automator,
// so an agent session it starts is never held by this hook.
func RunAdvisor(ctx context.Context, command, dir string, request []byte, timeout time.Duration) AdvisorVerdict {
	stdout := &shellcmd.CappedBuffer{Limit: maxAdvisorOutput}
	stderr := &shellcmd.CappedBuffer{Limit: 2048}
	r := shellcmd.Run(ctx, shellcmd.Command{
		Shell: "/bin/sh", Script: command, Dir: dir,
		Env:   append(os.Environ(), EnvChild+"=true"),
		Stdin: bytes.NewReader(request), Stdout: stdout, Stderr: stderr,
		Timeout: timeout,
	})
	switch {
	case errors.Is(r.CtxErr, context.DeadlineExceeded):
		return AdvisorVerdict{Err: fmt.Errorf("advisor timed out after %s", timeout)}
	case r.Err != nil:
		return AdvisorVerdict{Err: fmt.Errorf("advisor failed: %w: %s", r.Err, clip(strings.TrimSpace(stderr.String()), 200))}
	case stdout.Over():
		return AdvisorVerdict{Err: fmt.Errorf("%w: more than %d bytes of output", ErrAdvisorMalformed, maxAdvisorOutput)}
	}
	a, perr := ParseAdvisorAnswer(stdout.Bytes())
	return AdvisorVerdict{Answer: a, Err: perr}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// decideAdvisor applies the advisor's verdict (docs/loops.md): trusted satisfaction
// ends the loop; a trusted prediction becomes the next prompt unless the exit
// strategy (tried next, in the decision order) fires; anything else lets the
// session stop and tells the human.
func decideAdvisor(m, next *marker.Marker, env Env, now time.Time, c loopCheck, strategy func() (Decision, bool)) Decision {
	l := next.Loop
	v := env.Loop.Advisor
	if v == nil {
		return Decision{ConsultAdvisor: true, Reason: "the loop's advisor must be consulted first",
			advised: func(v *AdvisorVerdict) Decision {
				if v == nil {
					v = &AdvisorVerdict{Err: errors.New("no verdict")}
				}
				e := env
				e.Loop.Advisor = v
				return decideAdvisor(m, next, e, now, c, strategy)
			}}
	}
	if v.Err != nil {
		why := "advisor error: " + v.Err.Error()
		return releaseLoop(m, next, now, KindEscalateAdvisor, why, "story-automator loop: "+why+
			". Letting this session stop; the loop stays active. Fix the advisor, or `story-automator loop cancel`.")
	}
	th := l.Threshold
	if th <= 0 || th > 1 {
		th = marker.DefaultThreshold
	}
	a := v.Answer
	switch {
	case a.Confidence >= th && a.StopRecommended:
		why := fmt.Sprintf("advisor recommends stopping with confidence %.2f (threshold %.2f)", a.Confidence, th)
		return endLoop(next, now, KindSatisfied, why, fmt.Sprintf("story-automator loop satisfied after %d iteration(s): %s.", l.Iteration, why))
	case a.Confidence >= th && strings.TrimSpace(a.Prediction) == "":
		why := fmt.Sprintf("advisor error: confident (%.2f) but predicted an empty prompt", a.Confidence)
		return releaseLoop(m, next, now, KindEscalateAdvisor, why, "story-automator loop: "+why+". Letting this session stop; the loop stays active.")
	case a.Confidence >= th:
		if d, fired := strategy(); fired {
			return d
		}
		why := fmt.Sprintf("advisor predicted the next prompt with confidence %.2f (threshold %.2f): iteration %d/%d", a.Confidence, th, l.Iteration+1, l.MaxIterations)
		return continueLoop(next, now, c, a.Prediction, why)
	}
	why := fmt.Sprintf("advisor confidence %.2f is below the threshold %.2f", a.Confidence, th)
	notice := "story-automator loop: " + why + "; a human should decide the next step. The loop stays active"
	if a.Prediction != "" {
		notice += fmt.Sprintf(" (the advisor's guess: %q)", clip(a.Prediction, 300))
	}
	return releaseLoop(m, next, now, KindEscalateLow, why, notice+".")
}
