package tomledit

import (
	"strings"
	"testing"
)

const userConfig = `# my codex config
model = "o3"   # the model I like

[features]
# hooks were experimental once
codex_hooks = true
web_search = false

[projects."/home/u/my project"]
trust_level = "trusted"

[[mcp_servers.list]]
name = "x"
`

func TestSetReplacesAValueWhereItStandsAndKeepsEverythingElse(t *testing.T) {
	out, err := Set([]byte(userConfig), Path{"features", "web_search"}, Bool(true))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(userConfig, "web_search = false", "web_search = true", 1)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSetAddsAKeyToItsExistingTable(t *testing.T) {
	out, err := Set([]byte(userConfig), Path{"features", "hooks"}, Bool(true))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(userConfig, "web_search = false\n", "web_search = false\nhooks = true\n", 1)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSetAddsANewTableAtTheEndWithQuotedKeys(t *testing.T) {
	p := Path{"hooks", "state", "/home/u/.codex/hooks.json:stop:0:0", "trusted_hash"}
	out, err := Set([]byte(userConfig), p, String("sha256:ab"))
	if err != nil {
		t.Fatal(err)
	}
	want := userConfig + "\n[hooks.state.\"/home/u/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:ab\"\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if v, ok, _ := Get(out, p); !ok || v != "sha256:ab" {
		t.Errorf("read back %v %v", v, ok)
	}
}

func TestSetBesideADottedKey(t *testing.T) {
	doc := "features.web_search = true\nmodel = \"o3\"\n"
	out, err := Set([]byte(doc), Path{"features", "hooks"}, Bool(true))
	if err != nil {
		t.Fatal(err)
	}
	if want := "features.web_search = true\nfeatures.hooks = true\nmodel = \"o3\"\n"; string(out) != want {
		t.Errorf("got %q", out)
	}
}

func TestSetARootKeyGoesBeforeTheFirstTable(t *testing.T) {
	out, err := Set([]byte("[a]\nb = 1\n"), Path{"c"}, "2")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "c = 2\n[a]\nb = 1\n" {
		t.Errorf("got %q", out)
	}
}

func TestSetOnAnEmptyOrUnterminatedDocument(t *testing.T) {
	out, err := Set(nil, Path{"features", "hooks"}, Bool(true))
	if err != nil || string(out) != "[features]\nhooks = true\n" {
		t.Errorf("empty: %q %v", out, err)
	}
	out, err = Set([]byte("[features]\nx = 1"), Path{"features", "hooks"}, Bool(true))
	if err != nil || string(out) != "[features]\nx = 1\nhooks = true\n" {
		t.Errorf("unterminated: %q %v", out, err)
	}
}

func TestSetRefusesWhatItCannotReachSafely(t *testing.T) {
	// The table is an inline table: adding [features] would redefine it.
	if _, err := Set([]byte("features = { web_search = true }\n"), Path{"features", "hooks"}, Bool(true)); err == nil {
		t.Error("inline table: want an error")
	}
	if _, err := Set([]byte("[[mcp]]\nname = 1\n"), Path{"mcp", "name"}, "2"); err == nil {
		t.Error("array of tables: want an error")
	}
	if _, err := Set([]byte("not toml ["), Path{"a"}, "1"); err == nil {
		t.Error("invalid document: want an error")
	}
}

func TestDeleteRemovesTheLineAndItsComment(t *testing.T) {
	out, ok, err := Delete([]byte(userConfig), Path{"features", "codex_hooks"})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if want := strings.Replace(userConfig, "codex_hooks = true\n", "", 1); string(out) != want {
		t.Errorf("got\n%s", out)
	}
	if _, ok, _ := Delete(out, Path{"features", "codex_hooks"}); ok {
		t.Error("second delete found it again")
	}
}

func TestSetThenDeleteOfANewTableIsARoundTrip(t *testing.T) {
	p := Path{"hooks", "state", "k", "trusted_hash"}
	out, err := Set([]byte(userConfig), p, String("h"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = Delete(out, p)
	if err != nil {
		t.Fatal(err)
	}
	out, ok, err := DeleteTable(out, p[:3])
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if string(out) != userConfig {
		t.Errorf("not a round trip:\n%q\n%q", out, userConfig)
	}
}

func TestDeleteTableKeepsATableThatStillHasKeys(t *testing.T) {
	out, ok, err := DeleteTable([]byte(userConfig), Path{"features"})
	if err != nil || ok || string(out) != userConfig {
		t.Errorf("removed a table with keys: %v %v", ok, err)
	}
}

func TestKeyQuoting(t *testing.T) {
	for in, want := range map[string]string{"a_b-1": "a_b-1", "a.b": `"a.b"`, "": `""`, `q"`: `"q\""`, "é": `"é"`} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %s, want %s", in, got, want)
		}
	}
}
