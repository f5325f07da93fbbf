package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/runview/timeline"
)

const fixtureRunID = "run-20261120-090000-f1e3"

// The tests here run the CLI in this process, so none is parallel:
// urfave/cli writes its global help flag at every parse.

// runsProject is a project whose one run is the timeline's fixture run.
func runsProject(t *testing.T) (root, stateFile string) {
	t.Helper()
	root = t.TempDir()
	data, err := os.ReadFile("../../runview/timeline/testdata/run-fixture.md")
	if err != nil {
		t.Fatal(err)
	}
	stateFile = filepath.Join(orchestrator.RunsDir(root), fixtureRunID+".md")
	if err := os.MkdirAll(filepath.Dir(stateFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stateFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, stateFile
}

func TestRunsShowHTMLWritesThePageAndTheStateDocumentNamesIt(t *testing.T) {
	root, stateFile := runsProject(t)
	before, _ := orchestrator.LoadState(stateFile)
	file := filepath.Join(t.TempDir(), "run.html")
	// The flag after the run id, as people type it.
	res, code := runCLI(t, root, "runs", "show", "run-20261120", "--html", file)
	if code != 0 || res["html"] != file || res["linked"] != true || res["runId"] != fixtureRunID {
		t.Fatalf("runs show --html: %d %v", code, res)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := timeline.Render(before, timeline.Options{StateFile: stateFile})
	if !bytes.Equal(page, want) {
		t.Fatal("the file is not the run's page")
	}
	doc, _ := os.ReadFile(stateFile)
	if !strings.Contains(string(doc), "**Timeline:** `"+file+"` (HTML, written 2026-11-22 12:00:00 UTC") {
		t.Fatalf("the state document does not name the page:\n%s", doc[:min(len(doc), 1200)])
	}
	after, err := orchestrator.LoadState(stateFile)
	if err != nil || after.Timeline == nil || after.Timeline.Path != file || after.Status != before.Status ||
		after.UpdatedAt != before.UpdatedAt || len(after.Log) != len(before.Log) {
		t.Fatalf("the state after linking: %v %+v", err, after)
	}
}

func TestRunsShowHTMLToStdoutAndItsErrors(t *testing.T) {
	root, stateFile := runsProject(t)
	var out bytes.Buffer
	if code := Run([]string{"runs", "show", "--html", "-", fixtureRunID}, testStreams(root, &out)); code != 0 ||
		!strings.HasPrefix(out.String(), "<!DOCTYPE html>") || !strings.Contains(out.String(), "</html>") {
		t.Fatalf("--html - exited %d:\n%.300s", code, out.String())
	}
	if doc, _ := os.ReadFile(stateFile); strings.Contains(string(doc), "**Timeline:**") {
		t.Fatal("a page printed to stdout is not a file the state document can name")
	}
	if _, err := os.Stat(filepath.Join(root, "-")); err == nil {
		t.Fatal("--html - wrote a file named -")
	}
	// A relative file is in the working directory (here the project root).
	if res, code := runCLI(t, root, "runs", "show", fixtureRunID, "--html", "run.html"); code != 0 || res["html"] != filepath.Join(root, "run.html") {
		t.Fatalf("relative file: %d %v", code, res)
	}
	if res, code := runCLI(t, root, "runs", "show", "run-nope", "--html", "x.html"); code != 1 || res["error"] != "run_not_found" {
		t.Fatalf("unknown run: %d %v", code, res)
	}
	missing := filepath.Join(t.TempDir(), "no-such-dir", "run.html")
	res, code := runCLI(t, root, "runs", "show", fixtureRunID, "--html", missing)
	if code != 1 || res["error"] != "html_write_failed" || !strings.Contains(res["message"].(string), missing) ||
		!strings.Contains(res["action"].(string), "directory you can write") {
		t.Fatalf("unwritable file: %d %v", code, res)
	}
	if res, code := runCLI(t, root, "runs", "show", fixtureRunID, "--html", ""); code != 2 {
		t.Fatalf("--html with no file: %d %v", code, res)
	}
}

func TestRunsShowHTMLLeavesTheDocumentOfALiveRunAlone(t *testing.T) {
	root, stateFile := runsProject(t)
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before, _ := os.ReadFile(stateFile)
	file := filepath.Join(t.TempDir(), "run.html")
	res, code := runCLI(t, root, "runs", "show", fixtureRunID, "--html", file)
	if code != 0 || res["linked"] != false || !strings.Contains(res["notice"].(string), "run lock") {
		t.Fatalf("runs show --html under a live run: %d %v", code, res)
	}
	if after, _ := os.ReadFile(stateFile); !bytes.Equal(before, after) {
		t.Fatal("the state document of a live run was rewritten")
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the page was not written: %v", err)
	}
}

// A run whose orchestrator holds the run lock is drawn up to now; the same
// state with no orchestrator left shows its last attempt unfinished.
func TestRunsShowHTMLDrawsALiveRunUpToNow(t *testing.T) {
	root, stateFile := runsProject(t)
	st, err := orchestrator.LoadState(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.FinishedAt = orchestrator.RunRunning, ""
	last := &st.Units[3].Steps[0].Attempts[0]
	last.FinalState, last.EndedAt, last.WallMs = "", "", 0
	if err := orchestrator.SaveState(stateFile, st); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Run([]string{"runs", "show", fixtureRunID, "--html", "-"}, testStreams(root, &out)); code != 0 ||
		!strings.Contains(out.String(), `<rect class="bar s-unfinished"`) || strings.Contains(out.String(), `class="now"`) {
		t.Fatalf("a run with no orchestrator is drawn as going on (exit %d)", code)
	}
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	out.Reset()
	if code := Run([]string{"runs", "show", fixtureRunID, "--html", "-"}, testStreams(root, &out)); code != 0 ||
		!strings.Contains(out.String(), `<rect class="bar s-running"`) || !strings.Contains(out.String(), `class="now"`) ||
		!strings.Contains(out.String(), "2026-11-22 12:00:00 UTC") {
		t.Fatalf("a live run is not drawn up to now (exit %d)", code)
	}
}
