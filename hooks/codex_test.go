package hooks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCodex lists hooks as Codex does: each Stop handler of the hooks.json
// files it loads, keyed by position, with a hash of its command and the trust
// config.toml records for it.
type fakeCodex struct {
	files  []string // hooks.json files it loads
	config string
	calls  int
	err    error
}

func (f *fakeCodex) ListHooks(ctx context.Context, cwd string) ([]CodexHook, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	cfg, err := LoadCodexConfig(f.config)
	if err != nil {
		return nil, err
	}
	var out []CodexHook
	for _, path := range f.files {
		l, err := load(path)
		if err != nil {
			return nil, err
		}
		_, groups, _ := stopGroups(l.doc, EventStop)
		for gi, g := range groups {
			_, hooks, _ := groupHooks(g)
			for hi, e := range hooks {
				_, cmd, _ := entryCommand(e)
				key := CodexHookKey(path, gi, hi)
				hash := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(cmd)))
				status := "untrusted"
				if th := cfg.TrustedHash(key); th == hash {
					status = "trusted"
				} else if th != "" {
					status = "modified"
				}
				out = append(out, CodexHook{Key: key, EventName: "stop", Command: cmd, SourcePath: path,
					CurrentHash: hash, TrustStatus: status, Enabled: true})
			}
		}
	}
	return out, nil
}

const codexUserConfig = `# mine
model = "o3"

[features]
web_search = true

[projects."/work/p"]
trust_level = "trusted"
`

func codexHome(t *testing.T) (hooksJSON, config string) {
	dir := t.TempDir()
	return filepath.Join(dir, "hooks.json"), filepath.Join(dir, "config.toml")
}

func TestCodexInstallTrustsOurHookWithTheHashCodexListsAndUninstallIsARoundTrip(t *testing.T) {
	hooksJSON, config := codexHome(t)
	writeFile(t, config, codexUserConfig, 0o640)
	other := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/other"}]}]}}`
	writeFile(t, hooksJSON, other, 0o600)
	loc := Location{Provider: Codex, Scope: ScopeUser, Path: hooksJSON}
	mustInstall(t, hooksJSON, testHook, Options{Now: fixedNow})
	codex := &fakeCodex{files: []string{hooksJSON}, config: config}
	st, err := SetupCodex(context.Background(), loc, testHook, config, codex, "/work/p", false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Trusted == nil || !*st.Trusted || st.Action != "" {
		t.Fatalf("not trusted: %+v", st)
	}
	key := CodexHookKey(hooksJSON, 1, 0) // after the user's own group
	if len(st.Keys) != 1 || st.Keys[0] != key {
		t.Errorf("keys = %v, want [%s]", st.Keys, key)
	}
	got := readFile(t, config)
	want := fmt.Sprintf("%s\n[hooks.state.%q]\ntrusted_hash = \"sha256:%x\"\n", codexUserConfig, key, sha256.Sum256([]byte(testHook.Command)))
	if got != want {
		t.Errorf("config.toml:\n%s\nwant\n%s", got, want)
	}
	// The user's own hook is not trusted by us.
	hooks, _ := codex.ListHooks(context.Background(), "/work/p")
	if hooks[0].Trusted() {
		t.Error("the user's hook was trusted too")
	}
	// Installing again changes nothing.
	if st, err := SetupCodex(context.Background(), loc, testHook, config, codex, "/work/p", false); err != nil || len(st.Actions) != 0 {
		t.Errorf("second install: %+v %v", st, err)
	}

	keys, err := CodexHookKeys(hooksJSON, testHook)
	if err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("CodexHookKeys = %v %v", keys, err)
	}
	if _, err := Uninstall(hooksJSON, testHook, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if _, err := ForgetCodexTrust(config, keys, false); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, config); got != codexUserConfig {
		t.Errorf("config.toml after uninstall:\n%q\nwant\n%q", got, codexUserConfig)
	}
	if got := readFile(t, hooksJSON); got != other {
		t.Errorf("hooks.json after uninstall: %s", got)
	}
}

func TestCodexEnableHooksMigratesTheLegacyKeyAndTurnsHooksOn(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"absent: on by default, untouched", "model = \"o3\"\n", "model = \"o3\"\n"},
		{"legacy true", "[features]\ncodex_hooks = true\n", "[features]\nhooks = true\n"},
		{"legacy false", "[features]\ncodex_hooks = false # old\nx = 1\n", "[features]\nx = 1\nhooks = true\n"},
		{"explicit false", "[features]\nhooks = false\n", "[features]\nhooks = true\n"},
		{"both", "[features]\nhooks = true\ncodex_hooks = false\n", "[features]\nhooks = true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, config := codexHome(t)
			writeFile(t, config, tc.in, 0o600)
			cfg, err := LoadCodexConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cfg.EnableHooks(); err != nil {
				t.Fatal(err)
			}
			if string(cfg.Content()) != tc.want || !cfg.HooksEnabled() {
				t.Errorf("got %q (enabled %v), want %q", cfg.Content(), cfg.HooksEnabled(), tc.want)
			}
		})
	}
}

