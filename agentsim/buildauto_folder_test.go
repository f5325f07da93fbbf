package agentsim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// billingFolder is the spec folder specFolderProject writes, relative to the project.
const billingFolder = "_bmad-output/specs/spec-billing"

// billingStories is its stories.yaml: three stories with the caller's fields.
const billingStories = `- id: "1"
  title: Issue invoices
  description: |
    A customer receives an invoice for each order.
  spec_checkpoint: true
- id: "2"
  title: Refund an invoice
  description: A clerk refunds a paid invoice.
  invoke_dev_with: "Use the ledger API."
- id: "3"
  title: Export the ledger
  description: An accountant exports the ledger as CSV.
  done_checkpoint: true
`

// specFolderProject is a real 6.12 project with a committed spec folder
// (SPEC.md and stories.yaml) made by bmad-spec's shape.
func specFolderProject(t *testing.T) (dir, folder string) {
	t.Helper()
	dir = workerProject(t)
	folder = filepath.Join(dir, billingFolder)
	if err := writeProjectFile(filepath.Join(folder, "SPEC.md"), "---\nid: billing\ncompanions: []\nsources: []\n---\n\n# Billing\n\nInvoices, refunds and the ledger.\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeProjectFile(filepath.Join(folder, workflows.StoriesFile), billingStories); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "the billing spec")
	return dir, folder
}

func folderPrompt(folder, id string) string {
	return "/bmad-build-auto Spec folder: " + folder + ". Story id: " + id + "."
}

// readSpecText reads a spec and its whole text.
func readSpecText(t *testing.T, path string) (workflows.Spec, string) {
	t.Helper()
	spec, err := workflows.ReadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return spec, string(text)
}

// A fresh folder+id dispatch reads only its entry of stories.yaml, writes
// stories/<id>-<slug>.md with the caller's further text as planning
// context, takes it to done from its baseline in one commit and leaves the
// tree clean and stories.yaml as it was.
func TestBuildAutoFolderTakesAStoryToDone(t *testing.T) {
	dir, folder := specFolderProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	code, out := dispatch(t, dir, folderPrompt(billingFolder, "2")+"\nUse the ledger API.", "")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	path := filepath.Join(folder, "stories", "2-refund-an-invoice.md")
	spec, text := readSpecText(t, path)
	if spec.Status != workflows.SpecDone || spec.BaselineRevision != base || spec.Result == nil || spec.Result.Status != workflows.SpecDone {
		t.Fatalf("spec %+v", spec)
	}
	for _, want := range []string{"# Refund an invoice", "A clerk refunds a paid invoice.", callerContextHeader + "\n\nUse the ledger API."} {
		if !strings.Contains(text, want) {
			t.Fatalf("the spec lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Issue invoices") || strings.Contains(text, "Export the ledger") {
		t.Fatalf("the spec read another entry:\n%s", text)
	}
	if found, _ := filepath.Glob(filepath.Join(folder, "stories", "*.md")); len(found) != 1 {
		t.Fatalf("story files %v", found)
	}
	if n := gitOut(t, dir, "rev-list", "--count", base+"..HEAD"); n != "1" {
		t.Fatalf("%s commits after the baseline, want 1", n)
	}
	if dirty := gitOut(t, dir, "status", "--porcelain"); dirty != "" {
		t.Fatalf("tree not clean:\n%s", dirty)
	}
	files := gitOut(t, dir, "show", "--name-only", "--format=", "HEAD")
	if !strings.Contains(files, SimWorkDir+"/2-refund-an-invoice.txt") || !strings.Contains(files, SimWorkDir+"/2-refund-an-invoice_test.txt") ||
		!strings.Contains(files, billingFolder+"/stories/2-refund-an-invoice.md") || strings.Contains(files, workflows.StoriesFile) {
		t.Fatalf("the commit holds:\n%s", files)
	}
	if subject := gitOut(t, dir, "log", "-1", "--format=%s"); !strings.HasPrefix(subject, "2-refund-an-invoice: ") {
		t.Fatalf("commit subject %q does not carry the story id", subject)
	}
}

// Halt after planning stops at ready-for-dev with nothing committed (the
// folder named by its absolute path); the same dispatch without the phrase
// implements that spec: one file, resumed by its status.
func TestBuildAutoFolderHaltsAfterPlanningThenImplements(t *testing.T) {
	dir, folder := specFolderProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	if code, out := dispatch(t, dir, folderPrompt(folder, "1")+" "+HaltAfterPlanning, ""); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	path := filepath.Join(folder, "stories", "1-issue-invoices.md")
	spec, text := readSpecText(t, path)
	if spec.Status != workflows.SpecReadyForDev || spec.BaselineRevision != "" || spec.Result == nil || spec.Result.Status != workflows.SpecReadyForDev {
		t.Fatalf("after planning %+v", spec)
	}
	if strings.Contains(text, callerContextHeader) {
		t.Fatalf("a dispatch with no further text recorded some:\n%s", text)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("planning committed")
	}
	if code, out := dispatch(t, dir, folderPrompt(billingFolder, "1"), ""); code != 0 {
		t.Fatalf("implement: exit %d:\n%s", code, out)
	}
	if spec, _ = readSpecText(t, path); spec.Status != workflows.SpecDone || spec.BaselineRevision != base {
		t.Fatalf("after implementing %+v", spec)
	}
	if found, _ := filepath.Glob(filepath.Join(folder, "stories", "1-*.md")); len(found) != 1 {
		t.Fatalf("story files %v", found)
	}
}

// The halts before planning: each leaves the spec the worker writes back
// to, status blocked, with the exact blocking condition, and commits
// nothing.
func TestBuildAutoFolderSentinels(t *testing.T) {
	dir, folder := specFolderProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	stories := filepath.Join(folder, "stories")
	halted := func(t *testing.T, prompt, file, condition string) string {
		t.Helper()
		if code, out := dispatch(t, dir, prompt, ""); code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		spec, text := readSpecText(t, filepath.Join(stories, file))
		if spec.Status != workflows.SpecBlocked || spec.Result == nil || spec.Result.Status != workflows.SpecBlocked || spec.Result.BlockingCondition != condition {
			t.Fatalf("%s: %+v\n%s", file, spec, text)
		}
		return text
	}
	t.Run("unknown id", func(t *testing.T) {
		text := halted(t, folderPrompt(billingFolder, "9"), "9-unresolved.md", "story id not found in stories.yaml")
		if !strings.Contains(text, "# Story 9\n") {
			t.Fatalf("skeleton:\n%s", text)
		}
		// With the entry added, the sentinel matches 9-*.md itself: the
		// next dispatch finds it blocked until a person removes it.
		if err := appendText(filepath.Join(folder, workflows.StoriesFile), "- id: \"9\"\n  title: Late fees\n  description: Overdue invoices carry a fee.\n"); err != nil {
			t.Fatal(err)
		}
		halted(t, folderPrompt(billingFolder, "9"), "9-unresolved.md", "story already blocked")
	})
	t.Run("no stories.yaml", func(t *testing.T) {
		other := filepath.Join(dir, "_bmad-output", "specs", "spec-empty")
		halted(t, folderPrompt(other, "1"), "../../spec-empty/stories/1-unresolved.md", "no stories.yaml found")
	})
	t.Run("ambiguous", func(t *testing.T) {
		for _, f := range []string{"3-export-the-ledger.md", "3-ledger-export.md"} {
			if err := writeProjectFile(filepath.Join(stories, f), "---\nstatus: draft\n---\n\n# Export\n"); err != nil {
				t.Fatal(err)
			}
		}
		text := halted(t, folderPrompt(billingFolder, "3"), "3-ambiguous.md", "ambiguous story file match")
		if !strings.Contains(text, "# Story 3\n") {
			t.Fatalf("skeleton:\n%s", text)
		}
		for _, f := range []string{"3-export-the-ledger.md", "3-ledger-export.md"} {
			if spec, _ := readSpecText(t, filepath.Join(stories, f)); spec.Status != workflows.SpecDraft {
				t.Fatalf("%s was touched: %+v", f, spec)
			}
		}
	})
	t.Run("already blocked", func(t *testing.T) {
		if err := writeProjectFile(filepath.Join(stories, "2-refund.md"), "---\nstatus: blocked\n---\n\n# Refund\n\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n"); err != nil {
			t.Fatal(err)
		}
		text := halted(t, folderPrompt(billingFolder, "2"), "2-refund.md", "story already blocked")
		if strings.Count(text, workflows.AutoRunResultHeading) != 2 {
			t.Fatalf("want the earlier result kept and one appended:\n%s", text)
		}
	})
	t.Run("unrecognized status", func(t *testing.T) {
		if err := writeProjectFile(filepath.Join(stories, "1-issue.md"), "---\nstatus: shipped\n---\n\n# Issue\n"); err != nil {
			t.Fatal(err)
		}
		halted(t, folderPrompt(billingFolder, "1"), "1-issue.md", "unrecognized status in existing story file")
	})
	t.Run("no SPEC.md", func(t *testing.T) {
		if err := os.Remove(filepath.Join(stories, "1-issue.md")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(folder, "SPEC.md"), filepath.Join(folder, "SPEC.md.gone")); err != nil {
			t.Fatal(err)
		}
		text := halted(t, folderPrompt(billingFolder, "1"), "1-issue-invoices.md", "no epic spec found")
		if !strings.Contains(text, "# Issue invoices\n") {
			t.Fatalf("skeleton:\n%s", text)
		}
	})
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("a halt committed")
	}
}

// The steers, each scoped to one story id by @ID: blocked with a
// condition, dying mid-flight (then resumed, the same file), a follow-up
// recommended; also when the spec is dispatched by its path.
func TestBuildAutoFolderStoryScopedFaults(t *testing.T) {
	dir, folder := specFolderProject(t)
	steer := "blocked=intent gap@2, die=in-progress@3, followup@1"
	stories := filepath.Join(folder, "stories")
	if code, out := dispatch(t, dir, folderPrompt(billingFolder, "1"), steer); code != 0 {
		t.Fatalf("1: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, filepath.Join(stories, "1-issue-invoices.md")); spec.Status != workflows.SpecDone || !spec.FollowupReviewRecommended {
		t.Fatalf("1: %+v", spec)
	}
	if code, out := dispatch(t, dir, folderPrompt(billingFolder, "2"), steer); code != 0 {
		t.Fatalf("2: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, filepath.Join(stories, "2-refund-an-invoice.md")); spec.Status != workflows.SpecBlocked || spec.Result == nil || spec.Result.BlockingCondition != "intent gap" {
		t.Fatalf("2: %+v", spec)
	}
	base := gitOut(t, dir, "rev-parse", "HEAD")
	path := filepath.Join(stories, "3-export-the-ledger.md")
	code, out := dispatch(t, dir, folderPrompt(billingFolder, "3"), steer)
	if spec, _ := readSpecText(t, path); code != 1 || !spec.DiedMidFlight() || spec.Status != workflows.SpecInProgress || spec.Result != nil || spec.BaselineRevision != base {
		t.Fatalf("3: exit %d %+v\n%s", code, spec, out)
	}
	// Dispatched by its path the spec is still story 3's: a steer @3 applies…
	if code, out := dispatch(t, dir, "/bmad-build-auto "+billingFolder+"/stories/3-export-the-ledger.md", "die=in-review@3"); code != 1 {
		t.Fatalf("3 by path: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, path); spec.Status != workflows.SpecInReview || spec.BaselineRevision != base {
		t.Fatalf("3 by path: %+v", spec)
	}
	// …and a steer @1 does not.
	if code, out := dispatch(t, dir, "/bmad-build-auto "+path, "die=in-review@1"); code != 0 {
		t.Fatalf("3 by path again: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, path); spec.Status != workflows.SpecDone || spec.BaselineRevision != base || spec.FollowupReviewRecommended {
		t.Fatalf("3 resumed: %+v", spec)
	}
	if found, _ := filepath.Glob(filepath.Join(stories, "3-*.md")); len(found) != 1 {
		t.Fatalf("story files %v", found)
	}
}

// In sprint mode @STORY takes a story key in any form; an item the sim
// does not know is refused before any work.
func TestBuildAutoSprintStoryScopedFaultsAndBadSteers(t *testing.T) {
	dir := workerProject(t)
	if code, out := dispatch(t, dir, "/bmad-build-auto 1-1-sign-up", "blocked=no subagents@1.2"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-1-1-sign-up.md")); err != nil || spec.Status != workflows.SpecDone {
		t.Fatalf("a steer @1.2 reached 1-1: %+v, %v", spec, err)
	}
	if code, out := dispatch(t, dir, "/bmad-build-auto 1-2-settings", "blocked=no subagents@1.2"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-1-2-settings.md")); err != nil || spec.Result == nil || spec.Result.BlockingCondition != "no subagents" {
		t.Fatalf("1-2: %+v, %v", spec, err)
	}
	for _, bad := range []string{"block=x", "die=done", "blocked=", "followup=yes", "die=in-progress:0", "die=in-progress:x"} {
		code, out := dispatch(t, dir, "/bmad-build-auto 1-3-billing", bad)
		if code != 1 || !strings.Contains(out, EnvBuildAuto+": \""+bad+"\"") {
			t.Fatalf("%q: exit %d:\n%s", bad, code, out)
		}
	}
	if found, _ := filepath.Glob(filepath.Join(artifacts(dir), "spec-1-3-*.md")); len(found) != 0 {
		t.Fatalf("a refused steer left %v", found)
	}
}

func TestParseFolderDispatch(t *testing.T) {
	for _, c := range []struct{ arg, folder, id string }{
		{"Spec folder: _bmad-output/specs/spec-v1.2. Story id: auth-1.", "_bmad-output/specs/spec-v1.2", "auth-1"},
		{"Spec folder: /abs/spec. Story id: 3", "/abs/spec", "3"},
	} {
		folder, id, ok := parseFolderDispatch(c.arg)
		if !ok || folder != c.folder || id != c.id {
			t.Fatalf("%q: %q %q %v", c.arg, folder, id, ok)
		}
	}
	for _, arg := range []string{"1-2-sign-up", "Spec folder: x.", "Spec folder: . Story id: 3.", "Spec folder: x. Story id: a b."} {
		if _, _, ok := parseFolderDispatch(arg); ok {
			t.Fatalf("%q parsed as a folder dispatch", arg)
		}
	}
}

// die=STATUS:N dies on attempt N alone (the attempt the run gives its
// child): the retry, attempt 2, resumes the same spec to done.
func TestBuildAutoFolderDiesOnOneAttempt(t *testing.T) {
	dir, folder := specFolderProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	attempt := func(n string) (int, string) {
		var out bytes.Buffer
		env := map[string]string{"PROJECT_ROOT": dir, child.EnvAttempt: n, EnvBuildAuto: "die=in-progress:1@1"}
		code := Run(context.Background(), &Sim{Prompt: folderPrompt(billingFolder, "1"), Options: Options{Behaviour: BehaviourBMAD}, Out: &out,
			Getenv: func(k string) string { return env[k] }})
		return code, out.String()
	}
	path := filepath.Join(folder, "stories", "1-issue-invoices.md")
	if code, out := attempt("1"); code != 1 {
		t.Fatalf("attempt 1: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, path); spec.Status != workflows.SpecInProgress {
		t.Fatalf("attempt 1: %+v", spec)
	}
	if code, out := attempt("2"); code != 0 {
		t.Fatalf("attempt 2: exit %d:\n%s", code, out)
	}
	if spec, _ := readSpecText(t, path); spec.Status != workflows.SpecDone || spec.BaselineRevision != base {
		t.Fatalf("attempt 2: %+v", spec)
	}
}
