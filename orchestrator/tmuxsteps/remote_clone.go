package tmuxsteps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/orchestrator"
)

// prepare makes the project's repository on the host once per run: bare,
// with story-automator's state excluded from its worktrees' commits, and
// nothing left of an earlier run's stories; and checks the host's version.
func (r *Remote) prepare(ctx context.Context, run, prefix string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready {
		return nil
	}
	excl := make([]string, 0, len(r.Exclude))
	for _, p := range r.Exclude {
		excl = append(excl, hosts.Quote("/"+prefix+p))
	}
	// Clones earlier runs left are dropped with their sessions: the
	// stories' worktrees here hold their work. This run's own (a resumed
	// run's) stay: a child may still work in one (StepRequest.Adopt).
	script := fmt.Sprintf(`set -e
R=%s D=%s P=%s X=%s RUN=%s
"$X" --version </dev/null 2>/dev/null | head -n 1 || true
[ -d "$R" ] || git init -q --bare "$R"
mkdir -p "$R/info"
printf '%%s\n' %s > "$R/info/exclude"
for w in "$D"/*/*; do
  [ -d "$w" ] || continue
  run=$(basename "$(dirname "$w")")
  [ "$run" = "$RUN" ] && continue
  "$X" --project-root "$w/$P" --tmux-socket "sa-${run#run-}" session kill-all --project-only </dev/null >/dev/null 2>&1 || true
  git -C "$R" worktree remove --force --force "$w" </dev/null >/dev/null 2>&1 || true
done
find "$D" -mindepth 1 -maxdepth 1 ! -name "$RUN" -exec rm -rf {} + 2>/dev/null || true
git -C "$R" worktree prune </dev/null
git -C "$R" for-each-ref --format='%%(refname)' refs/heads/story-automator refs/story-automator | while read -r ref; do
  case "$ref" in */"$RUN"/*) continue ;; esac
  git -C "$R" update-ref -d "$ref" </dev/null
done
if [ -d "$D/$RUN" ]; then ls "$D/$RUN"; fi`, hosts.Quote(r.repo()), hosts.Quote(path.Join(r.Host.Dir, "worktrees", r.Project)), hosts.Quote(prefix), hosts.Quote(r.Host.Program()), hosts.Quote(run),
		strings.Join(excl, " "))
	res, err := r.Host.Script(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("make the project's repository on %s: %w", r.Host.Name, err)
	}
	if err := r.sameVersion(string(res.Stdout)); err != nil {
		return err
	}
	// This run's clones there (a resumed run's): Drop removes them as
	// their stories land.
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	for _, story := range lines[min(1, len(lines)):] {
		if story = strings.TrimSpace(story); story != "" {
			r.stories[story] = path.Join(r.worktree(run, story), prefix)
		}
	}
	r.ready = true
	return nil
}

// Codes of a host a run cannot use (as doctor --host names them).
const (
	CodeHostNotInstalled    = "host_not_installed"
	CodeHostVersionMismatch = "host_version_mismatch"
)

// CheckInstalled refuses, before any agent starts, a host whose
// story-automator is missing or another version than this one (the
// *orchestrator.Blocker sameVersion gives). A host that does not answer
// now is left to the run: its steps wait for it, then go elsewhere, as
// for a host lost later.
func (r *Remote) CheckInstalled(ctx context.Context) error {
	if r.Version == "" {
		return nil
	}
	res, err := r.Host.Script(ctx, hosts.Line(r.Host.Program(), "--version")+" </dev/null 2>/dev/null | head -n 1 || true", nil)
	switch {
	case errors.Is(err, hosts.ErrUnreachable):
		return nil
	case err != nil:
		return fmt.Errorf("ask %s for its story-automator version: %w", r.Host.Name, err)
	}
	return r.sameVersion(string(res.Stdout))
}

// sameVersion refuses a host whose story-automator (its --version line in
// out) is missing or another version than this one: the step escalates
// with the install command.
func (r *Remote) sameVersion(out string) error {
	if r.Version == "" {
		return nil
	}
	got := hosts.VersionOf(out)
	action := "story-automator hosts install " + r.Host.Name
	switch {
	case got == "":
		return &orchestrator.Blocker{Code: CodeHostNotInstalled, Action: action,
			Err: fmt.Errorf("host %s has no story-automator in %s", r.Host.Name, r.Host.BinDir())}
	case got != r.Version:
		return &orchestrator.Blocker{Code: CodeHostVersionMismatch, Action: action,
			Err: fmt.Errorf("host %s runs story-automator %s, this machine %s", r.Host.Name, got, r.Version)}
	}
	return nil
}

// Drop removes a story's clone on the host, its branch and refs, and any
// session of it left in the run's tmux server there; the repository stays
// as the project's cache. A story the run never sent there is left alone:
// the first Drop of a resumed run asks the host which it has.
func (r *Remote) Drop(ctx context.Context, run, story string) error {
	// A resumed run learns there which of its clones the host has.
	if err := r.prepare(ctx, run, r.Prefix); err != nil {
		return err
	}
	r.mu.Lock()
	pdir, ok := r.stories[story]
	delete(r.stories, story)
	r.mu.Unlock()
	if !ok {
		return nil
	}
	wt := r.worktree(run, story)
	script := fmt.Sprintf(`R=%s W=%s
%s >/dev/null 2>&1
git -C "$R" worktree remove --force --force "$W" </dev/null 2>/dev/null
rm -rf "$W" "$(dirname "$W")/.$(basename "$W")-"*.json
git -C "$R" worktree prune </dev/null
git -C "$R" branch -q -D %s </dev/null 2>/dev/null
git -C "$R" update-ref -d %s </dev/null
rmdir -p "$(dirname "$W")" 2>/dev/null
true`, hosts.Quote(r.repo()), hosts.Quote(wt), r.command(run, pdir, "session", "kill-all", "--project-only"),
		hosts.Quote(branchOf(run, story)), hosts.Quote("refs/story-automator/base/"+run+"/"+story))
	if _, err := r.Host.Script(ctx, script, nil); err != nil {
		return fmt.Errorf("remove story %s's clone on %s: %w", story, r.Host.Name, err)
	}
	return nil
}

// HostWorktrees are a run's story worktrees here, whose Remove also
// removes the story's clone on the hosts it ran on.
type HostWorktrees struct {
	orchestrator.Worktrees
	Run     string
	Remotes map[string]*Remote
}

// Remove drops the story's clones on the hosts (a host that does not
// answer within a minute keeps its clone until the next run that uses the
// host prepares it, which drops what earlier runs left), then its worktree
// and branch here.
func (w HostWorktrees) Remove(ctx context.Context, story string) error {
	for _, name := range slices.Sorted(maps.Keys(w.Remotes)) {
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		_ = w.Remotes[name].Drop(dctx, w.Run, story)
		cancel()
	}
	return w.Worktrees.Remove(ctx, story)
}

// CloneCommand is a story-automator command line for a story's clone on
// host h: project and prefix as the run's Remote has them (wire names the
// project), the run's tmux server there.
func CloneCommand(h *hosts.Host, project, prefix, run, story string, args ...string) string {
	r := &Remote{Host: h, Project: project}
	return r.command(run, path.Join(r.worktree(run, story), prefix), args...)
}
