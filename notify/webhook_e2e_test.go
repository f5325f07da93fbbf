package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/workflows"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// With the real notify program: a server that fails twice and then takes
// the event gets it on the third try, and the outcome says so.
func TestAWebhookThatFailsThenRecoversGetsTheEventThroughTheNotifyProgram(t *testing.T) {
	exe := testbin.Path(t)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		if len(bodies) < 3 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	hook := &Webhook{Hook: workflows.Webhook{URL: srv.URL + "/hook", Format: workflows.WebhookJSON},
		Machine: Machine{Exe: func() (string, error) { return exe, nil }, Environ: os.Environ()}}
	clock := &fakeSleep{}
	s := &Sender{Sinks: []Sink{hook}, Timeout: 10 * time.Second, Sleep: clock.Sleep}
	ev := LimitResumed(testRun, testNow, "1.1", "dev", "claude")
	got := s.SendNow(context.Background(), ev)
	if len(got) != 1 || !got[0].OK || got[0].Tries != 3 || len(clock.waits) != 2 {
		t.Fatalf("outcome %+v, waits %v", got, clock.waits)
	}
	var last Event
	if len(bodies) != 3 || json.Unmarshal([]byte(bodies[2]), &last) != nil || last != ev {
		t.Fatalf("the server got %q", bodies)
	}
}
