#!/usr/bin/env python3
"""Writes the opening section of docs/performance.md from the benchmarks' JSON.

    scripts/perf-summary.py            # rewrite the section between the markers
    scripts/perf-summary.py --check    # exit 1 if the section is not what the JSON gives
    scripts/perf-summary.py --stdout   # print the section instead

Reads every docs/perf/*.json: each is one run's JSON object as `piranha ts bench
--json`, `bench/runtime.sh --json`, `bench/nps.sh --json`, `rigid_bench --json`, `log_bench --json`, `bench/swarm.sh --json`,
`bench/campus.sh --json` or `bench/campus-live.sh --json`
prints it, so a new run
is added by saving its output there. An optional "provenance" object says which
benchmark it is (otherwise the keys tell), names the run ("run"), its commit, and,
for a run measured before its JSON was kept, the section of
docs/performance-history.md its figures were transcribed from; a figure that
section does not give is absent from the file.

Each figure is taken from the latest run of its benchmark that measured it, with its
anchor from that same run; the table says which run, and gives the same figure in the
other runs of that day. Python 3's standard library only.
"""

import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN = "<!-- perf-summary: begin (scripts/perf-summary.py writes this section from docs/perf/*.json) -->"
END = "<!-- perf-summary: end -->"

# Each benchmark: the command that makes its JSON, and the title of its table.
BENCHMARKS = {
    "ts_bench": ("`piranha ts bench`", "The tuple space against Redis and raw ZeroMQ"),
    "runtime": ("`bench/runtime.sh`", "The Piranha runtime: cmatrix, job start, retreats"),
    "nps": ("`bench/nps.sh`", "The Network Piranha Scheduler against the agents' native policy"),
    "rigid": ("`rigid_bench`", "Rigid jobs at archive scale"),
    "log_bench": ("`log_bench`", "The durable log: recovery and compaction"),
    "swarm": ("`bench/swarm.sh`", "A pool of simulated workstations against one server and one NPS"),
    "campus": ("`bench/campus.sh`", "The hierarchical NPS, simulated: a campus of subnets"),
    "campus_live": ("`bench/campus-live.sh`", "The live campus: three pools of three nodes, one job"),
}

# pyss on 100,000 LANL-CM5 jobs (550 MHz Pentium III): the rigid figures' outside anchor.
PYSS = "pyss 2,457 jobs/s (550 MHz Pentium III, not this machine)"


def kind_of(run):
    p = run.get("provenance", {})
    if "benchmark" in p:
        return p["benchmark"]
    if "rtt_us_p50" in run or "farm_tasks_per_s" in run or "durable_farm2_tasks_per_s_always" in run:
        return "ts_bench"
    if "cmatrix500_s" in run or "grain10_speedup_1" in run:
        return "runtime"
    if "overhead_ratio" in run or "batch_ratio" in run:
        return "nps"
    if "workload" in run and "results" in run:
        return "rigid"
    if "runs" in run and all("nodes" in r for r in run["runs"]):
        return "swarm"
    if "campus_mean_turnaround_s" in run:
        return "campus"
    if "campus_s" in run and "isolated_s" in run:
        return "campus_live"
    raise SystemExit(f"perf-summary.py: {run['_file']}: not the output of a known benchmark")


def sort_key(run):
    # "2026-11-27T06:46:00Z", "2026-11-21T18:40:55+0000", "2026-11-23 08:52:00 UTC": the
    # first 19 characters order them; the file name breaks ties.
    return (run.get("date", "").replace(" ", "T")[:19], run["_file"])


def get(run, key):
    v = run
    for part in key.split("."):
        if not isinstance(v, dict) or part not in v:
            return None
        v = v[part]
    return v


def num(v, digits=None):
    if v is None:
        return "—"
    if digits is None:
        digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2
    return f"{v:,.{digits}f}"


# A figure: its name, how to show the value and its anchor from one run, the ratio, the
# aim and whether it is met. Each lambda gets the run; a missing figure is None.
def ratio_of(run, key, num_key, den_key):
    r = get(run, key)
    if r is None and get(run, num_key) is not None and get(run, den_key):
        r = get(run, num_key) / get(run, den_key)
    return r


def both(a, b, sep="; "):
    return sep.join(x for x in (a, b) if x)


def aside(*parts):
    shown = [p for p in parts if p]
    return f" ({', '.join(shown)})" if shown else ""


