package bmad

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
	"github.com/story-automator/story-automator/workflows"
)

// A run killed (SIGKILL) anywhere in a sweep unit's landing leaves one of
// three states on disk: the unit's commit made, the marks not written; the
// marks written, not committed; both committed. The landing done again by
// the resumed run, on a real git repository, makes the unit's commit once,
// marks each item once with that commit's id, commits the marks, and
// leaves the tree clean; a landing already whole changes nothing.
func TestSweepLandingResumesFromEveryKillPoint(t *testing.T) {
	for _, killed := range []string{"after the squash", "after the marks", "after the marks' commit"} {
		t.Run(strings.ReplaceAll(killed, " ", "-"), func(t *testing.T) {
			for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"} {
				t.Setenv(k, v)
			}
			ctx := context.Background()
			root := gittest.Seed(t, map[string]string{
				artifactsDir + "/sprint-status.yaml":            "development_status:\n  epic-1: backlog\n  1-1-sign-up: backlog\n",
				artifactsDir + "/" + workflows.DeferredWorkFile: twoSpecsLedger,
			})
			repo := &gitvcs.Git{Root: root, StatePaths: []string{".story-automator/"}}
			if err := repo.Prepare(ctx); err != nil {
				t.Fatal(err)
			}
			p := BuildAuto{Root: root, Git: func(run, dir string) StoryGit { return repo.StoryTree(run, dir) }}
			units, err := p.Leftovers(ctx, orchestrator.Leftovers{Sweep: true})
			if err != nil {
				t.Fatal(err)
			}
			u := units[0]
			base := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
			gittest.Write(t, filepath.Join(root, "src", "fix.txt"), "fixed\n")
			gittest.Git(t, root, "add", "-A")
			gittest.Git(t, root, "commit", "-q", "-m", "the worker's fix")
			d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: u.Key, Dotted: u.Dotted, Title: u.Title},
				Kind: u.Kind, Work: &u.Work, Base: base}
			req := func() *orchestrator.CommitRequest { return &orchestrator.CommitRequest{RunID: "r", Story: d.Story} }
			tree := repo.StoryTree("r", "")

			// The state the kill left.
			sha, err := tree.Squash(ctx, base, *req(), nil)
			if err != nil {
				t.Fatal(err)
			}
			lay, _ := workflows.Open(root)
			var ids []string
			for _, it := range u.Work.Items {
				ids = append(ids, it.ID)
			}
			if killed != "after the squash" {
				if _, err := workflows.MarkDeferredDone(lay, ids, sha); err != nil {
					t.Fatal(err)
				}
			}
			if killed == "after the marks' commit" {
				gittest.Git(t, root, "commit", "-q", "-am", "marks")
			}
			before := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))

			for landing := 1; landing <= 2; landing++ {
				if err := p.Land(ctx, d, req()); err != nil {
					t.Fatalf("landing %d: %v", landing, err)
				}
				found, ok, err := tree.Find(ctx, *req())
				if err != nil || !ok || found != sha {
					t.Fatalf("landing %d: the unit's commit is %s (%v %v), want %s", landing, found, ok, err, sha)
				}
				if n := strings.TrimSpace(gittest.Git(t, root, "rev-list", "--count", base+"..HEAD")); n != "2" {
					t.Fatalf("landing %d: %s commits since the base, want the unit's and its marks'\n%s", landing, n, gittest.Git(t, root, "log", "--oneline"))
				}
				if killed == "after the marks' commit" && strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD")) != before {
					t.Fatalf("a whole landing committed again")
				}
				if st := gittest.Status(t, root); st != "" {
					t.Fatalf("landing %d left the tree dirty:\n%s", landing, st)
				}
				ledger := gittest.Read(t, filepath.Join(root, artifactsDir, workflows.DeferredWorkFile))
				if len(ids) != 3 || strings.Count(ledger, "done: "+sha+"\n") != 3 || strings.Count(ledger, "done:") != 3 {
					t.Fatalf("landing %d: ledger\n%s", landing, ledger)
				}
			}
		})
	}
}
