// Package webhook is what passes between story-automator and its notify
// program (story-automator-notify), which makes a webhook's HTTP POST so that
// story-automator itself links no HTTP client: the request on the program's
// stdin and its reply on stdout, both JSON, and where the program is.
package webhook

import (
	"os"
	"path/filepath"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/coded"
)

// BinaryName is the notify program, installed beside story-automator.
const BinaryName = "story-automator-notify"

// Request is one POST: the program's stdin.
type Request struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
	// TimeoutMs bounds the whole exchange.
	TimeoutMs int64 `json:"timeoutMs"`
}

// Reply is how the POST went: the program's stdout (exit 0 when OK).
type Reply struct {
	OK bool `json:"ok"`
	// Status is the HTTP status, 0 when no answer came.
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// CodeMissing is the code of Program's error.
const CodeMissing = "notify_missing"

// Program is the path of the notify program beside the story-automator at
// exe; a coded notify_missing error says how to install it when there is none.
func Program(exe string) (string, error) {
	prog := filepath.Join(filepath.Dir(exe), BinaryName)
	fi, err := os.Stat(prog)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return prog, nil
	}
	return "", coded.Fail(CodeMissing, "webhooks are sent by a program of their own, %s, and there is none beside %s", BinaryName, exe).
		WithAction("build it with `make build`, or install every program with: " + buildinfo.InstallLine)
}
