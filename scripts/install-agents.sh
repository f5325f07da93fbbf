#!/usr/bin/env bash
# Installs the pinned agent CLIs (tools/agents/package.json) into a cache
# directory outside the repository and prints the directory of their commands.
# A cache whose package-lock matches is reused as it is.
#
#   scripts/install-agents.sh            # install if needed, print the bin dir
#   PATH="$(scripts/install-agents.sh):$PATH" claude --version
set -euo pipefail
src="$(cd "$(dirname "$0")/../tools/agents" && pwd)"
dir="${STORY_AUTOMATOR_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/story-automator/agents}"
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -x "$dir/node_modules/.bin/claude" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-agents: npm is missing; install Node.js and npm (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  echo "install-agents: installing the pinned agent CLIs into $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$dir/node_modules/.bin"
