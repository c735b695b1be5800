package watch

// livePage is the whole live page: inline styles and script, no external
// asset. It reads /events (server-sent events: hello, palette, change,
// tick) and draws the lanes of report.html as they grow: one lane per
// node coloured by the leader it views, outlined while it believes it
// leads, hatched while down, striped while paused, shaded while cut off
// from every network, and a red strip while two or more nodes lead.
// Every string from the server is set as text, never as markup. The
// server puts everything seen so far where initialMark is, so the page is
// drawn as soon as it loads.
const livePage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ringleader watch</title>
<style>
:root { --ink: #212121; --muted: #616161; --rule: #e0e0e0; --alarm: #d50000; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0; background: #fff; }
main { max-width: 1260px; margin: 0 auto; padding: 16px 24px 32px; }
h1 { font-size: 20px; margin: 0 0 2px; }
.meta { color: var(--muted); margin: 0 0 10px; }
.meta b { color: var(--ink); }
#conn.off { color: var(--alarm); font-weight: 600; }
#alarm { display: none; margin: 8px 0; padding: 8px 12px; border-radius: 6px; background: #ffebee; border: 1px solid #ef9a9a; color: #b71c1c; font-weight: 600; }
#alarm.on { display: block; }
#alarm.stale { background: #fff8e1; border-color: #ffe082; color: #8d6e00; }
table { border-collapse: collapse; margin: 4px 0 12px; }
th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid var(--rule); }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.down td { color: #9e9e9e; }
tr.paused td { color: #1565c0; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 6px 0 8px; font-size: 12px; color: #424242; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.controls { font-size: 12px; color: var(--muted); }
.plot { width: 100%; overflow-x: auto; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
.note { color: var(--muted); font-style: italic; font-size: 12px; }
</style>
</head>
<body>
<svg width="0" height="0" style="position:absolute" aria-hidden="true">
<defs>
<pattern id="rl-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
<rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9e9e9e" stroke-width="2"/>
</pattern>
<pattern id="rl-paused" width="5" height="5" patternUnits="userSpaceOnUse">
<line x1="1" y1="0" x2="1" y2="5" stroke="#1565c0" stroke-width="1.4" stroke-opacity="0.55"/>
</pattern>
</defs>
</svg>
<main>
<h1>ringleader watch</h1>
<p class="meta">run <b id="run">?</b> · <span id="count">0</span> nodes<span id="engines"></span> · <span id="clock">–</span> · <span id="conn">connecting…</span></p>
<div id="alarm" role="alert"></div>
<table id="nodes">
<thead><tr><th>node</th><th id="engine-col" hidden>engine</th><th>container</th><th>state</th><th>leader</th><th>epoch</th><th>role</th><th class="num">sent/s</th><th class="num">recv/s</th><th>faults seen</th></tr></thead>
<tbody></tbody>
</table>
<div class="legend" id="legend"></div>
<p class="controls">show the last <select id="window">
<option value="30000">30 s</option><option value="120000" selected>2 min</option><option value="600000">10 min</option><option value="0">everything</option>
</select></p>
<div class="plot"><svg id="lanes" xmlns="http://www.w3.org/2000/svg" width="1200" height="60"></svg></div>
<p class="note">Read from the containers' logs and states, never from the cluster's network. Hover a bar for its view and times; offsets are from the first record seen.</p>
</main>
<script type="application/json" id="initial">/*INITIAL*/</script>
<script>
"use strict";
(function () {
  var NS = "http://www.w3.org/2000/svg";
  var st;
  function reset(start, run) {
    st = { start: start, run: run, now: start, nowAt: Date.now(), nodes: {}, alarms: [], pal: {}, tick: null, dirty: true };
  }
  reset(Date.now(), "");

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(e, s) { var t = document.createElementNS(NS, "title"); t.textContent = s; e.appendChild(t); }
  function colour(leader) { return st.pal[String(leader)] || (leader ? "#888888" : "#d4d4d4"); }
  function ink(fill) {
    if (/^#[0-9a-f]{6}$/i.test(fill)) {
      var r = parseInt(fill.substr(1, 2), 16), g = parseInt(fill.substr(3, 2), 16), b = parseInt(fill.substr(5, 2), 16);
      if (0.299 * r + 0.587 * g + 0.114 * b > 160) return "#222";
    }
    return "#fff";
  }
  function off(t) { return "+" + ((t - st.start) / 1000).toFixed(1) + "s"; }
  // engineShort is EngineShort (text.go): a socket's file name, a TCP
  // engine's host and port, a context's name.
  function engineShort(e) {
    var i = e.indexOf("://");
    if (i < 0) return e;
    var scheme = e.substr(0, i), rest = e.substr(i + 3);
    if (scheme === "unix" || scheme === "npipe") {
      rest = rest.substr(Math.max(rest.lastIndexOf("/"), rest.lastIndexOf("\\")) + 1);
      return rest.replace(/\.sock$/, "");
    }
    return rest.replace(/\/$/, "");
  }
  function engineOf(id) { var c = st.nodes[id] && st.nodes[id].cur; return (c && c.engine) || ""; }

  function lane(id) {
    var n = st.nodes[id];
    if (!n) { n = st.nodes[id] = { id: id, segs: [], cur: null }; }
    return n;
  }
  function apply(c) {
    if (c.t > st.now) { st.now = c.t; st.nowAt = Date.now(); }
    var last = st.alarms[st.alarms.length - 1];
    if (c.change === "alarm") {
      if (last && last.end === null) { last.leaders = c.leaders; last.paused = c.paused_leaders || []; }
      else st.alarms.push({ start: c.t, end: null, leaders: c.leaders, paused: c.paused_leaders || [] });
      return;
    }
    if (c.change === "alarm-end") { if (last && last.end === null) last.end = c.t; return; }
    var n = lane(c.node);
    n.cur = c;
    var seg = { t: c.t, leader: c.leader, role: c.role, epoch: c.epoch, state: c.state || "", isolated: !!c.isolated };
    var prev = n.segs[n.segs.length - 1];
    if (prev) {
      if (prev.leader === seg.leader && prev.role === seg.role && prev.epoch === seg.epoch && prev.state === seg.state && prev.isolated === seg.isolated) return;
      if (seg.t < prev.t) seg.t = prev.t;
    }
    n.segs.push(seg);
  }

  function niceStep(span, most) {
    var steps = [100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
    for (var i = 0; i < steps.length; i++) if (span / steps[i] <= most) return steps[i];
    return steps[steps.length - 1];
  }
  function fmtOffset(ms) {
    if (ms % 1000) return (ms / 1000).toFixed(1) + "s";
    var s = ms / 1000, m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (h) return h + "h" + (m % 60 ? (m % 60) + "m" : "");
    if (m) return m + "m" + (s % 60 ? (s % 60) + "s" : "");
    return s + "s";
  }

  function draw() {
    st.dirty = false;
    var svg = document.getElementById("lanes");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var ids = Object.keys(st.nodes).map(Number).sort(function (a, b) { return a - b; });
    // Across engines each lane says which engine holds its node.
    var across = ids.some(function (id) { return engineOf(id) !== ""; });
    var W = 1200, left = across ? 170 : 70, right = 16, laneH = 22, gap = 8, top = 6;
    var now = st.now;
    var win = Number(document.getElementById("window").value);
    var begin = win ? Math.max(st.start, now - win) : st.start;
    var span = Math.max(now - begin, 1000);
    var width = W - left - right;
    function x(t) { return left + width * Math.min(Math.max(t - begin, 0), span) / span; }
    var bottom = top + ids.length * (laneH + gap) - gap;
    var step = niceStep(span, 12);
    var first = Math.ceil((begin - st.start) / step) * step;
    for (var d = first; st.start + d <= begin + span; d += step) {
      el("line", { x1: x(st.start + d), y1: top - 2, x2: x(st.start + d), y2: bottom + 2, stroke: "#e6e6e6" }, svg);
    }
    ids.forEach(function (id, i) {
      var n = st.nodes[id], y = top + i * (laneH + gap);
      var cur = n.segs[n.segs.length - 1] || {};
      var g = el("g", { "class": "lane", "data-node": id, "data-leader": cur.leader, "data-role": cur.role, "data-state": cur.state, "data-epoch": cur.epoch, "data-engine": engineOf(id) || null }, svg);
      var label = el("text", { x: left - 8, y: y + laneH / 2 + 4, "text-anchor": "end", fill: "#222", "font-size": 12, "font-weight": "bold" }, g);
      label.textContent = "node " + id;
      if (engineOf(id)) {
        var on = el("tspan", { fill: "#616161", "font-weight": "normal" }, label);
        on.textContent = " · " + engineShort(engineOf(id));
        title(label, "node " + id + " runs on engine " + engineOf(id));
      }
      el("rect", { x: left, y: y, width: width, height: laneH, fill: "#f7f7f7", stroke: "#e0e0e0" }, g);
      for (var k = 0; k < n.segs.length; k++) {
        var s = n.segs[k], end = k + 1 < n.segs.length ? n.segs[k + 1].t : now;
        if (end < begin) continue;
        var x1 = x(s.t), x2 = x(end), w = Math.max(x2 - x1, 1.5);
        var tip = "node " + id + ": " + (s.state === "down" ? "down" : (s.leader ? "views " + s.leader + " as leader" : "no leader")) +
          "\nrole " + s.role + ", epoch " + s.epoch + (s.state ? ", " + s.state : "") + (s.isolated ? ", no network" : "") +
          "\n" + off(s.t) + " → " + (k + 1 < n.segs.length ? off(end) : "now");
        var r;
        if (s.state === "down") {
          r = el("rect", { x: x1, y: y, width: w, height: laneH, fill: "url(#rl-hatch)", stroke: "#bdbdbd", "stroke-width": 0.5, "class": "seg" }, g);
        } else {
          var fill = colour(s.leader);
          r = el("rect", { x: x1, y: y + 2, width: w, height: laneH - 4, fill: fill, "class": "seg" }, g);
          var text = "";
          if (s.role === "leader") { r.setAttribute("stroke", "#111111"); r.setAttribute("stroke-width", 2); r.setAttribute("y", y + 1); r.setAttribute("height", laneH - 2); text = "★ " + s.leader; }
          else if (s.leader) text = String(s.leader);
          else if (s.role === "candidate") { r.setAttribute("stroke", "#616161"); r.setAttribute("stroke-dasharray", "3,2"); text = "?"; }
          if (text && w >= text.length * 6.6 + 8) {
            var tx = el("text", { x: x1 + w / 2, y: y + laneH / 2 + 4, "text-anchor": "middle", fill: ink(fill), "font-size": 11, "font-weight": s.role === "leader" ? "bold" : null }, g);
            tx.textContent = text;
          }
          if (s.state === "paused") {
            var p = el("rect", { x: x1, y: y, width: w, height: laneH, fill: "url(#rl-paused)", stroke: "#1565c0", "stroke-dasharray": "2,2" }, g);
            title(p, tip);
          }
          if (s.isolated) {
            var b = el("rect", { x: x1, y: y - 2, width: w, height: laneH + 4, fill: "#7e57c2", opacity: 0.18 }, g);
            title(b, tip);
          }
        }
        title(r, tip);
      }
    });
    var y = bottom + 10;
    var shown = st.alarms.filter(function (a) { return (a.end === null ? now : a.end) >= begin; });
    var alarmRow = el("g", { "class": "alarms" }, svg);
    if (shown.length) {
      var lt = el("text", { x: left - 8, y: y + 9, "text-anchor": "end", fill: "#d50000", "font-size": 10, "font-weight": "bold" }, alarmRow);
      lt.textContent = "≥2 leaders";
      el("rect", { x: left, y: y, width: width, height: 12, fill: "#fff5f5", stroke: "#f3c4c4", "stroke-width": 0.5 }, alarmRow);
      shown.forEach(function (a) {
        var e = a.end === null ? now : a.end;
        var r = el("rect", { x: x(a.start), y: y, width: Math.max(x(e) - x(a.start), 1.5), height: 12, fill: "#d50000", opacity: a.paused.length ? 0.3 : 0.75, "class": "alarm" }, alarmRow);
        title(r, "nodes " + a.leaders.join(", ") + " hold role leader\n" + off(a.start) + " → " + (a.end === null ? "now" : off(a.end)) +
          (a.paused.length ? "\nnode " + a.paused.join(", ") + " paused: a stale leader" : ""));
      });
      y += 18;
    }
    el("line", { x1: left, y1: y, x2: left + width, y2: y, stroke: "#616161" }, svg);
    for (d = first; st.start + d <= begin + span; d += step) {
      var xx = x(st.start + d);
      el("line", { x1: xx, y1: y, x2: xx, y2: y + 4, stroke: "#616161" }, svg);
      var at = el("text", { x: xx, y: y + 15, "text-anchor": "middle", fill: "#424242", "font-size": 10 }, svg);
      at.textContent = "+" + fmtOffset(d);
    }
    svg.setAttribute("height", y + 22);
    document.getElementById("count").textContent = ids.length;
    var engs = {};
    ids.forEach(function (id) { if (engineOf(id)) engs[engineOf(id)] = true; });
    var ne = Object.keys(engs).length;
    document.getElementById("engines").textContent = ne ? " across " + ne + " engines" : "";
    document.getElementById("clock").textContent = new Date(now).toLocaleTimeString();
    table(ids, across);
    legend(ids);
  }

  function td(tr, text, cls) { var c = document.createElement("td"); c.textContent = text; if (cls) c.className = cls; tr.appendChild(c); return c; }
  function table(ids, across) {
    document.getElementById("engine-col").hidden = !across;
    var rates = {};
    if (st.tick) st.tick.nodes.forEach(function (s) { rates[s.node] = s; });
    var body = document.querySelector("#nodes tbody");
    while (body.firstChild) body.removeChild(body.firstChild);
    ids.forEach(function (id) {
      var c = rates[id] || st.nodes[id].cur || {};
      var tr = document.createElement("tr");
      tr.setAttribute("data-node", id);
      tr.className = c.state || "";
      td(tr, id);
      if (across) { var e = td(tr, engineShort(engineOf(id))); e.title = engineOf(id); }
      td(tr, c.container || "");
      td(tr, c.state || "?");
      var l = td(tr, "");
      if (c.leader) { var sw = document.createElement("span"); sw.className = "sw"; sw.style.background = colour(c.leader); l.appendChild(sw); l.appendChild(document.createTextNode(c.leader)); }
      else l.textContent = "none";
      td(tr, c.epoch); td(tr, c.role === "leader" ? "★ leader" : (c.role || ""));
      td(tr, (c.sent_per_s || 0).toFixed(1), "num"); td(tr, (c.recv_per_s || 0).toFixed(1), "num");
      var f = [];
      if (c.state === "down") f.push("down");
      if (c.state === "paused") f.push("paused");
      if (c.isolated) f.push("no network");
      if (c.clock_rate || c.jumped_ms) f.push("clock " + (c.clock_rate || 1) + "\u00d7" + (c.jumped_ms ? " " + (c.jumped_ms > 0 ? "+" : "") + c.jumped_ms + "ms" : ""));
      if (c.drop_from && c.drop_from.length) f.push("deaf to " + c.drop_from.join(", "));
      if (c.drops) { var ds = Object.keys(c.drops).sort().map(function (k) { return k + " " + c.drops[k]; }); if (ds.length) f.push("drops: " + ds.join(", ")); }
      td(tr, f.join("; "));
      body.appendChild(tr);
    });
    var a = document.getElementById("alarm");
    var t = st.tick;
    if (t && t.leaders && t.leaders.length > 1) {
      a.className = (t.paused_leaders && t.paused_leaders.length ? "on stale" : "on");
      a.textContent = "ALARM: nodes " + t.leaders.join(", ") + " hold role leader at once, for " + ((t.t - t.alarm_since) / 1000).toFixed(1) + " s" +
        (t.paused_leaders && t.paused_leaders.length ? " (" + t.paused_leaders.join(", ") + " paused: a stale leader until it thaws)" : "");
    } else { a.className = ""; a.textContent = ""; }
  }
  function legend(ids) {
    var lg = document.getElementById("legend");
    while (lg.firstChild) lg.removeChild(lg.firstChild);
    function item(text, style) { var s = document.createElement("span"); var sw = document.createElement("i"); sw.className = "sw"; sw.setAttribute("style", style); s.appendChild(sw); s.appendChild(document.createTextNode(text)); lg.appendChild(s); }
    ids.forEach(function (id) { item("views " + id + " as leader", "background:" + colour(id)); });
    item("no leader", "background:" + colour(0));
    item("believes it leads (★)", "background:#fff;border:2px solid #111");
    item("down", "background:repeating-linear-gradient(45deg,#fff 0 2px,#9e9e9e 2px 4px)");
    item("paused", "background:repeating-linear-gradient(90deg,#fff 0 2px,#6f9fd8 2px 4px)");
    item("no network", "background:#7e57c2;opacity:.4");
    item("two or more leaders", "background:#d50000");
  }

  var scheduled = false;
  function schedule() {
    st.dirty = true;
    if (scheduled) return;
    scheduled = true;
    setTimeout(function () { scheduled = false; if (st.dirty) draw(); }, 100);
  }
  var sel = document.getElementById("window");
  var asked = /[?&]window=(\d+)/.exec(location.search);
  if (asked) {
    var ms = String(Number(asked[1]) * 1000);
    if (!Array.prototype.some.call(sel.options, function (o) { return o.value === ms; })) {
      var o = document.createElement("option"); o.value = ms; o.textContent = asked[1] + " s"; sel.appendChild(o);
    }
    sel.value = ms;
  }
  sel.addEventListener("change", schedule);

  var init = JSON.parse(document.getElementById("initial").textContent);
  reset(init.start, init.run);
  document.getElementById("run").textContent = init.run;
  document.title = "ringleader watch · " + init.run;
  st.pal = init.palette || {};
  (init.changes || []).forEach(apply);
  st.tick = init.tick || null;
  if (st.tick && st.tick.t > st.now) st.now = st.tick.t;
  draw();

  var es = new EventSource("events?after=" + init.seq);
  var conn = document.getElementById("conn");
  es.onopen = function () { conn.textContent = "live"; conn.className = ""; };
  es.onerror = function () { conn.textContent = "disconnected (retrying)"; conn.className = "off"; };
  es.addEventListener("hello", function (e) {
    var d = JSON.parse(e.data);
    reset(d.start, d.run);
    document.getElementById("run").textContent = d.run;
    document.title = "ringleader watch · " + d.run;
    schedule();
  });
  es.addEventListener("palette", function (e) { st.pal = JSON.parse(e.data); schedule(); });
  es.addEventListener("change", function (e) { apply(JSON.parse(e.data)); schedule(); });
  es.addEventListener("tick", function (e) {
    var d = JSON.parse(e.data);
    st.tick = d;
    if (d.t > st.now) { st.now = d.t; st.nowAt = Date.now(); }
    schedule();
  });
})();
</script>
</body>
</html>
`

// initialMark is where the page's initial data goes.
const initialMark = "/*INITIAL*/"
