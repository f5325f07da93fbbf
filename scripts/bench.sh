#!/usr/bin/env bash
# make bench: every benchmark once (each takes its own samples), then the
# headline figures as a table, with the machine and the date they are from.
# STORY_AUTOMATOR_BENCH_LARGE=0 skips the 200-story run; set
# STORY_AUTOMATOR_PYTHON_TOOL to a copy of the Python tool's
# skills/bmad-story-automator to measure its Stop hook beside ours.
set -euo pipefail
GO=${GO:-go}
TAGS=${TAGS:-urfave_cli_no_docs}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

cpu=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)
header="$(date -u '+%Y-%m-%d %H:%M UTC') — $(nproc) cores (${cpu:-unknown CPU}), $os, kernel $(uname -r), $($GO version | awk '{print $3}'), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "== make bench: $header"

export STORY_AUTOMATOR_BENCH_LARGE=${STORY_AUTOMATOR_BENCH_LARGE:-1}
$GO test -tags "$TAGS" -run '^$' -bench "${BENCH:-.}" -benchtime 1x -count 1 -timeout 60m ./... 2>&1 | tee "$out"

# metric VALUE for benchmark NAME (regexp) and unit UNIT; "—" when absent.
metric() {
	awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 2; i < NF; i++) if ($(i+1) == unit) { printf "%s", $i; found=1; exit } }
		END { if (!found) printf "—" }' "$out"
}

# ratio A B: A ÷ B to two places; "—" when either is absent.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "—" || b == "—" || b + 0 == 0) printf "—"; else printf "%.2f", a / b }'
}

cat <<TABLE

== Headline figures: $header
| figure | measured | target |
| --- | --- | --- |
| Stop hook, no marker: median (p99) | $(metric StopHookVsFloor hook-no-marker-median-ms) ms ($(metric StopHookVsFloor hook-no-marker-p99-ms) ms) | ≤ 2.0 ms |
| Stop hook, bystander: median (p99) | $(metric StopHookVsFloor hook-bystander-median-ms) ms ($(metric StopHookVsFloor hook-bystander-p99-ms) ms) | — |
| story-automator-hook, no marker: median (p99) | $(metric StopHookVsFloor hookbin-no-marker-median-ms) ms ($(metric StopHookVsFloor hookbin-no-marker-p99-ms) ms) | — |
| story-automator-hook, bystander: median (p99) | $(metric StopHookVsFloor hookbin-bystander-median-ms) ms ($(metric StopHookVsFloor hookbin-bystander-p99-ms) ms) | — |
| static no-op Go binary (the floor): median | $(metric StopHookVsFloor floor-median-ms) ms | — |
| Stop hook ÷ floor: stop-hook / story-automator-hook | $(metric StopHookVsFloor hook-no-marker-x-floor)× / $(metric StopHookVsFloor hookbin-no-marker-x-floor)× | — |
| Stop hook CPU, no marker: floor / stop-hook / story-automator-hook | $(metric StopHookVsFloor floor-cpu-median-ms) / $(metric StopHookVsFloor hook-no-marker-cpu-median-ms) / $(metric StopHookVsFloor hookbin-no-marker-cpu-median-ms) ms | — |
| Stop hook CPU ÷ floor's, no marker (bystander): stop-hook / story-automator-hook | $(metric StopHookVsFloor hook-no-marker-cpu-x-floor)× ($(metric StopHookVsFloor hook-bystander-cpu-x-floor)×) / $(metric StopHookVsFloor hookbin-no-marker-cpu-x-floor)× ($(metric StopHookVsFloor hookbin-bystander-cpu-x-floor)×) | story-automator-hook ≤ 1.5× |
| main binary start-up, CPU: --version / status --json (÷ floor) | $(metric StartupVsFloor version-cpu-median-ms) / $(metric StartupVsFloor status-cpu-median-ms) ms ($(metric StartupVsFloor version-cpu-x-floor)× / $(metric StartupVsFloor status-cpu-x-floor)×) | no slower than the build before |
| main binary start-up, CPU, the STORY_AUTOMATOR_BENCH_COMPARE build: --version / status --json | $(metric StartupVsFloor compare-version-cpu-median-ms) / $(metric StartupVsFloor compare-status-cpu-median-ms) ms | — |
| Python tool's Stop hook: median (÷ ours) | $(metric StopHookVsFloor python-median-ms) ms ($(metric StopHookVsFloor python-x-hook)×) | ≥ 100× |
| Stop hook peak RSS (floor, Python) | $(metric StopHookVsFloor hook-bystander-peak-rss-MiB) MiB ($(metric StopHookVsFloor floor-peak-rss-MiB), $(metric StopHookVsFloor python-peak-rss-MiB)) | ≤ 10 MiB |
| dashboard, 200-story run: one frame median (p99); one load of the run from disk | $(metric Frame200Stories frame-median-ms) ms ($(metric Frame200Stories frame-p99-ms) ms); $(metric Load200Stories load-median-ms) ms | frame ≤ 10 ms |
| child exit → monitor-session returns: p50 / p99 | $(metric 'DetectionLatency-' median-ms) / $(metric 'DetectionLatency-' p99-ms) ms | — |
| run, orchestration ms/step (mean): 10 / 50 / 200 stories | $(metric 'RunStories/stories-10-' mean-overhead-ms/step) / $(metric 'RunStories/stories-50-' mean-overhead-ms/step) / $(metric 'RunStories/stories-200-' mean-overhead-ms/step) | ≤ 50 at 200, ≤ 1.3× the 10 |
| run on the build-auto pipeline (BMAD 6.12), orchestration ms/step (mean): 10 / 100 stories (100 ÷ 10) | $(metric 'RunStoriesBuildAuto/stories-10-' mean-overhead-ms/step) / $(metric 'RunStoriesBuildAuto/stories-100-' mean-overhead-ms/step) ($(ratio "$(metric 'RunStoriesBuildAuto/stories-100-' mean-overhead-ms/step)" "$(metric 'RunStoriesBuildAuto/stories-10-' mean-overhead-ms/step)")×) | 100 ≤ 1.3× the 10 |
| 200 concurrent monitors: p50 / p99 / failures | $(metric ConcurrentMonitors p50-ms) / $(metric ConcurrentMonitors p99-ms) ms / $(metric ConcurrentMonitors failures) | p99 ≤ 1 s, 0 |
| 200 concurrent monitors: child exit → exit recorded p50 / p99; CPU per monitor | $(metric ConcurrentMonitors exit-recorded-p50-ms) / $(metric ConcurrentMonitors exit-recorded-p99-ms) ms; $(metric ConcurrentMonitors monitor-cpu-ms) ms | — |
| orchestrating Claude session, 3 stories: requests / tokens per story (steps of 2 s; 20 s) | $(metric 'OrchestratingSessionTurns/step-2s' requests/story) / $(metric 'OrchestratingSessionTurns/step-2s' tokens/story) ($(metric 'OrchestratingSessionTurns/step-20s' requests/story) / $(metric 'OrchestratingSessionTurns/step-20s' tokens/story)) | ≤ 3 requests/story, flat in step time |
| 200 concurrent monitors: summed RSS (PSS, anonymous) | $(metric ConcurrentMonitors sum-rss-MiB) MiB ($(metric ConcurrentMonitors sum-pss-MiB), $(metric ConcurrentMonitors sum-anon-MiB)) | ≤ 1 GiB |
TABLE
