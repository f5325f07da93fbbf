package hooks

import (
	"context"

	"github.com/story-automator/story-automator/agent"
)

// What the profile table says of a provider, for the steps and messages
// that differ by CLI: each is read from its Facts, never from its name.

// trustOf names the trust step provider p's CLI needs before it runs an
// installed hook (agent.HookTrustTOMLHash), "" when it runs any.
func trustOf(p Provider) string {
	prof, _ := facts(p)
	return prof.HookTrust
}

// productOf is the name a user knows provider p's CLI by.
func productOf(p Provider) string {
	prof, _ := facts(p)
	return prof.Product
}

// programOf is the executable of provider p's CLI.
func programOf(p Provider) string {
	prof, _ := facts(p)
	return prof.Program
}

// trustField is the JSON field holding the config.toml trust report, in
// install's output as in status's (Status.Codex).
const trustField = "codex" // not an agent name: a field of the contract's JSON

// Lister is what asks provider p's CLI for the hooks it sees: its own
// app-server, run with environ (nil: ours).
func Lister(p Provider, environ []string) CodexLister {
	return CodexAppServer{Program: programOf(p), Env: environ}
}

// lister is e's Lister, or else provider p's app-server.
func (e Env) lister(p Provider) CodexLister {
	if e.Lister != nil {
		return e.Lister
	}
	return Lister(p, nil)
}

// InspectTrust reports whether the CLI will run our entries of the settings
// file at loc, for a provider with a trust step; ok is false for one
// without, or when its trust cannot be located.
func InspectTrust(ctx context.Context, loc Location, h Hook, getenv func(string) string, lister CodexLister, cwd string) (st CodexHookStatus, ok bool) {
	if trustOf(loc.Provider) != agent.HookTrustTOMLHash {
		return st, false
	}
	cfg, err := CodexConfigPath(loc.Provider, getenv)
	if err != nil {
		return st, false
	}
	return InspectCodex(ctx, loc, h, cfg, lister, cwd), true
}

// DefaultProvider is the provider `hooks install` targets when none is
// named: the default agent, when it takes the hook, else the first provider.
func DefaultProvider() string {
	if _, ok := facts(Provider(agent.DefaultAgent())); ok {
		return agent.DefaultAgent()
	}
	if ps := agent.HookProviders(); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// ProviderUsage names the providers for --provider's help, each whose hook
// is not a Stop hook with its event: "a, b or c (its AfterAgent hook)".
func ProviderUsage() string {
	var names []string
	for _, p := range Providers() {
		n := string(p)
		if ev := (Hook{}).For(p).Event; ev != EventStop {
			n += " (its " + ev + " hook)"
		}
		names = append(names, n)
	}
	return agent.OrList(names)
}