def labelled(label, v, unit, digits=None):
    return f"{label} {num(v, digits)}{unit}" if v is not None else ""


def ts_figures():
    def farm(k):
        suffix = "" if k == 1 else "2"
        key = f"farm{suffix}_tasks_per_s"
        return {
            "name": f"task farm, k = {k} worker{'s' if k > 1 else ''}",
            "key": key,
            "value": lambda r: f"{num(get(r, key))} tasks/s",
            "anchor": lambda r: both(
                labelled("Redis", get(r, f"redis_farm{suffix}_tasks_per_s"), " tasks/s"),
                f"ZeroMQ queue farm (the floor) {num(get(r, f'zmq_farm{suffix}_tasks_per_s'))} tasks/s, "
                f"its ratio to Redis {num(get(r, f'zmq_farm{suffix}_vs_redis'))}"
                if get(r, f"zmq_farm{suffix}_tasks_per_s") is not None
                else (f"ZeroMQ queue farm (the floor): tuple space ÷ floor {num(get(r, f'farm{suffix}_vs_zmq_farm'))}, "
                      f"floor ÷ Redis {num(get(r, f'zmq_farm{suffix}_vs_redis'))}"
                      if get(r, f"farm{suffix}_vs_zmq_farm") is not None else "")),
            "ratio": lambda r: ratio_of(r, f"farm{suffix}_vs_redis", key, f"redis_farm{suffix}_tasks_per_s"),
            "aim": "≥ 1.0 × Redis",
            "met": lambda r, x: get(r, f"targets.farm{suffix}_vs_redis_ge_1") if x is not None else None,
        }

    def durable(policy):
        key = f"durable_farm2_tasks_per_s_{policy}"
        return {
            "name": f"task farm k = 2, durable, `--fsync {policy}`",
            "key": key,
            "value": lambda r: f"{num(get(r, key))} tasks/s",
            "anchor": lambda r: labelled(f"Redis AOF `appendfsync {policy}`",
                                         get(r, f"redis_aof_farm2_tasks_per_s_{policy}"), " tasks/s"),
            "ratio": lambda r: ratio_of(r, f"durable_farm2_vs_redis_aof_{policy}", key,
                                        f"redis_aof_farm2_tasks_per_s_{policy}"),
            "aim": "≥ 1.0 × Redis AOF",
            "met": lambda r, x: get(r, f"targets.durable_farm2_vs_redis_aof_{policy}_ge_1"),
        }

    return [
        {
            "name": "round trip p50 (posted `out` + `in`)",
            "key": "rtt_us_p50",
            "value": lambda r: f"{num(get(r, 'rtt_us_p50'), 1)} µs",
            "anchor": lambda r: both(labelled("Redis", get(r, "redis_rtt_us_p50"), " µs", 1),
                                     labelled("ZeroMQ 2-frame floor", get(r, "zmq_pair_us_p50"), " µs", 1)),
            "ratio": lambda r: ratio_of(r, "rtt_vs_redis", "rtt_us_p50", "redis_rtt_us_p50"),
            "aim": "≤ 1.5 × Redis",
            "met": lambda r, x: get(r, "targets.rtt_vs_redis_le_1_5"),
        },
        farm(1),
        farm(2),
        {
            "name": "bulk write (`out_many`, 1,000 a request)",
            "key": "bulk_out_per_s",
            "value": lambda r: f"{num(get(r, 'bulk_out_per_s'))} tuples/s",
            "anchor": lambda r: labelled("Redis pipelined `LPUSH`", get(r, "redis_pipelined_per_s"), "/s"),
            "ratio": lambda r: ratio_of(r, "bulk_vs_redis", "bulk_out_per_s", "redis_pipelined_per_s"),
            "aim": "",
            "met": lambda r, x: None,
        },
        {
            "name": "`in` p50 with many other tuples resident",
            "key": "in_us_p50_1m",
            "value": lambda r: f"{num(get(r, 'in_us_p50_1m'), 1)} µs" + aside(
                labelled("among", get(r, "config.filler_tuples"), " tuples", 0)),
            "anchor": lambda r: labelled("the same in an empty space", get(r, "in_us_p50_empty"), " µs", 1),
            "ratio": lambda r: ratio_of(r, "in_1m_vs_empty", "in_us_p50_1m", "in_us_p50_empty"),
            "aim": "≤ 1.25 × empty",
            "met": lambda r, x: get(r, "targets.in_1m_vs_empty_le_1_25"),
        },
        {
            "name": "resident bytes per tuple, beyond its payload",
            "key": "bytes_per_tuple",
            "value": lambda r: f"{num(get(r, 'bytes_per_tuple'), 1)} B (of {num(get(r, 'rss_bytes_per_tuple'), 1)} B)",
            "anchor": lambda r: labelled("Redis, per list item", get(r, "redis_rss_bytes_per_item"), " B", 1),
            "ratio": lambda r: None,
            "aim": "< 100 B",
            "met": lambda r, x: get(r, "targets.bytes_per_tuple_lt_100"),
        },
        durable("always"),
        durable("everysec"),
    ]


