package modelsim

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limit is a script's limit or API fault that lasts a given time: after
// After main-turn requests were answered, every request is refused the way
// the API refuses at such a limit, until For has passed; then answers
// resume. In YAML:
//
//	limit: {after: 2, for: 150s, kind: usage}
type Limit struct {
	// After is how many main-turn requests are answered before the limit starts.
	After int `yaml:"after"`
	// For is how long the limit lasts once it started; its reset time is
	// its start plus For.
	For time.Duration `yaml:"for"`
	// Kind is what the API answers (LimitUsage, LimitRate, …).
	Kind string `yaml:"kind"`
	// Window is the usage window a limit names: "five_hour" (the default)
	// or "seven_day", Anthropic's representative claim; "day", Gemini's
	// per-day quota, which Gemini CLI gives up on without a reset time
	// (else its usage limit is a retry delay, which it gives up on when
	// over 5 minutes, printing it).
	Window string `yaml:"window"`
	// NoReset leaves a rate limit without reset headers and retry-after.
	NoReset bool `yaml:"noReset"`
}

// Limit kinds.
const (
	// LimitUsage: a plan's usage limit with its reset time (Claude's
	// subscriber 5-hour or weekly window, Codex's usage_limit_reached,
	// Gemini's per-day quota).
	LimitUsage = "usage"
	// LimitRate: a rate limit (429) with retry-after and reset headers
	// unless NoReset; Gemini's per-minute quota.
	LimitRate = "rate"
	// LimitOverloaded: the API is overloaded (Anthropic 529, else 503).
	LimitOverloaded = "overloaded"
	// LimitError: an internal server error (500).
	LimitError = "error"
	// LimitDrop: a stream that starts and is dropped before its end.
	LimitDrop = "drop"
)

func (l *Limit) check() error {
	switch l.Kind {
	case LimitUsage, LimitRate, LimitOverloaded, LimitError, LimitDrop:
	default:
		return fmt.Errorf("limit kind %q (usage, rate, overloaded, error, drop)", l.Kind)
	}
	switch l.Window {
	case "", windowFiveHour, windowSevenDay, windowDay:
	default:
		return fmt.Errorf("limit window %q (five_hour, seven_day, day)", l.Window)
	}
	if l.After < 0 || l.For <= 0 {
		return fmt.Errorf("limit needs after ≥ 0 and a positive for")
	}
	return nil
}

const (
	windowFiveHour = "five_hour"
	windowSevenDay = "seven_day"
	windowDay      = "day"
)

// limitClock is when a script's limit started, counted over the main-turn
// requests a server answered.
type limitClock struct {
	mu       sync.Mutex
	answered int
	start    time.Time
}

// refuse reports whether a request at now falls in limit l, and when the
// limit lifts; a main-turn request answered before it starts counts.
func (c *limitClock) refuse(l *Limit, side bool, now time.Time) (time.Time, bool) {
	if l == nil {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		if side || c.answered < l.After {
			if !side {
				c.answered++
			}
			return time.Time{}, false
		}
		c.start = now
	}
	// Whole seconds, as the reset headers state it: lifted when they say.
	reset := c.start.Add(l.For).Add(time.Second - 1).Truncate(time.Second)
	return reset, now.Before(reset)
}

// limitFault answers a request that falls in the script's limit in the
// protocol's shape, recording the exchange; false: the request is not
// limited and is answered as usual.
func (s *Server) limitFault(w http.ResponseWriter, r *http.Request, body []byte, protocol, model string, side bool) bool {
	var l *Limit
	if s.brain.Script != nil {
		l = s.brain.Script.Limit
	}
	now := time.Now()
	reset, on := s.limits.refuse(l, side, now)
	if !on {
		return false
	}
	status := limitStatus(protocol, l.Kind)
	s.add(Exchange{Protocol: protocol, Method: r.Method, Path: r.RequestURI, Model: model, Side: side,
		Status: status, Limit: l.Kind, Request: rawOrNil(body)})
	if l.Kind == LimitDrop {
		dropStream(w)
	}
	left := int(reset.Sub(now).Round(time.Second) / time.Second)
	h := w.Header()
	switch protocol {
	case ProtocolAnthropic:
		writeJSONBody(w, status, anthropicLimit(h, l, reset, left))
	case ProtocolOpenAI:
		writeJSONBody(w, status, openaiLimit(h, l, reset, left))
	default:
		writeJSONBody(w, status, geminiLimit(l, left))
	}
	return true
}

