// live_page_html (live_page.h): the live page, script and style inline.
#include "piranha/nps/live_page.h"

namespace piranha::nps {

std::string live_page_html() {
  return R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Piranha NPS: live</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:1100px;margin:1.5em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}
.state{display:inline-block;min-width:8.5em;padding:1px 8px;border-radius:10px;font-weight:600}
.available{background:#d7f0d4;color:#1b5e20}.unavailable{background:#e4e4e4;color:#444}
.owner-blocked{background:#f8d0cb;color:#8b1a10}.down{background:#555;color:#fff}.unknown{background:#fff3c4}
.bar{background:#eee;height:12px;width:220px;border-radius:6px;overflow:hidden}.bar>div{background:#0072B2;height:100%}
#conn{float:right;font-size:.9em;padding:2px 10px;border-radius:10px}#conn.on{background:#d7f0d4}#conn.off{background:#f8d0cb}
.muted{color:#777}ol{padding-left:1.4em;margin:.2em 0}
</style></head><body>
<span id="conn" class="off">connecting…</span>
<h1>Piranha NPS: live</h1>
<p>Obeyed scheduler: <b id="obeyed">–</b> · updated <span id="updated">never</span></p>
<h2>Nodes</h2>
<table><thead><tr><th>node</th><th>state</th><th>running</th><th>predicted AP (s)</th><th>complaints</th></tr></thead>
<tbody id="nodes"></tbody></table>
<h2>Queue</h2>
<table><thead><tr><th>job</th><th>progress</th><th>tasks done / all</th><th>mean task (s)</th></tr></thead>
<tbody id="jobs"></tbody></table>
<h2>Schedulers</h2>
<table><thead><tr><th>id</th><th>strategy</th><th>role</th><th>estimated mean turnaround (s)</th><th>assignments</th></tr></thead>
<tbody id="schedulers"></tbody></table>
<h2>Retreats</h2><ol id="retreats" class="muted"></ol>
<h2>Changes seen on this page</h2><ol id="changes" class="muted"></ol>
<script>
"use strict";
const seen = {};
function text(v) { return v === null || v === undefined ? "–" : String(v); }
function cell(tr, v, cls) { const td = document.createElement("td"); td.textContent = text(v); if (cls) td.className = cls; tr.appendChild(td); return td; }
function clock(t) { return new Date(t * 1000).toLocaleTimeString(); }
function render(s) {
  document.getElementById("obeyed").textContent = s.obeyed.id + " (" + (s.obeyed.strategy || "?") + ")";
  document.getElementById("updated").textContent = clock(s.time);
  const nodes = document.getElementById("nodes"); nodes.replaceChildren();
  for (const n of s.nodes) {
    const tr = document.createElement("tr"); tr.id = "node-" + n.name; tr.dataset.state = n.state; tr.dataset.job = text(n.job);
    cell(tr, n.name);
    const st = document.createElement("span"); st.className = "state " + n.state; st.textContent = n.state;
    const td = document.createElement("td"); td.appendChild(st); tr.appendChild(td);
    cell(tr, n.job === null ? "no job" : "job " + n.job);
    cell(tr, n.predicted_ap_seconds.toFixed(0)); cell(tr, n.complaints);
    nodes.appendChild(tr);
    const key = n.state + " / " + (n.job === null ? "no job" : "job " + n.job);
    if (seen[n.name] !== undefined && seen[n.name] !== key) {
      const li = document.createElement("li"); li.className = "change";
      li.textContent = clock(s.time) + " " + n.name + ": " + seen[n.name] + " → " + key;
      const ol = document.getElementById("changes"); ol.prepend(li); while (ol.children.length > 50) ol.lastChild.remove();
    }
    seen[n.name] = key;
  }
  const jobs = document.getElementById("jobs"); jobs.replaceChildren();
  if (s.jobs.length === 0) { const tr = document.createElement("tr"); cell(tr, "no job queued or running", "muted"); jobs.appendChild(tr); }
  for (const j of s.jobs) {
    const tr = document.createElement("tr"); tr.id = "job-" + j.id;
    cell(tr, j.id + " " + j.name);
    const td = document.createElement("td"); const bar = document.createElement("div"); bar.className = "bar";
    const fill = document.createElement("div"); fill.style.width = (100 * j.progress).toFixed(1) + "%"; bar.appendChild(fill); td.appendChild(bar); tr.appendChild(td);
    cell(tr, (j.tasks - j.tasks_left) + " / " + j.tasks);
    cell(tr, j.measured ? j.mean_task_seconds.toFixed(3) : "not measured yet");
    jobs.appendChild(tr);
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
  for (const r of s.retreats.slice().reverse()) {
    const li = document.createElement("li");
    li.textContent = clock(r.time) + " job " + r.job + " left " + r.node + " (" + (r.by === "owner" ? "the node stopped being available" : "the scheduler gave the node to another job") + ")";
    rt.appendChild(li);
  }
}
let polling = null;
function poll() { fetch("/api/state").then(r => r.json()).then(render).catch(() => {}); }
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
poll();
connect();
</script>
</body></html>
)HTML";
}

}  // namespace piranha::nps
