package tomledit

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// decode is the reference: go-toml's own reading of a whole document.
func decode(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toml.Unmarshal(doc, &m); err != nil {
		t.Fatalf("an edit's result does not parse: %v\n%s", err, doc)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// with returns a deep copy of tree with the value at p set to v (v == nil
// deletes it), creating tables on the way as a TOML reader would see them.
func with(tree map[string]any, p Path, v any) map[string]any {
	out := copyTree(tree)
	cur := out
	for _, k := range p[:len(p)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	if v == nil {
		delete(cur, p[len(p)-1])
	} else {
		cur[p[len(p)-1]] = v
	}
	return out
}

// prune drops empty tables, at any depth.
func prune(m map[string]any) map[string]any {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			if len(prune(sub)) == 0 {
				delete(m, k)
			}
		}
	}
	return m
}

func copyTree(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = copyTree(sub)
		}
		out[k] = v
	}
	return out
}

// FuzzEditsAgainstGoTOML checks every edit tomledit makes against go-toml as
// the reference: after Set the document reads as before with exactly the one
// value changed, after Delete as before without it; an edit it refuses leaves
// nothing to check, and no input may make it panic.
func FuzzEditsAgainstGoTOML(f *testing.F) {
	seeds := []struct{ doc, path, value string }{
		{"", "a", `"x"`},
		{"a = 1\n", "a", "2"},
		{"# top\nx = true # keep\n\n[features]\nhooks = false\n", "features.hooks", "true"},
		{"[a]\nb = 1\n[c]\nd = 2", "a.e", `"new"`},
		{"a.b = 1\n", "a.c", "2"},
		{"[[arr]]\nx = 1\n", "arr.x", "2"},
		{"[t]\n\"odd key\" = 1\n", "t.odd key", "false"},
		{"k = { inline = 1 }\n", "k.inline", "2"},
		{"[projects.\"/tmp/p q\"]\ntrust_level = \"trusted\"\n", "projects./tmp/p q.trust_level", `"untrusted"`},
		{"a = \"\"\"\nmulti\n\"\"\"\nb = 1\n", "b", "3"},
	}
	for _, s := range seeds {
		f.Add(s.doc, s.path, s.value)
	}
	f.Fuzz(func(t *testing.T, doc, path, value string) {
		var before map[string]any
		if err := toml.Unmarshal([]byte(doc), &before); err != nil {
			if _, err := Set([]byte(doc), Path{"k"}, "1"); err == nil {
				t.Fatalf("Set accepted a document go-toml refuses: %q", doc)
			}
			return
		}
		if before == nil {
			before = map[string]any{}
		}
		p := Path(strings.Split(path, "."))
		if path == "" || len(p) > 4 {
			return
		}
		// The value, as go-toml reads it on its own; Set takes TOML value text.
		var probe map[string]any
		if toml.Unmarshal([]byte("v = "+value), &probe) != nil || strings.ContainsAny(value, "\n\r") {
			return
		}
		want := probe["v"]

		if out, err := Set([]byte(doc), p, value); err == nil {
			got := decode(t, out)
			if exp := with(before, p, want); !reflect.DeepEqual(got, exp) {
				t.Fatalf("Set(%q, %q) changed more than the one value:\n got %#v\nwant %#v\n%s", path, value, got, exp, out)
			}
		}
		if out, ok, err := Delete([]byte(doc), p); err == nil && ok {
			// A table that only the deleted key made goes with it: compare
			// without empty tables.
			got := prune(decode(t, out))
			if exp := prune(with(before, p, nil)); !reflect.DeepEqual(got, exp) {
				t.Fatalf("Delete(%q) changed more than the one value:\n got %#v\nwant %#v\n%s", path, got, exp, out)
			}
		}
	})
}
