package modelsim

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
	"go.yaml.in/yaml/v3"
)

// Script tells the brain what to do, rule by rule. It is YAML (or JSON,
// which is YAML too):
//
//	usage: {input: 1200, output: 60, cacheRead: 300, cacheWrite: 40}  # every response's figures
//	builtin: true        # when no rule matches, fall back to the built-in brain (default true)
//	rules:
//	  - match: "tick"    # substring of the latest user text (the prompt, or a Stop hook's feedback)
//	    regexp: "..."    # or a Go regexp (both must match when both are given)
//	    nth: 3           # only the 3rd user turn of the conversation this rule matches (0 = every)
//	    protocol: anthropic|openai|gemini   # only for this protocol
//	    usage: {input: 10, output: 5}       # figures for this turn's responses
//	    actions:         # done in order, one tool call per response
//	      - shell: "echo tick >> ticks.txt"
//	      - write: {path: notes.txt, content: "hello\n"}
//	      - read: notes.txt  # the CLI's file tool (Read, read_file), else cat in its shell
//	      - skill: my-skill  # load an installed skill through the CLI's skill tool (activate_skill, skill);
//	                         # passed over where the CLI put the skill in the turn itself (/skill, $skill)
//	      - subagent: "prompt"   # launch a blocking subagent with the CLI's tool (Agent, invoke_agent, spawn_agent+wait_agent, task)
//	      - step: true   # the story-automator step's work (agent-sim --behaviour bmad)
//	      - delay: 2s    # wait before the next response
//	      - reply: "Done.\nSTORY_AUTOMATOR_COMPLETE"   # the turn's final text
//	      - fault: crash|hang|error   # kill the agent process / never answer / HTTP 500
//	      - fault: escape             # a hostile model: try to reach past the sandbox, then do the step
//	    capture: {skill: 'Base directory for this skill: (\S+)'}   # values read off the user's turns
//	    # a shell, write or read action may capture from its own tool output too
//	    # (capture: {root: '(?m)^(/\S*)$'}); a rule with any capture expands
//	    # {{.name}} in its actions' strings (Go text/template)
//	escape: {loopback: "127.0.0.1:9", outside: "192.0.2.1:80", tag: "sa-escape", fetch: "http://127.0.0.1:9/"}   # its targets
//	limit: {after: 2, for: 150s, kind: usage}   # see Limit: refuse every request for a time
//
// Rules are tried in order; the first that matches plans the turn.
type Script struct {
	Usage   *Usage  `yaml:"usage"`
	Builtin *bool   `yaml:"builtin"`
	Rules   []Rule  `yaml:"rules"`
	Escape  *Escape `yaml:"escape"`
	// Limit, when set, refuses requests for a time as the API does at a
	// usage limit, rate limit or fault.
	Limit *Limit `yaml:"limit"`
}

// Rule plans a user turn whose text it matches.
type Rule struct {
	Match  string `yaml:"match"`
	Regexp string `yaml:"regexp"`
	Nth    int    `yaml:"nth"`
	// AnyTurn matches the pattern against every user turn so far, not only
	// the latest: a CLI that sends an invoked skill's text as a turn of its
	// own (Codex-style <skill>) has the prompt in the turn before.
	AnyTurn  bool     `yaml:"anyTurn"`
	Protocol string   `yaml:"protocol"`
	Usage    *Usage   `yaml:"usage"`
	Actions  []Action `yaml:"actions"`
	// Capture names values read off the conversation's user turns (the
	// latest turn that matches, see capture.go); a rule with any capture
	// expands {{.name}} in its actions.
	Capture map[string]string `yaml:"capture"`

	re       *regexp.Regexp
	captures captures
	// templated: the rule or one of its actions captures.
	templated bool
}

// Action is one thing the model does in a turn; exactly one field is set.
type Action struct {
	Shell string `yaml:"shell"`
	// Background runs the shell command as the CLI's background task where
	// its shell tool has one (Claude Code's Bash run_in_background).
	Background bool         `yaml:"background"`
	Write      *WriteAction `yaml:"write"`
	// Read reads a file through the CLI's file tool where it has one
	// (Claude Code's Read for an absolute path, Gemini CLI's read_file),
	// else its shell (cat).
	Read string `yaml:"read"`
	// Skill loads the installed skill of that name through the CLI's skill
	// tool, where the CLI loads skills on the model's request (Gemini CLI's
	// activate_skill, GitHub Copilot CLI's and OpenCode's skill: the tool's
	// output is the skill's text and its folder). A CLI that put the skill's text in the user's turn itself
	// (Claude Code's /skill, Codex's $skill) offers no such tool: there the
	// action makes no call, and its capture reads the user's turns.
	Skill string `yaml:"skill"`
	// Subagent launches a subagent with this prompt through the CLI's
	// subagent tool, whose call returns the subagent's result (Claude
	// Code's Agent, Gemini CLI's invoke_agent, GitHub Copilot CLI's task in
	// mode sync, OpenCode's task), or, Codex, through
	// spawn_agent and then wait_agent, which blocks until the subagent is
	// done; the subagent's own requests come to model-sim like any other
	// conversation.
	Subagent string        `yaml:"subagent"`
	Step     bool          `yaml:"step"`
	Delay    time.Duration `yaml:"delay"`
	Reply    string        `yaml:"reply"`
	Fault    string        `yaml:"fault"`
	// Capture names values read off this action's tool output, for the
	// actions after it.
	Capture map[string]string `yaml:"capture"`

	captures captures
}

