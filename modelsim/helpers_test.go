package modelsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden response files")

// start runs a server for one test.
func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// post sends body to the server and returns the status and the raw answer.
func post(t *testing.T, s *Server, path string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return resp.StatusCode, b.String()
}

// postGolden posts body, wants 200, and compares the answer with
// testdata/goldenName; it returns the answer.
func postGolden(t *testing.T, s *Server, path string, body []byte, goldenName string) string {
	t.Helper()
	status, got := post(t, s, path, body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, got)
	}
	golden(t, goldenName, got)
	return got
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// sseData decodes the data lines of an SSE stream.
func sseData(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(stream, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatalf("bad data line %q: %v", d, err)
			}
			out = append(out, v)
		}
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
