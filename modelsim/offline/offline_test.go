package offline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestClaudeHomeSettlesEveryDialog(t *testing.T) {
	home, proj := filepath.Join(t.TempDir(), "home"), t.TempDir()
	env, err := Claude(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}})
	if err != nil {
		t.Fatal(err)
	}
	st := readJSON(t, filepath.Join(home, ".claude.json"))
	if st["hasCompletedOnboarding"] != true {
		t.Error("onboarding not marked done")
	}
	approved := st["customApiKeyResponses"].(map[string]any)["approved"].([]any)
	if len(approved) != 1 || approved[0] != APIKey[len(APIKey)-20:] {
		t.Errorf("approved keys %v", approved)
	}
	if p, _ := st["projects"].(map[string]any)[proj].(map[string]any); p["hasTrustDialogAccepted"] != true {
		t.Errorf("project %s not trusted: %v", proj, st["projects"])
	}
	if s := readJSON(t, filepath.Join(home, ".claude", "settings.json")); s["skipDangerousModePermissionPrompt"] != true {
		t.Errorf("settings %v", s)
	}
	got := strings.Join(env.Apply([]string{"HOME=/root", "ANTHROPIC_AUTH_TOKEN=secret", "PATH=/bin"}), " ")
	want := "ANTHROPIC_API_KEY=" + APIKey + " ANTHROPIC_BASE_URL=http://127.0.0.1:9 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 " +
		"DISABLE_AUTOUPDATER=1 HOME=" + home + " IS_SANDBOX=1 PATH=/bin"
	if got != want {
		t.Errorf("env\n got %s\nwant %s", got, want)
	}
}

func TestClaudeHomeCanLeaveEachDialog(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	if _, err := Claude(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj},
		Leave: Dialogs{TrustFolder: true, Onboarding: true, APIKey: true, BypassPermissions: true}}); err != nil {
		t.Fatal(err)
	}
	st := readJSON(t, filepath.Join(home, ".claude.json"))
	if _, ok := st["hasCompletedOnboarding"]; ok {
		t.Error("onboarding marked done")
	}
	if _, ok := st["customApiKeyResponses"]; ok {
		t.Error("API key approved")
	}
	if p := st["projects"].(map[string]any)[proj].(map[string]any); p["hasTrustDialogAccepted"] != false {
		t.Errorf("project trusted: %v", p)
	}
	if s := readJSON(t, filepath.Join(home, ".claude", "settings.json")); len(s) != 0 {
		t.Errorf("settings %v", s)
	}
}

func TestConfigRefusesRelativePaths(t *testing.T) {
	if _, err := Claude(Config{Home: "rel", BaseURL: "http://127.0.0.1:9"}); err == nil {
		t.Error("a relative home was accepted")
	}
	if _, err := Claude(Config{Home: t.TempDir(), BaseURL: "http://127.0.0.1:9", Trusted: []string{"x"}}); err == nil {
		t.Error("a relative trusted folder was accepted")
	}
	if _, err := Claude(Config{Home: t.TempDir()}); err == nil {
		t.Error("no base URL was accepted")
	}
}

func TestCodexHomeNamesTheProviderAndTrustsTheProject(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(t.TempDir(), `odd "dir"`)
	env, err := Codex(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}, Model: "model-sim"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := strings.ReplaceAll(proj, `"`, `\"`)
	for _, want := range []string{`model_provider = "model-sim"`, `model = "model-sim"`, "[model_providers.model-sim]",
		`base_url = "http://127.0.0.1:9/v1"`, `wire_api = "responses"`, `env_key = "` + CodexKeyVar + `"`,
		`[projects."` + quoted + `"]` + "\ntrust_level = \"trusted\""} {
		if !strings.Contains(string(data), want) {
			t.Errorf("config.toml lacks %q:\n%s", want, data)
		}
	}
	if env.Set["CODEX_HOME"] != filepath.Join(home, ".codex") || env.Set[CodexKeyVar] != APIKey || env.Set["HOME"] != home {
		t.Errorf("env %v", env.Set)
	}
	if got := env.Apply([]string{"OPENAI_API_KEY=real", "X=1"}); strings.Contains(strings.Join(got, " "), "real") {
		t.Errorf("a real key survived: %v", got)
	}
}

func TestCodexHomeCanLeaveTheFolderUntrusted(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	if _, err := Codex(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}, Leave: Dialogs{TrustFolder: true}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if strings.Contains(string(data), "[projects.") {
		t.Errorf("the folder is trusted:\n%s", data)
	}
}