def runtime_figures():
    def at_most(key, bound):
        return lambda r, x: (get(r, key) <= bound) if get(r, key) is not None else None

    def below(key, bound):
        return lambda r, x: (get(r, key) < bound) if get(r, key) is not None else None

    def retreat(prefix, name):
        return {
            "name": name,
            "key": f"{prefix}_ms_p99",
            "value": lambda r: f"p99 {num(get(r, prefix + '_ms_p99'), 1)} ms" + aside(
                labelled("p50", get(r, prefix + "_ms_p50"), "", 1), labelled("max", get(r, prefix + "_ms_max"), "", 1)),
            "anchor": lambda r: (f"piranhas killed after their grace: {get(r, prefix + '_killed')}"
                                 if get(r, prefix + "_killed") is not None else ""),
            "ratio": lambda r: None,
            "aim": "p99 < 20 ms",
            "met": below(f"{prefix}_ms_p99", 20),
        }

    return [
        {
            "name": "cmatrix 500 on two agents (250,000 tasks)",
            "key": "cmatrix500_s",
            "value": lambda r: f"{num(get(r, 'cmatrix500_s'), 3)} s",
            "anchor": lambda r: "",
            "ratio": lambda r: None,
            "aim": "≤ 2 s",
            "met": at_most("cmatrix500_s", 2),
        },
        {
            "name": "cmatrix 1000 `--grain 10`, one agent: speedup",
            "key": "grain10_speedup_1",
            "value": lambda r: num(get(r, "grain10_speedup_1"), 3),
            "anchor": lambda r: both(
                "each run's own sequential multiply, timed by the same cmatrix"
                + aside(labelled("median", get(r, "sequential_s"), " s", 3)),
                labelled("the piranhas at the normal priority", get(r, "grain10_speedup_1_normal"), "", 3)),
            "ratio": lambda r: None,
            "aim": "≥ 0.9",
            "met": lambda r, x: get(r, "grain10_speedup_1") >= 0.9,
        },
        {
            "name": "the same, two agents: speedup",
            "key": "grain10_speedup_2",
            "value": lambda r: num(get(r, "grain10_speedup_2"), 3),
            "anchor": lambda r: both(
                "each run's own sequential multiply",
                both(labelled("the speedup had the CPUs been busy throughout (the run's CPU bound)",
                              get(r, "grain10_cpu_bound_2"), "", 3),
                     labelled("two multiplies alone at once", get(r, "kernel_two_core_bound"), "×", 3))),
            "ratio": lambda r: None,
            "aim": "≥ 1.8",
            "met": lambda r, x: get(r, "grain10_speedup_2") >= 1.8,
        },
        {
            "name": "job start, submission → first task",
            "key": "job_start_ms_p50",
            "value": lambda r: f"p50 {num(get(r, 'job_start_ms_p50'), 2)} ms" + aside(
                labelled("p99", get(r, "job_start_ms_p99"), "", 2)),
            "anchor": lambda r: labelled("of which the agent starting the piranha, p50", get(r, "agent_start_ms_p50"),
                                         " ms", 2),
            "ratio": lambda r: None,
            "aim": "p50 ≤ 10 ms",
            "met": at_most("job_start_ms_p50", 10),
        },
        retreat("retreat", "retreat, idle machine"),
        retreat("retreat_loaded", "retreat, a CPU-bound owner on every core"),
    ]


