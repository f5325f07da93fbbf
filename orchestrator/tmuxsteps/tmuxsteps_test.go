package tmuxsteps

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// A run's child gets workflow.yaml's env.pass beyond the allow-list, and
// never a variable its notify names.
func TestChildEnvPolicyIsThePolicysPassLessNotifysVariables(t *testing.T) {
	pol, err := workflows.ParsePolicy("w.yaml", []byte("env: {pass: [A_SETTING]}\nnotify: {webhook: 'https://x.org/$TOPIC'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := (&Runner{Policy: pol}).envPolicy()
	if !slices.Equal(got.Pass, []string{"A_SETTING"}) || !slices.Equal(got.Deny, []string{"TOPIC"}) {
		t.Fatalf("%+v", got)
	}
	if got := (&Runner{}).envPolicy(); got.Pass != nil || got.Deny != nil {
		t.Fatalf("no policy: %+v", got)
	}
}

func TestChildEnvironmentCarriesTheAttemptAndPicksTheBMADSim(t *testing.T) {
	ts := &Runner{Environ: []string{"HOME=/home/u"}}
	env := ts.childEnviron(orchestrator.StepRequest{Step: orchestrator.StepReview, Agent: agent.AgentSim, Attempt: 4, Cycle: 2, Role: orchestrator.RoleFallback, RunID: "run-x"})
	sim := agentsim.EnvBehaviour + "=" + agentsim.BehaviourBMAD
	for _, want := range []string{"HOME=/home/u", child.EnvAttempt + "=4", child.EnvCycle + "=2", child.EnvRole + "=fallback",
		child.EnvRunID + "=run-x", sim} {
		if !slices.Contains(env, want) {
			t.Fatalf("child environment lacks %s: %v", want, env)
		}
	}
	ts.Environ = []string{agentsim.EnvBehaviour + "=hang"}
	if env := ts.childEnviron(orchestrator.StepRequest{Agent: agent.AgentSim}); slices.Contains(env, sim) {
		t.Fatalf("a behaviour chosen by the user was overridden: %v", env)
	}
	if env := ts.childEnviron(orchestrator.StepRequest{Agent: agent.AgentClaude}); slices.Contains(env, sim) {
		t.Fatal("a real agent got the sim behaviour")
	}
}

// killedTmux answers every tmux call with success: the session is gone.
type killedTmux struct{}

func (killedTmux) Run(context.Context, tmux.Command) ([]byte, []byte, error) { return nil, nil, nil }

func TestCloseSessionWaitsForTheAgentAndKillsOneThatLingers(t *testing.T) {
	// An agent that ignores the hang-up of its closed session.
	agent := exec.Command("sh", "-c", "trap '' HUP TERM; while :; do sleep 1; done")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = agent.Wait(); close(exited) }()
	t.Cleanup(func() { _ = agent.Process.Kill() })
	dir := t.TempDir()
	if _, err := sessionstate.Update(dir, "sa-1-1-dev-1", func(st *sessionstate.State) error {
		st.AgentPid = agent.Process.Pid
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ts := &Runner{Tmux: &tmux.Client{Exec: killedTmux{}}, StateDir: dir, CloseWait: 100 * time.Millisecond}
	if err := ts.CloseSession(context.Background(), "sa-1-1-dev-1"); err != nil {
		t.Fatal(err)
	}
	select { // reaping our child takes a moment; an agent left running never ends
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the closed session's agent still runs")
	}
}

func TestStepVerifierWithoutASessionNeverTrustsSessionExit(t *testing.T) {
	dir := t.TempDir()
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	stories, err := bmad.Files{P: p}.EpicStories("1")
	if err != nil || len(stories) == 0 {
		t.Fatalf("%v %v", stories, err)
	}
	pol := workflows.DefaultPolicy()
	if got := pol.Steps[orchestrator.StepAutomate].Verifiers; !slices.Equal(got, []string{workflows.VerifySessionExit}) {
		t.Fatalf("automate verifiers %v: the test needs session_exit alone", got)
	}
	ts := &Runner{Layout: p, Policy: pol}
	req := orchestrator.StepRequest{RunID: "r", Story: stories[0].Key, Epic: "1", Step: orchestrator.StepAutomate}
	if v, err := ts.StepVerifier(req); err != nil || v.Verify(context.Background()).Verified {
		t.Fatalf("automate verified with no session: %v", err)
	}
	// A step with a verifier that reads the files is still checked.
	pol.Steps[orchestrator.StepAutomate].Verifiers = []string{workflows.VerifySessionExit, workflows.VerifyReviewCompletion}
	if err := (bmad.Files{P: p}).MarkStoryDone(stories[0].Key); err != nil {
		t.Fatal(err)
	}
	v, err := ts.StepVerifier(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := v.Verify(context.Background()); !r.Passed() {
		t.Fatalf("a step whose story file exists was not verified: %+v", r)
	}
}

// A resumed run's re-check of a step the pipeline reads from the files
// (FromFiles) runs the step's command verifiers alone: the command's
// failure fails it though the step's other verifiers are left out, its
// success passes it, and a step without one has nothing to run.
func TestStepVerifierFromFilesRunsTheCommandVerifiersAlone(t *testing.T) {
	dir := t.TempDir()
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	stories, err := bmad.Files{P: p}.EpicStories("1")
	if err != nil || len(stories) == 0 {
		t.Fatalf("%v %v", stories, err)
	}
	pol := workflows.DefaultPolicy()
	dev := pol.Steps[orchestrator.StepDev]
	ts := &Runner{Layout: p, Policy: pol, Unconfined: true}
	req := orchestrator.StepRequest{RunID: "r", Story: stories[0].Key, Epic: "1", Step: orchestrator.StepDev, FromFiles: true}
	for _, c := range []struct {
		verifiers []string
		command   string
		pass      bool
	}{
		{[]string{workflows.VerifyDevCompletion, workflows.VerifyCommand}, "echo broken; exit 3", false},
		{[]string{workflows.VerifyDevCompletion, workflows.VerifyCommand}, "touch ran", true},
		{[]string{workflows.VerifyDevCompletion}, "", true},
	} {
		dev.Verifiers, dev.Command = c.verifiers, c.command
		_ = os.Remove(filepath.Join(dir, "ran"))
		v, err := ts.StepVerifier(req)
		if err != nil {
			t.Fatal(err)
		}
		r := v.Verify(context.Background())
		if r.Passed() != c.pass {
			t.Fatalf("%v with %q: verified %v (%s), want %v", c.verifiers, c.command, r.Passed(), r.Detail, c.pass)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); (err == nil) != (c.command == "touch ran") {
			t.Fatalf("%v with %q: the command ran: %v", c.verifiers, c.command, err == nil)
		}
		// Without FromFiles the story's dev_completion fails it (its file
		// says it is not in review).
		req.FromFiles = false
		if full, err := ts.StepVerifier(req); err != nil || full.Verify(context.Background()).Passed() {
			t.Fatalf("%v: the full verifier passed (%v)", c.verifiers, err)
		}
		req.FromFiles = true
	}
}

// goneTmux answers every tmux call as a server that has no such session.
type goneTmux struct{}

func (goneTmux) Run(context.Context, tmux.Command) ([]byte, []byte, error) {
	return nil, []byte("can't find session: sa-1-1-dev-1"), errors.New("exit status 1")
}

// startSleeper starts a long sleep with the given environment; it reports on
// the returned channel when it has exited (and been reaped).
func startSleeper(t *testing.T, env []string) (int, <-chan struct{}) {
	t.Helper()
	p := exec.Command("sleep", "600")
	p.Env = env
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.Wait(); close(exited) }()
	t.Cleanup(func() { _ = p.Process.Kill(); <-exited })
	return p.Process.Pid, exited
}

func TestCloseSessionOfAGoneSessionKillsOnlyItsOwnProcesses(t *testing.T) {
	const name = "sa-1-1-dev-1"
	stranger, _ := startSleeper(t, []string{"PATH=" + os.Getenv("PATH")}) // took over an old pid after a reboot
	ours, oursExited := startSleeper(t, []string{"PATH=" + os.Getenv("PATH"), sessionstate.EnvSession + "=" + name})
	dir := t.TempDir()
	if _, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error {
		st.PanePid, st.AgentPid = stranger, ours
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ts := &Runner{Tmux: &tmux.Client{Exec: goneTmux{}}, StateDir: dir, CloseWait: 50 * time.Millisecond}
	if err := ts.CloseSession(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	if !proc.Alive(stranger) {
		t.Fatal("a process that is not the session's was killed")
	}
	select { // reaping our child takes a moment; an agent left running never ends
	case <-oursExited:
	case <-time.After(5 * time.Second):
		t.Fatal("the gone session's own agent still runs")
	}
}

func TestExit127IsAMissingAgentNotACrashToRetry(t *testing.T) {
	b := blockerOf("codex", monitor.Result{FinalState: monitor.Crashed, Reason: "exit_code_127"})
	if b == nil || b.Code != child.CodeAgentNotFound || b.Action != "install it: npm install -g @openai/codex@0.169.0" {
		t.Fatalf("blocker %+v", b)
	}
	if blockerOf("codex", monitor.Result{FinalState: monitor.Crashed, Reason: "exit_code_1"}) != nil {
		t.Fatal("an ordinary crash became a blocker")
	}
}

// A dialog the monitor saw stops the step with its own code and the user's action.
func TestADialogIsABlockerWithTheMonitorsAction(t *testing.T) {
	b := blockerOf("claude", monitor.Result{Reason: monitor.ReasonDialog, Dialog: agent.DialogTrustFolder, Action: "trust the folder"})
	if b == nil || b.Code != CodeAgentDialog || b.Action != "trust the folder" || !b.Park {
		t.Fatalf("blocker %+v", b)
	}
	if b := blockerOf("claude", monitor.Result{Reason: monitor.ReasonDialog, Dialog: agent.DialogAPIKey, Action: "log in"}); b == nil || b.Park {
		t.Fatalf("an agent's login dialog parks a story: %+v", b)
	}
}

// A limited attempt carries its reset time into the step result; any
// other, or one whose CLI named none, carries none.
func TestALimitedResultCarriesItsResetTime(t *testing.T) {
	got := resetsAt(monitor.Result{FinalState: monitor.Limited, Reason: monitor.ReasonUsageLimit, ResetsAt: "2026-11-27T16:06:52Z"})
	if got.UTC().Format(time.RFC3339) != "2026-11-27T16:06:52Z" {
		t.Fatalf("resetsAt %s", got)
	}
	for _, r := range []monitor.Result{{FinalState: monitor.Limited, Reason: monitor.ReasonOverloaded}, {FinalState: monitor.Crashed, ResetsAt: "2026-11-27T16:06:52Z"}} {
		if got := resetsAt(r); !got.IsZero() {
			t.Errorf("%+v: resetsAt %s", r, got)
		}
	}
}
