package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseEncodeKeepsOrderNumbersAndDuplicates(t *testing.T) {
	in := `{"zeta": 1.50, "alpha": {"b": [1e3, true, null, "x\u00e9<>&"], "a": {}}, "dup": 1, "dup": 2, "empty": []}`
	doc, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "zeta": 1.50,
  "alpha": {
    "b": [
      1e3,
      true,
      null,
      "xé<>&"
    ],
    "a": {}
  },
  "dup": 1,
  "dup": 2,
  "empty": []
}
`
	if got := string(Encode(doc)); got != want {
		t.Fatalf("encoded:\n%s\nwant:\n%s", got, want)
	}
	if v, _ := doc.Get("dup"); v != json.Number("2") {
		t.Fatalf("duplicate key: got %v, want the last value 2", v)
	}
}

func TestParseRejectsWhatIsNotAJSONObject(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"blank":          "  \n",
		"trailing comma": `{"a":1,}`,
		"comment":        "{// c\n}",
		"trailing data":  `{} {}`,
		"unterminated":   `{"a": [1, 2`,
		"invalid utf8":   "{\"a\":\"\xff\"}",
		"bare word":      `{"a": yes}`,
		"too deep":       `{"a":` + strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2) + `}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(in)); err == nil {
				t.Fatalf("Parse(%q) succeeded", in)
			}
		})
	}
	for _, in := range []string{`[]`, `"s"`, `3`, `null`} {
		if _, err := Parse([]byte(in)); !errors.Is(err, errNotObject) {
			t.Fatalf("Parse(%q) = %v, want errNotObject", in, err)
		}
	}
}

func TestObjectSetDelete(t *testing.T) {
	o := &Object{}
	o.Set("a", "1")
	o.Set("b", "2")
	o.Set("a", "3")
	o.Members = append(o.Members, Member{Key: "b", Value: "4"})
	o.Delete("b")
	if got := string(Encode(o)); got != "{\n  \"a\": \"3\"\n}\n" {
		t.Fatalf("got %q", got)
	}
}

// FuzzParse checks that whatever parses re-encodes to valid JSON with the same
// meaning, and that encoding is stable.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":30}]}]}}`))
	f.Add([]byte(`{"a":[1,2,{"b":null}],"c":"\u2028"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err != nil {
			return
		}
		out := Encode(doc)
		var a, b any
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("Parse accepted what encoding/json rejects: %v", err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("Encode produced invalid JSON: %v\n%s", err, out)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !bytes.Equal(Encode(again), out) {
			t.Fatalf("encoding not stable")
		}
	})
}
