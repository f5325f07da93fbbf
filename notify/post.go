package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request is one webhook POST: where, its headers and its body.
type Request struct {
	URL     string
	Headers map[string]string
	Body    string
}

// post sends req with client within ctx's deadline (within, for the
// message when no answer came in time); its error, when the
// server did not answer 2xx, says why in the server's words, never with the
// URL (its path may be a secret: a Slack webhook's is).
func post(ctx context.Context, client *http.Client, req Request, within time.Duration) error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, strings.NewReader(req.Body))
	if err != nil {
		return permanent{errors.New("the webhook URL is not a URL")}
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", within)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		msg := "HTTP " + resp.Status
		if b := strings.Join(strings.Fields(string(bytes.ToValidUTF8(body, nil))), " "); b != "" {
			msg += ": " + b
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}
