package limit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// sessionIDWords is the session id Codex exec prints in its header.
var sessionIDWords = lazyre.New(`(?m)^session id: ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*$`)

// rolloutLine is the part of a Codex rollout line that records a limit:
// a token count's rate_limits.primary.resets_at (epoch seconds) and a
// turn's error, codex_error_info usage_limit_exceeded.
type rolloutLine struct {
	Payload struct {
		RateLimits *struct {
			Primary *struct {
				ResetsAt int64 `json:"resets_at"`
			} `json:"primary"`
		} `json:"rate_limits"`
		Error *struct {
			Info string `json:"codex_error_info"`
		} `json:"error"`
	} `json:"payload"`
}

// FromRollout reads the exact reset of a Codex usage limit from the
// session's rollout under stateHome ($CODEX_HOME), found by the session
// id the exec output names; ok is false when there is none to read.
func FromRollout(stateHome, output string) (time.Time, bool) {
	m := sessionIDWords().FindStringSubmatch(output)
	if m == nil || stateHome == "" {
		return time.Time{}, false
	}
	paths, _ := filepath.Glob(filepath.Join(stateHome, "sessions", "*", "*", "*", "rollout-*-"+m[1]+".jsonl"))
	if len(paths) != 1 {
		return time.Time{}, false
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return time.Time{}, false
	}
	var reset time.Time
	limited := false
	for _, raw := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(raw, []byte(`"rate_limits"`)) && !bytes.Contains(raw, []byte(`"codex_error_info"`)) {
			continue
		}
		var l rolloutLine
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		if rl := l.Payload.RateLimits; rl != nil && rl.Primary != nil && rl.Primary.ResetsAt > 0 {
			reset = time.Unix(rl.Primary.ResetsAt, 0)
		}
		if e := l.Payload.Error; e != nil && e.Info == "usage_limit_exceeded" {
			limited = true
		}
	}
	return reset, limited && !reset.IsZero()
}