def nps_figures():
    def overhead(period, suffix):
        return {
            "name": f"NPS overhead: cmatrix 500 alone, TSK every {period} s",
            "key": f"overhead_ratio{suffix}",
            "value": lambda r: (f"{num(get(r, f'overhead_nps{suffix}_s'), 3)} ± "
                                f"{num(get(r, f'overhead_nps{suffix}_sd'), 3)} s"),
            "anchor": lambda r: (f"native FAIR {num(get(r, 'overhead_native_s'), 3)} ± "
                                 f"{num(get(r, 'overhead_native_sd'), 3)} s; the paper 1.097×"),
            "ratio": lambda r: get(r, f"overhead_ratio{suffix}"),
            "aim": "< 1.02 × native",
            "met": lambda r, x: get(r, f"targets.overhead_ratio{suffix}_lt_1_02"),
        }

    return [
        overhead(10, ""),
        overhead(1, "_1s"),
        {
            "name": "the NPS's own CPU, TSK every 10 s",
            "key": "overhead_nps_cpu_share.nps",
            "value": lambda r: f"{num(100 * get(r, 'overhead_nps_cpu_share.nps'), 2)} % of a core",
            "anchor": lambda r: "",
            "ratio": lambda r: None,
            "aim": "",
            "met": lambda r, x: None,
        },
        {
            "name": "batch (Figure 10): cmatrix 300–600 together, EXT (TSK every 10 s)",
            "key": "batch_ratio",
            "value": lambda r: f"{num(get(r, 'batch_ext_mean_s'), 2)} s",
            "anchor": lambda r: f"NAT (native FAIR) {num(get(r, 'batch_nat_mean_s'), 2)} s",
            "ratio": lambda r: get(r, "batch_ratio"),
            "aim": "< 1 × NAT (the paper: EXT below NAT)",
            "met": lambda r, x: get(r, "targets.batch_ext_lt_nat"),
        },
    ]


def rigid_figures():
    # rigid_bench gives a list of results per workload; load() indexes them as
    # by.WORKLOAD.ALGORITHM, WORKLOAD "lublin_256" (data/lublin_256.swf) or "synthetic_N"
    # (N jobs of the Lublin model, 256 nodes, seed 0).
    million = "by.synthetic_1000000"

    def rate(alg):
        return lambda r: f"{num(get(r, f'{million}.{alg}.jobs_per_cpu_second'))} jobs per CPU s"

    def floor(r):
        return both(labelled("FIFO (the event loop's floor)", get(r, f"{million}.FIFO.jobs_per_cpu_second"),
                             " jobs per CPU s"), PYSS)

    return [
        {
            "name": "EASY, 1,000,000 synthetic jobs (256 nodes, seed 0)",
            "key": f"{million}.EASY.jobs_per_cpu_second",
            "value": rate("EASY"),
            "anchor": floor,
            "ratio": lambda r: None,
            "aim": "≥ 1,000,000 jobs/s",
            "met": lambda r, x: get(r, f"{million}.EASY.jobs_per_cpu_second") >= 1e6,
        },
        {
            "name": "Conservative, the same jobs",
            "key": f"{million}.Conservative.jobs_per_cpu_second",
            "value": rate("Conservative"),
            "anchor": floor,
            "ratio": lambda r: None,
            "aim": "",
            "met": lambda r, x: None,
        },
        {
            "name": "every one-site algorithm (14), the same jobs",
            "key": f"{million}.all.cpu_seconds",
            "value": lambda r: f"{num(get(r, f'{million}.all.cpu_seconds'), 1)} CPU s",
            "anchor": lambda r: "",
            "ratio": lambda r: None,
            "aim": "",
            "met": lambda r, x: None,
        },
        {
            "name": "the default one-site list (14) on `data/lublin_256.swf` (10,000 jobs, queues of thousands)",
            "key": "by.lublin_256.all.cpu_seconds",
            "value": lambda r: f"{num(get(r, 'by.lublin_256.all.cpu_seconds'), 2)} CPU s",
            "anchor": lambda r: labelled("of which Conservative", get(r, "by.lublin_256.Conservative.cpu_seconds"),
                                         " CPU s", 2),
            "ratio": lambda r: None,
            "aim": "≤ 2 s",
            "met": lambda r, x: get(r, "by.lublin_256.all.cpu_seconds") <= 2,
        },
        {
            "name": "peak memory per job, 1,000,000 jobs, the most of any algorithm",
            "key": f"{million}.all.peak_bytes_per_job",
            "value": lambda r: f"{num(get(r, f'{million}.all.peak_bytes_per_job'))} B",
            "anchor": lambda r: "",
            "ratio": lambda r: None,
            "aim": "≤ 200 B",
            "met": lambda r, x: get(r, f"{million}.all.peak_bytes_per_job") <= 200,
        },
    ]


