#!/usr/bin/env python3
"""Draws the scale curve of docs/scale.md from bench/swarm.sh's JSON, as an SVG.

    bench/swarm_plot.py docs/perf/swarm-DATE.json [MORE.json ...] > docs/scale.svg

With several files, their runs are drawn together; a pool size measured in
more than one is taken from the last file that has it.

Two panels over the pool size (log scale): the server's CPU share (the pool's
background, and while a job spreads and runs), and the NPS's tick p99 and the
decision-to-obey latency p99, with the aims of docs/scale.md as dashed lines.
Python 3's standard library only.
"""
import json
import math
import sys

W, H, PAD = 360, 240, 48


def panel(x0, title, runs, series, aims, unit):
    nodes = [r["nodes"] for r in runs]
    lo, hi = math.log10(min(nodes)), math.log10(max(nodes))
    hi = hi if hi > lo else lo + 1
    top = max([max((r.get(k) or 0) * f for r in runs) for k, f, _, _ in series] + [a for a, _ in aims]) * 1.15
    top = top or 1

    def px(n):
        return x0 + PAD + (math.log10(n) - lo) / (hi - lo) * (W - 2 * PAD)

    def py(v):
        return H - PAD + 10 - v / top * (H - 2 * PAD)

    out = [f'<text x="{x0 + W / 2}" y="18" text-anchor="middle" font-weight="bold">{title}</text>',
           f'<line x1="{x0 + PAD}" y1="{py(0)}" x2="{x0 + W - PAD}" y2="{py(0)}" stroke="black"/>',
           f'<line x1="{x0 + PAD}" y1="{py(0)}" x2="{x0 + PAD}" y2="{py(top)}" stroke="black"/>']
    for n in nodes:
        out.append(f'<text x="{px(n)}" y="{py(0) + 16}" text-anchor="middle">{n:,}</text>')
    for i in range(5):
        v = top * i / 4
        out.append(f'<text x="{x0 + PAD - 4}" y="{py(v) + 4}" text-anchor="end">{v:.0f}</text>')
    out.append(f'<text x="{x0 + 12}" y="{py(top / 2)}" transform="rotate(-90 {x0 + 12} {py(top / 2)})" '
               f'text-anchor="middle">{unit}</text>')
    out.append(f'<text x="{x0 + W / 2}" y="{H + 4}" text-anchor="middle">nodes</text>')
    for value, label in aims:
        out.append(f'<line x1="{x0 + PAD}" y1="{py(value)}" x2="{x0 + W - PAD}" y2="{py(value)}" '
                   f'stroke="grey" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{x0 + W - PAD}" y="{py(value) - 3}" text-anchor="end" fill="grey">{label}</text>')
    for k, (key, factor, label, colour) in enumerate(series):
        pts = [(px(r["nodes"]), py((r.get(key) or 0) * factor)) for r in runs if r.get(key) is not None]
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
                   + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
        for x, y in pts:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        out.append(f'<text x="{x0 + PAD + 8}" y="{38 + 14 * k}" fill="{colour}">{label}</text>')
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    by_nodes = {}
    for path in sys.argv[1:]:
        for r in json.load(open(path))["runs"]:
            by_nodes[r["nodes"]] = r
    runs = [by_nodes[n] for n in sorted(by_nodes)]
    body = panel(0, "Server CPU (% of one core)", runs,
                 [("background_cpu_share", 100, "background (no job)", "#1f77b4"),
                  ("server_cpu_share", 100, "while a job runs", "#d62728")],
                 [(50, "aim: background ≤ 50 %")], "%")
    body += panel(W, "NPS tick and obey latency (p99)", runs,
                  [("nps_tick_ms_p99", 1, "NPS tick p99", "#2ca02c"),
                   ("obey_latency_ms_p99", 1, "decision → obeyed p99", "#9467bd")],
                  [(250, "tick aim 250 ms"), (2000, "obey aim 2 s")], "ms")
    print(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{H + 12}" '
          f'font-family="sans-serif" font-size="11">')
    print("\n".join(body))
    print("</svg>")


if __name__ == "__main__":
    main()
