package limit

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// transcriptTail is how much of a transcript's end is read for its last
// API error: the synthetic line is among the last a failed turn writes.
const transcriptTail = 512 << 10

// apiErrorLine is Claude Code's synthetic assistant line for a turn that
// ended in an API error.
type apiErrorLine struct {
	IsAPIErrorMessage bool   `json:"isApiErrorMessage"`
	Error             string `json:"error"`
	APIError          string `json:"apiError"`
	APIErrorParams    struct {
		RateLimitInfo struct {
			ResetsAt int64 `json:"resetsAt"`
		} `json:"rate_limit_info"`
	} `json:"apiErrorParams"`
}

// FromTranscript reads the last API error a Claude Code transcript
// records: a subscriber's usage limit (apiError usage_limit_reached) and
// its exact reset (apiErrorParams.rate_limit_info.resetsAt); ok is false
// when the transcript records none.
func FromTranscript(path string) (Signal, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Signal{}, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > transcriptTail {
		_, _ = f.Seek(fi.Size()-transcriptTail, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, transcriptTail))
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if !bytes.Contains(lines[i], []byte(`"isApiErrorMessage":true`)) {
			continue
		}
		var l apiErrorLine
		if json.Unmarshal(lines[i], &l) != nil || !l.IsAPIErrorMessage {
			continue
		}
		var sig Signal
		switch {
		case l.APIError == "usage_limit_reached":
			sig.Reason = agent.LimitUsage
		case l.Error == "rate_limit":
			sig.Reason = agent.LimitRate
		case l.Error == "overloaded":
			sig.Reason = agent.LimitOverloaded
		}
		if at := l.APIErrorParams.RateLimitInfo.ResetsAt; at > 0 {
			sig.ResetsAt = time.Unix(at, 0)
		}
		return sig, true
	}
	return Signal{}, false
}