// limitStatus is the HTTP status of a limit kind in a protocol.
func limitStatus(protocol, kind string) int {
	switch kind {
	case LimitUsage, LimitRate:
		return http.StatusTooManyRequests
	case LimitOverloaded:
		if protocol == ProtocolAnthropic {
			return 529
		}
		return http.StatusServiceUnavailable
	case LimitDrop:
		return http.StatusOK
	}
	return http.StatusInternalServerError
}

// dropStream starts an event stream and drops the connection before its
// first event ends, as a broken network or a crashed server does.
func dropStream(w http.ResponseWriter) {
	e := newSSE(w)
	fmt.Fprint(e.w, "event: message_start\ndata: {\"type\":")
	_ = e.rc.Flush()
	panic(http.ErrAbortHandler)
}

// anthropicLimit is the Messages API's refusal: a subscriber's usage limit
// carries the unified rate-limit headers (status rejected, reset epoch,
// the window as representative claim); an API key's rate limit
// retry-after and the requests-reset time.
func anthropicLimit(h http.Header, l *Limit, reset time.Time, left int) map[string]any {
	switch l.Kind {
	case LimitUsage:
		window := l.Window
		if window == "" {
			window = windowFiveHour
		}
		epoch := strconv.FormatInt(reset.Unix(), 10)
		h.Set("anthropic-ratelimit-unified-status", "rejected")
		h.Set("anthropic-ratelimit-unified-reset", epoch)
		h.Set("anthropic-ratelimit-unified-representative-claim", window)
		h.Set("anthropic-ratelimit-unified-"+shortWindow(window)+"-status", "rejected")
		h.Set("anthropic-ratelimit-unified-"+shortWindow(window)+"-reset", epoch)
		h.Set("anthropic-ratelimit-unified-"+shortWindow(window)+"-utilization", "1.0")
		return antError("rate_limit_error", "model-sim: usage limit reached")
	case LimitRate:
		if !l.NoReset {
			h.Set("retry-after", strconv.Itoa(max(left, 1)))
			h.Set("anthropic-ratelimit-requests-reset", reset.UTC().Format(time.RFC3339))
		}
		return antError("rate_limit_error", "model-sim: rate limit exceeded")
	case LimitOverloaded:
		return antError("overloaded_error", "Overloaded")
	}
	return antError("api_error", "model-sim: internal server error")
}

// shortWindow is the header's name of a window: 5h, 7d.
func shortWindow(window string) string {
	if window == windowSevenDay {
		return "7d"
	}
	return "5h"
}

// openaiLimit is the Responses API's refusal as Codex reads it: a plan's
// usage_limit_reached with resets_at and the x-codex-primary-* headers; a
// rate limit with retry-after.
func openaiLimit(h http.Header, l *Limit, reset time.Time, left int) map[string]any {
	switch l.Kind {
	case LimitUsage:
		h.Set("x-codex-primary-used-percent", "100")
		h.Set("x-codex-primary-window-minutes", "300")
		h.Set("x-codex-primary-reset-at", strconv.FormatInt(reset.Unix(), 10))
		h.Set("x-codex-primary-reset-after-seconds", strconv.Itoa(left))
		return map[string]any{"error": map[string]any{"type": "usage_limit_reached",
			"message": "The usage limit has been reached", "plan_type": "plus",
			"resets_at": reset.Unix(), "resets_in_seconds": left}}
	case LimitRate:
		if !l.NoReset {
			h.Set("retry-after", strconv.Itoa(max(left, 1)))
		}
		return oaiError("rate_limit_exceeded", "model-sim: rate limit exceeded")
	case LimitOverloaded:
		return oaiError("server_is_overloaded", "model-sim: the server is overloaded")
	}
	return oaiError("server_error", "model-sim: internal server error")
}

// geminiLimit is the Gemini API's refusal: RESOURCE_EXHAUSTED with a
// QuotaFailure (per-minute for a rate limit, per-hour for a usage limit,
// per-day for one whose window is "day") and RetryInfo with the time left
// (none when NoReset).
func geminiLimit(l *Limit, left int) map[string]any {
	switch l.Kind {
	case LimitUsage, LimitRate:
		quota := "GenerateContentInputTokensPerModelPerHour"
		switch {
		case l.Kind == LimitRate:
			quota = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
		case l.Window == windowDay:
			quota = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
		}
		details := []any{map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId": quota, "quotaValue": "50"}}}}
		if !l.NoReset {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo",
				"retryDelay": strconv.Itoa(max(left, 1)) + "s"})
		}
		return map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED",
			"message": "You exceeded your current quota, please check your plan and billing details.", "details": details}}
	case LimitOverloaded:
		return map[string]any{"error": map[string]any{"code": 503, "status": "UNAVAILABLE",
			"message": "The model is overloaded. Please try again later."}}
	}
	return gemError(500, "model-sim: internal server error")
}
