package serve

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/cliio"
)

func run(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	s := &cliio.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" },
		Exe: func() (string, error) { return "/opt/bin/story-automator-model-sim", nil }}
	code := Run(args, s, "")
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%q: stdout %q is not one JSON object", args, out.String())
	}
	return res, code
}

// The program takes the main binary's argument list, global flags anywhere;
// run directly, the command's name may be left out.
func TestRunTakesTheMainBinarysArguments(t *testing.T) {
	for _, args := range [][]string{
		{"model-sim", "--listen", "0.0.0.0:0"},
		{"--log-level", "debug", "model-sim", "--listen", "0.0.0.0:0"},
		{"--listen", "0.0.0.0:0"},
	} {
		res, code := run(t, args...)
		if code != 2 || res["error"] != "usage_error" || !strings.Contains(res["message"].(string), "loopback") {
			t.Errorf("%q = %d %v", args, code, res)
		}
	}
	if res, code := run(t, "--log-level", "loud", "model-sim"); code != 2 || !strings.Contains(res["message"].(string), "log-level") {
		t.Errorf("a bad --log-level = %d %v", code, res)
	}
}

func TestVersionNamesTheProgram(t *testing.T) {
	var out bytes.Buffer
	if code := Run([]string{"--version"}, &cliio.Streams{Out: &out}, "v1.2.3"); code != 0 || !strings.HasPrefix(out.String(), "story-automator-model-sim v1.2.3") {
		t.Fatalf("--version = %d %q", code, out.String())
	}
}
