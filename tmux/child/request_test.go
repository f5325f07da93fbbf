package child

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

func TestRequestValidate(t *testing.T) {
	ok := Request{Step: "dev", Story: "1.2", Agent: "sim"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	for _, tc := range []struct {
		change func(*Request)
		want   string
	}{
		{func(r *Request) { r.Story = "" }, "needs --step and --story"},
		{func(r *Request) { r.Agent = "" }, "needs --agent"},
		{func(r *Request) { r.Cycle = -1 }, "--cycle must not be negative"},
		{func(r *Request) { r.Agent = agent.AgentCustom }, "--agent custom needs --command"},
		{func(r *Request) { r.Command = "x {prompt}" }, "--command is only for --agent custom"},
		{func(r *Request) { r.Agent = "nope" }, `unknown --agent "nope"`},
	} {
		r := ok
		tc.change(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
