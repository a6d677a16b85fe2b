#!/usr/bin/env bash
# The NPS experiments of the paper, section 9.2, on local agents replaying an
# always-available trace (so owners never interrupt).
#
#   bench/nps.sh [--json] [--quick] [--runs N] [--trials N] [--agents N]
#                [--batch-periods LIST] [--html FILE | --no-html] [--keep]
#                [--shadows LIST] [--page] [--report FILE]
#
#  1. Overhead: cmatrix 500 alone on the pool, (a) no NPS (the agents' native
#     FAIR), (b) the NPS running TSK at --period 10, (c) at --period 1.
#     N runs each (default 5), interleaved run by run in a rotating order.
#  2. Batch (Figure 10): cmatrix 300, 400, 500, 600 submitted together as
#     JOB1..JOB4; NAT (no NPS, native FAIR) against EXT (the NPS, TSK) at
#     each setting of --batch-periods (default "10,1,10e"; the first is the
#     figure's EXT; "10e": period 10 plus a decision whenever the job
#     queue changes, the scheduler's on_events); N trials each (default 3),
#     interleaved.
#  A fresh tuple-space server, fresh agents and a fresh NPS for every run and
#  trial. Turnaround is the job record's (`piranha jobs --json`
#  turnaround_seconds: submit's registration to the feeder's done record).
#  --quick: 1 run and 1 trial, period 10 only in the batch, no HTML: a smoke
#  check, NOT the measurement. Progress on stderr; a table (or, with --json,
#  one JSON object) on stdout; docs/nps-batch.html (a Figure-10-style chart)
#  unless --quick or --no-html. --agents: node agents, 1 core each (default 2,
#  as many as the machine has cores). --keep: leave the work directory.
#  --shadows LIST: every NPS also runs these shadow schedulers (FCFS,SRT,FAIR)
#  for its evaluator to estimate; --page: every NPS serves its live page
#  (--http) with a client (curl) reading its event stream throughout;
#  --report FILE: `piranha nps report --html FILE` (and FILE's .json twin)
#  of the last trial of the first EXT setting, written before that pool goes.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
ME=bench/nps.sh

JSON=0 QUICK=0 KEEP=0
RUNS=5 TRIALS=3 AGENTS=2
SHADOWS="" PAGE=0 REPORT="" PAGE_PID=""
BATCH_PERIODS="10,1,10e"
HTML=docs/nps-batch.html HTML_SET=0 NO_HTML=0 BP_SET=0
while [ $# -gt 0 ]; do
  case "$1" in
    --json) JSON=1; shift ;;
    --quick) QUICK=1; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    --trials) TRIALS=$2; shift 2 ;;
    --agents) AGENTS=$2; shift 2 ;;
    --batch-periods) BATCH_PERIODS=$2; BP_SET=1; shift 2 ;;
    --html) HTML=$2; HTML_SET=1; shift 2 ;;
    --no-html) NO_HTML=1; shift ;;
    --keep) KEEP=1; shift ;;
    --shadows) SHADOWS=$2; shift 2 ;;
    --page) PAGE=1; shift ;;
    --report) REPORT=$2; shift 2 ;;
    -h|--help) sed -n 2,30p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$ME: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$QUICK" = 1 ]; then
  RUNS=1 TRIALS=1
  [ "$BP_SET" = 1 ] || BATCH_PERIODS=${BATCH_PERIODS%%,*}
  [ "$HTML_SET" = 1 ] || NO_HTML=1
fi
for v in RUNS TRIALS AGENTS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$ME: --${v,,} must be a positive integer" >&2; exit 2; }
done
IFS=, read -r -a EXT_PERIODS <<<"$BATCH_PERIODS"
for p in "${EXT_PERIODS[@]}"; do
  [[ $p =~ ^[0-9]+([.][0-9]+)?e?$ ]] || { echo "$ME: bad --batch-periods '$BATCH_PERIODS'" >&2; exit 2; }
done
for p in piranha cmatrix; do
  [ -x "$BIN/$p" ] || {
    echo "$ME: $BIN/$p is missing; build first (cmake -B build -G Ninja && cmake --build build)" >&2
    exit 1
  }
done

