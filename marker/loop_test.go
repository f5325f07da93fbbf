package marker

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestLoopStateKeepsUnknownFieldsOnRewrite(t *testing.T) {
	in := `{"version":1,"mode":"loop","status":"active","ownerSession":"o","stopHookBlocks":0,"storiesRemaining":0,
	  "loop":{"prompt":"fix it","iteration":3,"maxIterations":20,"futureField":{"a":1},"lastConfidence":40}}`
	m, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !m.IsLoop() || m.Loop.Iteration != 3 || m.Loop.LastConfidence != 40 {
		t.Fatalf("decoded %+v", m.Loop)
	}
	c := m.Clone()
	c.Loop.Iteration = 4
	c.Loop.Extra["futureField"] = json.RawMessage(`"changed in the clone"`)
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Compact(&got, back.Loop.Extra["futureField"]); err != nil || got.String() != `{"a":1}` {
		t.Fatalf("unknown loop field after rewrite = %s (out %s)", got.String(), out)
	}
	if back.Loop.Iteration != 3 {
		t.Fatalf("the clone changed the original: iteration %d", back.Loop.Iteration)
	}
}

func TestLoopStateWithoutExtraEncodesPlainly(t *testing.T) {
	b, err := json.Marshal(&LoopState{Prompt: "p", Iteration: 1, MaxIterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	// SPEC §6 names completionPromise and exitStrategy: always present.
	if string(b) != `{"prompt":"p","iteration":1,"maxIterations":2,"completionPromise":"","exitStrategy":""}` {
		t.Fatal(string(b))
	}
}