def log_figures():
    def mb(key):
        return lambda r: f"{num(get(r, key) / (1 << 20))} MB" if get(r, key) is not None else "—"

    return [
        {
            "name": "recovery of a 1 GB log (about half of it live), its rewrite at open left out",
            "key": "recovery.seconds",
            "value": lambda r: f"{num(get(r, 'recovery.seconds'), 2)} s",
            "anchor": lambda r: labelled("reading the file once", get(r, "recovery.read_file_seconds"), " s", 2),
            "ratio": lambda r: None,
            "aim": "< 30 s (a client's deadline)",
            "met": lambda r, x: get(r, "recovery.seconds") < 30,
        },
        {
            "name": "peak memory of that recovery",
            "key": "recovery.peak_rss_mb",
            "value": lambda r: f"{num(get(r, 'recovery.peak_rss_mb'))} MB",
            "anchor": lambda r: f"the live tuples' bytes {mb('recovery.live_bytes')(r)}",
            "ratio": lambda r: get(r, "recovery.peak_rss_mb") * (1 << 20) / get(r, "recovery.live_bytes"),
            "aim": "≤ 1.5 × the live set",
            "met": lambda r, x: x <= 1.5,
        },
        {
            "name": "longest wait for a commit that finished a rewrite, 554 MB of live tuples churned",
            "key": "compaction.longest_wait_with_rewrite_ms",
            "value": lambda r: f"{num(get(r, 'compaction.longest_wait_with_rewrite_ms'))} ms",
            "anchor": lambda r: both(
                labelled("the longest commit while a rewrite's thread ran",
                         get(r, "compaction.longest_wait_during_rewrite_ms"), " ms"),
                labelled("with none under way", get(r, "compaction.longest_wait_without_rewrite_ms"), " ms")),
            "ratio": lambda r: None,
            "aim": "≤ 100 ms",
            "met": lambda r, x: get(r, "compaction.longest_wait_with_rewrite_ms") <= 100,
        },
    ]


def swarm_figures():
    # One figure per pool size and measure: the aims are issue 29's (docs/scale.md). The
    # anchor of a tick is the tick's period, of a latency the beat (--beat 2, docs/scale.md).
    def at(n, key):
        return f"at.{n}.{key}"

    def ms(n, key):
        return lambda r: f"{num(get(r, at(n, key)))} ms"

    figures = []
    for n, tick_aim in ((1000, 50), (3000, None), (10000, 250)):
        figures.append({
            "name": f"NPS tick p99, {n:,} nodes (a tick every 1 s)",
            "key": at(n, "nps_tick_ms_p99"),
            "value": ms(n, "nps_tick_ms_p99"),
            "anchor": lambda r, n=n: both(labelled("p50", get(r, at(n, "nps_tick_ms_p50")), " ms"),
                                          "the period 1,000 ms"),
            "ratio": lambda r, n=n: get(r, at(n, "nps_tick_ms_p99")) / 1000,  # of the period
            "aim": f"≤ {tick_aim} ms" if tick_aim else "",
            "met": (lambda r, x, n=n, a=tick_aim: get(r, at(n, "nps_tick_ms_p99")) <= a) if tick_aim
            else (lambda r, x: None),
        })
    def bounded(n, name, key, value, anchor, aim, limit):
        # A figure of pool size n whose aim is an upper bound on its own value.
        return {"name": f"{name}, {n:,} nodes", "key": at(n, key), "value": value, "anchor": anchor,
                "ratio": lambda r: None, "aim": aim, "met": lambda r, x: get(r, at(n, key)) <= limit}

    for n in (1000, 3000, 10000):
        rss = lambda r, n=n: get(r, at(n, "swarm_rss_bytes"))
        figures += [
            bounded(n, "a decision obeyed, p99", "obey_latency_ms_p99", ms(n, "obey_latency_ms_p99"),
                    lambda r, n=n: labelled("p50", get(r, at(n, "obey_latency_ms_p50")), " ms"),
                    "≤ 2,000 ms at 10,000 nodes", 2000),
            bounded(n, "a job on 90 % of the available nodes", "job_spread_s",
                    lambda r, n=n: f"{num(get(r, at(n, 'job_spread_s')), 1)} s",
                    lambda r, n=n: labelled("registration of every node", get(r, at(n, "registration_s")), " s", 1),
                    "≤ 5 s at 10,000 nodes", 5),
            bounded(n, "the server's background CPU (liveness, heartbeats, watches)", "background_cpu_share",
                    lambda r, n=n: f"{num(100 * get(r, at(n, 'background_cpu_share')), 1)} % of a core",
                    lambda r, n=n: labelled("per node", get(r, at(n, "background_us_per_node_s")), " µs/s"),
                    "≤ 50 % of a core at 10,000 nodes", 0.5),
            bounded(n, "the server's RSS", "server_rss_bytes",
                    lambda r, n=n: f"{num(get(r, at(n, 'server_rss_bytes')) / 1e6)} MB",
                    lambda r, rss=rss: labelled("the swarm's", rss(r) / 1e6 if rss(r) else None, " MB"),
                    "≤ 1 GB at 10,000 nodes", 1e9),
            bounded(n, "nodes wrongly seen stale", "false_stale", lambda r, n=n: num(get(r, at(n, "false_stale")), 0),
                    lambda r, n=n: labelled("checks", get(r, at(n, "stale_checks")), "", 0), "0", 0),
        ]
    return figures


