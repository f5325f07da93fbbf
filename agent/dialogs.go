package agent

import "strings"

// Dialog kinds a child can stop at before it does any work.
const (
	DialogTrustFolder       = "trust_folder"
	DialogBypassPermissions = "bypass_permissions"
	DialogAPIKey            = "api_key"
	DialogOnboarding        = "onboarding"
	DialogUnknownPrompt     = "unknown_prompt"
	// DialogRunAsRoot: the CLI refuses to run unattended as root.
	DialogRunAsRoot = "run_as_root"
	// DialogAuthMethod: the CLI has no way to sign in and refuses to start.
	DialogAuthMethod = "auth_method"
)

// Dialog is a screen (or an exit) of an agent CLI that waits for a person:
// the child makes no progress until the user settles it, so a run does not
// retry such a step but stops and says what to do.
type Dialog struct {
	Kind string `json:"dialog"`
	// Needles all appear on the screen when the dialog is up (real captures
	// of the pinned CLI are kept under monitor/testdata/dialogs).
	Needles []string `json:"-"`
	// Action is the one thing the user must do.
	Action string `json:"action"`
	// OnExit: the needles are looked for in the last output of a child that
	// exited non-zero (a CLI that refuses to start), not on a live screen.
	OnExit bool `json:"-"`
	// Accept, when set, is how the tool may answer this dialog itself. Only a
	// dialog whose acceptance is the user's evident and safe intent has one
	// (trusting the project folder the user started the tool in), and it is
	// used only when the user asked for it (run/session spawn --trust-project).
	Accept *DialogAnswer `json:"-"`
}

// DialogAnswer is how a dialog is answered on screen: the keys that move its
// selection, the line that must then be on screen (so a changed dialog is
// never answered blind), and the key that confirms.
type DialogAnswer struct {
	Select   []string
	Selected string
	Confirm  string
}

// Acceptable dialog kinds: the only ones a flag may answer.
var acceptableKinds = map[string]bool{DialogTrustFolder: true}

// AcceptableKind reports whether the user may let the tool answer a dialog kind.
func AcceptableKind(kind string) bool { return acceptableKinds[kind] }

// claudeDialogs are Claude Code 2.1.x's first-run screens, most specific first.
var claudeDialogs = []Dialog{
	{Kind: DialogTrustFolder, Needles: []string{"Accessing workspace", "Yes, I trust this folder"},
		Action: "open the project once with `claude` in a terminal and answer \"Yes, I trust this folder\", or let story-automator answer it for the project folder: `run --trust-project` (`session spawn --trust-project`)",
		// Claude Code 2.1.328 lists "No, exit" first, selected; one Down selects Yes.
		Accept: &DialogAnswer{Select: []string{"Down"}, Selected: "❯ Yes, I trust this folder", Confirm: "Enter"}},
	{Kind: DialogBypassPermissions, Needles: []string{"Bypass Permissions mode", "Yes, I accept"},
		Action: "run `claude --dangerously-skip-permissions` once in a terminal and accept the Bypass Permissions warning (only on a machine where that is safe); story-automator never accepts it for you"},
	{Kind: DialogAPIKey, Needles: []string{"Detected a custom API key", "Do you want to use this API key?"},
		Action: "run `claude` once in a terminal with the same ANTHROPIC_API_KEY and answer Yes to \"Do you want to use this API key?\"; story-automator never approves a key for you"},
	{Kind: DialogOnboarding, Needles: []string{"Let's get started", "Choose the text style"},
		Action: "run `claude` once in a terminal to finish its first-run setup (theme, login)"},
	// As root, 2.1.328 prints this and exits 1 unless IS_SANDBOX=1 (Profile.RootEnv).
	{Kind: DialogRunAsRoot, Needles: []string{"--dangerously-skip-permissions cannot be used with root/sudo privileges"}, OnExit: true,
		Action: "run story-automator as a user other than root; or, only on a disposable sandbox machine, set IS_SANDBOX=1 in the environment you run it in (Claude Code refuses --dangerously-skip-permissions as root otherwise)"},
	{Kind: DialogUnknownPrompt, Needles: []string{"Enter to confirm · Esc to cancel"},
		Action: "attach to the session (`story-automator session attach NAME`), read the question the agent asks, and settle it in the agent itself"},
}

