#!/usr/bin/env python3
"""The scale benchmark: N simulated workstations against one real tuple-space
server and one real NPS on this machine (docs/scale.md). bench/swarm.sh runs it.

For each N in --nodes: a fresh `piranha ts serve`, `piranha nps run` (TSK,
--period 1 --tick 1), `piranha-swarm` with N nodes replaying `piranha trace
synth --nodes N` at --time-scale, and --real real agents running real
piranhas of examples/spin on the same pool (at their default idle priority;
the swarm processes too, --swarm-priority). The job's tasks wait their 20 ms
(spin --sleep) rather than burn them: a real piranha has a workstation of its
own, and one spinning here would take the cycles the swarm needs to play
10,000 other workstations (a profile at 10,000 nodes found the two real
piranhas burning more of this machine than the whole swarm). Then, in order:
  1. registration: until every swarm node's record is in the system space;
  2. background: --idle seconds with no job: the server's and the NPS's CPU
     share, the loopback bytes/s, per node;
  3. a job: `piranha submit spin --tasks 5N+500 --task-ms 20 --sleep`; the time until 90 %
     of the available nodes consume it (job_spread_s), the latency from each
     scheduler decision to the node obeying it, the server's CPU share and
     requests/s meanwhile; the job must finish with every task done exactly
     once (spin's feeder checks it);
  4. fallback: the NPS is killed (SIGKILL); every node must leave scheduler 0
     for its native policy within the agents' stale_seconds (10) and a margin;
  5. the server's RSS high-water mark and the system space's tuple count.
Progress on stderr; a table (or, with --json, one JSON object with a `runs`
list) on stdout. Exit status 1 when a run failed its checks (registration,
the job, the fallback), 2 for bad arguments.
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(f"swarm: {msg}", file=sys.stderr, flush=True)


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def lo_bytes():
    with open("/proc/net/dev") as f:
        for line in f:
            if line.strip().startswith("lo:"):
                return int(line.split(":", 1)[1].split()[0])
    return 0


def rank(v, q):
    """Nearest-rank percentile of sorted v (0 when empty)."""
    if not v:
        return 0
    k = max(1, min(len(v), int(-(-q * len(v) // 1))))
    return v[k - 1]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Run:
    def __init__(self, args, n, work):
        self.a, self.n, self.work = args, n, work
        self.bin = args.bin
        self.piranha = os.path.join(self.bin, "piranha")
        self.ep = f"tcp://127.0.0.1:{args.port}"
        self.procs = {}
        self.result = {"nodes": n}
        self.failures = []

    def start(self, name, cmd, **kw):
        out = open(os.path.join(self.work, name + ".log"), "w")
        p = subprocess.Popen(cmd, stdout=kw.pop("stdout", out), stderr=out, **kw)
        self.procs[name] = p
        return p

    def stop_all(self):
        for name, p in reversed(list(self.procs.items())):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p in self.procs.items():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def status(self):
        """The swarm processes' status files, summed (registered: the newest count)."""
        parts = [read_json(p) for p in self.parts]
        if any(p is None for p in parts):
            return {}
        out = {"time": min(p["time"] for p in parts), "registered": max(p["registered"] for p in parts),
               "running": {}, "obey_ms": [], "seen_ms": []}
        for key in ("started", "connected", "away", "available", "obeying", "tasks_completed", "false_stale",
                    "stale_checks"):
            out[key] = sum(p[key] for p in parts)
        out["uplink_reads"] = sum(p.get("uplink_reads", 0) for p in parts)
        out["stale_checks"] = min(p["stale_checks"] for p in parts)
        for p in parts:
            for job, count in p["running"].items():
                out["running"][job] = out["running"].get(job, 0) + count
            out["obey_ms"].extend(p["obey_ms"])
            out["seen_ms"].extend(p.get("seen_ms", []))
        out["obey_ms"].sort()
        out["seen_ms"].sort()
        return out

    def spread(self, job, since):
        """Seconds from `since` until 90 % of the available nodes consume `job`; None before."""
        st = self.status()
        if st and st["available"] > 0 and st["running"].get(str(job), 0) >= 0.9 * st["available"]:
            return round(time.time() - since, 2)
        return None

    def wait_for(self, what, cond, limit):
        end = time.time() + limit
        while time.time() < end:
            v = cond()
            if v:
                return v
            for name, p in self.procs.items():
                if (name == "server" or name.startswith("swarm")) and p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode} while waiting for {what}")
            time.sleep(0.25)
        raise RuntimeError(f"{what}: not within {limit:.0f} s")

    def swarm_cpu(self):
        return sum(cpu_seconds(p.pid) for name, p in self.procs.items()
                   if name.startswith("swarm") and p.poll() is None)

    def tick_figures(self, ticks, since, until):
        # The NPS rewrites its tick file every 5 s: wait for one written
        # after `until`, so that the window's last ticks are in it.
        t = {}
        deadline = time.time() + 15
        while time.time() < deadline:
            t = read_json(ticks) or {}
            log = t.get("log", [])
            if log and log[-1][0] >= until:
                break
            time.sleep(0.5)
        window = [e for e in t.get("log", []) if since <= e[0] < until]
        ms = sorted(e[1] for e in window)
        reads = sorted(e[2] for e in window if e[2] is not None)
        self.result["nps_ticks"] = len(ms)
        self.result["nps_tick_ms_p50"] = round(rank(ms, 0.5), 1)
        self.result["nps_tick_ms_p99"] = round(rank(ms, 0.99), 1)
        self.result["nps_tick_ms_max"] = round(ms[-1], 1) if ms else 0
        self.result["nps_read_ms_p50"] = round(rank(reads, 0.5), 1)
        self.result["nps_read_ms_p99"] = round(rank(reads, 0.99), 1)
        self.result["nps_rebuilds_in_window"] = sum(1 for e in window if e[3])
        # The whole run, registration included.
        self.result["nps_ticks_all"] = t.get("ticks", 0)
        self.result["nps_tick_ms_p99_all"] = round(t.get("p99_ms", 0), 1)
        self.result["nps_rebuilds"] = t.get("rebuilds", 0)
        self.result["nps_rebuild_ms_max"] = round(t.get("rebuild_max_ms", 0), 1)

    def real_obey_figures(self, since):
        # The real agents' decisions carried out since `since` (wall clock):
        # a node at normal priority, as a workstation's agent is on its own
        # machine, against the simulated nodes, which wait behind everything.
        ms, seen = [], []
        for i in range(self.a.real):
            try:
                with open(os.path.join(self.work, f"real{i}.events")) as f:
                    for line in f:
                        try:
                            e = json.loads(line)
                        except ValueError:
                            continue
                        if e.get("event") == "obeyed" and e.get("time", 0) >= since:
                            ms.append(e["latency_ms"])
                            seen.append(e["seen_ms"])
            except OSError:
                pass
        ms.sort()
        seen.sort()
        self.result["real_obeyed"] = len(ms)
        self.result["real_obey_latency_ms_p50"] = rank(ms, 0.5)
        self.result["real_obey_latency_ms_max"] = ms[-1] if ms else 0
        self.result["real_assignment_seen_ms_p50"] = rank(seen, 0.5)

    def go(self):
        a, n = self.a, self.n
        trace = os.path.join(self.work, "pool.avail.csv")
        subprocess.run([self.piranha, "trace", "synth", "--nodes", str(max(n, 2)), "--days", "2",
                        "--seed", "29", "--out", trace], check=True, stdout=subprocess.DEVNULL)
        # A server's unit raises its descriptor limit (LimitNOFILE): one
        # connection per node. Here the soft limit goes up to the hard one.
        def raise_nofile():
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        server = self.start("server", [self.piranha, "ts", "serve", "--bind", self.ep, "--quiet",
                                       "--heartbeat-ms", str(a.server_heartbeat_ms),
                                       "--io-threads", str(a.server_io_threads)],
                            preexec_fn=raise_nofile)
        ticks = os.path.join(self.work, "ticks.json")
        nps = self.start("nps", [self.piranha, "nps", "run", "--server", self.ep, "--period", "1",
                                 "--tick", "1", "--stale", "30", "--beat", "2", "--quiet", "--tick-stats", ticks],
                         preexec_fn=raise_nofile)

        def swarm_limits():
            raise_nofile()
            # Each node's uplink has two threads: small stacks.
            resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, resource.RLIM_INFINITY))
            # Real agents run on their own machines; here their 10,000 threads,
            # each weighing as much as one of the server's or the NPS's, would
            # take the measured processes' cores whenever a decision woke them.
            if a.swarm_priority == "idle":
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

        t0 = time.time()
        # Several swarm processes, each within one process's descriptors
        # (each node's connection costs a few: its socket, ZeroMQ's mailboxes).
        self.parts = []
        for k, first in enumerate(range(0, n, a.per_process)):
            count = min(a.per_process, n - first)
            status = os.path.join(self.work, f"swarm{k}.json")
            self.parts.append(status)
            self.start(f"swarm{k}", [os.path.join(self.bin, "piranha-swarm"), "--server", self.ep,
                                     "--nodes", str(count), "--first", str(first), "--trace", trace,
                                     "--time-scale", str(a.time_scale), "--status", status,
                                     "--task-seconds", str(a.task_seconds), "--ramp", str(a.ramp)]
                       + (["--aligned"] if a.aligned else []),
                       preexec_fn=swarm_limits)
        for i in range(a.real):
            self.start(f"real{i}", [self.piranha, "agent", "--node", f"real{i}", "--server", self.ep,
                                    "--trace", trace, "--trace-node", f"ws{i + 1:02d}" if n < 100 else
                                    self.trace_node(trace, i), "--time-scale", str(a.time_scale),
                                    "--quiet", "--events", os.path.join(self.work, f"real{i}.events"),
                                    "--piranha-output", os.path.join(self.work, f"real{i}.piranhas")])

        log(f"{n} nodes: starting")
        self.wait_for("every node registered", lambda: self.status().get("registered", 0) >= n,
                      60 + n / 50)
        self.result["registration_s"] = round(time.time() - t0, 1)
        log(f"{n} nodes: registered in {self.result['registration_s']} s")
        # Let the start settle (the NPS's first decisions, the ramp's reads).
        time.sleep(a.settle)

        # 2. background. The NPS's ticks are timed from here to the job's
        # end: the pool at its full size (its registration rebuilt the
        # trellis as nodes joined: reported apart).
        steady0 = time.monotonic()
        s0, p0, b0, w0 = cpu_seconds(server.pid), cpu_seconds(nps.pid), lo_bytes(), time.time()
        m0 = self.swarm_cpu()
        time.sleep(a.idle)
        s1, p1, b1, w1 = cpu_seconds(server.pid), cpu_seconds(nps.pid), lo_bytes(), time.time()
        self.result["swarm_idle_cpu_share"] = round((self.swarm_cpu() - m0) / (w1 - w0), 4)
        bg = (s1 - s0) / (w1 - w0)
        self.result["background_cpu_share"] = round(bg, 4)
        self.result["background_us_per_node_s"] = round(bg * 1e6 / n, 2)
        self.result["background_bytes_per_node_s"] = round((b1 - b0) / (w1 - w0) / n, 1)
        self.result["nps_idle_cpu_share"] = round((p1 - p0) / (w1 - w0), 4)
        log(f"{n} nodes: background {bg * 100:.1f} % of a core on the server")

        # 3. a job
        tasks = 5 * n + 500
        s0, p0, w0 = cpu_seconds(server.pid), cpu_seconds(nps.pid), time.time()
        m0 = self.swarm_cpu()
        r0 = self.status().get("uplink_reads", 0)
        sub = self.start("submit", [self.piranha, "submit", "--server", self.ep,
                                    os.path.join(self.bin, "spin"), "--tasks", str(tasks), "--task-ms", "20",
                                    "--sleep"])
        job = self.wait_for("the job's id", lambda: self.job_id(), 30)
        self.result["job"] = job
        # From the moment `piranha submit` was started (a little before the
        # job's registration: an upper bound).
        spread = self.wait_for("the job on 90 % of the available nodes", lambda: self.spread(job, w0),
                               60 + n / 100)
        self.result["job_spread_s"] = spread
        log(f"{n} nodes: job {job} on 90 % of the available nodes {spread:.2f} s after its submission")
        try:
            sub.wait(timeout=max(120, tasks * a.task_seconds / max(1, n) * 4))
        except subprocess.TimeoutExpired:
            raise RuntimeError("the job did not finish in time")
        s1, p1, w1 = cpu_seconds(server.pid), cpu_seconds(nps.pid), time.time()
        self.result["job_ok"] = sub.returncode == 0
        if sub.returncode != 0:
            self.failures.append(f"the job failed (exit {sub.returncode})")
        self.result["job_seconds"] = round(w1 - w0, 1)
        self.result["server_cpu_share"] = round((s1 - s0) / (w1 - w0), 4)
        self.result["nps_cpu_share"] = round((p1 - p0) / (w1 - w0), 4)
        # The simulated workstations' own share of this machine (real agents'
        # would be on their own machines): what the server and the NPS did not get.
        self.result["swarm_cpu_share"] = round((self.swarm_cpu() - m0) / (w1 - w0), 4)
        st = self.status()
        # The agents' reads of the system space while the job ran (each a
        # few requests): what its record writes cost the server per node.
        self.result["uplink_reads_per_node_job"] = round((st.get("uplink_reads", 0) - r0) / n, 2)
        ob = st.get("obey_ms", [])
        self.result["obey_latency_ms_p50"] = round(rank(ob, 0.5), 1)
        self.result["obey_latency_ms_p99"] = round(rank(ob, 0.99), 1)
        self.result["obeyed"] = len(ob)
        # Of that latency, the part until the node's uplink learnt of the
        # decision (the NPS's flush, the server, the watch event), the rest
        # being the node's own (its driver's turn).
        seen = st.get("seen_ms", [])
        self.result["assignment_seen_ms_p50"] = round(rank(seen, 0.5), 1)
        self.result["assignment_seen_ms_p99"] = round(rank(seen, 0.99), 1)
        if not ob:
            self.failures.append("no node obeyed a scheduler decision")
        self.tick_figures(ticks, steady0, time.monotonic())
        self.real_obey_figures(w0)
        self.result["tuples_in_system_space"] = self.tuples()
        log(f"{n} nodes: job done in {self.result['job_seconds']} s; NPS tick p99 "
            f"{self.result['nps_tick_ms_p99']:.1f} ms; obey p99 {self.result['obey_latency_ms_p99']:.0f} ms")

        # 4. fallback
        nps.kill()
        nps.wait()
        k0 = time.time()
        try:
            self.wait_for("every node back on its native policy", lambda: self.status().get("obeying", 1) == 0
                          and self.status().get("time", 0) > k0, 10 + 20)
            self.result["fallback_s"] = round(time.time() - k0, 1)
        except RuntimeError as e:
            self.failures.append(str(e))
            self.result["fallback_s"] = None
        st = self.status()
        self.result["false_stale"] = st.get("false_stale", 0)
        self.result["stale_checks"] = st.get("stale_checks", 0)
        self.result["server_rss_bytes"] = status_kb(server.pid, "VmHWM") * 1024
        self.result["swarm_rss_bytes"] = sum(status_kb(p.pid, "VmHWM") * 1024 for name, p in self.procs.items()
                                             if name.startswith("swarm"))
        self.result["registered"] = st.get("registered", 0)
        self.stop_all()
        m = re.search(r"shut down after (\d+) requests", open(os.path.join(self.work, "server.log")).read())
        if m:
            self.result["server_requests_per_s"] = round(int(m.group(1)) / (time.time() - t0))
        if self.result["false_stale"]:
            self.failures.append(f"{self.result['false_stale']} nodes wrongly seen as stale")
        self.result["ok"] = not self.failures
        if self.failures:
            self.result["failures"] = self.failures

    def trace_node(self, trace, i):
        with open(trace) as f:
            names = []
            for line in f:
                if line.startswith("#") or line.startswith("node"):
                    continue
                name = line.split(",", 1)[0]
                if name not in names:
                    names.append(name)
                if len(names) > i:
                    return names[i]
        return names[0]

    def job_id(self):
        try:
            text = open(os.path.join(self.work, "submit.log")).read()
        except OSError:
            return None
        m = re.search(r"job (\d+) submitted", text)
        return int(m.group(1)) if m else None

    def tuples(self):
        out = subprocess.run([self.piranha, "ts", "stats", "--server", self.ep], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            if line.split() and line.split()[0] == "piranha.sys":
                return int(line.split()[1])
        return None


def main():
    p = argparse.ArgumentParser(prog="bench/swarm.sh", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", default="1000,3000,10000", help="comma-separated pool sizes (default %(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--time-scale", type=float, default=10, help="trace seconds per real second (default 10)")
    p.add_argument("--task-seconds", type=float, default=10,
                   help="a simulated node completes a task this often (default 10)")
    p.add_argument("--idle", type=float, default=20, help="seconds of the background phase (default 20)")
    p.add_argument("--settle", type=float, default=10, help="seconds after registration before measuring")
    p.add_argument("--real", type=int, default=2, help="real agents with real spin piranhas (default 2)")
    p.add_argument("--server-heartbeat-ms", type=int, default=0,
                   help="the server's --heartbeat-ms (default 0: none, as docs/scale.md advises for large pools)")
    p.add_argument("--server-io-threads", type=int, default=1,
                   help="the server's --io-threads (default 1; docs/scale.md, limit 22, measured 2)")
    p.add_argument("--swarm-priority", choices=("idle", "normal"), default="idle",
                   help="the swarm processes' scheduling: idle (SCHED_IDLE, the default: they take only the "
                        "cycles the server and the NPS leave, as agents on their own machines would) or normal")
    p.add_argument("--per-process", type=int, default=2500, help="simulated nodes per swarm process (default 2500)")
    p.add_argument("--aligned", action="store_true",
                   help="every simulated node's trace steps at the same instants: a storm of owners coming "
                        "and going at once, the worst case (by default each node's replay is shifted by its "
                        "own fraction of a step, as real owners do not keep to the trace's 30-s grid)")
    p.add_argument("--ramp", type=float, default=250,
                   help="nodes started per second per swarm process (default 250)")
    p.add_argument("--port", type=int, default=7171, help="the server's port (default 7171)")
    p.add_argument("--bin", default=os.environ.get("BIN", os.path.join(ROOT, "build", "bin")))
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    a = p.parse_args()
    # Killed (SIGTERM): the runs' finally blocks stop every process they started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.time()
    try:
        sizes = [int(x) for x in a.nodes.split(",")]
        if any(s < 1 or s > 100000 for s in sizes):
            raise ValueError
    except ValueError:
        p.error(f"--nodes {a.nodes!r}: a comma-separated list of sizes from 1 to 100000")
    for b in ("piranha", "piranha-swarm", "spin"):
        if not os.access(os.path.join(a.bin, b), os.X_OK):
            p.error(f"{os.path.join(a.bin, b)} is missing: build first (cmake --build build)")
    runs, ok = [], True
    for n in sizes:
        work = tempfile.mkdtemp(prefix=f"swarm{n}.")
        r = Run(a, n, work)
        # The machine's load when the run began and ended: other work on the
        # machine competes with what is measured (the figures are only as
        # good as the machine was quiet).
        r.result["load_average_1m_before"] = os.getloadavg()[0]
        try:
            r.go()
        except (RuntimeError, subprocess.CalledProcessError) as e:
            r.failures.append(str(e))
            r.result["ok"] = False
            r.result["failures"] = r.failures
            log(f"{n} nodes: {e} (logs in {work})")
            a.keep = True
        finally:
            r.stop_all()
            r.result["load_average_1m_after"] = os.getloadavg()[0]
        ok = ok and r.result.get("ok", False)
        runs.append(r.result)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        date = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(started))
        print(json.dumps({"benchmark": "swarm", "cores": os.cpu_count(), "date": date,
                          "swarm_priority": a.swarm_priority, "aligned": a.aligned,
                          "server_io_threads": a.server_io_threads, "runs": runs}, indent=1))
    else:
        cols = [("nodes", "nodes"), ("nps_tick_ms_p50", "tick p50 ms"), ("nps_tick_ms_p99", "tick p99 ms"),
                ("obey_latency_ms_p99", "obey p99 ms"), ("job_spread_s", "spread s"),
                ("server_cpu_share", "server CPU"), ("background_cpu_share", "background CPU"),
                ("background_us_per_node_s", "us/node/s"), ("server_rss_bytes", "server RSS"),
                ("false_stale", "false stale"), ("fallback_s", "fallback s"), ("ok", "ok")]
        print(" | ".join(h for _, h in cols))
        for r in runs:
            print(" | ".join(str(r.get(k, "-")) for k, _ in cols))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
