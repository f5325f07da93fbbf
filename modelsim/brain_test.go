package modelsim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func conv(msgs ...Message) *Conversation {
	return &Conversation{Protocol: ProtocolAnthropic, Messages: msgs, Tools: []string{"Bash"}}
}

func user(text string) Message { return Message{Role: RoleUser, Text: text} }

func called(cmd string) []Message {
	return []Message{{Role: RoleAssistant, Calls: []ToolCall{{Name: "Bash", Args: map[string]any{"command": cmd}}}},
		{Role: RoleTool, Result: "ok\nall good"}}
}

func script(t *testing.T, text string) *Script {
	t.Helper()
	s, err := ParseScript([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuiltinBrainRunsTheStepThroughAgentSim(t *testing.T) {
	b := &Brain{Exe: "/opt/it's/story-automator"}
	prompt := "You are the developer of a BMAD project at /p. Implement story 1.2."
	r := b.Respond(conv(user(prompt)))
	want := `"/opt/it's/story-automator" agent-sim --behaviour bmad --crash-kills "$PPID"`
	if r.Call == nil || r.Call.Shell != want {
		t.Fatalf("call %+v, want shell %s", r.Call, want)
	}
	if r.Usage != DefaultUsage {
		t.Errorf("usage %+v", r.Usage)
	}
	r = b.Respond(conv(append([]Message{user(prompt)}, called(want)...)...))
	if r.Call != nil || r.Text != "Done. The command said: all good" {
		t.Errorf("after the tool: %+v", r)
	}
}

func TestBuiltinBrainRunsTheCommandAPromptAsksFor(t *testing.T) {
	b := &Brain{}
	msgs := []Message{user("Run `echo 1 >> ticks`, then stop.")}
	msgs = append(msgs, called("echo 1 >> ticks")...)
	// A Stop hook's feedback is a new user turn: the next iteration's work.
	msgs = append(msgs, user("Stop hook feedback:\nRun `echo 2 >> ticks`, then stop."))
	r := b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.Shell != "echo 2 >> ticks" {
		t.Fatalf("call %+v, want the second iteration's command", r.Call)
	}
	if r := b.Respond(conv(user("hello"))); r.Call != nil || r.Text != DefaultReply {
		t.Errorf("plain prompt: %+v", r)
	}
}

func TestScriptedTurnsFollowTheirActionsInOrder(t *testing.T) {
	b := &Brain{Script: script(t, `
usage: {input: 7, output: 3}
rules:
  - match: tick
    nth: 2
    actions:
      - shell: echo last >> ticks
      - reply: "finished\nSTORY_AUTOMATOR_COMPLETE"
  - regexp: "^Stop hook|tick"
    usage: {input: 11, output: 2, cacheRead: 5, cacheWrite: 1}
    actions:
      - delay: 2s
      - shell: echo tick >> ticks
      - write: {path: notes.txt, content: "a'b"}
      - reply: one done
`)}
	first := []Message{user("tick")}
	r := b.Respond(conv(first...))
	if r.Call == nil || r.Call.Shell != "echo tick >> ticks" || r.Delay != 2*time.Second {
		t.Fatalf("first call %+v delay %v", r.Call, r.Delay)
	}
	if r.Usage != (Usage{InputTokens: 11, OutputTokens: 2, CacheReadTokens: 5, CacheWriteTokens: 1}) {
		t.Errorf("rule usage %+v", r.Usage)
	}
	first = append(first, called("echo tick >> ticks")...)
	r = b.Respond(conv(first...))
	if r.Call == nil || r.Call.shellCommand() != `printf '%s' "a'b" > notes.txt` || r.Delay != 0 {
		t.Fatalf("second call %+v (%q) delay %v", r.Call, r.Call.shellCommand(), r.Delay)
	}
	first = append(first, called("printf")...)
	if r = b.Respond(conv(first...)); r.Call != nil || r.Text != "one done" {
		t.Fatalf("final %+v", r)
	}
	second := append(first, user("Stop hook feedback:\ntick"))
	r = b.Respond(conv(second...))
	if r.Call == nil || r.Call.Shell != "echo last >> ticks" || r.Usage != (Usage{InputTokens: 7, OutputTokens: 3}) {
		t.Fatalf("second turn %+v usage %+v", r.Call, r.Usage)
	}
	second = append(second, called("echo last >> ticks")...)
	if r = b.Respond(conv(second...)); !strings.HasSuffix(r.Text, "\nSTORY_AUTOMATOR_COMPLETE") {
		t.Errorf("second turn's final text %q", r.Text)
	}
}

func TestScriptedFaults(t *testing.T) {
	b := &Brain{Script: script(t, `
rules:
  - {match: crash, actions: [{fault: crash}]}
  - {match: hang, actions: [{shell: "true"}, {fault: hang}]}
  - {match: error, actions: [{fault: error}]}
  - {match: lazy, protocol: anthropic, actions: [{reply: "All done!"}]}
`)}
	if r := b.Respond(conv(user("crash now"))); r.Call == nil || r.Call.Shell != crashCommand {
		t.Errorf("crash: %+v", r)
	}
	if r := b.Respond(conv(user("hang"))); r.Hang || r.Call == nil {
		t.Errorf("hang, first request: %+v", r)
	}
	if r := b.Respond(conv(append([]Message{user("hang")}, called("true")...)...)); !r.Hang {
		t.Errorf("hang after the call: %+v", r)
	}
	if r := b.Respond(conv(user("error"))); r.ErrorStatus != 500 {
		t.Errorf("error: %+v", r)
	}
	if r := b.Respond(conv(user("lazy"))); r.Call != nil || r.Text != "All done!" {
		t.Errorf("a turn without the work: %+v", r)
	}
	c := conv(user("lazy"))
	c.Protocol = ProtocolGemini
	if r := b.Respond(c); r.Text != DefaultReply {
		t.Errorf("a rule for another protocol applied: %+v", r)
	}
}

func TestScriptWithoutBuiltinRepliesByDefault(t *testing.T) {
	b := &Brain{Script: script(t, "builtin: false\nrules: []\n")}
	if r := b.Respond(conv(user("Run `rm -rf x`"))); r.Call != nil || r.Text != DefaultReply {
		t.Errorf("%+v", r)
	}
}

func TestParseScriptRefusesMistakes(t *testing.T) {
	for _, bad := range []string{
		"rules: [{match: x, actions: []}]",
		"rules: [{match: x, actions: [{shell: a, reply: b}]}]",
		"rules: [{match: x, actions: [{fault: explode}]}]",
		"rules: [{regexp: '(', actions: [{reply: a}]}]",
		"rules: [{match: x, protocol: bard, actions: [{reply: a}]}]",
		"rules: [{match: x, actions: [{write: {content: a}}]}]",
		"rules: [{match: x, actions: [{delay: -1s}]}]",
		"rulez: []",
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%q) accepted it", bad)
		}
	}
	if _, err := ParseScript([]byte(`{"rules":[{"match":"x","actions":[{"reply":"json works"}]}]}`)); err != nil {
		t.Errorf("a JSON script: %v", err)
	}
}

func TestSideAnswersFitTheirSchema(t *testing.T) {
	c := &Conversation{Side: true, Schema: map[string]any{"type": "OBJECT", "properties": map[string]any{
		"complexity_score":     map[string]any{"type": "INTEGER", "minimum": 0.0},
		"complexity_reasoning": map[string]any{"type": "STRING"},
		"next_speaker":         map[string]any{"type": "string", "enum": []any{"model", "user"}},
		"ok":                   map[string]any{"type": []any{"null", "boolean"}},
	}}}
	r := (&Brain{}).Respond(c)
	want := `{"complexity_reasoning":"model-sim","complexity_score":1,"next_speaker":"user","ok":false}`
	if r.Text != want {
		t.Errorf("side answer %s, want %s", r.Text, want)
	}
}

// result is a tool's answer to one call.
func result(out string) []Message {
	return []Message{{Role: RoleAssistant, Calls: []ToolCall{{Name: "Bash"}}}, {Role: RoleTool, Result: out}}
}

// A rule reads values off the user's turns and off its calls' outputs, and
// fills them into the calls after, as a model reading a skill and the
// paths its commands print would.
func TestScriptedTurnsCaptureFromTheTurnAndFromToolOutputs(t *testing.T) {
	b := &Brain{Script: script(t, `
rules:
  - match: skill
    capture:
      skill: 'Base directory for this skill: (\S+)|<path>(\S+)/SKILL\.md</path>'
      story: '^/?\$?run-it (\S+)'
    actions:
      - shell: pwd
        capture: {root: '(?m)^(/\S*)$'}
      - shell: 'render --root "{{.root}}" --skill "{{.skill}}"'
        capture: {workflow: '(/\S+/workflow\.md)'}
      - read: '{{.workflow}}'
      - write: {path: '{{.root}}/spec-{{.story}}.md', content: "story {{.story}}\n"}
      - reply: 'wrote spec-{{.story}}.md'
`)}
	// Codex: the prompt, then the skill's text as a turn of its own.
	msgs := []Message{user("$run-it 1-2-a"), user("<skill>\n<path>/p/.agents/skills/s/SKILL.md</path>\nskill text</skill>")}
	steps := []struct {
		out  string
		want Call
	}{
		{"", Call{Shell: "pwd"}},
		{"Output:\n/p\n", Call{Shell: `render --root "/p" --skill "/p/.agents/skills/s"`}},
		{"Read and follow /p/_r/x/workflow.md\n", Call{ReadPath: "/p/_r/x/workflow.md"}},
		{"# Workflow", Call{WritePath: "/p/spec-1-2-a.md", WriteContent: "story 1-2-a\n"}},
	}
	for i, s := range steps {
		if s.out != "" {
			msgs = append(msgs, result(s.out)...)
		}
		r := b.Respond(conv(msgs...))
		if r.Call == nil || *r.Call != s.want {
			t.Fatalf("call %d: %+v (%q), want %+v", i+1, r.Call, r.Text, s.want)
		}
	}
	r := b.Respond(conv(append(msgs, result("written")...)...))
	if r.Call != nil || r.Text != "wrote spec-1-2-a.md" {
		t.Fatalf("final: %+v", r)
	}
	// Claude Code: the skill's text follows its base directory in the turn itself.
	r = b.Respond(conv(user("/run-it 3-1-b\nBase directory for this skill: /q/.claude/skills/s\n\nskill text"), result("/q")[0], result("/q")[1]))
	if r.Call == nil || r.Call.Shell != `render --root "/q" --skill "/q/.claude/skills/s"` {
		t.Fatalf("claude's form: %+v", r)
	}
}

// A capture that finds nothing ends the turn saying what was missing and
// where: the script makes no call with a hole in it.
func TestScriptedTurnsStopWhenACaptureFindsNothing(t *testing.T) {
	// Without a write tool, a write through the shell makes the file's folder first.
	if got := (&Call{WritePath: "/p/src/a.py", WriteContent: "x"}).shellCommand(); got != `mkdir -p /p/src && printf '%s' x > /p/src/a.py` {
		t.Errorf("shell write: %s", got)
	}
	if got := (&Call{ReadPath: "/p/it's.md"}).shellCommand(); got != `cat "/p/it's.md"` {
		t.Errorf("shell read: %s", got)
	}
	b := &Brain{Script: script(t, `
rules:
  - match: go
    actions:
      - shell: make
        capture: {workflow: '(/\S+/workflow\.md)'}
      - read: '{{.workflow}}'
`)}
	r := b.Respond(conv(append([]Message{user("go")}, result("uv: command not found")...)...))
	if r.Call != nil || !strings.Contains(r.Text, "no workflow in the output of call 1") || !strings.Contains(r.Text, "uv: command not found") {
		t.Fatalf("reply %+v", r)
	}
	b = &Brain{Script: script(t, "rules:\n  - match: go\n    capture: {skill: 'Base directory: (\\S+)'}\n    actions: [{read: '{{.skill}}'}]\n")}
	if r := b.Respond(conv(user("go"))); r.Call != nil || !strings.Contains(r.Text, "no skill in the user's turns") {
		t.Fatalf("reply %+v", r)
	}
	// Without a capture a rule's strings are literal.
	b = &Brain{Script: script(t, "rules:\n  - match: go\n    actions: [{shell: 'echo {{.x}}'}]\n")}
	if r := b.Respond(conv(user("go"))); r.Call == nil || r.Call.Shell != "echo {{.x}}" {
		t.Fatalf("literal: %+v", r)
	}
}

func TestScriptRefusesBadCaptures(t *testing.T) {
	for _, bad := range []string{
		"rules:\n  - actions: [{reply: x, capture: {a: b}}]\n",
		"rules:\n  - capture: {'1a': x}\n    actions: [{reply: x}]\n",
		"rules:\n  - capture: {a: '('}\n    actions: [{reply: x}]\n",
		"rules:\n  - capture: {a: x}\n    actions: [{shell: '{{.a'}]\n",
		"rules:\n  - actions: [{read: x, shell: y}]\n",
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// The shipped build-auto script parses: the review layer's rule, two
// folder+id rules (halting after planning, and not), a sprint spec's
// path whose intent gap was settled, any other, a sprint key whose intent
// is unclear, one whose review finds an intent gap, one whose review
// defers a finding, a sweep unit's free text, an action unit's, then any
// sprint key.
func TestBuildAutoScriptParses(t *testing.T) {
	s := script(t, BuildAutoScript)
	if len(s.Rules) != 11 || slices.ContainsFunc(s.Rules[1:], func(r Rule) bool { return !r.templated }) {
		t.Fatalf("rules %+v", s.Rules)
	}
}

// On a folder+id dispatch the shipped build-auto script follows the
// worker's folder route: after the skill path (pwd, the renderer, its
// workflow.md), the folder's entry, then the spec at
// <folder>/stories/<id>-<slug>.md, and a commit led by <id>-<slug>; a
// sprint-mode key still takes the sprint rule.
func TestBuildAutoScriptFollowsAFolderDispatch(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := []Message{user("<command-args>Spec folder: _bmad-output/specs/spec-billing. Story id: 2.</command-args>\n" +
		"Base directory for this skill: /p/.claude/skills/bmad-build-auto\n\nskill text")}
	next := func(out string) *Call {
		t.Helper()
		if out != "" {
			msgs = append(msgs, result(out)...)
		}
		c := conv(msgs...)
		c.Tools = append(c.Tools, "Agent")
		r := b.Respond(c)
		if r.Call == nil {
			t.Fatalf("no call after %q: %q", out, r.Text)
		}
		return r.Call
	}
	if c := next(""); !strings.HasPrefix(c.Shell, "pwd;") {
		t.Fatalf("first call %+v", c)
	}
	if c := next("/p\nnet:[1]\n"); !strings.Contains(c.Shell, `render_skill.py" --project-root "/p" --skill "/p/.claude/skills/bmad-build-auto"`) {
		t.Fatalf("renderer call %+v", c)
	}
	if c := next("Read and follow /p/_bmad/render/x/workflow.md\n"); c.Shell != `cat "/p/_bmad/render/x/workflow.md"` {
		t.Fatalf("workflow call %+v", c)
	}
	c := next("# Build Auto Workflow\n`{spec_file}` = `{spec_folder}/stories/{story_id}-{slug}.md`\n")
	if !strings.HasPrefix(c.Shell, `realpath "_bmad-output/specs/spec-billing"`) || !strings.Contains(c.Shell, `/^- id: "2"/`) {
		t.Fatalf("entry call %+v", c)
	}
	c = next("/p/_bmad-output/specs/spec-billing\nTITLE=Refund an invoice\nSLUG=refund-an-invoice\n")
	if c.WritePath != "/p/_bmad-output/specs/spec-billing/stories/2-refund-an-invoice.md" || !strings.Contains(c.WriteContent, "status: 'draft'") ||
		!strings.Contains(c.WriteContent, "# Refund an invoice\n") {
		t.Fatalf("draft spec %+v", c)
	}
	for _, out := range []string{"written", "0123456789012345678901234567890123456789\n", "written", "written", "written"} {
		next(out)
	}
	if c = next("GREETING TEST PASSED\n"); !strings.HasPrefix(c.Subagent, "Review layer of the model-sim worker") {
		t.Fatalf("review %+v", c)
	}
	c = next("REVIEW VERDICT: clean (greet and its test agree)")
	if !strings.Contains(c.WriteContent, "status: 'done'") || !strings.Contains(c.WriteContent, "baseline_revision: '0123456789012345678901234567890123456789'") ||
		!strings.Contains(c.WriteContent, "Review: REVIEW VERDICT: clean (greet and its test agree)") {
		t.Fatalf("done spec %+v", c)
	}
	if c = next("written"); !strings.Contains(c.Shell, `-m "2-refund-an-invoice: greet`) {
		t.Fatalf("commit %+v", c)
	}
	// Codex: the skill's text is a turn of its own after the prompt; the
	// folder rule still takes it.
	codex := b.Respond(conv(user("$bmad-build-auto Spec folder: /p/specs/x. Story id: a-1."),
		user("<skill>\n<path>/p/.agents/skills/bmad-build-auto/SKILL.md</path>\nskill text</skill>"), result("/p\n")[0], result("/p\n")[1],
		result("Read and follow /p/_bmad/render/x/workflow.md\n")[0], result("Read and follow /p/_bmad/render/x/workflow.md\n")[1],
		result("`{spec_folder}/stories/{story_id}-{slug}.md`")[0], result("`{spec_folder}/stories/{story_id}-{slug}.md`")[1]))
	if codex.Call == nil || !strings.HasPrefix(codex.Call.Shell, `realpath "/p/specs/x"`) || !strings.Contains(codex.Call.Shell, `/^- id: "a-1"/`) {
		t.Fatalf("codex's form: %+v", codex)
	}
	sprint := b.Respond(conv(user("<command-args>1-1-sign-up</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n"), result("/p\n")[0], result("/p\n")[1],
		result("Read and follow /p/_bmad/render/x/workflow.md\n")[0], result("Read and follow /p/_bmad/render/x/workflow.md\n")[1],
		result("create `/p/_bmad-output/implementation-artifacts/bmad-build-auto-result-<slug>.md`")[0], result("create `/p/_bmad-output/implementation-artifacts/bmad-build-auto-result-<slug>.md`")[1]))
	if sprint.Call == nil || sprint.Call.WritePath != "/p/_bmad-output/implementation-artifacts/spec-1-1-sign-up.md" {
		t.Fatalf("a sprint key: %+v", sprint)
	}
}

// The shipped retrospective script parses.
func TestRetroScriptParses(t *testing.T) {
	s := script(t, RetroScript)
	if len(s.Rules) != 1 || !s.Rules[0].templated {
		t.Fatalf("rules %+v", s.Rules)
	}
}

// A skill action loads the skill through the CLI's skill tool where the CLI
// offers one (Gemini CLI's activate_skill) and captures off its output;
// where the CLI put the skill in the user's turn itself it makes no call
// and captures off the turn.
func TestScriptedSkillActionActivatesOrReadsTheTurn(t *testing.T) {
	b := &Brain{Script: script(t, `
rules:
  - match: go
    actions:
      - skill: my-skill
        capture: {dir: '(?m)Base directory for this skill: (\S+)|^(/\S+/my-skill)/$'}
      - shell: 'run "{{.dir}}"'
`)}
	withTool := func(msgs ...Message) *Conversation {
		c := conv(msgs...)
		c.Tools = []string{"run_shell_command", SkillTool}
		return c
	}
	r := b.Respond(withTool(user("go")))
	if r.Call == nil || r.Call.Skill != "my-skill" {
		t.Fatalf("with a skill tool: %+v, want an activation of my-skill", r)
	}
	activated := "<activated_skill name=\"my-skill\">\n<instructions>x</instructions>\n<available_resources>\nShowing up to 200 items.\n\n/p/.agents/skills/my-skill/\n└───SKILL.md\n</available_resources>"
	if r := b.Respond(withTool(append([]Message{user("go")}, result(activated)...)...)); r.Call == nil || r.Call.Shell != `run "/p/.agents/skills/my-skill"` {
		t.Fatalf("after the activation: %+v", r)
	}
	// No skill tool: the skill is in the turn, the first call is the shell.
	r = b.Respond(conv(user("go\nBase directory for this skill: /q/.claude/skills/my-skill\n\nskill text")))
	if r.Call == nil || r.Call.Shell != `run "/q/.claude/skills/my-skill"` {
		t.Fatalf("skill in the turn: %+v", r)
	}
	if r := b.Respond(conv(user("go"))); r.Call != nil || !strings.Contains(r.Text, "no dir in the user's turns") {
		t.Fatalf("no skill anywhere: %+v", r)
	}
}

// A subagent action launches a subagent through the CLI's subagent tool and
// captures off what it returned; a CLI without one gets a text that says so.
func TestScriptedSubagentAction(t *testing.T) {
	b := &Brain{Script: script(t, `
rules:
  - match: go
    actions:
      - subagent: "Reply with the token."
        capture: {token: 'TOKEN-([0-9]+)'}
      - reply: 'got {{.token}}'
`)}
	withTool := func(tool string, msgs ...Message) *Conversation {
		c := conv(msgs...)
		c.Tools = []string{"Bash", tool}
		return c
	}
	if r := b.Respond(withTool("Agent", user("go"))); r.Call == nil || r.Call.Subagent != "Reply with the token." {
		t.Fatalf("launch: %+v", r)
	}
	if r := b.Respond(withTool("Agent", append([]Message{user("go")}, result("TOKEN-42")...)...)); r.Call != nil || r.Text != "got 42" {
		t.Fatalf("after: %+v", r)
	}
	if r := b.Respond(conv(user("go"))); r.Call != nil || !strings.Contains(r.Text, "no subagent tool") {
		t.Fatalf("no tool: %+v", r)
	}
}

// A rule matches the latest user turn; with anyTurn, any user turn so far.
func TestScriptAnyTurnMatchesAnEarlierTurn(t *testing.T) {
	b := &Brain{Script: script(t, `
builtin: false
rules:
  - match: "first"
    actions: [{reply: "latest only"}]
  - match: "first"
    anyTurn: true
    actions: [{reply: "any turn"}]
`)}
	if r := b.Respond(conv(user("first"))); r.Text != "latest only" {
		t.Fatalf("one turn: %+v", r)
	}
	if r := b.Respond(conv(user("first"), user("second"))); r.Text != "any turn" {
		t.Fatalf("two turns: %+v", r)
	}
}

// With "Halt after planning." the shipped build-auto script stops at the
// plan: the spec at ready-for-dev with its Auto Run Result, no commit.
func TestBuildAutoScriptHaltsAFolderDispatchAfterPlanning(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := []Message{user("<command-args>Spec folder: specs/b. Story id: 1. Halt after planning.</command-args>\n" +
		"Base directory for this skill: /p/.claude/skills/bmad-build-auto\n")}
	for _, out := range []string{"/p\n", "Read and follow /p/_bmad/render/x/workflow.md\n", "`{spec_folder}/stories/{story_id}-{slug}.md`",
		"/p/specs/b\nTITLE=Issue invoices\nSLUG=issue-invoices\n"} {
		msgs = append(msgs, result(out)...)
	}
	r := b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.WritePath != "/p/specs/b/stories/1-issue-invoices.md" || !strings.Contains(r.Call.WriteContent, "status: 'ready-for-dev'") ||
		!strings.Contains(r.Call.WriteContent, "## Auto Run Result\n\nStatus: ready-for-dev") {
		t.Fatalf("the plan: %+v", r)
	}
	if r = b.Respond(conv(append(msgs, result("written")...)...)); r.Call != nil || !strings.HasPrefix(r.Text, "Status: ready-for-dev\nSpec: /p/specs/b/stories/1-issue-invoices.md") {
		t.Fatalf("the final text: %+v", r)
	}
}

// skillPath answers the skill path's three calls (pwd, the renderer, the
// workflow's text) of a sprint dispatch whose prompt is first.
func skillPath(prompt string) []Message {
	msgs := []Message{user(prompt)}
	for _, out := range []string{"/p\n", "Read and follow /p/_bmad/render/x/workflow.md\n",
		"create `/p/_bmad-output/implementation-artifacts/bmad-build-auto-result-<slug>.md`"} {
		msgs = append(msgs, result(out)...)
	}
	return msgs
}

// A sprint key whose story says its intent is unclear: after the skill
// path the shipped build-auto script writes the spec draft, then blocked
// with the condition "intent gap" and its question, and ends the turn
// with nothing committed; another key of the same epic is not blocked.
func TestBuildAutoScriptBlocksAStoryWhoseIntentIsUnclear(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := skillPath("<command-args>1-1-sign-up-intent-unclear</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	spec := "/p/_bmad-output/implementation-artifacts/spec-1-1-sign-up-intent-unclear.md"
	r := b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.WritePath != spec || !strings.Contains(r.Call.WriteContent, "status: 'draft'") {
		t.Fatalf("the draft: %+v", r)
	}
	msgs = append(msgs, result("written")...)
	r = b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.WritePath != spec || !strings.Contains(r.Call.WriteContent, "status: 'blocked'") ||
		!strings.Contains(r.Call.WriteContent, "## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n") {
		t.Fatalf("the blocked spec: %+v", r)
	}
	r = b.Respond(conv(append(msgs, result("written")...)...))
	if r.Call != nil || r.Text != "Status: blocked\nBlocking condition: intent gap\nSpec: "+spec {
		t.Fatalf("the final text: %+v", r)
	}
	r = b.Respond(conv(append(skillPath("<command-args>1-2-account-settings</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n"), result("written")...)...))
	if r.Call == nil || r.Call.Shell != "git rev-parse HEAD" {
		t.Fatalf("another key: %+v", r)
	}
}

// Dispatched by a sprint spec's path, the shipped build-auto script reads
// the spec and resumes it from draft in place: in-progress with the
// baseline, the code, the review, done with an Auto Run Result appended,
// one commit led by the key off the spec's name. A spec not at draft ends
// the turn saying so.
func TestBuildAutoScriptResumesASprintSpecFromDraft(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	rel := "_bmad-output/implementation-artifacts/spec-1-1-sign-up-intent-unclear.md"
	msgs := skillPath("<command-args>" + rel + "</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	next := func(out string) *Call {
		t.Helper()
		msgs = append(msgs, result(out)...)
		c := conv(msgs...)
		c.Tools = append(c.Tools, "Agent")
		r := b.Respond(c)
		if r.Call == nil {
			t.Fatalf("no call after %q: %q", out, r.Text)
		}
		return r.Call
	}
	if c := b.Respond(conv(msgs...)); c.Call == nil || c.Call.Shell != `cat "`+rel+`"` {
		t.Fatalf("the spec's read: %+v", c)
	}
	draft := "---\ntitle: 'x'\nstatus: 'draft'\n---\n\nAnswer: the visitor by name.\n"
	if c := b.Respond(conv(append(msgs, result("---\nstatus: 'blocked'\n---\n")...)...)); c.Call != nil || !strings.Contains(c.Text, "no draft") {
		t.Fatalf("a blocked spec: %+v", c)
	}
	if c := next(draft); c.Shell != "git rev-parse HEAD" {
		t.Fatalf("baseline %+v", c)
	}
	if c := next("0123456789012345678901234567890123456789\n"); !strings.Contains(c.Shell, "status: 'in-progress'") ||
		!strings.Contains(c.Shell, "baseline_revision: '0123456789012345678901234567890123456789'") || !strings.Contains(c.Shell, `"`+rel+`"`) {
		t.Fatalf("in-progress %+v", c)
	}
	for _, out := range []string{"status: 'in-progress'", "written", "written"} {
		next(out)
	}
	if c := next("GREETING TEST PASSED\n"); !strings.HasPrefix(c.Subagent, "Review layer of the model-sim worker") {
		t.Fatalf("review %+v", c)
	}
	if c := next("REVIEW VERDICT: clean (greet and its test agree)"); !strings.Contains(c.Shell, "status: 'done'") ||
		!strings.Contains(c.Shell, "Review: %s") || !strings.Contains(c.Shell, `"REVIEW VERDICT: clean (greet and its test agree)"`) {
		t.Fatalf("done %+v", c)
	}
	if c := next("status: 'done'\n"); !strings.Contains(c.Shell, `-m "1-1-sign-up-intent-unclear: greet`) {
		t.Fatalf("commit %+v", c)
	}
}

// A sprint key whose story's review defers a finding: the shipped
// build-auto script's done spec lists it under `deferred:`.
func TestBuildAutoScriptDefersAFinding(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := skillPath("<command-args>1-1-sign-up-defers-a-finding</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	spec := "/p/_bmad-output/implementation-artifacts/spec-1-1-sign-up-defers-a-finding.md"
	for _, out := range []string{"written", "0123456789012345678901234567890123456789\n", "written", "written", "written", "GREETING TEST PASSED\n"} {
		msgs = append(msgs, result(out)...)
	}
	c := conv(append(msgs, result("REVIEW VERDICT: clean (greet and its test agree)")...)...)
	c.Tools = append(c.Tools, "Agent")
	r := b.Respond(c)
	if r.Call == nil || r.Call.WritePath != spec || !strings.Contains(r.Call.WriteContent, "status: 'done'") ||
		!strings.Contains(r.Call.WriteContent, "deferred:\n  - summary: 'greet keeps the spaces around a name (seen reviewing 1-1-sign-up-defers-a-finding)'\n") ||
		!strings.Contains(r.Call.WriteContent, "    severity: 'medium'\n") {
		t.Fatalf("the done spec: %+v", r)
	}
}

// A sweep unit's free text: the shipped build-auto script writes a fresh
// spec named after the first item's id, then the fix, and commits.
func TestBuildAutoScriptFollowsASweepDispatch(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := skillPath("<command-args>Fix deferred review findings dw-0a1b2c3d, dw-99999999 (listed below)</command-args>\nDeferred findings from the review of the spec x\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	spec := "/p/_bmad-output/implementation-artifacts/spec-fix-dw-0a1b2c3d.md"
	r := b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.WritePath != spec || !strings.Contains(r.Call.WriteContent, "status: 'draft'") {
		t.Fatalf("the draft: %+v", r)
	}
	for _, out := range []string{"written", "0123456789012345678901234567890123456789\n", "written"} {
		msgs = append(msgs, result(out)...)
	}
	if r = b.Respond(conv(msgs...)); r.Call == nil || !strings.Contains(r.Call.WriteContent, "name.strip()") {
		t.Fatalf("the fix: %+v", r)
	}
	for _, out := range []string{"written", "written", "GREETING TEST PASSED\n", "REVIEW VERDICT: clean (greet and its test agree)", "written"} {
		msgs = append(msgs, result(out)...)
	}
	c := conv(msgs...)
	c.Tools = append(c.Tools, "Agent")
	if r = b.Respond(c); r.Call == nil || !strings.Contains(r.Call.Shell, `-m "fix-dw-0a1b2c3d: greet trims the name`) {
		t.Fatalf("the commit: %+v", r)
	}
}

// An action unit's free text: the shipped build-auto script writes a fresh
// spec named after the item, then the work, and commits.
func TestBuildAutoScriptFollowsAnActionItemDispatch(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := skillPath("<command-args>Carry out retrospective action item epic-1-retro-item-1-add-error-handling-to-the-sign-up-form: Add error handling to the sign-up form</command-args>\n" +
		"Action item of the retrospective x (epic 1):\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	r := b.Respond(conv(msgs...))
	if r.Call == nil || r.Call.WritePath != "/p/_bmad-output/implementation-artifacts/spec-action-epic-1-retro-item-1.md" ||
		!strings.Contains(r.Call.WriteContent, "status: 'draft'") || !strings.Contains(r.Call.WriteContent, "title: 'Add error handling to the sign-up form'") {
		t.Fatalf("the draft: %+v", r)
	}
	for _, out := range []string{"written", "0123456789012345678901234567890123456789\n", "written"} {
		msgs = append(msgs, result(out)...)
	}
	if r = b.Respond(conv(msgs...)); r.Call == nil || !strings.Contains(r.Call.WriteContent, "raise ValueError") {
		t.Fatalf("the work: %+v", r)
	}
	for _, out := range []string{"written", "written", "GREETING TEST PASSED\n", "REVIEW VERDICT: clean (greet and its test agree)", "written"} {
		msgs = append(msgs, result(out)...)
	}
	c := conv(msgs...)
	c.Tools = append(c.Tools, "Agent")
	if r = b.Respond(c); r.Call == nil || !strings.Contains(r.Call.Shell, `-m "action-epic-1-retro-item-1: greet refuses an empty name`) {
		t.Fatalf("the commit: %+v", r)
	}
}

// A sprint key whose story's review finds an intent gap: the shipped
// build-auto script implements it, then saves the change as a patch,
// reverts it and blocks the spec naming the patch; dispatched by that
// spec's path once a person restored the change, it reviews without
// implementing again and takes the spec to done.
func TestBuildAutoScriptIntentGapAtReviewThenRestoredReview(t *testing.T) {
	b := &Brain{Script: script(t, BuildAutoScript)}
	msgs := skillPath("<command-args>1-1-sign-up-intent-gap-at-review</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	art := "/p/_bmad-output/implementation-artifacts"
	for _, out := range []string{"written", "0123456789012345678901234567890123456789\n", "written", "written", "written"} {
		msgs = append(msgs, result(out)...)
	}
	r := b.Respond(conv(append(msgs, result("GREETING TEST PASSED\n")...)...))
	if r.Call == nil || !strings.Contains(r.Call.Shell, `git diff -- src tests > "`+art+`/intent-gap-1-1-sign-up-intent-gap-at-review.patch"`) ||
		!strings.Contains(r.Call.Shell, "git clean -fdq -- src tests") {
		t.Fatalf("the patch and the revert: %+v", r)
	}
	msgs = append(msgs, result("GREETING TEST PASSED\n")...)
	r = b.Respond(conv(append(msgs, result("CHANGE REVERTED\n")...)...))
	if r.Call == nil || r.Call.WritePath != art+"/spec-1-1-sign-up-intent-gap-at-review.md" || !strings.Contains(r.Call.WriteContent, "status: 'blocked'") ||
		!strings.Contains(r.Call.WriteContent, "Blocking condition: intent gap\n") ||
		!strings.Contains(r.Call.WriteContent, "Attempted change saved as `"+art+"/intent-gap-1-1-sign-up-intent-gap-at-review.patch`") {
		t.Fatalf("the blocked spec: %+v", r)
	}

	rel := "_bmad-output/implementation-artifacts/spec-1-1-sign-up-intent-gap-at-review.md"
	msgs = skillPath("<command-args>" + rel + "</command-args>\nBase directory for this skill: /p/.claude/skills/bmad-build-auto\n")
	if r = b.Respond(conv(msgs...)); r.Call == nil || r.Call.Shell != `cat "`+rel+`"` {
		t.Fatalf("the spec's read: %+v", r)
	}
	if r = b.Respond(conv(append(msgs, result("---\nstatus: draft\n---\n")...)...)); r.Call != nil || !strings.Contains(r.Text, "no inreview") {
		t.Fatalf("a draft spec: %+v", r)
	}
	msgs = append(msgs, result("---\nstatus: in-review\n---\n")...)
	if r = b.Respond(conv(msgs...)); r.Call == nil || r.Call.Shell != "python3 -B tests/test_greeting.py" {
		t.Fatalf("the restored code's test: %+v", r)
	}
	msgs = append(msgs, result("GREETING TEST PASSED\n")...)
	c := conv(append(msgs, result("REVIEW VERDICT: clean (greet and its test agree)")...)...)
	c.Tools = append(c.Tools, "Agent")
	if r = b.Respond(c); r.Call == nil || !strings.Contains(r.Call.Shell, "status: 'done'") {
		t.Fatalf("done: %+v", r)
	}
}