func TestCodexHooksOffShowInStatus(t *testing.T) {
	hooksJSON, config := codexHome(t)
	writeFile(t, config, "[features]\nhooks = false\n", 0o600)
	mustInstall(t, hooksJSON, testHook, Options{Now: fixedNow})
	loc := Location{Provider: Codex, Scope: ScopeUser, Path: hooksJSON}
	st := InspectCodex(context.Background(), loc, testHook, config, &fakeCodex{files: []string{hooksJSON}, config: config}, "/p")
	if st.HooksEnabled || st.Trusted == nil || *st.Trusted || !strings.Contains(st.Action, "hooks install --provider codex") {
		t.Errorf("status: %+v", st)
	}
}

func TestCodexSetupWithoutCodexSaysWhatToDo(t *testing.T) {
	hooksJSON, config := codexHome(t)
	mustInstall(t, hooksJSON, testHook, Options{Now: fixedNow})
	loc := Location{Provider: Codex, Scope: ScopeUser, Path: hooksJSON}
	st, err := SetupCodex(context.Background(), loc, testHook, config, &fakeCodex{err: ErrProgramNotFound}, "/p", false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Trusted == nil || *st.Trusted || !strings.Contains(st.Action, "Trust all and continue") {
		t.Errorf("setup: %+v", st)
	}
	status := InspectCodex(context.Background(), loc, testHook, config, &fakeCodex{err: ErrProgramNotFound}, "/p")
	if status.Trusted != nil || status.Error == "" {
		t.Errorf("status without codex must say unknown: %+v", status)
	}
}

func TestCodexProjectHooksOfAnUntrustedFolderAreNotListed(t *testing.T) {
	root := t.TempDir()
	hooksJSON, config := filepath.Join(root, ".codex", "hooks.json"), filepath.Join(t.TempDir(), "config.toml")
	mustInstall(t, hooksJSON, testHook, Options{Now: fixedNow})
	loc := Location{Provider: Codex, Scope: ScopeProject, Path: hooksJSON}
	// Codex does not load the project's hooks.json at all.
	st, err := SetupCodex(context.Background(), loc, testHook, config, &fakeCodex{config: config}, root, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Trusted == nil || *st.Trusted || !strings.Contains(st.Action, "not trusted in codex") {
		t.Errorf("setup: %+v", st)
	}
}

func TestCodexDryRunWritesNothingAndAsksNothing(t *testing.T) {
	hooksJSON, config := codexHome(t)
	writeFile(t, config, "[features]\ncodex_hooks = true\n", 0o600)
	codex := &fakeCodex{files: []string{hooksJSON}, config: config}
	loc := Location{Provider: Codex, Scope: ScopeUser, Path: hooksJSON}
	st, err := SetupCodex(context.Background(), loc, testHook, config, codex, "/p", true)
	if err != nil || len(st.Actions) == 0 {
		t.Fatalf("%+v %v", st, err)
	}
	if readFile(t, config) != "[features]\ncodex_hooks = true\n" || codex.calls != 0 {
		t.Error("dry run wrote or asked codex")
	}
}

func TestCodexConfigThatIsNotTOMLIsRefused(t *testing.T) {
	hooksJSON, config := codexHome(t)
	writeFile(t, config, "model = \n", 0o600)
	loc := Location{Provider: Codex, Scope: ScopeUser, Path: hooksJSON}
	_, err := SetupCodex(context.Background(), loc, testHook, config, &fakeCodex{}, "/p", false)
	if !errors.Is(err, ErrInvalidTOML) || Code(err) != "settings_invalid_toml" {
		t.Errorf("err = %v", err)
	}
	if readFile(t, config) != "model = \n" {
		t.Error("an invalid config.toml was written")
	}
}

// The app-server exchange skips notifications and reads hooks/list's answer.
func TestCodexAppServerExchange(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		dec := lineReader(inR)
		dec() // initialize
		fmt.Fprintln(outW, `{"method":"configWarning","params":{}}`)
		fmt.Fprintln(outW, `{"id":1,"result":{"codexHome":"/h"}}`)
		dec() // initialized
		req := dec()
		if !strings.Contains(req, `"hooks/list"`) || !strings.Contains(req, `"/work/p"`) {
			fmt.Fprintln(outW, `{"id":2,"error":{"message":"bad request `+strings.ReplaceAll(req, `"`, `'`)+`"}}`)
			return
		}
		fmt.Fprintln(outW, `{"id":2,"result":{"data":[{"cwd":"/work/p","hooks":[{"key":"/h/hooks.json:stop:0:0","eventName":"stop","command":"x stop-hook","sourcePath":"/h/hooks.json","currentHash":"sha256:1","trustStatus":"untrusted","enabled":true}],"warnings":[],"errors":[]}]}}`)
	}()
	hooks, err := codexHooksExchange(inW, outR, "/work/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].Key != "/h/hooks.json:stop:0:0" || hooks[0].CurrentHash != "sha256:1" || hooks[0].Trusted() {
		t.Errorf("hooks = %+v", hooks)
	}
}

func lineReader(r io.Reader) func() string {
	buf := make([]byte, 1)
	return func() string {
		var b strings.Builder
		for {
			if _, err := r.Read(buf); err != nil || buf[0] == '\n' {
				return b.String()
			}
			b.WriteByte(buf[0])
		}
	}
}
