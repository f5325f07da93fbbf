// Package post is the notify program's work: one HTTP POST described by a
// webhook.Request on stdin, its webhook.Reply on stdout.
package post

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/story-automator/story-automator/notify/webhook"
)

// defaultTimeout bounds a request that names none.
const defaultTimeout = 10 * time.Second

// Run reads the request from in, sends it and writes the reply to out; it
// returns the exit status: 0 when the server answered 2xx, 1 otherwise, 2
// when the request cannot be read.
func Run(in io.Reader, out, errOut io.Writer) int {
	var req webhook.Request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(errOut, "%s: read the request on stdin: %v\n", webhook.BinaryName, err)
		return 2
	}
	rep := Send(context.Background(), http.DefaultClient, req)
	_ = json.NewEncoder(out).Encode(rep)
	if !rep.OK {
		return 1
	}
	return 0
}

// Send POSTs req with client and says how it went.
func Send(ctx context.Context, client *http.Client, req webhook.Request) webhook.Reply {
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, strings.NewReader(req.Body))
	if err != nil {
		return webhook.Reply{Error: "the webhook URL is not a URL"}
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return webhook.Reply{Error: fmt.Sprintf("no answer within %s", timeout)}
		}
		// Without the URL: its path may be a secret (a Slack webhook's is).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return webhook.Reply{Error: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		msg := fmt.Sprintf("HTTP %s", resp.Status)
		if b := strings.Join(strings.Fields(string(bytes.ToValidUTF8(body, nil))), " "); b != "" {
			msg += ": " + b
		}
		return webhook.Reply{Status: resp.StatusCode, Error: msg}
	}
	return webhook.Reply{OK: true, Status: resp.StatusCode}
}