def campus_figures():
    # Issue 32: the campus against isolated subnets (the anchor: what it improves on) and
    # one flat pool of as many nodes; the run must finish within a few minutes.
    def minutes(key):
        return lambda r: f"{num(get(r, key) / 60, 1)} min"

    return [
        {
            "name": "mean turnaround with the campus lending",
            "key": "campus_mean_turnaround_s",
            "value": minutes("campus_mean_turnaround_s"),
            "anchor": lambda r: both(f"isolated subnets {minutes('isolated_mean_turnaround_s')(r)}",
                                     f"one flat pool {minutes('flat_mean_turnaround_s')(r)}; "
                                     f"{get(r, 'subnets')} subnets, {num(get(r, 'nodes'))} nodes"),
            "ratio": lambda r: get(r, "campus_mean_turnaround_s") / get(r, "isolated_mean_turnaround_s"),
            "aim": "< 1 × isolated subnets",
            "met": lambda r, x: x < 1,
        },
        {
            "name": "the simulation's wall time",
            "key": "wall_s",
            "value": lambda r: f"{num(get(r, 'wall_s'))} s",
            "anchor": lambda r: "",
            "ratio": lambda r: None,
            "aim": "a few minutes (≤ 300 s)",
            "met": lambda r, x: get(r, "wall_s") <= 300,
        },
    ]


def campus_live_figures():
    # Issue 32: the same job on pool a with the campus running against it stopped (the anchor:
    # a's own nodes alone).
    return [
        {
            "name": "a job on pool a, the campus lending b's and c's idle nodes",
            "key": "campus_s",
            "value": lambda r: f"{num(get(r, 'campus_s'), 1)} s",
            "anchor": lambda r: (f"the campus stopped {num(get(r, 'isolated_s'), 1)} s; "
                                 f"{get(r, 'tasks')} tasks of {get(r, 'task_ms')} ms, "
                                 f"{len(get(r, 'lent_nodes') or [])} nodes lent"),
            "ratio": lambda r: get(r, "campus_s") / get(r, "isolated_s"),
            "aim": "< 1 × campus stopped",
            "met": lambda r, x: x < 1,
        },
    ]


FIGURES = {"ts_bench": ts_figures(), "runtime": runtime_figures(), "nps": nps_figures(),
           "rigid": rigid_figures(), "log_bench": log_figures(), "swarm": swarm_figures(), "campus": campus_figures(),
           "campus_live": campus_live_figures()}


def describe(run):
    p = run.get("provenance", {})
    text = p.get("run") or f"{run.get('date', '?')}"
    if p.get("commit"):
        text += f", code at {p['commit']}"
    cpu = get(run, "machine.cpu")
    if cpu and not p.get("run"):
        text += f", {cpu}"
    if get(run, "config.quick") or get(run, "quick") or any("quick" in n for n in run.get("notes", [])):
        text += ", **a --quick smoke run**"
    if p.get("transcribed_from"):
        text += f"; figures transcribed from {p['transcribed_from']}"
    return text


