#!/usr/bin/env bash
# How long the operator's commands take on a built checkout (docs/operations.md, "Command timings"):
# `npm run keys -- list`, `npm run webhooks -- list`, and `npm start` until its banner. Each is run
# once to build (not timed) and then RUNS times; prints one line per command, the median in seconds.
#   bash scripts/operator-timings.sh            # DATABASE_URL defaults to a jobs_timings database on 127.0.0.1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS="${RUNS:-3}"
export DATABASE_URL="${DATABASE_URL:-mysql://root@127.0.0.1:3306/jobs_timings}"

now() { date +%s.%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }'; }

# One timed run of "$@", its output discarded; fails the script when the command does.
timed() {
  local start end
  start="$(now)"
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; return 1; }
  end="$(now)"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}

# npm start until its banner, on ports of its own (PORT=0, the gateway on a free port): then SIGTERM.
start_to_banner() {
  local start out pid end
  out="$(mktemp)"
  start="$(now)"
  PORT=0 KONG_PROXY_LISTEN=127.0.0.1:0 setsid npm start >"$out" 2>&1 &
  pid=$!
  for _ in $(seq 1 1200); do
    grep -q 'Job Listings API on' "$out" && break
    kill -0 "$pid" 2>/dev/null || { cat "$out" >&2; rm -f "$out"; return 1; }
    sleep 0.05
  done
  end="$(now)"
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  grep -q 'Job Listings API on' "$out" || { cat "$out" >&2; rm -f "$out"; return 1; }
  rm -f "$out"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}

measure() {
  local label="$1"; shift
  "$@" >/dev/null # the build, and a first start-up that migrates
  local times=()
  for _ in $(seq 1 "$RUNS"); do times+=("$("$@")"); done
  printf '%-28s %s s (median of %s: %s)\n' "$label" "$(printf '%s\n' "${times[@]}" | median)" "$RUNS" "${times[*]}"
}

# npm start first: it creates and migrates the database that webhooks list reads.
measure 'npm start (to its banner)' start_to_banner
measure 'npm run keys -- list' timed npm run -s keys -- list
measure 'npm run webhooks -- list' timed npm run -s webhooks -- list demo-reader
