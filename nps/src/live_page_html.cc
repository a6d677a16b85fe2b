// live_page_html (live_page.h): the live page, script and style inline.
#include "piranha/nps/live_page.h"

namespace piranha::nps {

std::string live_page_html() {
  return R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Piranha NPS: live</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{position:sticky;top:0;background:#fff}
.state{display:inline-block;min-width:8.5em;padding:1px 8px;border-radius:10px;font-weight:600}
.available{background:#d7f0d4;color:#1b5e20}.unavailable{background:#e4e4e4;color:#444}
.owner-blocked{background:#f8d0cb;color:#8b1a10}.down{background:#555;color:#fff}.unknown{background:#fff3c4}
.suspect{background:#ffd8a8;color:#7a3e00}
.bar{background:#eee;height:12px;width:220px;border-radius:6px;overflow:hidden}.bar>div{background:#0072B2;height:100%}
#conn{float:right;font-size:.9em;padding:2px 10px;border-radius:10px}#conn.on{background:#d7f0d4}#conn.off{background:#f8d0cb}
.muted{color:#777}ol{padding-left:1.4em;margin:.2em 0}.starting{color:#b35900;font-weight:600}
.scroll{max-height:460px;overflow-y:auto;border:1px solid #ddd}.small{font-size:.85em}
.swatch{display:inline-block;width:.9em;height:.9em;border-radius:2px;vertical-align:-1px;margin-right:4px}
#tools{display:flex;gap:1em;align-items:center;flex-wrap:wrap;font-size:.9em;margin-bottom:.4em}
#timeline text{font:11px system-ui,sans-serif;fill:#333}#timeline .axis{stroke:#ccc}
</style></head><body>
<span id="conn" class="off">connecting…</span>
<h1>Piranha NPS: live</h1>
<p>Pool: <b id="pool">–</b> · Obeyed scheduler: <b id="obeyed">–</b> · updated <span id="updated">never</span></p>
<p id="summary" class="muted"></p>
<h2>Timeline</h2>
<div id="tools">
<label>show the last <select id="span"><option value="900">15 min</option><option value="3600" selected>hour</option><option value="21600">6 hours</option></select></label>
<label>nodes matching <input id="filter" size="12" placeholder="name"></label>
<span id="legend"></span>
</div>
<div class="scroll" id="timeline-box"><svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="1000" height="40"></svg></div>
<p class="small muted">A row per node, time flowing to the right (the right edge is now). Filled with the job's colour while the node
runs a job and is available; grey while its owner uses it, hatched red while its owner has blocked it, dark while its agent is silent.
▼ a retreat (black: the owner came back; orange: the scheduler gave the node to another job); a dashed line a switch of the obeyed scheduler.</p>
<h2>Nodes</h2>
<div class="scroll"><table><thead><tr><th>node</th><th>state</th><th>running</th><th>why</th><th>next</th><th>complaints</th></tr></thead>
<tbody id="nodes"></tbody></table></div>
<h2>Queue</h2>
<table><thead><tr><th>job</th><th>progress</th><th>tasks done / all</th><th>mean task (s)</th><th>waiting or running for</th></tr></thead>
<tbody id="jobs"></tbody></table>
<h2>Ended jobs</h2>
<table><thead><tr><th>job</th><th>ended</th><th>turnaround</th><th>retreats (owner / scheduler)</th></tr></thead>
<tbody id="finished"></tbody></table>
<h2>Schedulers</h2>
<table><thead><tr><th>id</th><th>strategy</th><th>role</th><th>estimated mean turnaround (s)</th><th>assignments</th></tr></thead>
<tbody id="schedulers"></tbody></table>
<h2>Retreats</h2><ol id="retreats" class="muted"></ol>
<h2>Latest changes</h2><ol id="changes" class="muted"></ol>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
// The same bounds as the NPS's history (timeline.h): a page left open for days stays small.
const KEEP = 6 * 3600, ROWS_KEPT = 1024, MARKS_KEPT = 1000, FINISHED_KEPT = 200;
// The page's model of the pool's history: /history on load, then every state the event stream brings.
const model = { rows: {}, open: {}, marks: [], markKeys: new Set(), finished: new Map(), obeyed: null, now: 0, last: null };
const palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#7F3C8D", "#11A579", "#3969AC"];
// Owner-blocked stretches are hatched, so that no job's colour is taken for them.
const stateFill = { "unavailable": "#bdbdbd", "owner-blocked": "url(#blocked-hatch)", "down": "#555", "unknown": "#fff3c4" };
const hatchCss = "repeating-linear-gradient(45deg,#d14b3c 0 3px,#f8d0cb 3px 6px)";
function jobColour(j) { return palette[Math.abs(j) % palette.length]; }
function fill(state, job) { return state === "available" ? (job === null ? "#d7f0d4" : jobColour(job)) : (stateFill[state] || "#fff3c4"); }
function text(v) { return v === null || v === undefined ? "–" : String(v); }
function cell(tr, v, cls) { const td = document.createElement("td"); td.textContent = text(v); if (cls) td.className = cls; tr.appendChild(td); return td; }
function clock(t) { return new Date(t * 1000).toLocaleTimeString(); }
function jobText(j) { return j === null || j === undefined ? "no job" : "job " + j; }
function duration(s) { return s < 90 ? s.toFixed(s < 10 ? 1 : 0) + " s" : s < 5400 ? (s / 60).toFixed(0) + " min" : (s / 3600).toFixed(1) + " h"; }
function plural(n, what) { return n + " " + what + (n === 1 ? "" : "s"); }
function swatch(job) { const sp = document.createElement("span"); sp.className = "swatch"; sp.style.background = jobColour(job); return sp; }
function el(name, attrs, parent) { const e = document.createElementNS(SVG, name); for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; }
function addMark(m) {
  const key = JSON.stringify(m);
  if (model.markKeys.has(key)) return;
  model.markKeys.add(key); model.marks.push(m);
  model.marks.sort((a, b) => a.time - b.time);
  while (model.marks.length > MARKS_KEPT || (model.marks.length && model.marks[0].time < model.now - KEEP))
    model.markKeys.delete(JSON.stringify(model.marks.shift()));
}
function addFinished(f) {
  if (f.id === null || model.finished.has(f.id)) return;
  model.finished.set(f.id, f);
  if (model.finished.size > FINISHED_KEPT) model.finished.delete(model.finished.keys().next().value);
}
// A change of a node's state or job, for "Latest changes".
function change(t, name, from, to) {
  const li = document.createElement("li"); li.className = "change";
  li.textContent = clock(t) + " " + name + ": " + from[2] + " / " + jobText(from[3]) + " → " + to[2] + " / " + jobText(to[3]);
  const ol = document.getElementById("changes"); ol.prepend(li); while (ol.children.length > 50) ol.lastChild.remove();
}
function observe(s) {
  const t = s.time; model.now = Math.max(model.now, t);
  const present = new Set();
  for (const n of s.nodes) {
    present.add(n.name);
    const row = model.rows[n.name] || (model.rows[n.name] = []);
    const last = row[row.length - 1];
    if (model.open[n.name] && last) {
      last[1] = Math.max(last[1], t);
      if (last[2] === n.state && last[3] === n.job) continue;
      change(t, n.name, last, [t, t, n.state, n.job]);
    }
    row.push([t, t, n.state, n.job]); model.open[n.name] = true;
    while (row.length > ROWS_KEPT || (row.length > 1 && row[0][1] < model.now - KEEP)) row.shift();
  }
  for (const name in model.open) if (!present.has(name)) model.open[name] = false;
  for (const r of s.retreats) addMark({ time: r.time, kind: "retreat", node: r.node, job: r.job, by: r.by });
  if (model.obeyed !== null && s.obeyed.id !== model.obeyed.id)
    addMark({ time: t, kind: "switch", from: model.obeyed.id, to: s.obeyed.id, from_strategy: model.obeyed.strategy, to_strategy: s.obeyed.strategy });
  model.obeyed = s.obeyed;
  for (const f of (s.finished || [])) addFinished(f);
}
function loadHistory(h) {
  model.rows = h.nodes; model.open = h.open; model.now = Math.max(model.now, h.time || 0);
  for (const m of h.marks) addMark(m);
  for (const f of h.finished) addFinished(f);
  // The latest changes, from the history: the page does not start empty.
  const all = [];
  for (const name in h.nodes) { const row = h.nodes[name]; for (let i = 1; i < row.length; ++i) all.push([row[i][0], name, row[i - 1], row[i]]); }
  all.sort((a, b) => a[0] - b[0]);
  document.getElementById("changes").replaceChildren();
  for (const c of all.slice(-50)) change(c[0], c[1], c[2], c[3]);
  if (model.last) observe(model.last);
  draw();
}
function shown(name) { const f = document.getElementById("filter").value.trim(); return f === "" || name.includes(f); }
let drawing = false;
function draw() {
  if (drawing) return; drawing = true;
  requestAnimationFrame(() => { drawing = false; drawNow(); });
}
function drawNow() {
  const svg = document.getElementById("timeline");
  const names = Object.keys(model.rows).filter(shown).sort();
  // No longer than what is kept: a young pool's history fills the width.
  let earliest = model.now;
  for (const name of names) if (model.rows[name].length) earliest = Math.min(earliest, model.rows[name][0][0]);
  const now = model.now, span = Math.max(60, Math.min(Number(document.getElementById("span").value), now - earliest)), from = now - span;
  const left = 90, top = 22, rowH = names.length > 40 ? 10 : 16;
  const width = Math.max(400, document.getElementById("timeline-box").clientWidth - 4), plot = width - left - 8;
  const x = (t) => left + Math.max(0, Math.min(1, (t - from) / span)) * plot;
  svg.setAttribute("width", width); svg.setAttribute("height", top + rowH * names.length + 6);
  svg.replaceChildren();
  const hatch = el("pattern", { id: "blocked-hatch", patternUnits: "userSpaceOnUse", width: 6, height: 6, patternTransform: "rotate(45)" }, el("defs", {}, svg));
  el("rect", { width: 6, height: 6, fill: "#f8d0cb" }, hatch); el("rect", { width: 3, height: 6, fill: "#d14b3c" }, hatch);
  for (let i = 0; i <= 6; ++i) {
    const t = from + span * i / 6, xi = x(t);
    el("line", { x1: xi, x2: xi, y1: top - 4, y2: top + rowH * names.length, class: "axis" }, svg);
    const label = el("text", { x: xi, y: 12, "text-anchor": i === 0 ? "start" : i === 6 ? "end" : "middle" }, svg);
    label.textContent = i === 6 ? "now" : span < 600 ? clock(t) : clock(t).replace(/:\d\d( |$)/, "$1");
  }
  names.forEach((name, i) => {
    const y = top + i * rowH;
    const g = el("g", { class: "row", "data-node": name }, svg);
    const label = el("text", { x: 2, y: y + rowH - 3 }, g); label.textContent = name;
    const row = model.rows[name];
    row.forEach(([start, end0, state, job], k) => {
      // The open stretch goes on until now.
      const end = model.open[name] && k === row.length - 1 ? Math.max(end0, now) : end0;
      if (end < from) return;
      const x0 = x(start), x1 = Math.max(x(end), x0 + 1);
      const r = el("rect", { x: x0, y: y + 1, width: x1 - x0, height: rowH - 2, fill: fill(state, job), class: "span", "data-state": state, "data-job": job === null ? "" : job }, g);
      el("title", {}, r).textContent = name + " " + clock(start) + "–" + clock(end) + ": " + state + ", " + jobText(job) + " (" + duration(end - start) + ")";
    });
  });
  for (const m of model.marks) {
    if (m.time < from) continue;
    const xm = x(m.time);
    if (m.kind === "switch") {
      const l = el("line", { x1: xm, x2: xm, y1: top - 6, y2: top + rowH * names.length, stroke: "#7F3C8D", "stroke-dasharray": "4 3", "stroke-width": 2, class: "mark switch" }, svg);
      el("title", {}, l).textContent = clock(m.time) + ": the evaluator switched from scheduler " + m.from + " (" + m.from_strategy + ") to " + m.to + " (" + m.to_strategy + ")";
    } else {
      const i = names.indexOf(m.node); if (i < 0) continue;
      const y = top + i * rowH;
      const p = el("path", { d: "M" + (xm - 5) + " " + y + " h10 l-5 7 z", fill: m.by === "owner" ? "#000" : "#E69F00", class: "mark retreat" }, svg);
      el("title", {}, p).textContent = clock(m.time) + ": job " + m.job + " left " + m.node + (m.by === "owner" ? " (its owner came back)" : " (the scheduler gave the node to another job)");
    }
  }
  if (names.length === 0) { const t = el("text", { x: left, y: top + 12 }, svg); t.textContent = "no node seen yet"; }
}
function legend() {
  const l = document.getElementById("legend");
  for (const [name, c] of [["available, idle", "#d7f0d4"], ["running a job (its colour)", palette[0]], ["owner using it", stateFill.unavailable], ["owner-blocked", hatchCss], ["down", stateFill.down]]) {
    const sp = document.createElement("span"); sp.className = "swatch"; sp.style.background = c; l.appendChild(sp);
    l.appendChild(document.createTextNode(name + "  "));
  }
}
function render(s) {
  model.last = s;
  observe(s);
  document.getElementById("obeyed").textContent = s.obeyed.id + " (" + (s.obeyed.strategy || "?") + ")";
  document.getElementById("pool").textContent = text(s.pool);
  document.getElementById("updated").textContent = clock(s.time);
  const count = {};
  let busy = 0;
  for (const n of s.nodes) { count[n.state] = (count[n.state] || 0) + 1; if (n.job !== null) ++busy; }
  document.getElementById("summary").textContent = s.nodes.length + " nodes: " +
    ["available", "unavailable", "owner-blocked", "down"].map(k => (count[k] || 0) + " " + k).join(", ") +
    " · " + busy + " running a job · " + plural(s.jobs.length, "job") + " queued or running · " + plural(model.finished.size, "ended job") + " listed";
  const nodes = document.getElementById("nodes"); nodes.replaceChildren();
  for (const n of s.nodes) {
    if (!shown(n.name)) continue;
    const tr = document.createElement("tr"); tr.id = "node-" + n.name; tr.dataset.state = n.state; tr.dataset.job = text(n.job);
    cell(tr, n.name);
    const st = document.createElement("span"); st.className = "state " + n.state; st.textContent = n.state;
    const td = document.createElement("td"); td.appendChild(st); tr.appendChild(td);
    const run = cell(tr, "");
    if (n.job !== null) run.appendChild(swatch(n.job));
    run.appendChild(document.createTextNode(jobText(n.job)));
    if (n.starting) { const a = document.createElement("div"); a.className = "starting"; a.textContent = "job " + n.assigned + ": assigned, starting"; run.appendChild(a); }
    cell(tr, n.why, "small"); cell(tr, n.next, "small"); cell(tr, n.complaints);
    nodes.appendChild(tr);
  }
  const jobs = document.getElementById("jobs"); jobs.replaceChildren();
  if (s.jobs.length === 0) { const tr = document.createElement("tr"); cell(tr, "no job queued or running", "muted"); jobs.appendChild(tr); }
  for (const j of s.jobs) {
    const tr = document.createElement("tr"); tr.id = "job-" + j.id;
    const name = cell(tr, ""); name.appendChild(swatch(j.id)); name.appendChild(document.createTextNode(j.id + " " + j.name));
    const td = document.createElement("td"); const bar = document.createElement("div"); bar.className = "bar";
    const fillDiv = document.createElement("div"); fillDiv.style.width = (100 * j.progress).toFixed(1) + "%"; bar.appendChild(fillDiv); td.appendChild(bar); tr.appendChild(td);
    cell(tr, (j.tasks - j.tasks_left) + " / " + j.tasks);
    cell(tr, j.measured ? j.mean_task_seconds.toFixed(3) : "not measured yet");
    cell(tr, j.arrival ? duration(Math.max(0, s.time - j.arrival)) : "–");
    jobs.appendChild(tr);
  }
  const fin = document.getElementById("finished"); fin.replaceChildren();
  const ended = [...model.finished.values()].sort((a, b) => b.end - a.end);
  if (ended.length === 0) { const tr = document.createElement("tr"); cell(tr, "no job has ended yet", "muted"); fin.appendChild(tr); }
  for (const f of ended) {
    const tr = document.createElement("tr"); tr.id = "ended-" + f.id;
    const name = cell(tr, ""); name.appendChild(swatch(f.id)); name.appendChild(document.createTextNode(f.id + " " + f.name));
    cell(tr, clock(f.end)); cell(tr, duration(f.turnaround)); cell(tr, f.owner_retreats + " / " + f.scheduler_retreats);
    fin.appendChild(tr);
  }
  const sch = document.getElementById("schedulers"); sch.replaceChildren();
  for (const x of s.schedulers) {
    const tr = document.createElement("tr");
    cell(tr, x.id); cell(tr, x.strategy); cell(tr, x.obeyed ? "obeyed" : "shadow");
    cell(tr, x.estimated_mean_turnaround_seconds === undefined ? "–" : x.estimated_mean_turnaround_seconds.toFixed(1));
    cell(tr, Object.entries(x.assignments).map(([n, j]) => n + ": " + (j === null ? "–" : "job " + j)).join(", "));
    sch.appendChild(tr);
  }
  const rt = document.getElementById("retreats"); rt.replaceChildren();
  const retreats = model.marks.filter(m => m.kind === "retreat").sort((a, b) => b.time - a.time).slice(0, 50);
  if (retreats.length === 0) { const li = document.createElement("li"); li.textContent = "no retreat in the history kept"; rt.appendChild(li); }
  for (const r of retreats) {
    const li = document.createElement("li"); li.className = "retreat";
    li.textContent = clock(r.time) + " job " + r.job + " left " + r.node + " (" + (r.by === "owner" ? "the node stopped being available" : "the scheduler gave the node to another job") + ")";
    rt.appendChild(li);
  }
  draw();
}
let polling = null;
function poll() { fetch("/api/state").then(r => r.json()).then(render).catch(() => {}); }
function history() {
  fetch("/history?since=" + (Date.now() / 1000 - KEEP)).then(r => r.json()).then(loadHistory).catch(() => {});
}
function connect() {
  const es = new EventSource("/events");
  const conn = document.getElementById("conn");
  es.onopen = () => {
    conn.textContent = "live"; conn.className = "on";
    if (polling) { clearInterval(polling); polling = null; }
  };
  es.onmessage = (e) => render(JSON.parse(e.data));
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED) { conn.textContent = "reconnecting…"; conn.className = "off"; return; }
    // Refused (every event stream is taken): read the state every 2 s, and try a stream again later.
    conn.textContent = "polling every 2 s"; conn.className = "off";
    if (!polling) polling = setInterval(poll, 2000);
    setTimeout(connect, 30000);
  };
}
document.getElementById("span").onchange = draw;
document.getElementById("filter").oninput = () => { draw(); if (model.last) render(model.last); };
window.onresize = draw;
legend();
history();
poll();
connect();
</script>
</body></html>
)HTML";
}

}  // namespace piranha::nps
