package modelsim

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// Brain decides every reply. It keeps no state between requests: what to do
// next follows from the conversation the CLI sends (the latest user turn and
// the tool calls made since), so parallel sessions and retried requests get
// consistent answers.
type Brain struct {
	// Script, when set, plans turns before the built-in behaviour.
	Script *Script
	// Exe is the story-automator binary an agent runs for a step
	// (`Exe agent-sim --behaviour bmad`).
	Exe string
}

// Respond answers one request.
func (b *Brain) Respond(c *Conversation) Reply {
	usage := DefaultUsage
	if b.Script != nil && b.Script.Usage != nil {
		usage = *b.Script.Usage
	}
	if c.Side {
		return Reply{Text: sideAnswer(c), Usage: usage}
	}
	idx, text, done, _ := c.turn()
	actions, rule := b.plan(c, idx, text)
	if rule != nil && rule.Usage != nil {
		usage = *rule.Usage
	}
	var vars map[string]string
	if rule != nil && rule.templated {
		vars = map[string]string{}
		if missing := rule.captures.fromTurns(c.userTexts(idx), vars); missing != "" {
			return Reply{Text: captureFailed(missing, "the user's turns", text), Usage: usage}
		}
	}
	r := walk(actions, done, c.results(idx), b, vars,
		turnSkills{tool: skillTool(c), turns: c.userTexts(idx), subagent: subagentTool(c)})
	r.Usage = usage
	return r
}

// plan chooses the actions of the turn whose user text is text, and the
// script's rule that planned them (nil for the built-in behaviour).
func (b *Brain) plan(c *Conversation, idx int, text string) ([]Action, *Rule) {
	if b.Script != nil {
		texts := c.userTexts(idx)
		for i := range b.Script.Rules {
			if r := &b.Script.Rules[i]; r.applies(c.Protocol, texts) {
				return r.Actions, r
			}
		}
		if b.Script.Builtin != nil && !*b.Script.Builtin {
			return []Action{{Reply: DefaultReply}}, nil
		}
	}
	return builtinPlan(text), nil
}

// DefaultReply ends a turn the brain has no work for.
const DefaultReply = "Understood. (model-sim has no work scripted for this prompt.)"

// stepPrompt recognises a story-automator step prompt (create, dev,
// automate, review, retro all name the BMAD project they work on).
var stepPrompt = lazyre.New(`(?i)\bof a BMAD project at\b`)

// runCommand finds "run `CMD`" in a prompt: a loop prompt that asks for a
// command gets it run, as a model would.
var runCommand = lazyre.New("(?i)\\brun\\s+`([^`\\n]+)`")

func builtinPlan(text string) []Action {
	if stepPrompt().MatchString(text) {
		return []Action{{Step: true}}
	}
	if m := runCommand().FindStringSubmatch(text); m != nil {
		return []Action{{Shell: m[1]}}
	}
	return []Action{{Reply: DefaultReply}}
}

// step is the shell command that does a story-automator step's work: the
// simulated agent's BMAD behaviour reads the step and story from the
// STORY_AUTOMATOR_* variables the child's shell inherits. Its crash fault
// kills the agent CLI (the shell's parent), as a crashing agent would end.
func (b *Brain) step() string {
	exe := b.Exe
	if exe == "" {
		exe = "story-automator"
	}
	return shellArg(exe) + ` agent-sim --behaviour bmad --crash-kills "$PPID"`
}

// crashCommand kills the agent's process: the shell tool's parent.
const crashCommand = `kill -KILL "$PPID"`

// SkillTool is the tool with which Gemini CLI 0.61 loads an installed skill
// on the model's request; SkillToolNamed is GitHub Copilot CLI's and
// OpenCode's. A CLI without either expands a skill into the user's turn
// when the prompt names it (Claude Code's /skill, Codex's $skill).
const (
	SkillTool      = "activate_skill"
	SkillToolNamed = "skill"
)

// skillTool is the conversation's skill tool, "" = none.
func skillTool(c *Conversation) string {
	for _, t := range []string{SkillTool, SkillToolNamed} {
		if c.HasTool(t) {
			return t
		}
	}
	return ""
}

// turnSkills is how the conversation at hand loads skills: through the
// skill tool ("" = none), or already in the user's turns.
type turnSkills struct {
	tool  string
	turns []string
	// subagent is the CLI's subagent tool ("" = none model-sim speaks).
	subagent string
}

// subagentTools are the tools with which a CLI's model launches a subagent,
// in the order model-sim prefers them: Claude Code's Agent (Task before
// 2.1) and Gemini CLI's invoke_agent, which return its result in the same
// call, and Codex's spawn_agent, which returns at once: a wait_agent call
// (spawnWaits) then blocks until the subagent is done; last "task", GitHub
// Copilot CLI's (told mode "sync") and OpenCode's, which return the
// subagent's result too.
var subagentTools = []string{"Agent", "Task", "invoke_agent", codexSpawn, TaskTool}

// TaskTool is GitHub Copilot CLI's and OpenCode's subagent tool.
const TaskTool = "task"