def index_rigid(run):
    # The 14 one-site algorithms only: a total over a shorter list is not the figure.
    w = run["workload"]
    name = ("lublin_256" if w["source"].endswith("lublin_256.swf") else
            f"synthetic_{w['jobs']}" if w["source"] == f"lublin(jobs={w['jobs']},nodes=256,seed=0)" else None)
    if name is None:
        return
    by = {r["algorithm"]: r for r in run["results"]}
    if len(by) == 14:
        by["all"] = {"cpu_seconds": run["total_cpu_seconds"],
                     "peak_bytes_per_job": max(r["peak_bytes_per_job"] for r in run["results"])}
    run["by"] = {name: by}


def index_swarm(run):
    # A run lists one entry per pool size: the figures find them as at.N.key.
    run["at"] = {str(r["nodes"]): r for r in run["runs"]}


def load():
    runs = []
    for f in sorted(glob.glob(os.path.join(ROOT, "docs", "perf", "*.json"))):
        with open(f, encoding="utf-8") as fh:
            run = json.load(fh)
        run["_file"] = os.path.relpath(f, ROOT)
        if kind_of(run) == "rigid":
            index_rigid(run)
        if kind_of(run) == "swarm":
            index_swarm(run)
        runs.append(run)
    return runs


def section(runs):
    by_kind = {k: [] for k in BENCHMARKS}
    for r in runs:
        by_kind[kind_of(r)].append(r)
    out = [BEGIN, "", "## Today's figures", ""]
    out.append("Each figure is the latest measured, next to its anchor measured in the same run and its aim. "
               "The letter says which run; the last column has the same figure (its ratio, where it has one) "
               "in the other runs of that day. The runs' JSON is in `docs/perf/`; "
               "`scripts/perf-summary.py` writes this section from it (see \"Adding a run\" below), and "
               "[performance-history.md](performance-history.md) has every measurement before, with what "
               "was changed and why.")
    for kind in BENCHMARKS:
        ordered = sorted(by_kind[kind], key=sort_key)
        if not ordered:
            continue
        letters = {}
        used = []
        command, title = BENCHMARKS[kind]
        out += ["", f"### {title} ({command})", "",
                "| figure | measured | anchor, same run | ratio | aim | met | run | other runs that day |",
                "|---|---|---|---|---|---|---|---|"]
        for fig in FIGURES[kind]:
            having = [r for r in ordered if get(r, fig["key"]) is not None]
            if not having:
                continue
            run = having[-1]
            if run["_file"] not in letters:
                letters[run["_file"]] = chr(ord("a") + len(letters))
                used.append(run)
            ratio = fig["ratio"](run)
            met = fig["met"](run, ratio)
            day = sort_key(run)[0][:10]
            others = []
            for o in reversed(having[:-1]):
                if sort_key(o)[0][:10] != day:
                    continue
                if o["_file"] not in letters:
                    letters[o["_file"]] = chr(ord("a") + len(letters))
                    used.append(o)
                v = fig["ratio"](o)
                shown = num(v) if v is not None else fig["value"](o)
                others.append(f"{shown} ({letters[o['_file']]})")
            out.append("| " + " | ".join([
                fig["name"],
                fig["value"](run),
                fig["anchor"](run) or "",
                num(ratio) if ratio is not None else "",
                fig["aim"],
                "" if met is None else ("yes" if met else "**no**"),
                letters[run["_file"]],
                ", ".join(others),
            ]) + " |")
        out.append("")
        for r in used:
            out.append(f"- ({letters[r['_file']]}) `{r['_file']}`: {describe(r)}")
    out += ["", END]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/performance.md's section is stale")
    ap.add_argument("--stdout", action="store_true", help="print the section instead of writing it")
    args = ap.parse_args()
    new = section(load())
    if args.stdout:
        sys.stdout.write(new)
        return 0
    with open(DOC, encoding="utf-8") as fh:
        text = fh.read()
    if BEGIN not in text or END not in text:
        print(f"perf-summary.py: {DOC} has no section between the markers", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    updated = head + new.rstrip("\n") + tail
    if args.check:
        if updated != text:
            print("perf-summary.py: docs/performance.md's opening section is not what docs/perf/*.json gives; "
                  "run scripts/perf-summary.py", file=sys.stderr)
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
