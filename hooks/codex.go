package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/tomledit"
)

// The config-toml-hash trust step (agent.HookTrustTOMLHash), Codex's: the
// CLI keeps its feature switches and the trust of each hook in config.toml
// in its state directory ($CODEX_HOME, default ~/.codex). Hooks are on by default since the
// feature became stable ("features.hooks"); "features.codex_hooks" is the
// name it had before. A hook runs only once trusted: Codex stores, under
// [hooks.state."<hooks.json>:<event>:<group>:<handler>"], the trusted_hash of
// the handler it was shown, and skips (exec) or asks about (interactive) a
// hook whose current hash differs.

// ErrInvalidTOML is returned when config.toml does not parse; it is never written.
var ErrInvalidTOML = errors.New("config.toml is not valid TOML")

const (
	codexHooksFeature  = "hooks"
	codexLegacyFeature = "codex_hooks"
	codexStopEvent     = "stop" // the event's name in trust keys
)

// CodexConfigPath is the config.toml in the state directory of provider
// p's CLI under the environment getenv reads.
func CodexConfigPath(p Provider, getenv func(string) string) (string, error) {
	prof, _ := facts(p)
	return statePath(prof, "config.toml", getenv)
}

// CodexHook is one hook as Codex itself lists it.
type CodexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Enabled     bool   `json:"enabled"`
}

// Trusted reports whether Codex will run the hook without asking.
func (h CodexHook) Trusted() bool { return h.TrustStatus == "trusted" || h.TrustStatus == "managed" }

// CodexConfig is config.toml as read for an edit.
type CodexConfig struct {
	Path   string
	exists bool
	perm   fs.FileMode
	data   []byte
	doc    []byte
}

// LoadCodexConfig reads config.toml (a symlink is followed; a missing file is empty).
func LoadCodexConfig(path string) (*CodexConfig, error) {
	c := &CodexConfig{Path: path, perm: newFilePerm}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		c.Path = real
	}
	fi, err := os.Stat(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if c.data, err = os.ReadFile(c.Path); err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	c.exists, c.perm, c.doc = true, fi.Mode().Perm(), c.data
	if _, _, err := tomledit.Get(c.doc, nil); err != nil {
		return c, fmt.Errorf("%s: %w: %v", path, ErrInvalidTOML, err)
	}
	return c, nil
}

// HooksEnabled reports whether Codex runs hooks with this config: on unless
// features.hooks (or, without it, the legacy features.codex_hooks) is false.
func (c *CodexConfig) HooksEnabled() bool {
	for _, k := range []string{codexHooksFeature, codexLegacyFeature} {
		if v, ok, _ := tomledit.Get(c.doc, tomledit.Path{"features", k}); ok {
			b, isBool := v.(bool)
			return !isBool || b
		}
	}
	return true
}

// TrustedHash is the hash Codex trusts for the hook key, "" when none.
func (c *CodexConfig) TrustedHash(key string) string {
	v, _, _ := tomledit.Get(c.doc, trustPath(key))
	s, _ := v.(string)
	return s
}

func trustPath(key string) tomledit.Path {
	return tomledit.Path{"hooks", "state", key, "trusted_hash"}
}

// EnableHooks makes sure Codex runs hooks: the legacy key is renamed, and an
// explicit false is turned on (installing a hook asks for hooks to run).
func (c *CodexConfig) EnableHooks() ([]string, error) {
	var actions []string
	legacy, hasLegacy, _ := tomledit.Get(c.doc, tomledit.Path{"features", codexLegacyFeature})
	_, hasNew, _ := tomledit.Get(c.doc, tomledit.Path{"features", codexHooksFeature})
	if hasLegacy {
		doc, _, err := tomledit.Delete(c.doc, tomledit.Path{"features", codexLegacyFeature})
		if err != nil {
			return nil, fmt.Errorf("migrate features.%s: %w", codexLegacyFeature, err)
		}
		c.doc = doc
		actions = append(actions, "removed the legacy features."+codexLegacyFeature)
		if !hasNew {
			if b, ok := legacy.(bool); ok && !b {
				actions = append(actions, "hooks were off (features."+codexLegacyFeature+" = false): turned on")
			}
			if err := c.set(tomledit.Path{"features", codexHooksFeature}, tomledit.Bool(true)); err != nil {
				return nil, err
			}
			actions = append(actions, "set features."+codexHooksFeature+" = true")
			return actions, nil
		}
	}
	if !c.HooksEnabled() {
		if err := c.set(tomledit.Path{"features", codexHooksFeature}, tomledit.Bool(true)); err != nil {
			return nil, err
		}
		actions = append(actions, "hooks were off: set features."+codexHooksFeature+" = true")
	}
	return actions, nil
}

