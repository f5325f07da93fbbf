package tmuxsteps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// wait calls the host's monitor-session, WaitEach at a time, until the
// child reaches a final state; then, in the same call, the host kills the
// session and commits the clone's work on the story's branch (again while
// the wait of a killed orchestrator, still running there, commits too). A call the
// connection drops under is made again: the child runs on in the host's
// tmux, and a final result already reached is kept there and printed again.
func (r *Remote) wait(ctx context.Context, req orchestrator.StepRequest, pdir, wt, name, key string) (waited, error) {
	opt := r.Local.Monitor
	if req.Timeout > 0 {
		opt.Timeout = req.Timeout
	}
	each := r.WaitEach
	if each <= 0 {
		each = time.Minute
	}
	deadline := time.Now().Add(opt.Timeout)
	for {
		left := max(time.Until(deadline), time.Second)
		script := r.waitScript(req, pdir, wt, name, key, min(each, left), left, opt)
		var res hosts.Result
		err := r.reach(ctx, func() error {
			var err error
			res, err = r.Host.Script(ctx, script, nil)
			var ee *hosts.ExitError
			switch {
			case errors.As(err, &ee) && ee.Code == exitMonitorCut:
				return errMonitorCut
			case errors.As(err, &ee) && ee.Code != exitCommit && ee.Code != exitMonitorFailed:
				return nil
			}
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				r.kill(req.RunID, pdir, name)
			}
			return waited{}, err
		}
		var out waited
		dec := json.NewDecoder(bytes.NewReader(res.Stdout))
		if err := dec.Decode(&out.Result); err != nil {
			return out, fmt.Errorf("monitor %s on %s: unexpected reply %q (exit %d: %s)", name, r.Host.Name, res.Stdout, res.Exit, strings.TrimSpace(string(res.Stderr)))
		}
		if out.FinalState != monitor.Running {
			if dec.Decode(&out.Usage) != nil {
				out.Usage = hostUsage{UsageNote: "the host did not say what the attempt spent"}
			}
			return out, nil
		}
	}
}

// waited is how a child on the host ended, and what it spent there.
type waited struct {
	monitor.Result
	Usage hostUsage
}

// hostUsage is what the host's `session usage` printed.
type hostUsage struct {
	Usage     *spend.Usage `json:"usage"`
	Model     string       `json:"model"`
	UsageNote string       `json:"usageNote"`
}

// Exit statuses of the wait script: the commit failed (exitCommit), the
// host's monitor failed (exitMonitorFailed), or it was killed before it
// said anything (exitMonitorCut: the host dropped the connection's
// processes; the child runs on, so the wait is made again).
const (
	exitCommit        = 9
	exitMonitorCut    = 10
	exitMonitorFailed = 11
)

var errMonitorCut = errors.New("the host's monitor-session was cut off")

// kill ends a child on the host after the run stopped waiting for it.
func (r *Remote) kill(run, pdir, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = r.Host.Script(ctx, r.command(run, pdir, "session", "kill", name), nil)
}

// reach runs op, again while the host is unreachable, until it succeeds,
// fails otherwise, ctx ends or the host stays unreachable for LostAfter.
func (r *Remote) reach(ctx context.Context, op func() error) error {
	lost := r.LostAfter
	if lost <= 0 {
		lost = 2 * time.Minute
	}
	var since time.Time
	for {
		err := op()
		if err == nil || !(errors.Is(err, hosts.ErrUnreachable) || errors.Is(err, errMonitorCut)) || ctx.Err() != nil {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) >= lost {
			return fmt.Errorf("%w: %s for %s: %v", orchestrator.ErrHostLost, r.Host.Name, lost, err)
		}
		t := time.NewTimer(2 * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// waitScript is one wait on the host: its monitor-session for up to
// each, and once the child is final (the result kept beside the clone, so
// a call made again after a drop gives it again), the session's end, the
// clone's commit and the attempt's usage.
func (r *Remote) waitScript(req orchestrator.StepRequest, pdir, wt, name, key string, each, left time.Duration, opt monitor.Options) string {
	mon := r.command(req.RunID, pdir, "monitor-session", name, "--workflow", req.Step, "--story-key", key,
		"--timeout", left.Round(time.Second).String(), "--return-after", each.Round(time.Second).String(),
		"--completion-rechecks", strconv.Itoa(max(opt.Rechecks, 1)), "--recheck-grace", opt.RecheckGrace.String(), "--json")
	return fmt.Sprintf(`K=%s W=%s
if [ ! -s "$K" ]; then
  %s >"$K.tmp"
  rc=$?
  case $rc in
  8) cat "$K.tmp"; exit 8 ;;
  0|3|4|5|6|7) [ -s "$K.tmp" ] || exit 10; mv "$K.tmp" "$K" ;;
  *) [ "$rc" -gt 128 ] && exit 10; cat "$K.tmp" >&2; exit 11 ;;
  esac
fi
%s >/dev/null 2>&1
cd "$W" || exit 9
n=0
until { git add -A && git -c user.name=story-automator -c user.email=story-automator@localhost commit -q --no-verify --allow-empty -m %s; } </dev/null >/dev/null 2>&1; do
  n=$((n+1)); [ "$n" -lt 20 ] || exit 9; sleep 0.5
done
cat "$K"
echo
%s 2>/dev/null || true`, hosts.Quote(path.Join(path.Dir(wt), "."+path.Base(wt)+"-"+name+".json")), hosts.Quote(wt), mon,
		r.command(req.RunID, pdir, "session", "kill", name), hosts.Quote("story-automator: "+req.Step+" of "+req.Story),
		r.command(req.RunID, pdir, "session", "usage", name, "--agent", req.Agent))
}
