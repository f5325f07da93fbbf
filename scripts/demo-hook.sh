#!/usr/bin/env bash
# The hook demo: the marker and the owner-gated, circuit-breaking Stop hook on a scratch project.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/bin/story-automator"
proj=$(mktemp -d "${TMPDIR:-/tmp}/story-automator-demo.XXXXXX")
mkdir -p "$proj/src" && echo "# sample project" >"$proj/README.md"
cd "$proj"
export PROJECT_ROOT="$proj"
unset CLAUDE_CODE_SESSION_ID CODEX_THREAD_ID STORY_AUTOMATOR_CHILD STORY_AUTOMATOR_SESSION

# Bold headings only on a terminal, and never with NO_COLOR set (no-color.org).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
  say() { printf '\n== %s\n' "$*"; }
fi
hook() { # session stop_hook_active
  local out
  out=$(printf '{"session_id":"%s","stop_hook_active":%s,"hook_event_name":"Stop"}' "$1" "$2" | "$bin" stop-hook)
  if [ -z "$out" ]; then echo "  $1 -> (no output: the stop goes through)"; else echo "  $1 -> ${out:0:150}…"; fi
}
blocks() { "$bin" marker show | sed -n 's/.*"stopHookBlocks":\([0-9]*\).*/  stopHookBlocks = \1/p'; }

say "project: $proj"
say "owner session 'orch-1' creates the run marker"
"$bin" marker create --epic 1 --story 1.1 --step dev --remaining 3 --owner-session orch-1 | cut -c1-160
say "the owner tries to stop: blocked, told what to do next"
hook orch-1 false; blocks
say "a bystander session in the same project stops: allowed, counters untouched"
hook someone-else true; blocks
say "the owner keeps stopping without progress"
hook orch-1 true; blocks
hook orch-1 true; blocks
say "verified progress: a heartbeat resets the breaker"
"$bin" marker heartbeat --step review >/dev/null
hook orch-1 true; blocks
say "no progress again: the circuit breaker releases the stop at the cap (5)"
for _ in 1 2 3 4 5; do hook orch-1 true; done; blocks
say "decision history ($proj/.claude/story-automator.history.jsonl)"
cut -c1-140 "$proj/.claude/story-automator.history.jsonl"
say "pause: a paused run never blocks"
"$bin" marker pause --reason "demo over" >/dev/null
hook orch-1 true
"$bin" marker remove
