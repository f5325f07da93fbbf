package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// A hostile model has each real CLI's shell run `env` before the step's
// work: what it prints goes back to the model. The run's environment holds
// a notification webhook's secret (the variable notify names) and a
// setting of the user's that no list names; neither is in any request
// model-sim saw, after the positive signal that the `env` output did reach
// it (an allowed LC_ variable's value). The control: a name in env.pass
// does reach the model, so the same output would show a secret that got
// through. Names avoid KEY, SECRET and TOKEN, which some CLIs scrub from
// their shell's environment themselves.
func TestRealClaudeChildEnvironmentHoldsNoSecret(t *testing.T) {
	t.Parallel()
	envRun(t, "claude", offline.Claude)
}

func TestRealCodexChildEnvironmentHoldsNoSecret(t *testing.T) {
	t.Parallel()
	envRun(t, "codex", offline.Codex)
}

func TestRealGeminiChildEnvironmentHoldsNoSecret(t *testing.T) {
	t.Parallel()
	envRun(t, "gemini", offline.Gemini)
}

// On an ssh host the host's own `session spawn` starts the child from the
// same allow-list, with the project's workflow.yaml there: a variable of
// the host's login environment that no list names and the one notify
// names reach no request; the probe and the env.pass name do.
func TestRealClaudeChildOnAnSSHHostGetsOnlyTheAllowList(t *testing.T) {
	cli := realagent.Require(t, "claude")
	srv := sshd.Start(t)
	tag := randomHex(t)
	probe, passed := "probe-"+tag, "passed-"+tag
	hookTopic, unlisted := "hooktopic-"+tag, "unlisted-"+tag
	sim := startModelSim(t, "rules:\n  - regexp: \"of a BMAD project at\"\n    actions: [{shell: \"env | sort\"}, {step: true}]\n")
	realagent.StopStrays(t, srv.Home)
	oenv, err := offline.Claude(offline.Config{Home: srv.Home, BaseURL: sim.URL(), Trusted: []string{srv.WorkDir}})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetEnv(append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"), "LC_SA_PROBE="+probe,
		"SA_PASSED_SETTING="+passed, "SA_NTFY_TOPIC="+hookTopic, "SA_UNLISTED_SETTING="+unlisted)...)
	p := hostsProject(t, srv, "1")
	wf := filepath.Join(p.root, ".story-automator", "workflow.yaml")
	data, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Replace(string(data), "agents: [sim]", "agents: [claude]", 1) + "env: {pass: [SA_PASSED_SETTING]}\n" +
		"notify:\n  webhook: http://127.0.0.1:9/$SA_NTFY_TOPIC\n  events: [limit_wait]\n"
	if err := os.WriteFile(wf, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "claude on box, env pass and notify")
	// The run checks the agent here too: the CLI is on this machine's PATH as well.
	local := []string{"PATH=" + filepath.Dir(cli) + ":" + os.Getenv("PATH")}
	res, code := p.run(local, append([]string{"run", "--agent", "claude", "--host", "box", "--epic", "1", "--stories", "1-1", "--trust-project", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v", code, res)
	}
	if u := p.state().Unit("1-1"); u.Host != "box" {
		t.Fatalf("1.1 ran on %q, want box", u.Host)
	}
	expectEnvHeld(t, sim, probe, passed, hookTopic, unlisted)
}

func envRun(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error)) {
	t.Helper()
	cli := realagent.Require(t, agentName)
	tag := randomHex(t)
	probe, passed := "probe-"+tag, "passed-"+tag
	hookTopic, unlisted := "hooktopic-"+tag, "unlisted-"+tag
	srv := startModelSim(t, "rules:\n  - regexp: \"of a BMAD project at\"\n    actions: [{shell: \"env | sort\"}, {step: true}]\n")
	p := newRunProjectAt(t, outsideTmp(t, "project"))
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(p.root, ".story-automator", "workflow.yaml")
	f, err := os.OpenFile(policy, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The webhook is never reached: no event of this run is one it sends.
	_, err = fmt.Fprint(f, "env: {pass: [SA_PASSED_SETTING]}\n"+
		"notify:\n  webhook: http://127.0.0.1:9/$SA_NTFY_TOPIC\n  events: [limit_wait]\n")
	if cerr := f.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	p.git("commit", "-qam", "env pass and notify")
	userHome := outsideTmp(t, "home")
	realagent.StopStrays(t, userHome)
	oenv, err := home(offline.Config{Home: userHome, BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"), "LC_SA_PROBE="+probe,
		"SA_PASSED_SETTING="+passed, "SA_NTFY_TOPIC="+hookTopic, "SA_UNLISTED_SETTING="+unlisted)
	res, code := p.run(env, "run", "--agent", agentName, "--epic", "1", "--stories", "1", "--json",
		"--completion-rechecks", "1", "--backoff", "10ms")
	if code != 0 || res["outcome"] != "done" {
		path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
		b, _ := os.ReadFile(path)
		t.Fatalf("run: exit %d %v\nstate:\n%s\nsessions:\n%s", code, res, b, sessionTails(p.root))
	}
	expectEnvHeld(t, srv, probe, passed, hookTopic, unlisted)
}

// expectEnvHeld checks model-sim's requests: the probe and the passed
// value arrived, the secrets did not.
func expectEnvHeld(t *testing.T, srv *modelsim.Server, probe, passed string, secrets ...string) {
	t.Helper()
	var seen strings.Builder
	for _, e := range srv.Exchanges() {
		seen.Write(e.Request)
	}
	if !strings.Contains(seen.String(), probe) {
		t.Fatalf("the child's `env` output never reached the model (no %s): absence would prove nothing", probe)
	}
	if !strings.Contains(seen.String(), passed) {
		t.Errorf("the env.pass variable's value did not reach the model: the control fails")
	}
	for _, s := range secrets {
		if strings.Contains(seen.String(), s) {
			t.Errorf("%s reached the model", s)
		}
	}
}
