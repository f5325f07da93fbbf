#!/usr/bin/env bash
# The demo run with a real agent CLI: the sample BMAD project worked through by
# the pinned Claude Code (DEMO_AGENT=codex or gemini for the others), offline,
# against story-automator's own scripted model endpoint (model-sim) on
# loopback, with a private HOME — no account, no network, nothing of yours
# touched. Watch it live: tmux -L <socket printed below> attach.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${STORY_AUTOMATOR_BIN:-$here/bin/story-automator}"
agent="${DEMO_AGENT:-claude}"
for tool in tmux git; do
  command -v "$tool" >/dev/null || { echo "make demo-real needs $tool on the PATH" >&2; exit 1; }
done
PATH="$("$here/scripts/install-agents.sh"):$PATH"
export PATH

socket="sa-demo-real-$$"
unset TMUX TMUX_PANE CLAUDE_CODE_SESSION_ID CODEX_THREAD_ID PROJECT_ROOT ANTHROPIC_AUTH_TOKEN \
  STORY_AUTOMATOR_CHILD STORY_AUTOMATOR_SESSION STORY_AUTOMATOR_STATE_DIR \
  STORY_AUTOMATOR_ACTIVE_MARKER STORY_AUTOMATOR_TMUX_SOCKET STORY_AUTOMATOR_SIM_FAULTS STORY_AUTOMATOR_SIM_BEHAVIOUR
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
[ -t 1 ] && [ -z "${NO_COLOR:-}" ] || say() { printf '\n== %s\n' "$*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/story-automator-demo-real.XXXXXX")
proj="$work/greeter"
"$bin" sample --five-step "$proj" >/dev/null
cd "$proj"
git init -q
git add -A
git -c user.name="story-automator demo" -c user.email=demo@localhost commit -q -m "greeter: planned with BMAD"

say "model-sim on loopback, and a private home for $agent ($("$agent" --version 2>/dev/null | head -1))"
"$bin" model-sim --json --home "$work/home" --home-agent "$agent" --trust "$proj" >"$work/model-sim.json" 2>"$work/model-sim.log" &
ms_pid=$!
trap 'kill "$ms_pid" 2>/dev/null || true; tmux -L "$socket" kill-server 2>/dev/null || true; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$socket"' EXIT
for _ in $(seq 1 100); do [ -s "$work/model-sim.json" ] && break; sleep 0.05; done
line=$(head -1 "$work/model-sim.json")
env_list=$(printf '%s' "$line" | sed -n 's/.*"env":\[\([^]]*\)\].*/\1/p')
IFS=',' read -r -a pairs <<<"$env_list"
for kv in "${pairs[@]}"; do
  kv=${kv#\"}; kv=${kv%\"}
  export "${kv?}"
  echo "  ${kv%%=*}=${kv#*=}" | sed 's/\(API_KEY=\).*/\1(model-sim key)/'
done

say "the run: every step a real $agent session in tmux (watch: tmux -L $socket attach)"
run_status=0
"$bin" --tmux-socket "$socket" run --agent "$agent" --backoff 1s || run_status=$?

say "status"
"$bin" --tmux-socket "$socket" status || true
say "git log --oneline: one commit per story"
git log --oneline
say "done: the project is $proj; model-sim's log is $work/model-sim.log"
exit "$run_status"
