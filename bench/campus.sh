#!/usr/bin/env bash
# The hierarchical NPS simulated (docs/nps.md, "Hierarchy"): a campus of subnets, each under its
# own NPS, with the campus lending idle nodes to congested subnets; the same subnets isolated;
# and one flat pool of all the nodes -- mean turnaround of each, the campus's overhead, wall time.
#
#   bench/campus.sh [--json] [--campus FILE] [--max-steps N] [--svg FILE]
#
# --campus: the campus file (default bench/campus.yaml: 100 subnets × 100 nodes).
# --json: one JSON object on stdout (`piranha nps simulate-campus --json`: subnets, nodes,
#   campus_mean_turnaround_s, isolated_mean_turnaround_s, flat_mean_turnaround_s, wall_s, and
#   each run's details, and the "date" it ran, UTC); otherwise the table. Progress on stderr.
# --svg FILE: also draw the comparison (bench/campus_plot.py), e.g. docs/campus.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
JSON=0 CAMPUS=bench/campus.yaml SVG="" EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --json) JSON=1; shift ;;
    --campus) CAMPUS=$2; shift 2 ;;
    --max-steps) EXTRA+=(--max-steps "$2"); shift 2 ;;
    --svg) SVG=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/campus.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$BIN/piranha" ] || { echo "bench/campus.sh: $BIN/piranha not built (cmake --build build --target piranha)" >&2; exit 2; }
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
"$BIN/piranha" nps simulate-campus "$CAMPUS" --json "${EXTRA[@]}" >"$OUT"
[ -z "$SVG" ] || python3 bench/campus_plot.py "$OUT" >"$SVG"
if [ "$JSON" = 1 ]; then
  # With the date it was run (UTC), as docs/perf/ keeps every benchmark's JSON.
  python3 - "$OUT" "$(date -u +%Y-%m-%dT%H:%MZ)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"date": sys.argv[2], **r}, indent=1))
PY
else
  python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"campus: {r['subnets']} subnets, {r['nodes']} nodes, {r['jobs']} jobs, {r['strategy']} in each subnet")
for m, label in (("campus", "campus (lending)"), ("isolated", "isolated subnets"), ("flat", "one flat pool")):
    if m in r:
        print(f"  {label:18} mean turnaround {r[m]['mean_turnaround_s'] / 60:8.1f} min   "
              f"({r[m]['steps']} steps, {r[m]['wall_s']:.1f} s wall)")
o = r.get("campus", {}).get("overhead")
if o:
    print(f"  campus overhead: {o['decisions']} decisions, {o['loans_started']} loans, {o['nodes_lent']} nodes lent, "
          f"{o['lent_node_seconds'] / 3600:.0f} lent node-hours")
print(f"  wall: {r['wall_s']:.1f} s")
PY
fi