// Trust records hash as trusted for the hook key, as Codex's own review does.
func (c *CodexConfig) Trust(key, hash string) ([]string, error) {
	if c.TrustedHash(key) == hash {
		return nil, nil
	}
	if err := c.set(trustPath(key), tomledit.String(hash)); err != nil {
		return nil, err
	}
	return []string{"trusted " + key}, nil
}

// Forget removes the trust entry of key (and its table, once empty).
func (c *CodexConfig) Forget(key string) ([]string, error) {
	doc, ok, err := tomledit.Delete(c.doc, trustPath(key))
	if err != nil || !ok {
		return nil, err
	}
	if doc, _, err = tomledit.DeleteTable(doc, trustPath(key)[:3]); err != nil {
		return nil, err
	}
	if doc, _, err = tomledit.DeleteTable(doc, tomledit.Path{"hooks", "state"}); err != nil {
		return nil, err
	}
	c.doc = doc
	return []string{"forgot the trust of " + key}, nil
}

func (c *CodexConfig) set(p tomledit.Path, v string) error {
	doc, err := tomledit.Set(c.doc, p, v)
	if err != nil {
		return fmt.Errorf("%s: set %s: %w", c.Path, p, err)
	}
	c.doc = doc
	return nil
}

// Changed reports whether the config differs from what was read.
func (c *CodexConfig) Changed() bool { return string(c.doc) != string(c.data) }

// Content is the config as it stands.
func (c *CodexConfig) Content() []byte { return c.doc }

