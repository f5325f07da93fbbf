package spend

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// The fixtures are real records, written by the pinned CLIs (Claude Code
// 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0) in one two-request turn against
// model-sim, which reported 1200 uncached input, 60 output, 300 cache-read
// and 40 cache-write tokens per response (OpenAI and Gemini have no cache
// write: they count it as input). Lines the readers never look at were left out.
func TestReadersSumWhatTheModelReported(t *testing.T) {
	cases := []struct {
		name  string
		read  func(string) (Reading, error)
		file  string
		want  Usage
		model string
	}{
		{"claude", ReadClaudeTranscript, "claude-2.1.328-transcript.jsonl",
			Usage{InputTokens: 2400, OutputTokens: 120, CacheReadTokens: 600, CacheWriteTokens: 80}, "claude-opus-5-5"},
		{"codex", ReadCodexRollout, "codex-0.169.0-rollout.jsonl",
			Usage{InputTokens: 2480, OutputTokens: 120, CacheReadTokens: 600}, "gpt-6.1-sol"},
		{"gemini", ReadGeminiSession, "gemini-0.61.0-session.jsonl",
			Usage{InputTokens: 2480, OutputTokens: 120, CacheReadTokens: 600}, "gemini-3.8-flash"},
		// Copilot CLI 1.0.102 (its whole events.jsonl): inputTokens 1540 a
		// request, the cache write counted as input and the 300 read included.
		{"copilot", ReadCopilotEvents, "copilot-1.0.102-events.jsonl",
			Usage{InputTokens: 2480, OutputTokens: 120, CacheReadTokens: 600}, "gpt-5.4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.read(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if r.Usage != c.want || r.Model != c.model {
				t.Errorf("got %+v %q, want %+v %q", r.Usage, r.Model, c.want, c.model)
			}
		})
	}
}

