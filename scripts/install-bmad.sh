#!/usr/bin/env bash
# Installs what the BMAD tests run, pinned (tools/bmad), into a cache directory
# outside the repository, and prints the directory of their commands (bmad,
# uv). Beside it, wheels/ holds the dependency of BMAD's own Python scripts
# (tools/bmad/wheels.txt) for `uv run` to find offline (UV_FIND_LINKS).
# A cache whose pins match is reused as it is.
#
#   scripts/install-bmad.sh            # install if needed, print the bin dir
#   PATH="$(scripts/install-bmad.sh):$PATH" bmad --version
set -euo pipefail
src="$(cd "$(dirname "$0")/../tools/bmad" && pwd)"
dir="${STORY_AUTOMATOR_BMAD_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/story-automator/bmad}"
mkdir -p "$dir"
if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -x "$dir/node_modules/.bin/bmad" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-bmad: npm is missing; install Node.js and npm (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  echo "install-bmad: installing the pinned bmad-method into $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
if ! cmp -s "$src/requirements.txt" "$dir/requirements.txt" || ! cmp -s "$src/wheels.txt" "$dir/wheels.txt" || [ ! -x "$dir/py/bin/uv" ]; then
  py="$(command -v python3 || true)"
  if [ -z "$py" ]; then
    echo "install-bmad: python3 is missing; install Python 3.11 or later (apt-get install -y python3 python3-venv)" >&2
    exit 1
  fi
  echo "install-bmad: installing the pinned uv and BMAD's script dependency into $dir" >&2
  rm -rf "$dir/py" "$dir/wheels"
  "$py" -m venv "$dir/py" >&2
  "$dir/py/bin/pip" install --quiet --disable-pip-version-check -r "$src/requirements.txt" >&2
  "$dir/py/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$dir/wheels" -r "$src/wheels.txt" >&2
  cp "$src/requirements.txt" "$src/wheels.txt" "$dir/"
fi
mkdir -p "$dir/bin"
ln -sfn "$dir/node_modules/.bin/bmad" "$dir/bin/bmad"
ln -sfn "$dir/py/bin/uv" "$dir/bin/uv"
echo "$dir/bin"
