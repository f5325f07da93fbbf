package hooks

import (
	"github.com/story-automator/story-automator/agent"
)

// Status is what one settings file says about our Stop hook.
type Status struct {
	Location
	// Event is the hook event our entry is looked for under (Stop, AfterAgent).
	Event  string `json:"event"`
	Exists bool   `json:"exists"`
	// Installed is true when at least one entry of ours is present.
	Installed bool    `json:"installed"`
	Entries   []Entry `json:"entries"`
	// Command is the first entry's command, empty when not installed.
	Command string `json:"command,omitempty"`
	// BinaryExists is true when the first entry's program is found on disk.
	BinaryExists bool `json:"binaryExists"`
	// Stale is true when an entry differs from what install would write now.
	Stale bool `json:"stale"`
	// Duplicated is true when there is more than one entry of ours.
	Duplicated bool `json:"duplicated"`
	// Codex says whether the CLI will run the hook, for a provider whose
	// hooks need the config.toml trust (Codex's).
	Codex *CodexHookStatus `json:"codex,omitempty"`
	// Off says why the agent would not run the hook although it is
	// installed (the hooks-config switches: Gemini CLI's hooksConfig turns
	// hooks or this one off).
	Off string `json:"off,omitempty"`
	// Error is the code of a problem reading the file, empty when it read fine.
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// Inspect reports our Stop hook in the settings file at loc, comparing it with
// h (what install would write) and looking the program up via getenv("PATH").
func Inspect(loc Location, h Hook, getenv func(string) string) Status {
	st := Status{Location: loc, Event: h.event(), Entries: []Entry{}}
	l, err := load(loc.Path)
	st.Exists = l.exists
	if err == nil {
		st.Entries, err = findOurs(l.doc, h)
	}
	if st.Entries == nil {
		st.Entries = []Entry{}
	}
	if err != nil {
		st.Error, st.Message = Code(err), err.Error()
		return st
	}
	st.Installed = len(st.Entries) > 0
	st.Duplicated = len(st.Entries) > 1
	for _, e := range st.Entries {
		if !e.Current {
			st.Stale = true
		}
	}
	if st.Installed {
		st.Command = st.Entries[0].Command
		st.BinaryExists = ProgramExists(st.Entries[0].Program, getenv)
	}
	if prof, _ := facts(loc.Provider); prof.HookSwitches == agent.HookSwitchesConfig {
		st.Off = hooksConfigOff(l.doc, st.Command, prof.Product)
	}
	return st
}

// hooksConfigOff reads the hooks-config switches (Gemini CLI's) in one
// settings file: hooksConfig.enabled false runs no hook at all (whichever
// file holds the hook), and hooksConfig.disabled lists hooks by name or
// command; product is the CLI's name.
func hooksConfigOff(doc *Object, command, product string) string {
	cv, ok := doc.Get("hooksConfig")
	cfg, isObj := cv.(*Object)
	if !ok || !isObj {
		return ""
	}
	if v, ok := cfg.Get("enabled"); ok && v == false {
		return "hooksConfig.enabled is false: " + product + " runs no hooks"
	}
	dv, _ := cfg.Get("disabled")
	list, _ := dv.([]any)
	for _, d := range list {
		if command != "" && d == command {
			return "hooksConfig.disabled lists this hook: " + product + " skips it"
		}
	}
	return ""
}
