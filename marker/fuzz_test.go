package marker

import (
	"bytes"
	"testing"
)

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"mode":"story","status":"active","storiesRemaining":2,"ownerSession":"x"}`,
		`{"storiesRemaining":1,"custom":{"a":[1]}}`,
		`{"mode":"loop","loop":{"prompt":"p","iteration":2}}`,
		`[]`, `null`, `{"storiesRemaining":"x"}`, ``, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded marker does not encode: %v", err)
		}
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		enc2, _ := m2.Encode()
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encode is not stable:\n%s\n%s", enc, enc2)
		}
	})
}