START=$SECONDS
log() { printf '%s [+%4ds] %s\n' "$(date +%H:%M:%S)" $((SECONDS - START)) "$*" >&2; }
now() { date +%s.%N; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

WORK=$(mktemp -d /tmp/piranha-nps-bench-XXXXXX)
# The binaries are copied first: the tree may be rebuilt while this runs,
# and every run must use the same code.
mkdir "$WORK/bin"
cp "$BIN/piranha" "$BIN/piranha-nps-page.so" "$BIN/cmatrix" "$WORK/bin/"  # the module: --page
BIN_TIME=$(date -u -r "$BIN/piranha" +%Y-%m-%dT%H:%M:%SZ)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$( [ -n "$(git status --porcelain -- '*.cc' '*.h' 2>/dev/null)" ] && echo true || echo false)
P="$WORK/bin/piranha"
CM="$WORK/bin/cmatrix"

SERVER_PID="" NPS_PID="" AGENT_PIDS=() JOB_PIDS=() EP=""
declare -A NPS_TICK  # the NPS's tick (s) per configuration, from its log
# stop_pids SECONDS PID...: SIGTERM, wait up to SECONDS, then SIGKILL.
stop_pids() {
  local limit=$1 p t; shift
  [ $# -gt 0 ] || return 0
  for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
  for ((t = 0; t < limit * 20; t++)); do
    local alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.05
  done
  for p in "$@"; do
    if kill -0 "$p" 2>/dev/null; then
      log "process $p ($(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-60)) ignored SIGTERM for ${limit} s: SIGKILL"
      # Its children (an agent's piranhas) would be orphaned: end them too.
      local kids
      kids=$(cat /proc/"$p"/task/*/children 2>/dev/null || true)
      kill -KILL "$p" $kids 2>/dev/null || true
    fi
    # Reap it (bash complains about a pid it has already reaped).
    if jobs -p | grep -qx "$p"; then wait "$p" 2>/dev/null || true; fi
  done
}
# pool_down: jobs, NPS, agents (they need the server to stop), then the server.
pool_down() {
  T_DOWN=$(now)
  stop_pids 10 "${JOB_PIDS[@]}"; JOB_PIDS=()
  [ -n "$PAGE_PID" ] && stop_pids 10 "$PAGE_PID"; PAGE_PID=""
  [ -n "$NPS_PID" ] && stop_pids 10 "$NPS_PID"; NPS_PID=""
  stop_pids 10 "${AGENT_PIDS[@]}"; AGENT_PIDS=()
  [ -n "$SERVER_PID" ] && stop_pids 10 "$SERVER_PID"; SERVER_PID=""
}
cleanup() {
  trap - EXIT INT TERM
  pool_down
  if [ "$KEEP" = 1 ]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

die() { log "error: $*"; exit 1; }

# The always-available trace: one node, available for the whole trace.
printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\nup,0,100000\n' \
  >"$WORK/up.avail.csv"

start_server() {
  : >"$D/server.log"
  "$P" ts serve --quiet --bind 'tcp://127.0.0.1:*' 2>"$D/server.log" &
  SERVER_PID=$!
  EP=""
  for _ in $(seq 200); do
    EP=$(grep -o 'tcp://127.0.0.1:[0-9]*' "$D/server.log" | head -1 || true)
    [ -n "$EP" ] && return
    sleep 0.05
  done
  die "the tuple-space server did not start: $(cat "$D/server.log")"
}

# count_nodes BY: agents whose node is available and that run on BY's word
# ("FAIR" or "scheduler 0").
count_nodes() {
  "$P" nodes --json --server "$EP" 2>/dev/null |
    awk -v by="$1" '/"by":/ { b = ($0 ~ "\"by\": \"" by "\"") } /"state":/ { if (b && $0 ~ /"available"/) n++ } END { print n + 0 }'
}
# live_jobs: how many queued or running jobs the pool has.
live_jobs() { "$P" jobs --json --server "$EP" 2>/dev/null | grep -c '"id":' || true; }

# pool_up CONFIG SEED: fresh server, agents and (CONFIG nps:PERIOD) the NPS;
# returns when every agent is available and obeys the right scheduler.
# Sets FIRST_DECISION (epoch seconds) for the NPS.
pool_up() {
  local cfg=$1 seed=$2 i
  start_server
  for ((i = 1; i <= AGENTS; i++)); do
    # stale_seconds: the NPS beats every tick (1 s); 30 s leaves room for a
    # loaded machine without ever falling back during a run.
    printf 'cores: 1\npolicy: FAIR\nseed: %d\nscheduler: {stale_seconds: 30}\n' $((seed * 10 + i)) >"$D/agent$i.yaml"
    "$P" agent --config "$D/agent$i.yaml" --node "a$i" --server "$EP" \
      --trace "$WORK/up.avail.csv" --trace-node up --cores 1 \
      --events "$D/a$i.events" --piranha-output "$D/a$i.piranhas" 2>>"$D/agents.log" &
    AGENT_PIDS+=($!)
  done
  local t
  for ((t = 0; t < 300; t++)); do
    [ "$(count_nodes FAIR)" = "$AGENTS" ] && break
    sleep 0.1
  done
  [ "$(count_nodes FAIR)" = "$AGENTS" ] || die "the $AGENTS agents did not become available in 30 s"
  FIRST_DECISION=""
  if [[ $cfg == nps:* ]]; then
    : >"$D/nps.log"
    local period=${cfg#nps:} extra=()
    [ "$PAGE" = 1 ] && extra+=(--http 127.0.0.1:0)
    if [[ $period == *e ]]; then
      # Period P plus a decision whenever the job queue changes (the
      # scheduler's on_events parameter), through the standard program for
      # the registered nodes as `nps init` prints it (on_events: true, as
      # `nps run` decides without a file; it printed false until
      # 2026-11-27 and this script edited it). The plain setting P decides
      # on events too; this one differs only in going through the program
      # file, and is kept so that older runs' columns still mean what they
      # meant.
      "$P" nps init --server "$EP" --strategy TSK --period "${period%e}" ${SHADOWS:+--shadow "$SHADOWS"} \
        >"$D/nps-events.yaml"
      grep -q 'on_events: true' "$D/nps-events.yaml" || die "nps init printed no on_events parameter"
      "$P" nps run "$D/nps-events.yaml" --server "$EP" "${extra[@]}" 2>"$D/nps.log" &
    else
      "$P" nps run --server "$EP" --strategy TSK --period "$period" ${SHADOWS:+--shadow "$SHADOWS"} "${extra[@]}" 2>"$D/nps.log" &
    fi
    NPS_PID=$! NPS_T0=$(now)
    for ((t = 0; t < 600; t++)); do
      if grep -q 'scheduler 0 (TSK): no job on' "$D/nps.log"; then FIRST_DECISION=$(now); break; fi
      kill -0 "$NPS_PID" 2>/dev/null || die "the NPS exited: $(cat "$D/nps.log")"
      sleep 0.05
    done
    [ -n "$FIRST_DECISION" ] || die "the NPS made no decision in 30 s: $(cat "$D/nps.log")"
    if [ "$PAGE" = 1 ]; then
      # The connected page: a client reading the event stream for the whole run.
      local url
      url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$D/nps.log" | head -1)
      [ -n "$url" ] || die "the NPS announced no live page: $(cat "$D/nps.log")"
      curl -sN "${url}events" >"$D/page-events.txt" 2>/dev/null &
      PAGE_PID=$!
    fi
    NPS_TICK[$cfg]=$(sed -n 's/.*a tick every \([0-9.]*\) s.*/\1/p' "$D/nps.log" | head -1)
    for ((t = 0; t < 300; t++)); do
      [ "$(count_nodes 'scheduler 0')" = "$AGENTS" ] && break
      sleep 0.1
    done
    [ "$(count_nodes 'scheduler 0')" = "$AGENTS" ] || die "the agents did not obey the NPS in 30 s"
  fi
  [ "$(live_jobs)" = 0 ] || die "the pool is not idle before the run"
}

# wait_phase CONFIG PHASE: under the NPS, submit at PHASE (0..1) of the
# scheduler's decision period after its first decision, so that the runs
# sample job arrivals evenly over the decision cycle (stratified: run r of R
# at (r - 0.5) / R). Without the NPS, a settle of 0.5 s.
wait_phase() {
  local cfg=$1 phase=$2
  if [[ $cfg != nps:* ]]; then sleep 0.5; return; fi
  local period=${cfg#nps:} d
  period=${period%e}
  d=$(awk -v f="$FIRST_DECISION" -v n="$(now)" -v p="$period" -v ph="$phase" \
    'BEGIN { t = f + ph * p; while (t < n + 0.2) t += p; printf "%.3f", t - n }')
  sleep "$d"
}

# submit TAG DIM: cmatrix DIM submitted in the background; waits until the
# job is registered and sets JOB_ID.
submit_bg() {
  local tag=$1 dim=$2 t
  : >"$D/$tag.err"
  "$P" submit --server "$EP" "$CM" "$dim" >"$D/$tag.out" 2>"$D/$tag.err" &
  JOB_PIDS+=($!)
  for ((t = 0; t < 400; t++)); do
    JOB_ID=$(sed -n 's/^job \([0-9]*\) submitted.*/\1/p' "$D/$tag.err" 2>/dev/null || true)
    [ -n "$JOB_ID" ] && return
    kill -0 "${JOB_PIDS[-1]}" 2>/dev/null || die "submit of cmatrix $dim failed: $(cat "$D/$tag.err")"
    sleep 0.025
  done
  die "cmatrix $dim was not registered in 10 s"
}
# wait_jobs LIMIT: waits for every submit (at most LIMIT seconds).
wait_jobs() {
  local limit=$1 t0=$SECONDS p
  for p in "${JOB_PIDS[@]}"; do
    while kill -0 "$p" 2>/dev/null; do
      ((SECONDS - t0 < limit)) || die "the jobs did not finish in $limit s"
      sleep 0.05
    done
    wait "$p" || die "a job failed (submit exit status $?): $(cat "$D"/*.err | tail -5)"
  done
  JOB_PIDS=()
}
# job_times ID: "turnaround wait run" of job ID from its record (seconds):
# turnaround = end - submit, wait = first task taken - submit, run = end - first task.
job_times() {
  "$P" jobs --all --json --server "$EP" | awk -v id="$1" '
    /"end_time":/ { e = $2 } /"id":/ { i = $2 } /"start_time":/ { s = $2 } /"submit_time":/ { u = $2 }
    /"state":/ { st = $2 } /"turnaround_seconds":/ { ta = $2 }
    /^  }/ { gsub(/[",]/, "", e); gsub(/[",]/, "", i); gsub(/[",]/, "", s); gsub(/[",]/, "", u); gsub(/[",]/, "", st); gsub(/[",]/, "", ta)
             if (i == id) { found = 1; if (st != "done") bad = st; else printf "%.3f %.3f %.3f\n", ta, s - u, e - s } }
    END { if (!found) print "missing"; else if (bad != "") print "state " bad }'
}
check_result() { grep -q 'result OK' "$D/$1.out" || die "cmatrix ($1) did not check OK: $(cat "$D/$1.out" "$D/$1.err")"; }

# fallbacks CONFIG: under the NPS, how many times an agent changed its target
# on its native policy's word before the pool went down (each one starts a
# piranha the NPS did not ask for; there should be none).
# fallbacks CONFIG: "ANY STARTS": under the NPS, how many times an agent
# went back to its native policy while the NPS ran (each agent logs
# "obeying scheduler 0" once at the start; every further one ends a
# fallback), and how many of those made it pick a job on its native
# policy's word before the pool went down. There should be none.
fallbacks() {
  if [[ $1 != nps:* ]]; then echo "0 0"; return; fi
  local any starts
  any=$(grep -c ': obeying scheduler 0' "$D/agents.log" || true)
  any=$((any > AGENTS ? any - AGENTS : 0))
  starts=$(cat "$D"/a*.events | awk -v t="$T_DOWN" '
    /"event":"target"/ && /"by":"FAIR"/ && !/"job":null/ { split($0, a, "\"time\":"); split(a[2], b, ","); if (b[1] + 0 < t + 0) n++ }
    END { print n + 0 }')
  echo "$any $starts"
}
declare -A FALLBACKS FB_STARTS
# nps_cpu: "CPU-SECONDS LIFETIME-SECONDS" of the running NPS (user + system,
# all threads), or "0 0" without one: the cycles it takes from the pool.
nps_cpu() {
  if [ -z "$NPS_PID" ]; then echo "0 0"; return; fi
  awk -v tk="$(getconf CLK_TCK)" -v t0="$NPS_T0" -v t1="$(now)" \
    '{ sub(/^.*\) /, ""); printf "%.3f %.3f\n", ($12 + $13) / tk, t1 - t0 }' "/proc/$NPS_PID/stat"
}
declare -A NPS_CPU NPS_LIFE
LOADS=()  # 1-minute load average at each submit
label() {
  case "$1" in
    nps:*e) local p=${1#nps:}; echo "NPS TSK period ${p%e} s + on queue change" ;;
    nps:*) echo "NPS TSK period ${1#nps:} s" ;;
    *) echo "native FAIR (no NPS)" ;;
  esac
}

LOAD_START=$(loadavg)
DATE_START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log "work directory $WORK; $AGENTS agents, 1 core each; load average $LOAD_START"
[ "$QUICK" = 1 ] && log "--quick: one run of each, a smoke check, NOT the measurement"

# ---- 1. Overhead -----------------------------------------------------------
OV_CONFIGS=(native nps:10 nps:1)
declare -A OV_TA OV_WAIT OV_RUN OV_WALL
total=$((RUNS * ${#OV_CONFIGS[@]})) k=0
for ((r = 1; r <= RUNS; r++)); do
  phase=$(awk -v r="$r" -v n="$RUNS" 'BEGIN { printf "%.4f", (r - 0.5) / n }')
  for ((c = 0; c < ${#OV_CONFIGS[@]}; c++)); do
    cfg=${OV_CONFIGS[$(((c + r - 1) % ${#OV_CONFIGS[@]}))]}  # rotate the order run by run
    k=$((k + 1))
    D=$WORK/runs/overhead-$k-${cfg/:/}; mkdir -p "$D"
    pool_up "$cfg" "$r"
    wait_phase "$cfg" "$phase"
    LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
    t0=$(now)
    submit_bg ov 500
    wait_jobs 900
    t1=$(now)
    check_result ov
    read -r cpu life <<<"$(nps_cpu)"
    NPS_CPU[$cfg]=$(awk -v a="${NPS_CPU[$cfg]:-0}" -v b="$cpu" 'BEGIN { print a + b }')
    NPS_LIFE[$cfg]=$(awk -v a="${NPS_LIFE[$cfg]:-0}" -v b="$life" 'BEGIN { print a + b }')
    read -r ta wt rn <<<"$(job_times "$JOB_ID")" || true
    [[ $ta =~ ^[0-9.]+$ ]] || die "no turnaround for job $JOB_ID: $ta $wt"
    pool_down
    read -r fb fs <<<"$(fallbacks "$cfg")"
    FALLBACKS[$cfg]=$((${FALLBACKS[$cfg]:-0} + fb)) FB_STARTS[$cfg]=$((${FB_STARTS[$cfg]:-0} + fs))
    OV_TA[$cfg]+=" $ta" OV_WAIT[$cfg]+=" $wt" OV_RUN[$cfg]+=" $rn"
    OV_WALL[$cfg]+=" $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
    log "overhead $k/$total (run $r/$RUNS, $(label "$cfg")): turnaround $ta s (waited $wt s for a piranha, ran $rn s); load ${LOADS[-1]}$([ "$fb" = 0 ] || echo "; $fb fallback(s) to the native policy under the NPS, $fs picking a job")"
  done
done

# ---- 2. Batch (Figure 10) --------------------------------------------------
DIMS=(300 400 500 600)
B_CONFIGS=(native)
for p in "${EXT_PERIODS[@]}"; do B_CONFIGS+=("nps:$p"); done
declare -A B_TA B_ORDER
total=$((TRIALS * ${#B_CONFIGS[@]})) k=0
for ((t = 1; t <= TRIALS; t++)); do
  phase=$(awk -v r="$t" -v n="$TRIALS" 'BEGIN { printf "%.4f", (r - 0.5) / n }')
  for ((c = 0; c < ${#B_CONFIGS[@]}; c++)); do
    cfg=${B_CONFIGS[$(((c + t - 1) % ${#B_CONFIGS[@]}))]}
    k=$((k + 1))
    D=$WORK/runs/batch-$k-${cfg/:/}; mkdir -p "$D"
    pool_up "$cfg" $((100 + t))
    wait_phase "$cfg" "$phase"
    LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
    ids=()
    for ((j = 0; j < 4; j++)); do
      submit_bg "b$j" "${DIMS[$j]}"
      ids+=("$JOB_ID")
    done
    wait_jobs 1800
    if [ -n "$REPORT" ] && [ "$cfg" = "nps:${EXT_PERIODS[0]}" ] && [ "$t" = "$TRIALS" ]; then
      sleep 2  # the evaluator sees the last job end at its next tick
      mkdir -p "$(dirname "$REPORT")"
      "$P" nps report --server "$EP" --html "$REPORT" 2>>"$D/report.log"
      "$P" nps report --server "$EP" --json >"${REPORT%.html}.json" 2>>"$D/report.log"
      log "wrote $REPORT and ${REPORT%.html}.json"
    fi
    line="" ends=""
    for ((j = 0; j < 4; j++)); do
      check_result "b$j"
      read -r ta wt rn <<<"$(job_times "${ids[$j]}")" || true
      [[ $ta =~ ^[0-9.]+$ ]] || die "no turnaround for job ${ids[$j]}: $ta $wt"
      B_TA[$cfg,$j]+=" $ta"
      line+=" JOB$((j + 1)) $ta s;"
      ends+="$ta JOB$((j + 1))"$'\n'
    done
    order=$(sort -g <<<"$ends" | awk 'NF { printf "%s%s", sep, $2; sep = "," }')
    B_ORDER[$cfg]+=" $order"
    pool_down
    read -r fb fs <<<"$(fallbacks "$cfg")"
    FALLBACKS[b$cfg]=$((${FALLBACKS[b$cfg]:-0} + fb)) FB_STARTS[b$cfg]=$((${FB_STARTS[b$cfg]:-0} + fs))
    log "batch $k/$total (trial $t/$TRIALS, $(label "$cfg")):$line finished in the order $order; load ${LOADS[-1]}$([ "$fb" = 0 ] || echo "; $fb fallback(s) to the native policy under the NPS, $fs picking a job")"
  done
done
LOAD_END=$(loadavg)

# ---- Figures ---------------------------------------------------------------
# stats LIST: "mean sd n" (sd is the sample standard deviation, "null" for n < 2).
stats() {
  awk -v l="$1" 'BEGIN { n = split(l, v, " "); s = 0; for (i = 1; i <= n; i++) s += v[i]; m = s / n
    q = 0; for (i = 1; i <= n; i++) q += (v[i] - m) ^ 2
    if (n > 1) printf "%.3f %.3f %d\n", m, sqrt(q / (n - 1)), n; else printf "%.3f null %d\n", m, n }'
}
mean() { stats "$1" | cut -d' ' -f1; }
sd() { stats "$1" | cut -d' ' -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
jlist() { awk -v l="$1" 'BEGIN { n = split(l, v, " "); printf "["; for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? ", " : ""), v[i]; printf "]" }'; }
qlist() { awk -v l="$1" 'BEGIN { n = split(l, v, " "); printf "["; for (i = 1; i <= n; i++) printf "%s\"%s\"", (i > 1 ? ", " : ""), v[i]; printf "]" }'; }

declare -A OV_M OV_S
for cfg in "${OV_CONFIGS[@]}"; do OV_M[$cfg]=$(mean "${OV_TA[$cfg]}") OV_S[$cfg]=$(sd "${OV_TA[$cfg]}"); done
RATIO10=$(ratio "${OV_M[nps:10]}" "${OV_M[native]}")
RATIO1=$(ratio "${OV_M[nps:1]}" "${OV_M[native]}")

# Per batch configuration: all jobs of all trials, and each job.
declare -A B_M B_S B_JM B_JS
for cfg in "${B_CONFIGS[@]}"; do
  all="" jm="" js=""
  for ((j = 0; j < 4; j++)); do
    all+=" ${B_TA[$cfg,$j]}"
    jm+=" $(mean "${B_TA[$cfg,$j]}")" js+=" $(sd "${B_TA[$cfg,$j]}")"
  done
  B_M[$cfg]=$(mean "$all") B_S[$cfg]=$(sd "$all") B_JM[$cfg]=$jm B_JS[$cfg]=$js
done
EXT=nps:${EXT_PERIODS[0]}
BATCH_RATIO=$(ratio "${B_M[$EXT]}" "${B_M[native]}")
LOAD_DURING=$(stats "${LOADS[*]}")
LOAD_MIN=$(tr ' ' '\n' <<<"${LOADS[*]}" | sort -g | head -1)
LOAD_MAX=$(tr ' ' '\n' <<<"${LOADS[*]}" | sort -g | tail -1)
tf() { awk -v c="$1" 'BEGIN { print (c ? "true" : "false") }'; }
MET10=$(tf "$(awk -v r="$RATIO10" 'BEGIN { print (r < 1.02) }')")
MET1=$(tf "$(awk -v r="$RATIO1" 'BEGIN { print (r < 1.02) }')")
METB=$(tf "$(awk -v r="$BATCH_RATIO" 'BEGIN { print (r < 1) }')")
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
MINUTES=$(awk -v s=$((SECONDS - START)) 'BEGIN { printf "%.1f", s / 60 }')

if [ "$JSON" = 1 ]; then
  {
    echo "{"
    echo "  \"quick\": $([ "$QUICK" = 1 ] && echo true || echo false),"
    [ "$QUICK" = 1 ] && echo "  \"note\": \"--quick: one run of each, a smoke check, not the measurement\","
    echo "  \"date\": \"$DATE_START\", \"minutes\": $MINUTES,"
    echo "  \"machine\": {\"cpu\": \"$CPU\", \"cpus\": $(nproc), \"kernel\": \"$(uname -sr)\","
    echo "    \"load_average_start\": $(jlist "$LOAD_START"), \"load_average_end\": $(jlist "$LOAD_END"),"
    echo "    \"load_1min_at_submits\": {\"mean\": $(cut -d' ' -f1 <<<"$LOAD_DURING"), \"min\": $LOAD_MIN, \"max\": $LOAD_MAX}},"
    echo "  \"code\": {\"commit\": \"$COMMIT\", \"sources_modified_at_start\": $DIRTY, \"piranha_built\": \"$BIN_TIME\"},"
    echo "  \"nps_extras\": {\"shadows\": \"$SHADOWS\", \"page_client\": $([ "$PAGE" = 1 ] && echo true || echo false)},"
    echo "  \"pool\": {\"agents\": $AGENTS, \"cores_per_agent\": 1, \"trace\": \"one node available for the whole trace\","
    echo "    \"server\": \"fresh per run and per trial\", \"agent_stale_seconds\": 30,"
    printf '    "nps_tick_seconds": {'; sep=""
    for c in "${!NPS_TICK[@]}"; do printf '%s"%s": %s' "$sep" "${c#nps:}" "${NPS_TICK[$c]:-null}"; sep=", "; done
    echo "},"
    echo "    \"nps_submit_phase\": \"run r of R submitted at (r - 0.5)/R of the decision period after the NPS's first decision\"},"
    echo "  \"turnaround\": \"piranha jobs --json turnaround_seconds (registration by submit to the feeder's done record)\","
    echo "  \"overhead_runs\": $RUNS,"
    echo "  \"overhead_native_s\": ${OV_M[native]}, \"overhead_native_sd\": ${OV_S[native]},"
    echo "  \"overhead_nps_s\": ${OV_M[nps:10]}, \"overhead_nps_sd\": ${OV_S[nps:10]},"
    echo "  \"overhead_nps_1s_s\": ${OV_M[nps:1]}, \"overhead_nps_1s_sd\": ${OV_S[nps:1]},"
    echo "  \"overhead_ratio\": $RATIO10, \"overhead_ratio_1s\": $RATIO1,"
    for part in WAIT RUN WALL; do
      declare -n arr="OV_$part"
      key=$(tr 'A-Z' 'a-z' <<<"$part")
      echo "  \"overhead_${key}_s\": {\"native\": $(mean "${arr[native]}"), \"nps\": $(mean "${arr[nps:10]}"), \"nps_1s\": $(mean "${arr[nps:1]}")},"
      unset -n arr
    done
    share() { awk -v c="${NPS_CPU[$1]:-0}" -v l="${NPS_LIFE[$1]:-0}" 'BEGIN { if (l > 0) printf "%.4f", c / l; else print "null" }'; }
    echo "  \"overhead_nps_cpu_share\": {\"nps\": $(share nps:10), \"nps_1s\": $(share nps:1)},"
    echo "  \"overhead_samples_s\": {\"native\": $(jlist "${OV_TA[native]}"), \"nps\": $(jlist "${OV_TA[nps:10]}"), \"nps_1s\": $(jlist "${OV_TA[nps:1]}")},"
    echo "  \"batch_trials\": $TRIALS, \"batch_dims\": [300, 400, 500, 600], \"batch_ext_period_s\": ${EXT_PERIODS[0]},"
    echo "  \"batch_ext_mean_s\": ${B_M[$EXT]}, \"batch_ext_sd\": ${B_S[$EXT]},"
    echo "  \"batch_nat_mean_s\": ${B_M[native]}, \"batch_nat_sd\": ${B_S[native]},"
    echo "  \"batch_ratio\": $BATCH_RATIO,"
    echo "  \"batch_ext_jobs_s\": $(jlist "${B_JM[$EXT]}"), \"batch_ext_jobs_sd\": $(jlist "${B_JS[$EXT]}"),"
    echo "  \"batch_nat_jobs_s\": $(jlist "${B_JM[native]}"), \"batch_nat_jobs_sd\": $(jlist "${B_JS[native]}"),"
    echo "  \"batch_finish_order\": {\"nat\": $(qlist "${B_ORDER[native]}"), \"ext\": $(qlist "${B_ORDER[$EXT]}")},"
    echo "  \"batch_by_period\": {"
    sep=""
    for p in "${EXT_PERIODS[@]}"; do
      c=nps:$p
      printf '%s    "%s": {"mean_s": %s, "sd": %s, "ratio_to_nat": %s, "jobs_s": %s, "jobs_sd": %s, "finish_order": %s}' "$sep" "$p" \
        "${B_M[$c]}" "${B_S[$c]}" "$(ratio "${B_M[$c]}" "${B_M[native]}")" "$(jlist "${B_JM[$c]}")" "$(jlist "${B_JS[$c]}")" "$(qlist "${B_ORDER[$c]}")"
      sep=$',\n'
    done
    echo; echo "  },"
    for kind in FALLBACKS FB_STARTS; do
      declare -n fbv=$kind
      [ "$kind" = FALLBACKS ] && key=nps_native_fallbacks || key=nps_native_fallback_picks
      printf '  "%s": {"overhead_nps": %s, "overhead_nps_1s": %s, "batch": {' "$key" "${fbv[nps:10]:-0}" "${fbv[nps:1]:-0}"
      sep=""; for p in "${EXT_PERIODS[@]}"; do printf '%s"%s": %s' "$sep" "$p" "${fbv[bnps:$p]:-0}"; sep=", "; done
      echo "}},"
      unset -n fbv
    done
    echo "  \"paper\": {\"overhead_native_s\": 530.5, \"overhead_native_sd\": 16.5, \"overhead_nps_s\": 581.7, \"overhead_nps_sd\": 53.7,"
    echo "    \"overhead_ratio\": 1.097, \"overhead_nps_separate_node_s\": 559.7, \"batch\": \"Figure 10: EXT(all) below NAT(all); EXT1..4 rising with the cube of the dimension; NAT1..4 clustered\"},"
    echo "  \"targets\": {\"overhead_ratio_lt_1_02\": $MET10, \"overhead_ratio_1s_lt_1_02\": $MET1, \"batch_ext_lt_nat\": $METB}"
    echo "}"
  }
else
  [ "$QUICK" = 1 ] && echo "*** --quick: one run of each, a smoke check, NOT the measurement ***"
  echo "NPS experiments (the paper, §9.2), $DATE_START, $AGENTS agents x 1 core, always-available trace"
  echo "every NPS with shadow schedulers: ${SHADOWS:-none}; a live-page client on its event stream: $([ "$PAGE" = 1 ] && echo yes || echo no)"
  echo "a fresh server, agents and NPS per run; the NPS ticks every ${NPS_TICK[nps:10]:-?} s and decides every period"
  echo "load average at start $LOAD_START, at the end $LOAD_END (1-min at submits: mean $(cut -d' ' -f1 <<<"$LOAD_DURING"), $LOAD_MIN..$LOAD_MAX)"
  echo
  echo "Overhead: cmatrix 500 alone, $RUNS runs each, turnaround from the job record (mean ± sd)"
  printf '  %-26s %16s %12s %10s %8s\n' configuration turnaround "wait+run" "ratio" paper
  pm() { if [ "$2" = null ]; then printf '%s' "$1"; else printf '%s ± %s' "$1" "$2"; fi; }
  printf '  %-26s %16s %12s %10s %8s\n' "native FAIR (no NPS)" "$(pm "${OV_M[native]}" "${OV_S[native]}") s" \
    "$(mean "${OV_WAIT[native]}")+$(mean "${OV_RUN[native]}")" 1 "530.5 s"
  printf '  %-26s %16s %12s %10s %8s\n' "NPS TSK, period 10 s" "$(pm "${OV_M[nps:10]}" "${OV_S[nps:10]}") s" \
    "$(mean "${OV_WAIT[nps:10]}")+$(mean "${OV_RUN[nps:10]}")" "$RATIO10" "581.7 s"
  printf '  %-26s %16s %12s %10s %8s\n' "NPS TSK, period 1 s" "$(pm "${OV_M[nps:1]}" "${OV_S[nps:1]}") s" \
    "$(mean "${OV_WAIT[nps:1]}")+$(mean "${OV_RUN[nps:1]}")" "$RATIO1" ""
  cs() { awk -v c="${NPS_CPU[$1]:-0}" -v l="${NPS_LIFE[$1]:-0}" 'BEGIN { if (l > 0) printf "%.2f%%", 100 * c / l; else print "-" }'; }
  echo "  the NPS's own CPU time (user + system) over its life in these runs: $(cs nps:10) of one core at period 10, $(cs nps:1) at period 1"
  echo "  aim: ratio < 1.02 (paper 1.097): period 10 $([ "$MET10" = true ] && echo met || echo MISSED), period 1 $([ "$MET1" = true ] && echo met || echo MISSED)"
  echo
  echo "Batch (Figure 10): cmatrix 300, 400, 500, 600 together, $TRIALS trials each, mean turnaround ± sd (s)"
  for cfg in native "${B_CONFIGS[@]:1}"; do
    if [ "$cfg" = native ]; then name="NAT"; else name="EXT ($(label "$cfg" | sed 's/^NPS TSK //'))"; fi
    printf '  %-42s all %s' "$name" "$(pm "${B_M[$cfg]}" "${B_S[$cfg]}")"
    read -r -a m <<<"${B_JM[$cfg]}"; read -r -a s <<<"${B_JS[$cfg]}"
    for ((j = 0; j < 4; j++)); do printf ';  JOB%d %s' $((j + 1)) "$(pm "${m[$j]}" "${s[$j]}")"; done
    printf ';  finish order%s\n' "${B_ORDER[$cfg]}"
  done
  nf=0 ns=0; for key in "${!FALLBACKS[@]}"; do nf=$((nf + FALLBACKS[$key])) ns=$((ns + FB_STARTS[$key])); done
  echo "  agents that fell back to their native policy while the NPS ran (should be 0): $nf time(s), $ns of them picking a job"
  echo "  EXT/NAT overall: $BATCH_RATIO (paper: EXT(all) below NAT(all)): $([ "$METB" = true ] && echo met || echo MISSED)"
fi

# ---- The Figure-10-style chart ---------------------------------------------
write_html() {
  local out=$1
  mkdir -p "$(dirname "$out")"
  {
    read -r -a em <<<"${B_JM[$EXT]}"; read -r -a es <<<"${B_JS[$EXT]}"
    read -r -a nm <<<"${B_JM[native]}"; read -r -a ns <<<"${B_JS[native]}"
    echo "EXT(all) ${B_M[$EXT]} ${B_S[$EXT]} ext all"
    for ((j = 0; j < 4; j++)); do echo "EXT$((j + 1)) ${em[$j]} ${es[$j]} ext job"; done
    echo "NAT(all) ${B_M[native]} ${B_S[native]} nat all"
    for ((j = 0; j < 4; j++)); do echo "NAT$((j + 1)) ${nm[$j]} ${ns[$j]} nat job"; done
    local a=0
    for p in "${EXT_PERIODS[@]:1}"; do
      c=nps:$p a=$((a + 1))
      read -r -a xm <<<"${B_JM[$c]}"; read -r -a xs <<<"${B_JS[$c]}"
      leg=$(label "$c" | sed 's/^NPS TSK/EXT: the NPS, TSK,/; s/ /_/g')
      echo "EXT(all)@${p} ${B_M[$c]} ${B_S[$c]} alt$a all $leg"
      for ((j = 0; j < 4; j++)); do echo "EXT$((j + 1))@${p} ${xm[$j]} ${xs[$j]} alt$a job $leg"; done
    done
  } >"$WORK/bars.txt"
  local quick_note=""
  [ "$QUICK" = 1 ] && quick_note="<p class=warn><b>--quick run: one trial each, a smoke check, not the measurement.</b></p>"
  awk -v date="$DATE_START" -v agents="$AGENTS" -v trials="$TRIALS" -v period="${EXT_PERIODS[0]}" \
    -v cpu="$CPU" -v cpus="$(nproc)" -v kernel="$(uname -sr)" -v la0="$LOAD_START" -v la1="$LOAD_END" \
    -v lamin="$LOAD_MIN" -v lamax="$LOAD_MAX" -v ratio="$BATCH_RATIO" -v qn="$quick_note" -v commit="$COMMIT" \
    -v ovn="${OV_M[native]} ± ${OV_S[native]}" -v ov10="${OV_M[nps:10]} ± ${OV_S[nps:10]}" -v ov1="${OV_M[nps:1]} ± ${OV_S[nps:1]}" \
    -v r10="$RATIO10" -v r1="$RATIO1" -v runs="$RUNS" '
    { lab[NR] = $1; m[NR] = $2; s[NR] = ($3 == "null" ? 0 : $3); g[NR] = $4; k[NR] = $5
      if ($6 != "") { t = $6; gsub(/_/, " ", t); leg[$4] = t }
      top = m[NR] + s[NR]; if (top > ymax) ymax = top; n = NR }
    END {
      # A round axis: 1, 2 or 5 times a power of ten per grid step, about 5 steps.
      raw = ymax / 5; p = 1; while (p * 10 <= raw) p *= 10; while (p > raw) p /= 10
      step = (raw <= p) ? p : (raw <= 2 * p) ? 2 * p : (raw <= 5 * p) ? 5 * p : 10 * p
      ym = step * int(ymax / step + 1)
      W = 80 + n * 62 + 20; if (W < 760) W = 760; H = 470; x0 = 70; y0 = 350; h = 310
      fill["ext"] = "#2f6db5"; fill["nat"] = "#d9822b"; fill["alt1"] = "#4a9a5b"; fill["alt2"] = "#8a5fb5"; fill["alt3"] = "#7a7a7a"
      print "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>"
      print "<title>Piranha NPS batch experiment (Figure 10 of the paper)</title>"
      print "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
      print "figcaption{font-size:.92em;line-height:1.4;margin-top:.5em}table{border-collapse:collapse;margin:1em 0}"
      print "td,th{border:1px solid #bbb;padding:.2em .6em;text-align:right}th{background:#eee}.warn{color:#a00}</style>\n</head>\n<body>"
      print "<h1>NPS batch experiment: average turnaround</h1>"
      print qn
      printf "<figure>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"bar chart of mean turnaround\">\n", W, H, W, H
      printf "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H
      for (v = 0; v <= ym + step / 2; v += step) {
        y = y0 - v / ym * h
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, y, W - 10, y
        printf "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%g</text>\n", x0 - 6, y + 4, v
      }
      printf "<text x=\"16\" y=\"%d\" font-size=\"13\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">mean turnaround (s)</text>\n", y0 - h / 2, y0 - h / 2
      printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, W - 10, y0
      for (i = 1; i <= n; i++) {
        x = x0 + 14 + (i - 1) * 62; bw = 40
        bh = m[i] / ym * h; y = y0 - bh
        op = (k[i] == "all") ? "1" : "0.6"
        printf "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\"><title>%s: %.2f s ± %.2f s</title></rect>\n", x, y, bw, bh, fill[g[i]], op, lab[i], m[i], s[i]
        if (s[i] > 0) {
          cx = x + bw / 2; ya = y0 - (m[i] + s[i]) / ym * h; yb = y0 - (m[i] - s[i]) / ym * h; if (yb > y0) yb = y0
          printf "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh12M%.1f %.1fh12\" stroke=\"#000\" fill=\"none\"/>\n", cx, ya, yb, cx - 6, ya, cx - 6, yb
        }
        printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.1f</text>\n", x + bw / 2, y0 - (m[i] + s[i]) / ym * h - 5, m[i]
        split(lab[i], parts, "@")
        printf "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n", x + bw / 2, y0 + 16, parts[1]
        if (parts[2] != "") {
          pp = parts[2]; ev = (pp ~ /e$/); if (ev) pp = substr(pp, 1, length(pp) - 1)
          printf "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s s</text>\n", x + bw / 2, y0 + 30, pp
          if (ev) printf "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">+ events</text>\n", x + bw / 2, y0 + 43
        }
      }
      # The legend: one swatch per group present.
      leg["ext"] = "EXT: the NPS, TSK, period " period " s"; leg["nat"] = "NAT: no NPS, the agents\x27 native FAIR"
      lx = x0; ly = H - 34
      for (gi = 1; gi <= 5; gi++) {
        gg = (gi == 1) ? "ext" : (gi == 2) ? "nat" : "alt" (gi - 2)
        wl = 19 + length(leg[gg]) * 6.4 + 24
        if (lx + wl > W && lx > x0) { lx = x0; ly += 18 }
        present = 0; for (i = 1; i <= n; i++) if (g[i] == gg) present = 1
        if (!present) continue
        printf "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", lx, ly, fill[gg]
        printf "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n", lx + 19, ly + 12, leg[gg]
        lx += wl
      }
      print "</svg>"
      printf "<figcaption>Average turnaround of a batch of four <code>cmatrix</code> jobs (JOB1..JOB4: dimensions 300, 400, 500, 600) submitted together, %s trial(s) per configuration, ", trials
      printf "measured by <code>bench/nps.sh</code> on %s (code %s): %d local node agents with one core each, replaying an always-available trace, a fresh tuple-space server, agents and NPS for every trial; ", date, commit, agents
      printf "%s, %s vCPUs, %s; load average %s at the start, %s at the end, 1-minute load %s to %s at the submits (a shared machine, not idle). ", cpu, cpus, kernel, la0, la1, lamin, lamax
      printf "Darker bars: all four jobs of all trials; lighter bars: one job; error bars: ±1 sample standard deviation over the trials (over all jobs and trials for the (all) bars). EXT/NAT overall: %s. ", ratio
      print "The paper (§9.2, Figure 10; four IBM RS6000/560s) found EXT(all) below NAT(all), EXT1..EXT4 rising with the cube of the dimension (shorter jobs first under TSK), and NAT1..NAT4 clustered around the overall average under FAIR; its figure gives no numbers in the text.</figcaption>\n</figure>"
      print "<table><tr><th>bar</th><th>mean (s)</th><th>sd (s)</th></tr>"
      for (i = 1; i <= n; i++) {
        split(lab[i], parts, "@"); t = parts[1]
        if (parts[2] != "") { pp = parts[2]; t = t " (period " ((pp ~ /e$/) ? substr(pp, 1, length(pp) - 1) " s + on queue change" : pp " s") ")" }
        printf "<tr><td style=\"text-align:left\">%s</td><td>%.2f</td><td>%.2f</td></tr>\n", t, m[i], s[i]
      }
      print "</table>"
      printf "<p>Overhead experiment of the same run (cmatrix 500 alone, %s runs each): native %s s; NPS period 10 s %s s (ratio %s); NPS period 1 s %s s (ratio %s). Paper: 530.5 ± 16.5 s native, 581.7 ± 53.7 s with the NPS (ratio 1.097). See docs/performance.md.</p>\n", runs, ovn, ov10, r10, ov1, r1
      print "</body>\n</html>"
    }' "$WORK/bars.txt" >"$out"
  log "wrote $out"
}
if [ "$NO_HTML" = 0 ]; then write_html "$HTML"; fi
log "done in $MINUTES min"
