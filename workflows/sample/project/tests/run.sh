#!/bin/sh
# Runs every tests/*_test.sh; fails when any of them fails.
set -u
cd "$(dirname "$0")/.." || exit 2
failed=0
for t in tests/*_test.sh; do
  [ -e "$t" ] || continue
  if sh "$t"; then
    echo "ok   $t"
  else
    echo "FAIL $t"
    failed=1
  fi
done
exit "$failed"
