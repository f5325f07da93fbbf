#!/usr/bin/env bash
# The full demonstration: the embedded sample BMAD project (one epic, four
# stories), shaped as BMAD 6.12 on the build-auto pipeline, is copied to a
# scratch directory, put under git, and run end to end by the simulated agent,
# which acts out BMAD's worker skill, in real tmux sessions on a private tmux
# server. It needs no BMAD, no uv and no network.
#
# Knobs (the tests use them): STORY_AUTOMATOR_BIN (the binary, default
# bin/story-automator), STORY_AUTOMATOR_SIM_DELAY (each simulated step's time),
# DEMO_WORKER (how the simulated worker behaves: STORY_AUTOMATOR_SIM_BUILD_AUTO,
# e.g. followup, blocked=CONDITION), DEMO_BACKOFF (the wait before a retry).
# The script exits with the run's status, after saying where everything is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${STORY_AUTOMATOR_BIN:-$here/bin/story-automator}"
worker="${DEMO_WORKER-followup}"
backoff="${DEMO_BACKOFF:-1s}"
for tool in tmux git; do
  command -v "$tool" >/dev/null || { echo "make demo needs $tool on the PATH" >&2; exit 1; }
done

# A private tmux server (never yours) and a clean environment: no agent
# session owns this run, and nothing points at another project.
socket="sa-demo-$$"
unset TMUX TMUX_PANE CLAUDE_CODE_SESSION_ID CODEX_THREAD_ID PROJECT_ROOT \
  STORY_AUTOMATOR_CHILD STORY_AUTOMATOR_SESSION STORY_AUTOMATOR_STATE_DIR \
  STORY_AUTOMATOR_ACTIVE_MARKER STORY_AUTOMATOR_TMUX_SOCKET STORY_AUTOMATOR_SIM_FAULTS STORY_AUTOMATOR_SIM_BEHAVIOUR \
  STORY_AUTOMATOR_SIM_BUILD_AUTO
# tmux leaves a killed server's socket file behind: remove ours too.
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$socket"' EXIT
sa() { "$bin" --tmux-socket "$socket" "$@"; }
# Bold headings only on a terminal, and never with NO_COLOR set (no-color.org).
# git shows its output here and never opens a pager; it colours only as your
# git config says on a terminal, never with NO_COLOR set or into a pipe
# (color.diff, which log follows, outranks color.ui: both are set).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
  git_show() { git --no-pager "$@"; }
else
  say() { printf '\n== %s\n' "$*"; }
  git_show() { git --no-pager -c color.ui=never -c color.diff=never "$@"; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/story-automator-demo.XXXXXX")
proj="$work/greeter"
say "the sample BMAD project, shaped as BMAD 6.12 (without BMAD files of its own), in $proj"
"$bin" sample "$proj" >/dev/null
cd "$proj"
git init -q
# The simulated worker commits its work, as BMAD's does: the project has an identity.
git config user.name "story-automator demo"
git config user.email demo@localhost
git add -A
git commit -q -m "greeter: planned with BMAD"
sed -n '/^development_status:/,$p' _bmad-output/implementation-artifacts/sprint-status.yaml

say "the plan (run --dry-run)"
sa run --agent sim --dry-run

say "the run: BMAD's worker (bmad-build-auto) once per story in its own tmux session, its spec read back; two stories side by side, each in its own git worktree"
if [ "$worker" = "followup" ]; then
  echo "The simulated worker recommends a follow-up review of each story: the run dispatches the"
  echo "done spec once more by its path, then lands the story as one commit."
else
  echo "The simulated worker: ${worker:-nothing injected}."
fi
echo "Each simulated step takes ${STORY_AUTOMATOR_SIM_DELAY:=200ms}."
export STORY_AUTOMATOR_SIM_DELAY
start=$(date +%s)
run_status=0
STORY_AUTOMATOR_SIM_BUILD_AUTO="$worker" \
  sa run --agent sim --fallback-agent sim --parallel 2 --backoff "$backoff" --recheck-grace 300ms || run_status=$?
echo "($(( $(date +%s) - start ))s)"

say "the stories' worktrees (.git/story-automator/worktrees), each landed on your branch and removed"
state=$(ls -t .story-automator/runs/*.md 2>/dev/null | head -1 || true)
[ -n "$state" ] && grep -o '\*\*[0-9.]*\*\* worktree .*' "$state" | sort -u | sed "s#$proj/##" || true
echo "git worktree list now:"
git_show worktree list

say "status, as another terminal sees it"
sa status || true

say "sprint-status.yaml afterwards: comments and order kept"
sed -n '/^development_status:/,$p' _bmad-output/implementation-artifacts/sprint-status.yaml

say "the specs the worker wrote, each found by the run and resumed by its path"
ls _bmad-output/implementation-artifacts/spec-*.md 2>/dev/null || true

say "git log --oneline: the run's bookkeeping, one commit per story (the worker's commits squashed), the retrospective"
git_show log --oneline

state=$(ls -t .story-automator/runs/*.md 2>/dev/null | head -1 || true)
say "where to look"
echo "state document: ${state:+$proj/$state}"
echo "project:        $proj   (git -C $proj log --stat)"
if [ "$run_status" -ne 0 ]; then
  echo "The run stopped (exit $run_status): the state document says why and what to do;"
  echo "then continue it with: cd $proj && $bin run --resume"
fi
exit "$run_status"