// codexSpawn is Codex's launch tool, which spawnWaits pairs with its wait.
const codexSpawn = "spawn_agent"

// spawnWaits is a launch through a tool that does not wait: the launch, then
// the wait for it.
func spawnWaits(tool, prompt string) []*Call {
	if tool == codexSpawn {
		return []*Call{{Subagent: prompt}, {WaitAgent: true}}
	}
	return []*Call{{Subagent: prompt}}
}

// subagentTool is the conversation's subagent tool, "" = none.
func subagentTool(c *Conversation) string {
	for _, t := range subagentTools {
		if c.HasTool(t) {
			return t
		}
	}
	return ""
}

// walk finds the response for the request that follows `done` tool calls in
// this turn (whose outputs are results): the next call, or the final text
// once every call is made. With vars (a rule that captures), each action's
// templates are filled from what was captured before it.
func walk(actions []Action, done int, results []string, b *Brain, vars map[string]string, skills turnSkills) Reply {
	var r Reply
	var text []string
	calls := 0
	ran := false
	lastResult := ""
	if len(results) > 0 {
		lastResult = results[len(results)-1]
	}
	for _, a := range actions {
		if vars != nil {
			var err error
			if a, err = a.expanded(vars); err != nil {
				return Reply{Text: "model-sim: " + err.Error()}
			}
		}
		var planned []*Call
		switch {
		case a.Delay > 0:
			r.Delay += a.Delay
		case a.Reply != "":
			text = append(text, a.Reply)
		case a.Fault == FaultHang:
			if calls == done {
				return Reply{Hang: true}
			}
		case a.Fault == FaultError:
			if calls == done {
				return Reply{ErrorStatus: 500, Delay: r.Delay}
			}
		case a.Fault == FaultCrash:
			planned = []*Call{{Shell: crashCommand}}
		case a.Fault == FaultEscape:
			planned = append(b.escapeCalls(), &Call{Shell: b.step()})
		case a.Step:
			planned = []*Call{{Shell: b.step()}}
		case a.Shell != "":
			planned = []*Call{{Shell: a.Shell, Background: a.Background}}
		case a.Write != nil:
			planned = []*Call{{WritePath: a.Write.Path, WriteContent: a.Write.Content}}
		case a.Read != "":
			planned = []*Call{{ReadPath: a.Read}}
		case a.Subagent != "" && skills.subagent == "":
			if calls == done {
				return Reply{Text: "model-sim: this CLI offers no subagent tool model-sim speaks (" + strings.Join(subagentTools, ", ") + ")"}
			}
		case a.Subagent != "":
			planned = spawnWaits(skills.subagent, a.Subagent)
		case a.Skill != "" && skills.tool != "":
			planned = []*Call{{Skill: a.Skill}}
		case a.Skill != "":
			// The CLI put the skill in the turn: no call to make.
			if vars != nil && len(a.captures) > 0 {
				if missing := a.captures.fromTurns(skills.turns, vars); missing != "" {
					return Reply{Text: captureFailed(missing, "the user's turns", strings.Join(skills.turns, "\n"))}
				}
			}
		}
		for i, call := range planned {
			ran = true
			if calls == done {
				r.Call, r.Text = call, strings.Join(text, "\n")
				return r
			}
			// An action's captures read the output of its last call.
			if vars != nil && len(a.captures) > 0 && i == len(planned)-1 {
				out := ""
				if calls < len(results) {
					out = results[calls]
				}
				if missing := a.captures.fromResult(out, vars); missing != "" {
					return Reply{Text: captureFailed(missing, fmt.Sprintf("the output of call %d", calls+1), out)}
				}
			}
			calls++
			r.Delay, text = 0, nil
		}
	}
	r.Text = strings.Join(text, "\n")
	if r.Text == "" {
		r.Text = finalText(ran, lastResult)
	}
	return r
}

// finalText is the turn's last words when the script gave none.
func finalText(ran bool, lastResult string) string {
	if !ran {
		return DefaultReply
	}
	last := lastLine(lastResult)
	if last == "" {
		return "Done."
	}
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return "Done. The command said: " + last
}

// lastLine is the last line of a tool's output that the command printed,
// past the frame each CLI puts around it: labels ("Output:"), wrapper tags
// (Gemini's <untrusted_context>), and the CLIs' own bookkeeping lines.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !toolFrame(l) {
			return l
		}
	}
	return ""
}

// frameLines start the lines a CLI adds around a command's output.
var frameLines = []string{"Process Group PGID:", "Chunk ID:", "Wall time", "Original token count:",
	"Process exited with code", "Output: (empty)", "Script completed"}

func toolFrame(l string) bool {
	if strings.HasSuffix(l, ":") || (strings.HasPrefix(l, "<") && strings.HasSuffix(l, ">") && !strings.Contains(l, " ")) {
		return true
	}
	for _, p := range frameLines {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// sideAnswer answers a request that is not the agent's turn: a JSON value
// that fits the schema when there is one, else a short title.
func sideAnswer(c *Conversation) string {
	if c.Schema != nil {
		return jsonFor(c.Schema)
	}
	return "model-sim session"
}
