#!/usr/bin/env bash
# Piranha runtime benchmarks (issue 3), run on one machine with real
# processes: a `piranha ts serve`, node agents replaying availability traces,
# and the example jobs.
#
#   bench/runtime.sh [--retreats N] [--quick]
#
#  1. cmatrix 500 (250,000 row-by-column tasks) on two agents: turnaround and
#     tasks per second.
#  2. cmatrix --grain 10 with one and two agents, against the sequential
#     multiply that cmatrix itself times with the same kernel (the anchor).
#  3. Retreat latency: N retreats (default 100) forced by trace steps on two
#     agents whose piranhas run 20 ms tasks; from the availability change to
#     the piranha's exit, as the agents measure it (p50 and max).
# Prints a markdown summary for docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
RETREATS=100
DIM=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --retreats) RETREATS=$2; shift 2 ;;
    --quick) RETREATS=20; DIM=500; shift ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "bench/runtime.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for p in piranha cmatrix sleepy_job; do
  [ -x "$BIN/$p" ] || { echo "bench/runtime.sh: $BIN/$p is missing; build first (cmake --build build)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/piranha-bench-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start_server() {
  "$BIN/piranha" ts serve --bind 'tcp://127.0.0.1:*' 2>"$WORK/server.log" &
  PIDS+=($!)
  for _ in $(seq 100); do
    EP=$(grep -o 'tcp://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 || true)
    [ -n "$EP" ] && return
    sleep 0.05
  done
  echo "bench/runtime.sh: the server did not start" >&2; exit 1
}

# always_trace FILE NODES...: every node available for the whole trace.
always_trace() {
  local f=$1; shift
  printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\n' >"$f"
  for n in "$@"; do echo "$n,0,100000" >>"$f"; done
}

# start_agents TRACE SCALE NODES...: one agent per node, events in $WORK/NODE.events.
start_agents() {
  local trace=$1 scale=$2; shift 2
  AGENTS=()
  for n in "$@"; do
    "$BIN/piranha" agent --quiet --node "$n" --server "$EP" --trace "$trace" --time-scale "$scale" \
      --events "$WORK/$n.events" --piranha-output "$WORK/$n.piranhas" &
    AGENTS+=($!)
    PIDS+=($!)
  done
  sleep 0.5
}
stop_agents() {
  for p in "${AGENTS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${AGENTS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# field TEXT NAME: the number after NAME in cmatrix's result line.
field() { sed -n "s/.*$2 \([0-9.]*\) s.*/\1/p" <<<"$1" | head -1; }

echo "== cmatrix 500 on two agents"
start_server
always_trace "$WORK/up.avail.csv" a1 a2
start_agents "$WORK/up.avail.csv" 60 a1 a2
t0=$(date +%s.%N)
out=$(PIRANHA_SERVER=$EP "$BIN/cmatrix" 500 2>&1)
t1=$(date +%s.%N)
stop_agents
echo "$out"
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
TURN500=$(calc "$t1 - $t0")
RATE500=$(awk "BEGIN { printf \"%.0f\", 250000 / ($t1 - $t0) }")

declare -A PAR
SEQ=""
for agents in 1 2; do
  echo "== cmatrix $DIM --grain 10 on $agents agent(s)"
  nodes=(); for i in $(seq "$agents"); do nodes+=("g$i"); done
  always_trace "$WORK/g.avail.csv" "${nodes[@]}"
  start_agents "$WORK/g.avail.csv" 60 "${nodes[@]}"
  out=$(PIRANHA_SERVER=$EP "$BIN/cmatrix" "$DIM" --grain 10 2>&1)
  stop_agents
  echo "$out"
  PAR[$agents]=$(field "$out" parallel)
  s=$(field "$out" "sequential multiply")
  SEQ="$SEQ $s"
done
seq_best=$(tr ' ' '\n' <<<"$SEQ" | grep . | sort -g | head -1)

echo "== retreat latency over $RETREATS retreats"
# One trace step lasts 0.1 s: available for 8 steps, away for 3.
{
  printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 11000\nnode,start,end\n'
  for n in r1 r2; do for s in $(seq 0 11 10989); do echo "$n,$s,$((s + 8))"; done; done
} >"$WORK/flip.avail.csv"
start_agents "$WORK/flip.avail.csv" 600 r1 r2
PIRANHA_SERVER=$EP "$BIN/sleepy_job" 1000000 20 >/dev/null 2>&1 &
FEEDER=$!
PIDS+=($FEEDER)
count() { cat "$WORK"/r1.events "$WORK"/r2.events 2>/dev/null | grep '"event":"retreat"' | grep -c '"cause":"unavailable"' || true; }
while [ "$(count)" -lt "$RETREATS" ]; do sleep 0.5; done
"$BIN/piranha" cancel --server "$EP" 1 >/dev/null 2>&1 || kill "$FEEDER" 2>/dev/null || true
stop_agents
LAT=$(cat "$WORK"/r1.events "$WORK"/r2.events | grep '"event":"retreat"' | grep '"cause":"unavailable"' |
  sed -n 's/.*"latency_ms":\([0-9.]*\).*/\1/p' | sort -g | head -"$RETREATS")
N=$(wc -l <<<"$LAT")
P50=$(sed -n "$(((N + 1) / 2))p" <<<"$LAT")
MAX=$(tail -1 <<<"$LAT")
KILLED=$(cat "$WORK"/r1.events "$WORK"/r2.events | grep '"event":"retreat"' | grep -c '"killed":true' || true)

echo
echo "| figure | measured | anchor / aim |"
echo "|---|---|---|"
echo "| cmatrix 500 on two agents (250,000 tasks) | $TURN500 s, $RATE500 tasks/s | paper: 530 s on four 1993 workstations; aim < 10 s |"
echo "| cmatrix $DIM --grain 10, one agent | ${PAR[1]} s (speedup $(calc "$seq_best / ${PAR[1]}")) | sequential multiply $seq_best s |"
echo "| cmatrix $DIM --grain 10, two agents | ${PAR[2]} s (speedup $(calc "$seq_best / ${PAR[2]}")) | aim 1.8x |"
echo "| retreat latency, $N retreats (trace steps) | p50 $P50 ms, max $MAX ms ($KILLED killed after the grace) | aim < 100 ms |"
