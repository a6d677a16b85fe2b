#!/usr/bin/env python3
"""Draws the campus comparison of docs/nps.md ("Hierarchy") from bench/campus.sh's JSON, as an SVG.

    bench/campus_plot.py campus.json > docs/campus.svg

One bar per way of scheduling the same nodes and jobs: isolated subnets, the campus (subnets
lending idle nodes), one flat pool; the bar is the mean turnaround in minutes. Python 3's
standard library only.
"""
import json
import sys

W, H, PAD, BAR = 560, 260, 56, 90


def main():
    r = json.load(open(sys.argv[1]))
    runs = [(m, label, colour) for m, label, colour in (
        ("isolated", "isolated subnets", "#c0504d"),
        ("campus", "campus (lending)", "#4f81bd"),
        ("flat", "one flat pool", "#9bbb59")) if m in r]
    minutes = {m: r[m]["mean_turnaround_s"] / 60 for m, _, _ in runs}
    top = max(minutes.values()) * 1.15 or 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           f'font-size="12">',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-weight="bold">Mean turnaround, '
           f'{r["subnets"]} subnets × {r["nodes"] // r["subnets"]} nodes, {r["jobs"]} jobs '
           f'({r["strategy"]} in each subnet)</text>']

    def py(v):
        return H - PAD - v / top * (H - 2 * PAD)

    out.append(f'<line x1="{PAD}" y1="{py(0)}" x2="{W - PAD}" y2="{py(0)}" stroke="black"/>')
    out.append(f'<line x1="{PAD}" y1="{py(0)}" x2="{PAD}" y2="{py(top)}" stroke="black"/>')
    for i in range(5):
        v = top * i / 4
        out.append(f'<text x="{PAD - 4}" y="{py(v) + 4}" text-anchor="end">{v:.0f}</text>')
    out.append(f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">minutes</text>')
    gap = (W - 2 * PAD - len(runs) * BAR) / (len(runs) + 1)
    for k, (m, label, colour) in enumerate(runs):
        x = PAD + gap + k * (BAR + gap)
        v = minutes[m]
        out.append(f'<rect x="{x:.1f}" y="{py(v):.1f}" width="{BAR}" height="{py(0) - py(v):.1f}" fill="{colour}"/>')
        out.append(f'<text x="{x + BAR / 2:.1f}" y="{py(v) - 4:.1f}" text-anchor="middle">{v:.1f}</text>')
        out.append(f'<text x="{x + BAR / 2:.1f}" y="{py(0) + 16}" text-anchor="middle">{label}</text>')
    o = r.get("campus", {}).get("overhead")
    if o:
        out.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle" fill="#555">campus: '
                   f'{o["decisions"]} decisions, {o["loans_started"]} loans, '
                   f'{o["lent_node_seconds"] / 3600:,.0f} lent node-hours; simulated in {r["wall_s"]:.0f} s</text>')
    out.append('</svg>')
    print("\n".join(out))


if __name__ == "__main__":
    main()