func TestGeminiHomeSelectsTheAPIKeyAndTrustsTheProject(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	env, err := Gemini(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}})
	if err != nil {
		t.Fatal(err)
	}
	s := readJSON(t, filepath.Join(home, ".gemini", "settings.json"))
	if s["security"].(map[string]any)["auth"].(map[string]any)["selectedType"] != "gemini-api-key" {
		t.Errorf("settings %v", s)
	}
	if tr := readJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json")); tr[proj] != "TRUST_FOLDER" {
		t.Errorf("trusted folders %v", tr)
	}
	if env.Set["GOOGLE_GEMINI_BASE_URL"] != "http://127.0.0.1:9" || env.Set["GEMINI_API_KEY"] != APIKey || env.Set["HOME"] != home {
		t.Errorf("env %v", env.Set)
	}
	got := strings.Join(env.Apply([]string{"GEMINI_CLI_TRUST_WORKSPACE=true", "GOOGLE_GENAI_USE_VERTEXAI=true"}), " ")
	if strings.Contains(got, "TRUST_WORKSPACE") || strings.Contains(got, "VERTEXAI") {
		t.Errorf("env kept %s", got)
	}
	home2 := t.TempDir()
	if _, err := Gemini(Config{Home: home2, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}, Leave: Dialogs{TrustFolder: true}}); err != nil {
		t.Fatal(err)
	}
	if tr := readJSON(t, filepath.Join(home2, ".gemini", "trustedFolders.json")); len(tr) != 0 {
		t.Errorf("an untrusted home trusts %v", tr)
	}
}

// OpenCode's home names a provider of its own on model-sim's Anthropic
// endpoint as its model, and its environment keeps it from updating.
func TestOpenCodeHomeNamesAProviderOnModelSim(t *testing.T) {
	home := t.TempDir()
	env, err := OpenCode(Config{Home: home, BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Model    string `json:"model"`
		Provider map[string]struct {
			NPM     string `json:"npm"`
			Options struct {
				BaseURL string `json:"baseURL"`
				APIKey  string `json:"apiKey"`
			} `json:"options"`
		} `json:"provider"`
	}
	b, err := os.ReadFile(filepath.Join(home, ".config", "opencode", "opencode.json"))
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("config %s: %v", b, err)
	}
	p := cfg.Provider[OpenCodeProvider]
	if cfg.Model != OpenCodeProvider+"/"+OpenCodeModel || p.NPM != "@ai-sdk/anthropic" ||
		p.Options.BaseURL != "http://127.0.0.1:9/v1" || p.Options.APIKey != APIKey {
		t.Fatalf("config %+v", cfg)
	}
	if env.Set["HOME"] != home || env.Set["OPENCODE_DISABLE_AUTOUPDATE"] != "1" || !slices.Contains(env.Unset, "XDG_CONFIG_HOME") {
		t.Fatalf("env %+v", env)
	}
}

// Copilot CLI's home points it at model-sim in offline mode, with no
// GitHub sign-in, and trusts the folders unless the trust is left out.
func TestCopilotHomeIsOfflineWithModelSimAsItsProvider(t *testing.T) {
	home, proj := filepath.Join(t.TempDir(), "home"), t.TempDir()
	env, err := Copilot(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}})
	if err != nil {
		t.Fatal(err)
	}
	if env.Set["COPILOT_OFFLINE"] != "true" || env.Set["COPILOT_PROVIDER_BASE_URL"] != "http://127.0.0.1:9/v1" ||
		env.Set["COPILOT_PROVIDER_WIRE_API"] != "responses" || env.Set["COPILOT_MODEL"] != CopilotModel || env.Set["HOME"] != home {
		t.Fatalf("env %v", env.Set)
	}
	applied := strings.Join(env.Apply([]string{"GH_TOKEN=real", "COPILOT_HOME=/elsewhere"}), " ")
	if strings.Contains(applied, "GH_TOKEN") || strings.Contains(applied, "/elsewhere") {
		t.Fatalf("a real account or home survives: %s", applied)
	}
	cfg := readJSON(t, filepath.Join(home, ".copilot", "config.json"))
	if folders, _ := cfg["trustedFolders"].([]any); len(folders) == 0 || folders[0] != proj {
		t.Fatalf("config %v", cfg)
	}
	if _, err := Copilot(Config{Home: home, BaseURL: "http://127.0.0.1:9", Trusted: []string{proj}, Leave: Dialogs{TrustFolder: true}}); err != nil {
		t.Fatal(err)
	}
	if folders, _ := readJSON(t, filepath.Join(home, ".copilot", "config.json"))["trustedFolders"].([]any); len(folders) != 0 {
		t.Fatalf("trust left out, yet %v", folders)
	}
}