func TestReadersSayWhenThereIsNoUsage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(p, []byte(`{"type":"user","message":{"content":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) (Reading, error){ReadClaudeTranscript, ReadCodexRollout, ReadGeminiSession, ReadCopilotEvents} {
		if _, err := read(p); !errors.Is(err, ErrNoUsage) {
			t.Errorf("err %v, want ErrNoUsage", err)
		}
	}
	if _, err := ReadClaudeTranscript(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing transcript read without error")
	}
}

func TestClaudeTranscriptCountsAMessageOnceWithItsLastLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	lines := []string{
		`{"type":"assistant","message":{"id":"a","model":"m1","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"assistant","message":{"id":"a","model":"m1","usage":{"input_tokens":10,"output_tokens":7}}}`,
		`{"type":"assistant","message":{"id":"b","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}`,
		`not json`,
		`{"type":"assistant","message":{"id":"c","model":"m2","usage":{"input_tokens":5,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`,
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := ReadClaudeTranscript(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{InputTokens: 15, OutputTokens: 9, CacheReadTokens: 3, CacheWriteTokens: 4}
	if r.Usage != want || r.Model != "m2" {
		t.Errorf("got %+v %q", r.Usage, r.Model)
	}
}

func TestCostIsTokensTimesPriceAndUnknownModelsHaveNone(t *testing.T) {
	table := PriceTable{"m": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	u := Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 40_000}
	got := table.Priced(u, "m")
	if got.CostUSD == nil || *got.CostUSD != 3+1.5+0.6+0.15 {
		t.Errorf("cost %v, want 5.25", got.CostUSD)
	}
	if dated := table.Priced(u, "m-20250929"); dated.CostUSD == nil || *dated.CostUSD != *got.CostUSD {
		t.Errorf("a dated name is not priced as its model: %v", dated.CostUSD)
	}
	if none := table.Priced(u, "other"); none.CostUSD != nil {
		t.Errorf("an unknown model got cost %v", *none.CostUSD)
	}
	b, _ := json.Marshal(table.Priced(u, "other"))
	if !strings.Contains(string(b), `"costUsd":null`) {
		t.Errorf("an unknown model's cost is not null: %s", b)
	}
}

func TestTotalSumsTokensAndKnownCostsAndCountsTheRest(t *testing.T) {
	table := PriceTable{"m": {Input: 1}}
	var tot Total
	tot.Add(ptr(table.Priced(Usage{InputTokens: 1_000_000}, "m")))
	tot.Add(ptr(table.Priced(Usage{InputTokens: 500_000, OutputTokens: 10}, "unknown")))
	tot.Add(nil)
	if tot.Tokens() != 1_500_010 || tot.Cost() != 1 || tot.Attempts != 3 || tot.Unpriced != 1 || tot.Unread != 1 {
		t.Errorf("total %+v cost %v", tot, tot.Cost())
	}
	var none Total
	none.Add(ptr(table.Priced(Usage{InputTokens: 5}, "unknown")))
	if none.CostUSD != nil {
		t.Errorf("a total of unpriced usage has cost %v", *none.CostUSD)
	}
	var run Total
	run.Merge(tot)
	run.Merge(none)
	if run.Tokens() != tot.Tokens()+5 || run.Cost() != 1 || run.Attempts != 4 || run.Unpriced != 2 {
		t.Errorf("merged %+v", run)
	}
}

func ptr(u Usage) *Usage { return &u }

func TestShippedPricesHaveADateAndTheSimModel(t *testing.T) {
	if _, err := time.Parse("2006-01-02", PricesDate); err != nil {
		t.Errorf("PricesDate %q: %v", PricesDate, err)
	}
	if _, ok := DefaultPrices().Lookup(SimModel); !ok {
		t.Error("the simulated agent's model has no price")
	}
	over := DefaultPrices().With(PriceTable{SimModel: {Input: 9}})
	if p, _ := over.Lookup(SimModel); p.Input != 9 {
		t.Errorf("override not taken: %+v", p)
	}
}

// copyFixture writes a fixture to dst with the captured project directory replaced by dir.
func copyFixture(t *testing.T, name, dst, from, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(data), from, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadFindsTheCodexAndGeminiRecordsOfTheChildsDirectory(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	// The captured records started in 2026 (the test machine's clock): "since" is before them.
	since := time.Date(2026, 11, 25, 6, 39, 0, 0, time.UTC)
	copyFixture(t, "codex-0.169.0-rollout.jsonl", filepath.Join(home, ".codex", "sessions", "2026", "11", "25", "rollout-x.jsonl"),
		"/tmp/TestZZCaptureUsage3426821116/003", dir)
	copyFixture(t, "codex-0.169.0-rollout.jsonl", filepath.Join(home, ".codex", "sessions", "2026", "11", "25", "rollout-other.jsonl"),
		"/tmp/TestZZCaptureUsage3426821116/003", "/elsewhere")
	copyFixture(t, "gemini-0.61.0-session.jsonl", filepath.Join(home, ".gemini", "tmp", "p1", "chats", "session-x.jsonl"), "", "")
	reg, _ := json.Marshal(map[string]any{"projects": map[string]string{dir: "p1", "/elsewhere": "p2"}})
	if err := os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), reg, 0o600); err != nil {
		t.Fatal(err)
	}
	codex := Session{StateDir: filepath.Join(home, ".codex"), Dir: dir, Since: since}
	gemini := Session{StateDir: filepath.Join(home, ".gemini"), Dir: dir, Since: since}
	if r, err := Read(agent.UsageRolloutJSONL, codex); err != nil || r.Usage.OutputTokens != 120 {
		t.Errorf("codex: %+v %v", r, err)
	}
	if r, err := Read(agent.UsageChatSessionJSONL, gemini); err != nil || r.Usage.OutputTokens != 120 {
		t.Errorf("gemini: %+v %v", r, err)
	}
	for src, s := range map[agent.UsageFormat]Session{agent.UsageRolloutJSONL: codex, agent.UsageChatSessionJSONL: gemini} {
		s.Since = since.Add(time.Hour)
		if _, err := Read(src, s); !errors.Is(err, ErrNoRecord) {
			t.Errorf("%s: a record older than the session was taken: %v", src, err)
		}
	}
	if _, err := Read(agent.UsageAnthropicJSONL, codex); !errors.Is(err, ErrNoRecord) {
		t.Errorf("claude without a transcript path: %v", err)
	}
}

// OpenCode 1.18.33's own database (testdata/opencode/opencode.db, written
// by the pinned CLI against model-sim: one two-request turn in one folder,
// then two one-request turns in another): the newest session started in
// the child's folder since it started is read, each of its assistant
// messages once; an older session or another folder's is not.
func TestReadOpenCodeDBReadsTheChildsSession(t *testing.T) {
	db := filepath.Join("testdata", "opencode", "opencode.db")
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	r, err := Read(agent.UsageOpenCodeDB, Session{Transcript: db, Dir: "/tmp/ocode/proj", Since: ms(1795919196556)})
	want := Usage{InputTokens: 2400, OutputTokens: 120, CacheReadTokens: 600, CacheWriteTokens: 80}
	if err != nil || r.Usage != want || r.Model != "model-sim" {
		t.Fatalf("first folder: %+v %v, want %+v", r, err, want)
	}
	r, err = ReadOpenCodeDB(db, "/tmp/ocode/proj3", ms(1795919196556))
	if want := (Usage{InputTokens: 1200, OutputTokens: 60, CacheReadTokens: 300, CacheWriteTokens: 40}); err != nil || r.Usage != want {
		t.Fatalf("the newest session of the second folder: %+v %v, want %+v", r, err, want)
	}
	if _, err := ReadOpenCodeDB(db, "/tmp/ocode/proj", ms(1795919196556).Add(time.Hour)); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("a session older than the child: %v, want ErrNoRecord", err)
	}
	// Found in the state directory by its name when no path is given.
	state := t.TempDir()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "opencode.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := Read(agent.UsageOpenCodeDB, Session{StateDir: state, Dir: "/tmp/ocode/proj", Since: ms(1795919196556)}); err != nil || r.Usage != want {
		t.Fatalf("from the state directory: %+v %v", r, err)
	}
	if _, err := Read(agent.UsageOpenCodeDB, Session{StateDir: t.TempDir(), Dir: "/x"}); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("no database: %v, want ErrNoRecord", err)
	}
}

