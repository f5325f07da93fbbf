#!/bin/sh
# The app runs and prints its usage.
set -eu
out=$(sh bin/greet --help)
[ "$out" = "usage: greet [NAME]" ] || { echo "unexpected usage: $out"; exit 1; }
sh bin/greet >/dev/null