// WriteAction writes a file through the agent's tools.
type WriteAction struct {
	Path    string `yaml:"path"`
	Content string `yaml:"content"`
}

// Faults a script can act out.
const (
	// FaultCrash has the agent run a shell command that kills the agent's own process.
	FaultCrash = "crash"
	// FaultHang never answers the request.
	FaultHang = "hang"
	// FaultError answers with an HTTP 500 in the protocol's error shape.
	FaultError = "error"
	// FaultEscape acts out a hostile model (escape.go): the agent's shell
	// tries to write outside the project, to HOME and /tmp and to connect
	// to a loopback port and an outside address, then tries again asking
	// for the CLI's unsandboxed escape hatch, then does the step's work.
	FaultEscape = "escape"
)

// LoadScript reads and checks a script file; its failures are coded
// model_sim_script (internal/coded).
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, coded.Wrap("model_sim_script", fmt.Errorf("read script: %w", err))
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, coded.Wrap("model_sim_script", fmt.Errorf("script %s: %w", path, err))
	}
	return s, nil
}

// ParseScript parses and checks a script.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if s.Limit != nil {
		if err := s.Limit.check(); err != nil {
			return nil, err
		}
	}
	if e := s.Escape; e != nil && e.Tag != "" && !safeTag(e.Tag) {
		return nil, fmt.Errorf("escape.tag %q: use letters, digits, '.', '_' and '-'", e.Tag)
	}
	for i := range s.Rules {
		if err := s.Rules[i].check(); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	return &s, nil
}

func (r *Rule) check() error {
	if r.Regexp != "" {
		re, err := regexp.Compile(r.Regexp)
		if err != nil {
			return fmt.Errorf("regexp: %w", err)
		}
		r.re = re
	}
	switch r.Protocol {
	case "", ProtocolAnthropic, ProtocolOpenAI, ProtocolGemini:
	default:
		return fmt.Errorf("unknown protocol %q (anthropic, openai, gemini)", r.Protocol)
	}
	if r.Nth < 0 {
		return fmt.Errorf("nth %d is negative", r.Nth)
	}
	if len(r.Actions) == 0 {
		return fmt.Errorf("no actions")
	}
	var err error
	if r.captures, err = compileCaptures(r.Capture); err != nil {
		return err
	}
	r.templated = len(r.captures) > 0
	for j := range r.Actions {
		a := &r.Actions[j]
		if err := a.check(); err != nil {
			return fmt.Errorf("action %d: %w", j+1, err)
		}
		if a.captures, err = compileCaptures(a.Capture); err != nil {
			return fmt.Errorf("action %d: %w", j+1, err)
		}
		if len(a.captures) > 0 {
			if a.Shell == "" && a.Write == nil && a.Read == "" && a.Skill == "" && a.Subagent == "" {
				return fmt.Errorf("action %d: only a shell, write, read, skill or subagent action captures its output", j+1)
			}
			r.templated = true
		}
	}
	if r.templated {
		for j, a := range r.Actions {
			if err := a.checkTemplates(); err != nil {
				return fmt.Errorf("action %d: %w", j+1, err)
			}
		}
	}
	return nil
}

func (a Action) check() error {
	set := 0
	for _, on := range []bool{a.Shell != "", a.Write != nil, a.Read != "", a.Skill != "", a.Subagent != "", a.Step, a.Delay != 0, a.Reply != "", a.Fault != ""} {
		if on {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("want exactly one of shell, write, read, skill, subagent, step, delay, reply, fault")
	}
	if a.Write != nil && a.Write.Path == "" {
		return fmt.Errorf("write needs a path")
	}
	if a.Delay < 0 {
		return fmt.Errorf("negative delay")
	}
	switch a.Fault {
	case "", FaultCrash, FaultHang, FaultError, FaultEscape:
	default:
		return fmt.Errorf("unknown fault %q (crash, hang, error, escape)", a.Fault)
	}
	return nil
}

// matches reports whether the rule's pattern matches text.
func (r *Rule) matches(text string) bool {
	if r.Match == "" && r.re == nil {
		return true
	}
	return (r.Match == "" || strings.Contains(text, r.Match)) && (r.re == nil || r.re.MatchString(text))
}

// applies reports whether the rule plans the latest of texts (every user
// turn so far) in a conversation of protocol.
func (r *Rule) applies(protocol string, texts []string) bool {
	if len(texts) == 0 || (r.Protocol != "" && r.Protocol != protocol) {
		return false
	}
	if r.AnyTurn {
		if !slices.ContainsFunc(texts, r.matches) {
			return false
		}
	} else if !r.matches(texts[len(texts)-1]) {
		return false
	}
	if r.Nth == 0 {
		return true
	}
	n := 0
	for _, t := range texts {
		if r.matches(t) {
			n++
		}
	}
	return n == r.Nth
}

func safeTag(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != "." && s != ".."
}