// Copilot CLI's event log is found by the cwd and start time of its first
// line, session.start, under session-state/<id>/.
func TestReadFindsTheCopilotEventLogOfTheChildsDirectory(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	since := time.Date(2026, 11, 29, 2, 17, 0, 0, time.UTC)
	state := filepath.Join(home, ".copilot")
	copyFixture(t, "copilot-1.0.102-events.jsonl", filepath.Join(state, "session-state", "a", "events.jsonl"), "/tmp/cop/m1/proj", dir)
	copyFixture(t, "copilot-1.0.102-events.jsonl", filepath.Join(state, "session-state", "b", "events.jsonl"), "/tmp/cop/m1/proj", "/elsewhere")
	s := Session{StateDir: state, Dir: dir, Since: since}
	if r, err := Read(agent.UsageEventsJSONL, s); err != nil || r.Usage.InputTokens != 2480 || r.Model != "gpt-5.4" {
		t.Errorf("copilot: %+v %v", r, err)
	}
	s.Dir = t.TempDir()
	if _, err := Read(agent.UsageEventsJSONL, s); !errors.Is(err, ErrNoRecord) {
		t.Errorf("another folder's log was taken: %v", err)
	}
	s.Dir, s.Since = dir, since.Add(time.Hour)
	if _, err := Read(agent.UsageEventsJSONL, s); !errors.Is(err, ErrNoRecord) {
		t.Errorf("a log older than the session was taken: %v", err)
	}
}
