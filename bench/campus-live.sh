#!/usr/bin/env bash
# The live campus's speed-up (docs/nps.md, "The live campus"): three pools a, b and c on this
# host's loopback, each with its own `piranha ts serve`, three agents (always available, one core
# each, --campus-loans) and `nps run` (b and c with --lend-to a), and the same job submitted to a
# twice: first with the campus stopped (a's three nodes alone), then with `piranha nps campus`
# running above the three pools (b's and c's idle nodes lent to it). Prints both times and their
# ratio.
#
#   bench/campus-live.sh [--json] [--tasks N] [--task-ms T]
#
# The job is `spin --tasks N --task-ms T --sleep` (default 600 tasks of 200 ms: 40 s for a's
# three nodes): its tasks wait rather than compute, so that nine nodes on this host's cores
# behave as nine machines. Loopback, not network namespaces: the times are the scheduling's, the
# same on either, and the benchmark then needs no root (tests/campus_netns_test.cc runs the pools
# in namespaces). The campus decides every second (congested 3 s, relieved 1 s, hold and cooldown
# 2 s), as in the tests. --json: one JSON object on stdout (date, provenance, isolated_s,
# campus_s, speedup, and lent_nodes: the nodes of b and c that ran the second job). Progress on
# stderr. About a minute and a half.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
ME=bench/campus-live.sh
JSON=0 TASKS=600 TASK_MS=200
while [ $# -gt 0 ]; do
  case "$1" in
    --json) JSON=1; shift ;;
    --tasks) TASKS=$2; shift 2 ;;
    --task-ms) TASK_MS=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$ME: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for b in piranha spin; do
  [ -x "$BIN/$b" ] || { echo "$ME: $BIN/$b not built (cmake --build build --target piranha spin)" >&2; exit 2; }
done

DIR=$(mktemp -d)
PIDS=() SERVER_PIDS=()
log() { echo "$ME: $*" >&2; }
# Stops the processes given by PID: SIGTERM, then SIGKILL after 10 s.
stop_pids() {
  local p
  for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 100); do
    local alive=0
    for p in "$@"; do if kill -0 "$p" 2>/dev/null; then alive=1; fi; done
    if [ "$alive" = 0 ]; then return 0; fi
    sleep 0.1
  done
  for p in "$@"; do kill -KILL "$p" 2>/dev/null || true; done
}
# What this script started: the campus, NPSs and agents first, while their servers still answer.
cleanup() {
  set +e
  stop_pids "${PIDS[@]}"
  stop_pids "${SERVER_PIDS[@]}"
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# Waits up to $2 s for file $1 to contain $3.
wait_for() {
  for _ in $(seq $(($2 * 10))); do
    grep -qF -- "$3" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  log "gave up waiting for \"$3\" in $1:"; cat "$1" >&2; exit 1
}

printf '# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\nup,0,100000\n' \
  >"$DIR/up.avail.csv"
printf 'policy: FAIR\ncores: 1\nscheduler:\n  stale_seconds: 10\n' >"$DIR/agent.yaml"
declare -A EP
for s in a b c; do
  "$BIN/piranha" ts serve --bind 'tcp://127.0.0.1:*' 2>"$DIR/$s.server" & SERVER_PIDS+=($!)
  wait_for "$DIR/$s.server" 30 "serving on tcp://"
  EP[$s]=$(grep -o 'serving on tcp://[0-9.:]*' "$DIR/$s.server" | head -1 | sed 's/serving on //')
  for i in 1 2 3; do
    "$BIN/piranha" agent --node "$s$i" --server "${EP[$s]}" --config "$DIR/agent.yaml" \
      --trace "$DIR/up.avail.csv" --trace-node up --piranha-output "$DIR/$s$i.piranhas" \
      --piranha-priority normal --campus-loans 2>"$DIR/$s$i.agent" & PIDS+=($!)
  done
done
for s in a b c; do
  for i in 1 2 3; do wait_for "$DIR/$s$i.agent" 30 "connected to the tuple-space server"; done
  lend=()
  [ "$s" = a ] || lend=(--lend-to a --campus uni)
  "$BIN/piranha" nps run --server "${EP[$s]}" --period 1 "${lend[@]}" 2>"$DIR/$s.nps" & PIDS+=($!)
done
for s in a b c; do wait_for "$DIR/$s.nps" 60 "scheduling ${s}1 ${s}2 ${s}3"; done

# Submits the job to a and waits for it; prints its wall time in seconds.
run_job() {
  local from to
  from=$(date +%s.%N)
  PIRANHA_SERVER=${EP[a]} "$BIN/piranha" submit "$BIN/spin" --tasks "$TASKS" --task-ms "$TASK_MS" --sleep \
    >"$DIR/job$1.out" 2>"$DIR/job$1.err"
  to=$(date +%s.%N)
  grep -q "every task done once" "$DIR/job$1.out" || { log "job $1 went wrong:"; cat "$DIR/job$1."* >&2; exit 1; }
  echo "$to - $from" | bc -l
}

log "job 1 on a, the campus stopped: $TASKS tasks of $TASK_MS ms"
ISOLATED=$(run_job 1)
log "  $ISOLATED s"
cat >"$DIR/campus.yaml" <<YAML
name: uni
subnets:
  - {name: a, server: "${EP[a]}"}
  - {name: b, server: "${EP[b]}", lends_to: [a]}
  - {name: c, server: "${EP[c]}", lends_to: [a]}
campus: {period: 1, congested: 3, relieved: 1, hold: 2, cooldown: 2}
YAML
"$BIN/piranha" nps campus "$DIR/campus.yaml" 2>"$DIR/campus.log" & PIDS+=($!)
wait_for "$DIR/campus.log" 30 "deciding every"
log "job 2 on a, the campus running"
CAMPUS=$(run_job 2)
log "  $CAMPUS s"
# The nodes of b and c that ran piranhas of a's job 2, from their agents' logs.
LENT=$(grep -lF "piranha of a's job 2 (lent by campus uni" "$DIR"/[bc]?.agent | xargs -r -n1 basename | \
  sed 's/\.agent$//' | tr '\n' ' ' || true)

python3 - "$JSON" "$ISOLATED" "$CAMPUS" "$TASKS" "$TASK_MS" "$(date -u +%Y-%m-%dT%H:%MZ)" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$LENT" <<'PY'
import json, sys
as_json, isolated, campus, tasks, task_ms, date, commit, lent = sys.argv[1:]
isolated, campus, lent = float(isolated), float(campus), lent.split()
r = {"date": date,
     "provenance": {"benchmark": "campus_live", "commit": commit,
                    "run": f"{date}, code at {commit}: bench/campus-live.sh on loopback"},
     "subnets": 3, "nodes_per_subnet": 3, "tasks": int(tasks), "task_ms": int(task_ms),
     "isolated_s": round(isolated, 3), "campus_s": round(campus, 3), "speedup": round(isolated / campus, 3),
     "lent_nodes": lent}
if as_json == "1":
    print(json.dumps(r, indent=1))
else:
    print(f"the same job on pool a ({tasks} tasks of {task_ms} ms, 3 nodes in each of 3 pools):")
    print(f"  campus stopped  {isolated:8.1f} s")
    print(f"  campus running  {campus:8.1f} s   (also on {' '.join(lent) or 'no node'} of b and c)")
    print(f"  speed-up        {isolated / campus:8.2f}")
PY