// MatchDialog returns the first of the live-screen dialogs whose needles
// all appear on screen.
func MatchDialog(dialogs []Dialog, screen string) (Dialog, bool) {
	return matchDialog(dialogs, screen, false)
}

// MatchExitDialog returns the first of the refusals (OnExit dialogs) whose
// needles all appear in the last output of a child that exited non-zero.
func MatchExitDialog(dialogs []Dialog, output string) (Dialog, bool) {
	return matchDialog(dialogs, output, true)
}

func matchDialog(dialogs []Dialog, screen string, onExit bool) (Dialog, bool) {
	for _, d := range dialogs {
		if d.OnExit != onExit {
			continue
		}
		all := len(d.Needles) > 0
		for _, n := range d.Needles {
			if !strings.Contains(screen, n) {
				all = false
				break
			}
		}
		if all {
			return d, true
		}
	}
	return Dialog{}, false
}

// geminiDialogs are Gemini CLI 0.61's refusals of a headless (-p) start.
var geminiDialogs = []Dialog{
	// With no auth chosen and no key in the environment, -p prints this and exits 41.
	{Kind: DialogAuthMethod, Needles: []string{"Please set an Auth method", "GEMINI_API_KEY"}, OnExit: true, Action: geminiAuthAction},
	// With a settings.json that chooses no usable auth type, it says this and exits 41.
	{Kind: DialogAuthMethod, Needles: []string{"Invalid auth method selected."}, OnExit: true, Action: geminiAuthAction},
}

const geminiAuthAction = "give Gemini CLI a way to sign in: set GEMINI_API_KEY in the environment story-automator runs in (with security.auth.selectedType \"gemini-api-key\" in ~/.gemini/settings.json), or run `gemini` once in a terminal and choose a sign-in"

// geminiUntrusted is Gemini CLI 0.61's refusal to run headless in a folder it
// does not trust: exit 55, "not running in a trusted directory".
var geminiUntrusted = Dialog{Kind: DialogTrustFolder,
	Action: "trust the project folder in Gemini CLI: run `gemini` in it once and trust it, start the run with --trust-project, or set GEMINI_CLI_TRUST_WORKSPACE=true in the environment story-automator runs in"}

// AcceptedDialogs are the kinds of p's dialogs the tool answers itself when
// the user asked it to trust the project: those with an on-screen answer.
func (p Profile) AcceptedDialogs() []string {
	var kinds []string
	for _, d := range p.Dialogs {
		if d.Accept != nil && AcceptableKind(d.Kind) {
			kinds = append(kinds, d.Kind)
		}
	}
	return kinds
}

// copilotDialogs are GitHub Copilot CLI 1.0.102's refusals of a -p start
// it cannot sign in for: each prints one of these and exits 1 at once.
var copilotDialogs = []Dialog{
	{Kind: DialogAuthMethod, Needles: []string{"Error: No authentication information found."}, OnExit: true, Action: copilotAuthAction},
	// COPILOT_OFFLINE=true without a provider of its own.
	{Kind: DialogAuthMethod, Needles: []string{"Offline mode requires a local model provider."}, OnExit: true, Action: copilotAuthAction},
	// A provider of its own (COPILOT_PROVIDER_BASE_URL) without COPILOT_MODEL.
	{Kind: DialogAuthMethod, Needles: []string{"BYOK providers require an explicit model."}, OnExit: true,
		Action: "name the model GitHub Copilot CLI asks your provider for: set COPILOT_MODEL in the environment story-automator runs in (or pass --model)"},
}

const copilotAuthAction = "give GitHub Copilot CLI a way to sign in: run `copilot` once in a terminal and /login, or set COPILOT_GITHUB_TOKEN (or GH_TOKEN) in the environment story-automator runs in; for a provider of your own, COPILOT_PROVIDER_BASE_URL with COPILOT_MODEL (and COPILOT_OFFLINE=true for no GitHub at all)"
