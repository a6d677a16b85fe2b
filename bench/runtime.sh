#!/usr/bin/env bash
# Piranha runtime benchmarks, run on one machine with real processes: a
# `piranha ts serve`, node agents replaying availability traces, and the
# example jobs. Each figure is measured next to its anchor in the same run.
#
#   bench/runtime.sh [--json] [--quick] [--repeat R] [--retreats N] [--starts N]
#
#  1. cmatrix 500 (250,000 row-by-column tasks) on two agents: the feeder's
#     turnaround (median of R runs) and tasks per second.
#  2. cmatrix 1000 --grain 10 (100 tasks of 10 rows) on one and on two
#     agents, R runs each. The anchor is the sequential multiply that cmatrix
#     itself times in the same invocation, with the same kernel: each run's
#     speedup is its own sequential time over its own parallel time, and the
#     median over the R runs is reported. cmatrix also says how busy the
#     machine's CPUs were during its parallel time (busy_pct); and the
#     sequential multiply alone and two at once (cmatrix --sequential, R
#     times) give what two cores can give the kernel itself, no Piranha at
#     all: kernel_two_core_bound = 2 x alone / two at once. Each one-agent
#     run is followed by one whose agent runs its piranhas at the normal
#     priority (--piranha-priority normal) instead of SCHED_IDLE.
#  3. Job start: N hello_job submits (default 20) to one idle agent, from
#     submission (the job record's submit_time) to the agent starting its
#     piranha (agent_start_ms) and to the first task taken (job_start_ms).
#  4. Retreat latency: N retreats (default 100) forced by trace steps on two
#     agents whose piranhas run 20 ms tasks, from the availability change to
#     the piranha's exit, as the agents measure it; then N more with the
#     owner's CPU-bound load on every core (one busy loop per CPU at normal
#     priority). A ticker records the machine's stalls (gaps of over 20 ms in
#     its 5 ms wake-ups: every process stood still, as happens on this shared
#     VM); the latencies of retreats whose window held none are given apart.
# Prints a markdown table for docs/performance.md, or with --json one JSON
# object (keys below); progress goes to stderr. --quick: cmatrix 500 instead
# of 1000 for the grain runs, one run of each, 20 retreats, 5 starts: a smoke
# check, not the measurement.
#
# JSON keys: cmatrix500_s, cmatrix500_tasks_per_s, cmatrix500_runs_s,
# sequential_s, grain10_speedup_1, grain10_speedup_2, grain10_parallel_s_1,
# grain10_parallel_s_2, grain10_task_ms_1, grain10_task_ms_2,
# grain10_speedups_1, grain10_speedups_2, grain10_speedup_1_normal and
# grain10_speedups_1_normal (one agent with --piranha-priority normal, each
# run right after an idle one: what SCHED_IDLE costs where the server and
# the feeder share the piranha's CPUs), grain10_job_s_1, grain10_job_s_2
# (from the feeder's start, B's distribution included), grain10_busy_pct_1,
# grain10_busy_pct_2 (the CPUs' busy share of the parallel time),
# grain10_cpu_bound_2 (the two-agent speedup had the CPUs been busy all the
# parallel time: speedup / busy share), kernel_two_core_bound,
# kernel_alone_s, kernel_both_s, job_start_ms_p50, job_start_ms_p99,
# agent_start_ms_p50, agent_start_ms_p99, retreat_ms_p50, retreat_ms_p99,
# retreat_ms_max, retreat_killed, retreat_loaded_ms_p50,
# retreat_loaded_ms_p99, retreat_loaded_ms_max, retreat_loaded_killed,
# retreat_unstalled_ms_p50/p99/n, retreat_loaded_unstalled_ms_p50/p99/n,
# stalls, config, machine, date.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
RETREATS=100
STARTS=20
REPEAT=3
DIM=1000
JSON=0
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --retreats) RETREATS=$2; shift 2 ;;
    --starts) STARTS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --json) JSON=1; shift ;;
    --quick) QUICK=1; RETREATS=20; STARTS=5; REPEAT=1; DIM=500; shift ;;
    -h|--help) sed -n "2,/^set -euo/p" "$0" | sed "/^set -euo/d"; exit 0 ;;
    *) echo "bench/runtime.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for p in piranha cmatrix sleepy_job hello_job; do
  [ -x "$BIN/$p" ] || { echo "bench/runtime.sh: $BIN/$p is missing; build first (cmake --build build)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/piranha-bench-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "bench/runtime.sh: kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
log() { echo "bench/runtime.sh: $*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }
LOAD_START=$(load1)
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)

start_server() {
  "$BIN/piranha" ts serve --quiet --bind 'tcp://127.0.0.1:*' 2>"$WORK/server.log" &
  SERVER=$!
  PIDS+=($SERVER)
  for _ in $(seq 100); do
    EP=$(grep -o 'tcp://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 || true)
    [ -n "$EP" ] && return
    sleep 0.05
  done
  echo "bench/runtime.sh: the server did not start" >&2; exit 1
}
stop_server() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }

# always_trace FILE NODES...: every node available for the whole trace.
always_trace() {
  local f=$1; shift
  printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\n' >"$f"
  for n in "$@"; do echo "$n,0,100000" >>"$f"; done
}

# start_agents TRACE SCALE NODES...: one agent per node, events in $WORK/NODE.events,
# with the piranha priority $PRIORITY (idle unless set).
start_agents() {
  local trace=$1 scale=$2; shift 2
  AGENTS=()
  for n in "$@"; do
    rm -f "$WORK/$n.events"
    "$BIN/piranha" agent --quiet --node "$n" --server "$EP" --trace "$trace" --time-scale "$scale" \
      --events "$WORK/$n.events" --piranha-output "$WORK/$n.piranhas" --piranha-priority "${PRIORITY:-idle}" &
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
# The mean task time in ms from the runtime's summary ("mean 7.62 ms" or "mean 4.8 us").
task_ms() { sed -n 's/.* mean \([0-9.]*\) \(ms\|us\|s\),.*/\1 \2/p' <<<"$1" | head -1 |
  awk '{ print ($2 == "us" ? $1 / 1000 : ($2 == "s" ? $1 * 1000 : $1)) }'; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
# median and percentile of numbers on stdin, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "null"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pct() { sort -g | awk -v p="$1" '{ v[NR] = $1 } END { if (NR == 0) { print "null"; exit } i = int(p / 100 * NR + 0.999999); if (i < 1) i = 1; print v[i] }'; }
jlist() { local s="" x; for x in "$@"; do s="$s${s:+, }$x"; done; echo "[$s]"; }
check_ok() { grep -q 'result OK' <<<"$1" || { echo "bench/runtime.sh: cmatrix did not check OK:" >&2; echo "$1" >&2; exit 1; }; }

log "cmatrix 500 on two agents, $REPEAT run(s)"
start_server
always_trace "$WORK/up.avail.csv" a1 a2
RUNS500=()
for r in $(seq "$REPEAT"); do
  start_agents "$WORK/up.avail.csv" 60 a1 a2
  t0=$(date +%s.%N)
  out=$(PIRANHA_SERVER=$EP "$BIN/cmatrix" 500 2>&1)
  t1=$(date +%s.%N)
  stop_agents
  check_ok "$out"
  RUNS500+=("$(calc "$t1 - $t0")")
  log "  run $r: ${RUNS500[-1]} s ($(grep -o 'parallel [0-9.]* s' <<<"$out"))"
done
stop_server
TURN500=$(printf '%s\n' "${RUNS500[@]}" | median)
RATE500=$(awk -v t="$TURN500" 'BEGIN { printf "%.0f", 250000 / t }')

# grain_run: one cmatrix --grain 10 on fresh agents for the nodes in $nodes
# (piranha priority $PRIORITY); sets out, p (parallel s) and s (sequential s).
grain_run() {
  start_agents "$WORK/g.avail.csv" 60 "${nodes[@]}"
  out=$(PIRANHA_SERVER=$EP "$BIN/cmatrix" "$DIM" --grain 10 2>&1)
  stop_agents
  check_ok "$out"
  p=$(field "$out" parallel); s=$(field "$out" "sequential multiply")
}

declare -A SPEEDUP PAR TASK SPEEDUPS JOBT BUSY
SEQS=()
SPN=()  # one agent whose piranhas run at the normal priority, each run right after an idle one
for agents in 1 2; do
  log "cmatrix $DIM --grain 10 on $agents agent(s), $REPEAT run(s)$( ((agents == 1)) && echo ", each followed by one with --piranha-priority normal")"
  start_server
  nodes=(); for i in $(seq "$agents"); do nodes+=("g$i"); done
  always_trace "$WORK/g.avail.csv" "${nodes[@]}"
  sp=(); pa=(); tm=(); jt=(); bu=()
  for r in $(seq "$REPEAT"); do
    grain_run
    sp+=("$(calc "$s / $p")"); pa+=("$p"); tm+=("$(task_ms "$out")"); SEQS+=("$s")
    jt+=("$(field "$out" job)")
    b=$(sed -n 's/.*CPUs busy \([0-9]*\) %.*/\1/p' <<<"$out" | head -1)
    [ -n "$b" ] && bu+=("$b")
    log "  run $r: parallel $p s, sequential $s s, speedup ${sp[-1]}, mean task ${tm[-1]} ms, CPUs busy ${b:-n/a} %, job ${jt[-1]} s"
    if ((agents == 1)); then
      PRIORITY=normal grain_run
      SPN+=("$(calc "$s / $p")")
      log "  run $r, normal priority: parallel $p s, sequential $s s, speedup ${SPN[-1]}"
    fi
  done
  stop_server
  SPEEDUP[$agents]=$(printf '%s\n' "${sp[@]}" | median)
  PAR[$agents]=$(printf '%s\n' "${pa[@]}" | median)
  TASK[$agents]=$(printf '%s\n' "${tm[@]}" | median)
  SPEEDUPS[$agents]=$(jlist "${sp[@]}")
  JOBT[$agents]=$(printf '%s\n' "${jt[@]}" | median)
  # cmatrix says "n/a" for a parallel time under 10 clock ticks: null when no run had one.
  BUSY[$agents]=$( ((${#bu[@]})) && printf '%s\n' "${bu[@]}" | median || echo null)
done
SEQ=$(printf '%s\n' "${SEQS[@]}" | median)
SPEEDUP_N=$(printf '%s\n' "${SPN[@]}" | median)
CPU_BOUND2=null
[ "${BUSY[2]}" != null ] && CPU_BOUND2=$(calc "${SPEEDUP[2]} * 100 / ${BUSY[2]}")

log "the kernel on two cores: cmatrix $DIM --sequential alone, then two at once, $REPEAT time(s)"
ALONE=(); BOTH=()
for r in $(seq "$REPEAT"); do
  ALONE+=("$(field "$("$BIN/cmatrix" "$DIM" --sequential)" "sequential multiply")")
  "$BIN/cmatrix" "$DIM" --sequential >"$WORK/k1" &
  k1=$!
  "$BIN/cmatrix" "$DIM" --sequential >"$WORK/k2" &
  k2=$!
  wait "$k1" "$k2"
  BOTH+=("$(field "$(cat "$WORK/k1")" "sequential multiply")" "$(field "$(cat "$WORK/k2")" "sequential multiply")")
  log "  alone ${ALONE[-1]} s, two at once ${BOTH[-2]} and ${BOTH[-1]} s"
done
KALONE=$(printf '%s\n' "${ALONE[@]}" | median)
KBOTH=$(printf '%s\n' "${BOTH[@]}" | median)
KBOUND=$(calc "2 * $KALONE / $KBOTH")

log "job start: $STARTS hello_job submits to one idle agent"
start_server
always_trace "$WORK/s.avail.csv" s1
start_agents "$WORK/s.avail.csv" 60 s1
for i in $(seq "$STARTS"); do
  "$BIN/piranha" submit --server "$EP" "$BIN/hello_job" >/dev/null 2>&1 || { echo "bench/runtime.sh: hello_job failed" >&2; exit 1; }
  # 0.2 to 0.45 s apart, so that submissions cannot fall in step with anything periodic.
  sleep "0.$((20 + RANDOM % 26))"
done
stop_agents
# "submit_time start_time" per job, then each job's first piranha start from the agent's events.
"$BIN/piranha" jobs --all --json --server "$EP" | awk '
  /"id":/ { gsub(/[",]/, "", $2); i = $2 } /"start_time":/ { gsub(/[",]/, "", $2); s = $2 }
  /"submit_time":/ { gsub(/[",]/, "", $2); u = $2 } /^  }/ { print i, u, s }' >"$WORK/starts.txt"
stop_server
START_MS=$(awk '$3 != "null" { printf "%.2f\n", ($3 - $2) * 1000 }' "$WORK/starts.txt")
AGENT_MS=$(awk 'NR == FNR { u[$1] = $2; next }
  /"event":"start"/ { split($0, a, "\"time\":"); split(a[2], b, ","); split($0, c, "\"job\":"); split(c[2], d, ",")
                      if (!(d[1] in seen)) { seen[d[1]] = 1; printf "%.2f\n", (b[1] - u[d[1]]) * 1000 } }' \
  "$WORK/starts.txt" "$WORK/s1.events")
log "  submission to first task, ms: $(tr '\n' ' ' <<<"$START_MS")"

# The machine's stalls: a ticker at normal priority wakes every 5 ms and
# records each gap of over 20 ms between its wake-ups ("from to" in epoch
# seconds) in $WORK/LABEL.stalls. On this shared VM every process sometimes
# stands still for seconds; a retreat whose window holds such a stall says
# nothing about the runtime, and is reported apart.
start_ticker() {
  (
    exec 3<> <(:)
    last=${EPOCHREALTIME/./}
    while :; do
      read -r -t 0.005 -u 3 _ || true
      now=${EPOCHREALTIME/./}
      if ((now - last > 20000)); then echo "${last:0:-6}.${last: -6} ${now:0:-6}.${now: -6}"; fi
      last=$now
    done
  ) >"$WORK/$1.stalls" &
  TICKER=$!
  PIDS+=($TICKER)
}
stop_ticker() { kill "$TICKER" 2>/dev/null || true; wait "$TICKER" 2>/dev/null || true; }

# retreats LABEL: RETREATS retreats forced by trace steps; latencies in
# $WORK/LABEL.lat, and those whose window held no stall in LABEL.clean.
retreats() {
  # One trace step lasts 0.1 s: available for 8 steps, away for 3.
  {
    printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 11000\nnode,start,end\n'
    for n in r1 r2; do for s in $(seq 0 11 10989); do echo "$n,$s,$((s + 8))"; done; done
  } >"$WORK/flip.avail.csv"
  start_server
  # The feeder writes its tasks first (20,000 posted outs keep the server
  # busy for a while), then the agents start.
  PIRANHA_SERVER=$EP "$BIN/sleepy_job" 20000 20 >/dev/null 2>&1 &
  local feeder=$!
  PIDS+=($feeder)
  until "$BIN/piranha" jobs --json --server "$EP" 2>/dev/null | grep -q '"tasks": 20000'; do sleep 0.2; done
  start_agents "$WORK/flip.avail.csv" 600 r1 r2
  start_ticker "$1"
  count() { cat "$WORK"/r1.events "$WORK"/r2.events 2>/dev/null | grep '"event":"retreat"' | grep -c '"cause":"unavailable"' || true; }
  while [ "$(count)" -lt "$RETREATS" ]; do sleep 0.5; done
  "$BIN/piranha" cancel --server "$EP" 1 >/dev/null 2>&1 || kill "$feeder" 2>/dev/null || true
  wait "$feeder" 2>/dev/null || true
  stop_agents
  stop_ticker
  stop_server
  cat "$WORK"/r1.events "$WORK"/r2.events | grep '"event":"retreat"' | grep '"cause":"unavailable"' |
    head -"$RETREATS" >"$WORK/$1.retreats"
  sed -n 's/.*"latency_ms":\([0-9.]*\).*/\1/p' "$WORK/$1.retreats" >"$WORK/$1.lat"
  # A retreat's window runs from the availability change to the exit (the event's time).
  awk 'FILENAME == ARGV[1] { n++; from[n] = $1; to[n] = $2; next }
       { split($0, a, "\"time\":"); split(a[2], b, ","); split($0, c, "\"latency_ms\":"); split(c[2], d, ",")
         end = b[1]; start = end - d[1] / 1000; stalled = 0
         for (i = 1; i <= n; i++) if (from[i] < end && to[i] > start) stalled = 1
         if (!stalled) print d[1] }' "$WORK/$1.stalls" "$WORK/$1.retreats" >"$WORK/$1.clean"
}

log "retreat latency over $RETREATS retreats, idle machine"
retreats idle
log "retreat latency over $RETREATS retreats, with a CPU-bound owner load on every core"
LOADERS=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  LOADERS+=($!)
  PIDS+=($!)
done
retreats loaded
for p in "${LOADERS[@]}"; do kill "$p" 2>/dev/null || true; done
LOAD_END=$(load1)

R50=$(pct 50 <"$WORK/idle.lat"); R99=$(pct 99 <"$WORK/idle.lat"); RMAX=$(pct 100 <"$WORK/idle.lat")
L50=$(pct 50 <"$WORK/loaded.lat"); L99=$(pct 99 <"$WORK/loaded.lat"); LMAX=$(pct 100 <"$WORK/loaded.lat")
C50=$(pct 50 <"$WORK/idle.clean"); C99=$(pct 99 <"$WORK/idle.clean"); CN=$(wc -l <"$WORK/idle.clean")
D50=$(pct 50 <"$WORK/loaded.clean"); D99=$(pct 99 <"$WORK/loaded.clean"); DN=$(wc -l <"$WORK/loaded.clean")
# stalls LABEL: "count longest_ms" of the machine's stalls during that phase.
stalls() { awk '{ n++; g = ($2 - $1) * 1000; if (g > m) m = g } END { printf "%d %.0f\n", n, m }' "$WORK/$1.stalls"; }
read -r SI SIM <<<"$(stalls idle)"
read -r SL SLM <<<"$(stalls loaded)"
RK=$(grep -c '"killed":true' "$WORK/idle.retreats" || true)
LK=$(grep -c '"killed":true' "$WORK/loaded.retreats" || true)
S50=$(pct 50 <<<"$START_MS"); S99=$(pct 99 <<<"$START_MS")
A50=$(pct 50 <<<"$AGENT_MS"); A99=$(pct 99 <<<"$AGENT_MS")

if [ "$JSON" = 1 ]; then
  CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr -d '"\\')
  cat <<EOF
{
  "cmatrix500_s": $TURN500, "cmatrix500_tasks_per_s": $RATE500, "cmatrix500_runs_s": $(jlist "${RUNS500[@]}"),
  "sequential_s": $SEQ,
  "grain10_speedup_1": ${SPEEDUP[1]}, "grain10_speedup_2": ${SPEEDUP[2]},
  "grain10_speedups_1": ${SPEEDUPS[1]}, "grain10_speedups_2": ${SPEEDUPS[2]},
  "grain10_speedup_1_normal": $SPEEDUP_N, "grain10_speedups_1_normal": $(jlist "${SPN[@]}"),
  "grain10_parallel_s_1": ${PAR[1]}, "grain10_parallel_s_2": ${PAR[2]},
  "grain10_task_ms_1": ${TASK[1]}, "grain10_task_ms_2": ${TASK[2]},
  "grain10_job_s_1": ${JOBT[1]}, "grain10_job_s_2": ${JOBT[2]},
  "grain10_busy_pct_1": ${BUSY[1]}, "grain10_busy_pct_2": ${BUSY[2]}, "grain10_cpu_bound_2": $CPU_BOUND2,
  "kernel_two_core_bound": $KBOUND, "kernel_alone_s": $KALONE, "kernel_both_s": $KBOTH,
  "job_start_ms_p50": $S50, "job_start_ms_p99": $S99, "agent_start_ms_p50": $A50, "agent_start_ms_p99": $A99,
  "retreat_ms_p50": $R50, "retreat_ms_p99": $R99, "retreat_ms_max": $RMAX, "retreat_killed": $RK,
  "retreat_loaded_ms_p50": $L50, "retreat_loaded_ms_p99": $L99, "retreat_loaded_ms_max": $LMAX,
  "retreat_loaded_killed": $LK,
  "retreat_unstalled_ms_p50": $C50, "retreat_unstalled_ms_p99": $C99, "retreat_unstalled_n": $CN,
  "retreat_loaded_unstalled_ms_p50": $D50, "retreat_loaded_unstalled_ms_p99": $D99, "retreat_loaded_unstalled_n": $DN,
  "stalls": {"idle": $SI, "idle_longest_ms": $SIM, "loaded": $SL, "loaded_longest_ms": $SLM},
  "config": {"quick": $([ "$QUICK" = 1 ] && echo true || echo false), "repeat": $REPEAT, "grain_dim": $DIM,
             "retreats": $RETREATS, "starts": $STARTS},
  "machine": {"cpu": "$CPU", "cpus": $(nproc), "kernel": "$(uname -sr)",
              "load_average_start": $LOAD_START, "load_average_end": $LOAD_END},
  "date": "$DATE"
}
EOF
  exit 0
fi

echo
echo "| figure | measured | anchor / aim |"
echo "|---|---|---|"
echo "| cmatrix 500 on two agents (250,000 tasks), median of $REPEAT | $TURN500 s, $RATE500 tasks/s (runs: ${RUNS500[*]} s) | aim <= 2 s |"
echo "| cmatrix $DIM --grain 10, one agent, median of $REPEAT | speedup ${SPEEDUP[1]} (parallel ${PAR[1]} s, mean task ${TASK[1]} ms) | sequential multiply $SEQ s (same runs); aim >= 0.9 |"
echo "| the same with --piranha-priority normal (each run right after an idle one) | speedup $SPEEDUP_N | what the idle priority costs where the server and the feeder share the CPUs |"
echo "| cmatrix $DIM --grain 10, two agents, median of $REPEAT | speedup ${SPEEDUP[2]} (parallel ${PAR[2]} s, mean task ${TASK[2]} ms) | aim >= 1.8 |"
echo "| the same, from the feeder's start (B's distribution included) | one agent ${JOBT[1]} s, two agents ${JOBT[2]} s | |"
echo "| CPUs busy during the parallel time, median | one agent ${BUSY[1]} %, two agents ${BUSY[2]} % | two agents at 100 % busy: speedup $CPU_BOUND2 |"
echo "| the kernel alone and two at once (cmatrix --sequential, no Piranha) | $KALONE s and $KBOTH s: two cores give it ${KBOUND}x | the most any job can get from two cores |"
echo "| job start, $STARTS submits to an idle agent | agent starts its piranha p50 $A50 ms (p99 $A99); first task p50 $S50 ms (p99 $S99) | aim <= 10 ms |"
echo "| retreat latency, $RETREATS retreats (trace steps) | p50 $R50 ms, p99 $R99 ms, max $RMAX ms ($RK killed after the grace) | aim p99 < 20 ms |"
echo "| the same under a CPU-bound owner load | p50 $L50 ms, p99 $L99 ms, max $LMAX ms ($LK killed) | aim p99 < 20 ms |"
echo "| retreats whose window held no stall of the machine | idle: p50 $C50, p99 $C99 ms ($CN of $RETREATS); loaded: p50 $D50, p99 $D99 ms ($DN of $RETREATS) | |"
echo "| the machine's stalls over 20 ms (every process stood still) | idle phase: $SI, longest $SIM ms; loaded phase: $SL, longest $SLM ms | |"
echo "| load average (1 min) | $LOAD_START at the start, $LOAD_END at the end | |"