// Save writes the changed config atomically (keeping its mode), unless it
// changed on disk since it was read. It backs up nothing: every edit is a
// single value, and uninstall takes back exactly what install added.
func (c *CodexConfig) Save() error {
	if !c.Changed() {
		return nil
	}
	now, err := os.ReadFile(c.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", c.Path, err)
	}
	if string(now) != string(c.data) {
		return fmt.Errorf("%s: %w", c.Path, ErrChanged)
	}
	if !c.exists {
		if err := atomicfile.EnsureDir(filepath.Dir(c.Path), newDirPerm); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(c.Path, c.doc, c.perm); err != nil {
		return err
	}
	c.data, c.exists = c.doc, true
	return nil
}

// CodexHookKeys are the trust keys Codex gives our Stop-hook entries in the
// hooks.json at path: "<path>:stop:<group index>:<handler index>".
func CodexHookKeys(path string, h Hook) ([]string, error) {
	l, err := load(path)
	if err != nil {
		return nil, err
	}
	_, groups, err := stopGroups(l.doc, EventStop)
	if err != nil {
		return nil, err
	}
	var keys []string
	for gi, g := range groups {
		_, hooks, ok := groupHooks(g)
		if !ok {
			continue
		}
		for hi, e := range hooks {
			if _, cmd, ok := entryCommand(e); ok {
				if _, mine := ours(cmd, h); mine {
					keys = append(keys, CodexHookKey(path, gi, hi))
				}
			}
		}
	}
	return keys, nil
}

// CodexHookKey is Codex's trust key of a Stop handler in a hooks.json.
func CodexHookKey(path string, group, handler int) string {
	return strings.Join([]string{path, codexStopEvent, strconv.Itoa(group), strconv.Itoa(handler)}, ":")
}

// CodexSetup is what install did so that Codex runs our hook, or what the
// user still has to do.
type CodexSetup struct {
	ConfigFile   string   `json:"configFile"`
	Actions      []string `json:"actions"`
	HooksEnabled bool     `json:"hooksEnabled"`
	// Trusted is true when Codex itself lists every entry of ours as trusted;
	// nil when it could not be asked.
	Trusted *bool    `json:"trusted"`
	Keys    []string `json:"keys"`
	// Action is what the user must do for Codex to run the hook, when anything.
	Action string `json:"action,omitempty"`
}

// codexReviewAction tells the user how to trust by hand, in the CLI (program) itself.
func codexReviewAction(program, dir string) string {
	return fmt.Sprintf("start %s in %s and choose \"Trust all and continue\" at \"Hooks need review\" (or review it under /hooks)", program, dir)
}

// SetupCodex enables hooks in config.toml and trusts our entries of the
// hooks.json at loc with the hashes Codex lists for them (asking Codex for cwd,
// the folder whose project hooks it should load). With dryRun nothing is
// written and Codex is not asked.
func SetupCodex(ctx context.Context, loc Location, h Hook, configPath string, lister CodexLister, cwd string, dryRun bool) (CodexSetup, error) {
	st := CodexSetup{ConfigFile: configPath, Actions: []string{}, Keys: []string{}}
	cfg, err := LoadCodexConfig(configPath)
	if err != nil {
		return st, err
	}
	actions, err := cfg.EnableHooks()
	if err != nil {
		return st, err
	}
	st.Actions = append(st.Actions, actions...)
	st.HooksEnabled = cfg.HooksEnabled()
	if dryRun {
		return st, nil
	}
	if err := cfg.Save(); err != nil {
		return st, err
	}
	program := programOf(loc.Provider)
	mine, err := listOurCodexHooks(ctx, lister, loc, h, cwd)
	if err != nil {
		st.Trusted, st.Action = new(bool), err.Error()+"; to trust it yourself, "+codexReviewAction(program, cwd)
		return st, nil //nolint:nilerr // a survey reports an untrusted hook in its status, it does not fail
	}
	for _, ch := range mine {
		st.Keys = append(st.Keys, ch.Key)
		if ch.Trusted() {
			continue
		}
		a, err := cfg.Trust(ch.Key, ch.CurrentHash)
		if err != nil {
			return st, err
		}
		st.Actions = append(st.Actions, a...)
	}
	if err := cfg.Save(); err != nil {
		return st, err
	}
	// Trusted only when Codex says so after the write.
	after, err := listOurCodexHooks(ctx, lister, loc, h, cwd)
	ok := err == nil && len(after) == len(mine)
	for _, ch := range after {
		ok = ok && ch.Trusted()
	}
	st.Trusted = &ok
	if !ok {
		st.Action = codexReviewAction(program, cwd)
	}
	return st, nil
}

// listOurCodexHooks asks Codex for the hooks it sees and keeps our Stop
// entries of the file at loc; none found is an error that says why.
func listOurCodexHooks(ctx context.Context, lister CodexLister, loc Location, h Hook, cwd string) ([]CodexHook, error) {
	hooks, err := lister.ListHooks(ctx, cwd)
	if err != nil {
		return nil, err
	}
	want := realPath(loc.Path)
	var mine []CodexHook
	for _, ch := range hooks {
		if ch.EventName != codexStopEvent || realPath(ch.SourcePath) != want {
			continue
		}
		if _, ok := ours(ch.Command, h); ok {
			mine = append(mine, ch)
		}
	}
	if len(mine) == 0 {
		program := programOf(loc.Provider)
		if loc.Scope == ScopeProject {
			return nil, fmt.Errorf("%s does not load %s: the project folder is not trusted in %s", program, loc.Path, program)
		}
		return nil, fmt.Errorf("%s does not list the hook in %s", program, loc.Path)
	}
	return mine, nil
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// ForgetCodexTrust removes the trust entries of keys from config.toml.
func ForgetCodexTrust(configPath string, keys []string, dryRun bool) ([]string, error) {
	cfg, err := LoadCodexConfig(configPath)
	if err != nil {
		return nil, err
	}
	actions := []string{}
	for _, k := range keys {
		a, err := cfg.Forget(k)
		if err != nil {
			return nil, err
		}
		actions = append(actions, a...)
	}
	if dryRun {
		return actions, nil
	}
	return actions, cfg.Save()
}

// CodexHookStatus is what status says about Codex running our hook.
type CodexHookStatus struct {
	ConfigFile   string `json:"configFile"`
	HooksEnabled bool   `json:"hooksEnabled"`
	// Trusted is nil when Codex could not be asked.
	Trusted *bool  `json:"trusted"`
	Action  string `json:"action,omitempty"`
	Error   string `json:"error,omitempty"`
}

// InspectCodex reports whether Codex runs our entries of the hooks.json at loc.
func InspectCodex(ctx context.Context, loc Location, h Hook, configPath string, lister CodexLister, cwd string) CodexHookStatus {
	st := CodexHookStatus{ConfigFile: configPath}
	cfg, err := LoadCodexConfig(configPath)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.HooksEnabled = cfg.HooksEnabled()
	install := "story-automator hooks install --provider " + string(loc.Provider) + " --scope " + string(loc.Scope)
	if !st.HooksEnabled {
		st.Action = "hooks are off in " + configPath + ": run " + install
	}
	mine, err := listOurCodexHooks(ctx, lister, loc, h, cwd)
	if errors.Is(err, ErrProgramNotFound) {
		st.Error = err.Error()
		return st
	}
	ok := err == nil
	for _, ch := range mine {
		ok = ok && ch.Trusted()
	}
	st.Trusted = &ok
	if !ok && st.Action == "" {
		program := programOf(loc.Provider)
		st.Action = "run " + install + " with " + program + " on PATH, or " + codexReviewAction(program, cwd)
	}
	if err != nil {
		st.Error = err.Error()
	}
	return st
}
