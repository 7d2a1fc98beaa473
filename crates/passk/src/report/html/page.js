"use strict";
// passk's report page: reads the inline data, draws the tabs, the grid a page of tasks at a time,
// and a trial's transcript only when the trial is opened. No network: everything is in this file.
var ERRORS = [];
window.addEventListener("error", function (e) { ERRORS.push(String(e.message || e)); showErrors(); });
window.addEventListener("unhandledrejection", function (e) { ERRORS.push(String(e.reason)); showErrors(); });
(function () {
  var original = console.error;
  console.error = function () {
    ERRORS.push(Array.prototype.join.call(arguments, " "));
    showErrors();
    return original.apply(console, arguments);
  };
})();

function showErrors() {
  var box = document.getElementById("selftest-result");
  if (box) { box.setAttribute("data-errors", String(ERRORS.length)); box.hidden = false; box.textContent = "errors: " + ERRORS.join(" | "); }
}

var PAGE_TASKS = 100;
var D = JSON.parse(document.getElementById("data").textContent);
var DETAILS = document.getElementById("details").textContent;
var LINE_STARTS = null;
var FAILURE_TEXT = {};
(D.failure_modes || []).forEach(function (m) { FAILURE_TEXT[m[0]] = m[1]; });

/** The n-th details line, parsed (the index of line starts is built on first use). */
function detail(n) {
  if (LINE_STARTS === null) {
    LINE_STARTS = [];
    var at = 0;
    while (at < DETAILS.length) {
      var end = DETAILS.indexOf("\n", at);
      if (end < 0) end = DETAILS.length;
      if (end > at) LINE_STARTS.push([at, end]);
      at = end + 1;
    }
  }
  var span = LINE_STARTS[n];
  return span ? JSON.parse(DETAILS.slice(span[0], span[1])) : null;
}

// A large report keeps its lines in script files beside the page (D.sidecar: the folder and the
// first line of each file); a file is loaded by a <script src> element when one of its trials is
// first opened, which works from file:// where fetch does not.
var CHUNKS = {}, WAITING = {};
window.passkTranscripts = function (n, lines) {
  CHUNKS[n] = lines;
  var waiting = WAITING[n] || [];
  delete WAITING[n];
  waiting.forEach(function (f) { f(); });
};

/** The file holding line n: the last whose first line is at or before n. */
function chunkOf(n) {
  var starts = D.sidecar.starts, lo = 0, hi = starts.length - 1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (starts[mid] <= n) lo = mid; else hi = mid - 1; }
  return lo;
}

/** Calls f with the n-th details line: at once from the page, or once its file has loaded. */
function withDetail(n, f) {
  if (!D.sidecar) { f(detail(n)); return; }
  var c = chunkOf(n);
  function give() { f(CHUNKS[c][n - D.sidecar.starts[c]]); }
  if (CHUNKS[c]) { give(); return; }
  if (!WAITING[c]) {
    WAITING[c] = [];
    var s = document.createElement("script");
    s.src = D.sidecar.dir + "/" + ("000" + c).slice(-Math.max(4, String(c).length)) + ".js";
    s.onerror = function () { console.error("cannot load " + s.src + " (it belongs beside report.html)"); };
    document.head.appendChild(s);
  }
  WAITING[c].push(give);
}

/** el("div", {class: "x"}, child, "text", ...) */
function el(tag, attrs) {
  var node = document.createElement(tag);
  if (attrs) Object.keys(attrs).forEach(function (k) {
    if (k === "text") node.textContent = attrs[k];
    else if (k === "onclick") node.addEventListener("click", attrs[k]);
    else node.setAttribute(k, attrs[k]);
  });
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

function append(node, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) { c.forEach(function (x) { append(node, x); }); return; }
  node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
}

function esc(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function pretty(v) {
  if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; } }
  return JSON.stringify(v, null, 2);
}

// ---------- markdown (the subset report.md uses) ----------

function inline(s) {
  var out = esc(s);
  out = out.replace(/`([^`]+)`/g, "<code>$1</code>");
  out = out.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, function (_, text, href) {
    if (/^charts\//.test(href)) return '<a href="#" data-chart="' + href + '">' + text + "</a>";
    return '<a href="' + href + '">' + text + "</a>";
  });
  return out;
}

function cells(row) {
  var parts = row.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/);
  return parts.map(function (c) { return c.trim().replace(/\\\|/g, "|"); });
}

function markdown(src) {
  var lines = src.split("\n"), html = [], i = 0;
  function take(test) { var got = []; while (i < lines.length && test(lines[i])) got.push(lines[i++]); return got; }
  while (i < lines.length) {
    var l = lines[i], m;
    if (!l.trim()) { i++; continue; }
    if ((m = /^(#{1,6})\s+(.*)$/.exec(l))) { var n = Math.min(m[1].length + 1, 6); html.push("<h" + n + ">" + inline(m[2]) + "</h" + n + ">"); i++; continue; }
    if (l.indexOf("```") === 0) { i++; var code = take(function (x) { return x.indexOf("```") !== 0; }); i++; html.push("<pre>" + esc(code.join("\n")) + "</pre>"); continue; }
    if (l.charAt(0) === "|") { html.push(table(take(function (x) { return x.charAt(0) === "|"; }))); continue; }
    if (l.charAt(0) === ">") { html.push("<blockquote>" + markdown(take(function (x) { return x.charAt(0) === ">"; }).map(function (x) { return x.replace(/^>\s?/, ""); }).join("\n")) + "</blockquote>"); continue; }
    if (/^[-*] /.test(l)) { html.push("<ul>" + take(function (x) { return /^([-*] |\s+\S)/.test(x); }).join("\n").split(/\n(?=[-*] )/).map(function (x) { return "<li>" + inline(x.replace(/^[-*] /, "")) + "</li>"; }).join("") + "</ul>"); continue; }
    html.push("<p>" + inline(take(function (x) { return x.trim() && !/^(#|\||>|[-*] |```)/.test(x); }).join(" ")) + "</p>");
  }
  return html.join("\n");
}

function table(rows) {
  var head = cells(rows[0]), align = rows.length > 1 ? cells(rows[1]) : [];
  var right = align.map(function (a) { return /-:$/.test(a); });
  var out = "<table><thead><tr>" + head.map(function (c, j) { return "<th" + (right[j] ? ' class="num"' : "") + ">" + inline(c) + "</th>"; }).join("") + "</tr></thead><tbody>";
  rows.slice(2).forEach(function (r) {
    out += "<tr>" + cells(r).map(function (c, j) { return "<td" + (right[j] ? ' class="num"' : "") + ">" + inline(c) + "</td>"; }).join("") + "</tr>";
  });
  return out + "</tbody></table>";
}

// ---------- one trial ----------

function shared(key) { return (D.texts || {})[key]; }

function secondsOf(ns) {
  if (ns === undefined || ns === null) return "–";
  return ns < 1e9 ? (ns / 1e6).toFixed(ns < 1e7 ? 2 : 0) + " ms" : (ns / 1e9).toFixed(2) + " s";
}

function timingLine(call) {
  if (!call) return null;
  var t = call.timings || {}, parts = [];
  if (call.wall_s !== undefined) parts.push("wall " + call.wall_s.toFixed(3) + " s");
  if (call.ttft_s !== undefined) parts.push("first token " + call.ttft_s.toFixed(3) + " s");
  if (t.prompt_eval_count !== undefined) parts.push(t.prompt_eval_count + " in");
  if (t.eval_count !== undefined) parts.push(t.eval_count + " out");
  if (t.prompt_eval_duration !== undefined) parts.push("prompt " + secondsOf(t.prompt_eval_duration));
  if (t.eval_duration !== undefined) parts.push("decode " + secondsOf(t.eval_duration));
  if (t.load_duration !== undefined) parts.push("load " + secondsOf(t.load_duration));
  if (t.done_reason) parts.push("done: " + t.done_reason);
  if (call.attempts && call.attempts.length > 1) parts.push((call.attempts.length - 1) + " retr" + (call.attempts.length === 2 ? "y" : "ies"));
  if (call.outcome && call.outcome !== "ok") parts.push("call " + call.outcome);
  if (call.truncated) parts.push("truncated at num_predict");
  if (call.context_overflow) parts.push("context overflow");
  if (call.gpu && gpuText(call.gpu)) parts.push(gpuText(call.gpu));
  return el("div", { class: "timing" }, parts.join(" · "));
}

// GPU readings say GPU; the server process's CPU and memory say what they are, never GPU.
function gpuText(g) {
  var p = [], out = [];
  if (g.util_mean !== undefined) p.push(g.util_mean.toFixed(0) + "% mean");
  if (g.util_max !== undefined) p.push(g.util_max.toFixed(0) + "% max");
  if (g.mem_used_mib !== undefined) p.push(g.mem_used_mib.toFixed(0) + " MiB");
  if (g.power_w !== undefined) p.push(g.power_w.toFixed(0) + " W");
  if (g.energy_j !== undefined) p.push(g.energy_j.toFixed(1) + " J");
  if (p.length) out.push("GPU " + p.join(", "));
  var s = [];
  if (g.server_cpu_pct !== undefined) s.push(g.server_cpu_pct.toFixed(0) + "% CPU");
  if (g.server_rss_mib !== undefined) s.push(g.server_rss_mib.toFixed(0) + " MiB");
  if (s.length) out.push("server process " + s.join(", "));
  return out.join(" · ");
}

function verdictBox(d) {
  var v = d.verdict || {}, ok = d.outcome === "pass";
  var facts = [];
  if (d.status) facts.push("status " + d.status);
  if (d.call_cap !== undefined) facts.push("call cap " + d.call_cap);
  if (d.wall_s !== undefined) facts.push(d.wall_s.toFixed(2) + " s");
  if (d.router) facts.push("gold label " + d.label, "predicted " + (d.predicted || "none"));
  if (d.imported) facts.push("imported (verdict as recorded)");
  var box = el("div", { class: "verdict " + (ok ? "passed" : "failed") },
    el("strong", { class: ok ? "pass" : "fail" }, outcomeText(d.outcome)), facts.length ? " · " + facts.join(" · ") : null);
  if (v.failure_mode) box.appendChild(el("div", { class: "failure-mode" }, "failure mode: ", el("strong", null, FAILURE_TEXT[v.failure_mode] || v.failure_mode)));
  if (v.reasons && v.reasons.length) {
    var ul = el("ul", { class: "reasons" });
    v.reasons.forEach(function (r) { ul.appendChild(el("li", null, r)); });
    box.appendChild(ul);
  }
  var flags = [];
  if (v.trajectory_correct !== undefined) flags.push("trajectory " + (v.trajectory_correct ? "correct" : "wrong"));
  Object.keys(v.control || {}).forEach(function (k) { if (v.control[k]) flags.push(k.replace(/_/g, " ")); });
  if (flags.length) box.appendChild(el("div", { class: "muted" }, flags.join(" · ")));
  return box;
}

function outcomeText(o) {
  return { pass: "passed", model_fail: "failed", transport_fail: "transport failure (not graded)", protocol_fail: "protocol failure (not graded)", tool_server_fail: "tool server failure (not graded)" }[o] || o;
}

function toolCall(ev) {
  var rejected = !ev.ok;
  return el("div", { class: "call" + (rejected ? " rejected" : "") },
    el("code", null, ev.tool), el("span", { class: "badge" }, ev.format || "call"),
    rejected ? el("span", { class: "badge fail" }, "rejected") : el("span", { class: "badge pass" }, "accepted"),
    el("pre", null, pretty(ev.args)),
    rejected && ev.error ? el("div", { class: "fail" }, "reason: " + ev.error) : null);
}

/** A thinking model's reasoning, folded like the system prompt. */
function thinking(text) {
  return el("details", { class: "msg thinking" }, el("summary", { class: "who" }, "thinking (" + text.length + " characters)"), el("pre", null, text));
}

/** The transcript, message by message; each assistant message with its call's timings and tool calls. */
function transcript(d) {
  var box = el("div", { class: "transcript" });
  var calls = (d.calls || []).filter(function (c) { return c.node === "orchestrator"; });
  var turn = -1, step = 0;
  d.transcript.forEach(function (m) {
    if (m.role === "system") {
      var text = m.shared ? shared(m.shared) : m.content;
      if (m.shared) box.appendChild(el("details", { class: "msg system" }, el("summary", { class: "who" }, "system prompt (" + (text || "").length + " characters)"), el("pre", null, text || "")));
      else box.appendChild(el("div", { class: "msg system" }, el("div", { class: "who" }, "system"), el("pre", null, text)));
      return;
    }
    if (m.role === "user") { turn++; step = 0; box.appendChild(el("div", { class: "msg user" }, el("div", { class: "who" }, "customer · turn " + turn), el("pre", null, m.content))); return; }
    if (m.role === "assistant") {
      var call = calls.filter(function (c) { return c.turn === turn && c.step === step; })[0];
      var events = (d.events || []).filter(function (e) { return e.turn === turn && e.step === step; });
      var node = el("div", { class: "msg assistant" }, el("div", { class: "who" }, "assistant · turn " + turn + " · step " + step));
      var thought = m.thinking || (call && call.thinking);
      if (thought) node.appendChild(thinking(thought));
      if (m.content) node.appendChild(el("pre", null, m.content));
      if (events.length) events.forEach(function (e) { node.appendChild(toolCall(e)); });
      else (m.tool_calls || []).forEach(function (tc) { var f = tc.function || {}; node.appendChild(toolCall({ tool: f.name, args: f.arguments, ok: true, format: "native" })); });
      node.appendChild(timingLine(call));
      box.appendChild(node);
      step++;
      return;
    }
    if (m.role === "tool") {
      var rejected = /^error: /.test(m.content || "");
      box.appendChild(el("div", { class: "msg tool" + (rejected ? " rejected" : "") }, el("div", { class: "who" }, "tool result · " + (m.tool_name || "") + (rejected ? " · rejected" : "")), el("pre", null, m.content)));
      return;
    }
    box.appendChild(el("div", { class: "msg" }, el("div", { class: "who" }, m.role), el("pre", null, pretty(m))));
  });
  return box;
}

/** Without a transcript (imported runs): the replies and tool calls by turn. */
function replies(d) {
  var box = el("div", { class: "transcript" }, el("p", { class: "muted" }, "No transcript recorded; tool calls and final replies by turn."));
  (d.calls || []).forEach(function (c) { if (c.thinking) box.appendChild(thinking(c.thinking)); });
  (d.events || []).forEach(function (e) { box.appendChild(toolCall(e)); });
  (d.replies || []).forEach(function (r, t) { box.appendChild(el("div", { class: "msg assistant" }, el("div", { class: "who" }, "final reply · turn " + t), el("pre", null, r === null ? "(cut by the call cap)" : r))); });
  return box;
}

function callsTable(d) {
  var t = el("table", { class: "calls" }, el("tr", null, ["node", "turn", "step", "outcome", "wall s", "in", "out", "prompt s", "decode s", "load s", "done", "attempts", "GPU"].map(function (h) { return el("th", null, h); })));
  (d.calls || []).forEach(function (c) {
    var tm = c.timings || {};
    var row = [c.node, c.turn, c.step, c.outcome, c.wall_s === undefined ? "–" : c.wall_s.toFixed(3), tm.prompt_eval_count, tm.eval_count,
      tm.prompt_eval_duration === undefined ? "–" : (tm.prompt_eval_duration / 1e9).toFixed(3), tm.eval_duration === undefined ? "–" : (tm.eval_duration / 1e9).toFixed(3),
      tm.load_duration === undefined ? "–" : (tm.load_duration / 1e9).toFixed(3), tm.done_reason || "–",
      (c.attempts || []).map(function (a) { return a.outcome + (a.status ? " " + a.status : "") + (a.error ? ": " + a.error : ""); }).join("; ") || "1, ok",
      c.gpu ? gpuText(c.gpu) : "–"];
    t.appendChild(el("tr", null, row.map(function (v) { return el("td", null, v === undefined ? "–" : String(v)); })));
  });
  return el("details", null, el("summary", null, "calls and Ollama's timings (" + (d.calls || []).length + ")"), t);
}

/** A standalone router call: its reply (first 200 characters) and timings. */
function routerReply(d) {
  return el("div", { class: "transcript" }, el("div", { class: "msg assistant" }, el("div", { class: "who" }, "router reply (first 200 characters)"),
    (d.calls || [])[0] && d.calls[0].thinking ? thinking(d.calls[0].thinking) : null, el("pre", null, d.raw), timingLine((d.calls || [])[0])));
}

function trialBody(d) {
  var body = el("div", { class: "trial-body" }, verdictBox(d));
  body.appendChild(d.router ? routerReply(d) : d.transcript && d.transcript.length ? transcript(d) : replies(d));
  body.appendChild(callsTable(d));
  var state = shared(d.end_state);
  if (state !== undefined) body.appendChild(el("details", null, el("summary", null, "end state (what the graders saw)"), el("pre", null, pretty(state))));
  return body;
}

/** A collapsible trial whose body is drawn on first opening; box.whenDrawn(f) calls f once it is. */
function trialDetails(label, line, outcome, mode) {
  var box = el("details", { class: "trial", "data-outcome": outcome },
    el("summary", null, label, el("span", { class: "badge " + (outcome === "pass" ? "pass" : outcome === "model_fail" ? "fail" : "lost") }, outcomeText(outcome)),
      mode ? el("span", { class: "muted" }, " " + (FAILURE_TEXT[mode] || mode)) : null));
  var asked = false, drawn = false, then = [];
  box.draw = function () {
    if (asked) return;
    asked = true;
    var wait = el("div", { class: "muted loading" }, "loading the transcript…");
    box.appendChild(wait);
    withDetail(line, function (d) {
      wait.remove();
      box.appendChild(trialBody(d));
      drawn = true;
      then.forEach(function (f) { f(); });
    });
  };
  box.whenDrawn = function (f) { if (drawn) f(); else then.push(f); };
  box.addEventListener("toggle", function () { if (box.open) box.draw(); });
  return box;
}

/** Opens a trial and draws its body at once (the toggle event comes later). */
function openTrial(box) { box.open = true; box.draw(); }

// ---------- the grid ----------

var STATE = { model: "", category: "", mode: "", page: {} };
var BY_CELL = {};

function indexTrials() {
  D.trials.forEach(function (t) {
    var k = t[0] + "/" + t[1] + "/" + t[2];
    (BY_CELL[k] = BY_CELL[k] || []).push({ trial: t[3], outcome: t[4], mode: t[5], line: t[6] });
  });
}

function colour(p, n) {
  if (!n) return "#eee";
  if (p === n) return "hsl(130, 55%, 72%)";
  return "hsl(" + Math.round(4 + (p / n) * 46) + ", 85%, " + Math.round(70 + (p / n) * 8) + "%)";
}

function select(label, options, key) {
  var s = el("select", { "data-filter": key }, el("option", { value: "" }, "all"));
  options.forEach(function (o) { s.appendChild(el("option", { value: o[0] }, o[1])); });
  s.addEventListener("change", function () { STATE[key] = s.value; STATE.page = {}; drawGrids(); });
  return el("label", null, label, s);
}

function gridTab(main) {
  indexTrials();
  var cats = {};
  D.configs.forEach(function (c) { c.tasks.forEach(function (t) { cats[t[1]] = 1; }); });
  var k = 0;
  D.trials.forEach(function (t) { k = Math.max(k, t[3] + 1); });
  var legend = el("span", { class: "legend" }, "passes out of k: ");
  for (var p = 0; p <= k; p++) legend.appendChild(el("span", { class: "sw", style: "background:" + colour(p, k) }, p + "/" + k));
  main.appendChild(el("div", { class: "filters" },
    select("model", D.models.map(function (m) { return [m, m]; }), "model"),
    select("category", Object.keys(cats).sort().map(function (c) { return [c, c]; }), "category"),
    select("failure mode", (D.failure_modes || []).map(function (m) { return [m[0], m[1]]; }), "mode"),
    legend));
  main.appendChild(el("div", { class: "layout" }, el("div", { class: "grids", id: "grids" }), el("div", { class: "panel", id: "panel" })));
  drawGrids();
}

function drawGrids() {
  var box = document.getElementById("grids");
  box.textContent = "";
  var models = D.models.map(function (m, i) { return i; }).filter(function (i) { return !STATE.model || D.models[i] === STATE.model; });
  D.configs.forEach(function (cfg, ci) {
    var rows = cfg.tasks.map(function (t, ti) { return ti; }).filter(function (ti) {
      if (STATE.category && cfg.tasks[ti][1] !== STATE.category) return false;
      if (!STATE.mode) return true;
      return models.some(function (mi) { return (BY_CELL[ci + "/" + ti + "/" + mi] || []).some(function (t) { return t.mode === STATE.mode; }); });
    });
    var page = STATE.page[ci] || 0, pages = Math.max(1, Math.ceil(rows.length / PAGE_TASKS));
    var shown = rows.slice(page * PAGE_TASKS, (page + 1) * PAGE_TASKS);
    box.appendChild(el("h2", null, "configuration ", el("code", null, cfg.key), el("span", { class: "muted" }, " · " + rows.length + " of " + cfg.tasks.length + " tasks")));
    if (pages > 1) box.appendChild(pager(ci, page, pages));
    var table = el("table", { class: "grid", "data-config": cfg.key },
      el("tr", null, el("th", null, "task"), el("th", null, "category"), models.map(function (mi) { return el("th", null, D.models[mi]); })));
    shown.forEach(function (ti) {
      var tr = el("tr", null, el("td", { class: "task" }, cfg.tasks[ti][0]), el("td", { class: "cat" }, cfg.tasks[ti][1]));
      models.forEach(function (mi) { tr.appendChild(cell(ci, ti, mi)); });
      table.appendChild(tr);
    });
    box.appendChild(table);
  });
}

function pager(ci, page, pages) {
  function go(to) { return function () { STATE.page[ci] = to; drawGrids(); }; }
  return el("div", { class: "pager" }, el("button", page > 0 ? { onclick: go(page - 1) } : { disabled: "" }, "‹ previous"),
    "page " + (page + 1) + " of " + pages, el("button", page + 1 < pages ? { onclick: go(page + 1) } : { disabled: "" }, "next ›"));
}

function cell(ci, ti, mi) {
  var trials = BY_CELL[ci + "/" + ti + "/" + mi] || [];
  var graded = trials.filter(function (t) { return t.outcome === "pass" || t.outcome === "model_fail"; });
  var passes = graded.filter(function (t) { return t.outcome === "pass"; }).length;
  var lost = trials.length - graded.length;
  var attrs = { class: "cell" + (passes < graded.length ? " failing" : ""), style: "background:" + colour(passes, graded.length),
    title: passes + " of " + graded.length + " graded trials passed" + (lost ? "; " + lost + " not graded" : "") };
  var td = el("td", attrs, passes + "/" + graded.length + (lost ? "*" : ""));
  td.addEventListener("click", function () {
    var old = document.querySelector("td.cell.sel");
    if (old) old.classList.remove("sel");
    td.classList.add("sel");
    showCell(ci, ti, mi, trials);
  });
  return td;
}

function showCell(ci, ti, mi, trials) {
  var panel = document.getElementById("panel");
  panel.textContent = "";
  var cfg = D.configs[ci];
  panel.appendChild(el("h2", null, el("code", null, cfg.tasks[ti][0]), " · " + D.models[mi] + " · ", el("code", null, cfg.key)));
  var first = null;
  trials.forEach(function (t) {
    var box = trialDetails("trial " + t.trial + " ", t.line, t.outcome, t.mode);
    if (!first && t.outcome !== "pass" && (!STATE.mode || t.mode === STATE.mode)) first = box;
    panel.appendChild(box);
  });
  openTrial(first || panel.querySelector("details.trial"));
  panel.scrollTop = 0;
}

// ---------- charts, tables, compare ----------

function chartsTab(main) {
  var titles = {};
  D.markdown.replace(/\[([^\]]+)\]\((charts\/[^)]+)\)/g, function (_, t, f) { titles[f] = t; return _; });
  D.charts.forEach(function (c) {
    var fig = el("figure", { id: "chart-" + c[0] }, el("figcaption", null, titles[c[0]] || c[0]));
    var holder = el("div");
    holder.innerHTML = c[1];
    fig.appendChild(holder);
    main.appendChild(fig);
  });
}

/** Markdown drawn into a box whose links to charts open the Charts tab. */
function mdBox(src) {
  var box = el("div", { class: "md" });
  // The page's title already names the run: the markdown's own first heading would repeat it.
  box.innerHTML = markdown(src.replace(/^# [^\n]*\n+/, ""));
  box.addEventListener("click", function (e) {
    var a = e.target.closest("a[data-chart]");
    if (!a) return;
    e.preventDefault();
    show("charts");
    var fig = document.getElementById("chart-" + a.getAttribute("data-chart"));
    if (fig) fig.scrollIntoView();
  });
  return box;
}

function tablesTab(main) { main.appendChild(mdBox(D.markdown)); }

/** The first screen: warnings, the headline with its intervals, the provenance; the rest a click away. */
function summaryTab(main) {
  main.appendChild(el("div", { class: "summary" }, mdBox(D.overview || ""),
    el("p", { class: "goto" }, "More: ",
      el("button", { onclick: function () { show("grid"); }, "data-goto": "grid" }, "every trial (grid)"), " ",
      el("button", { onclick: function () { show("charts"); }, "data-goto": "charts" }, "charts"), " ",
      el("button", { onclick: function () { show("tables"); }, "data-goto": "tables" }, "every table"))));
}

function compareTab(main) {
  if (D.markdown) main.appendChild(mdBox(D.markdown));
  main.appendChild(el("h2", { id: "moved" }, "Tasks whose pass count moved"));
  if (!D.pairs.length) main.appendChild(el("p", { class: "none-moved" }, "No task's pass count moved between A and B."));
  D.pairs.forEach(function (p) {
    function side(name, t, count) {
      var head = el("h3", null, name + ": " + count[0] + "/" + count[1] + " passed");
      if (!t) return el("div", null, head, el("p", { class: "muted" }, "no trial to show"));
      var d = detail(t.line);
      var box = trialDetails("trial " + t.trial + " ", t.line, d.outcome, (d.verdict || {}).failure_mode);
      openTrial(box);
      return el("div", null, head, box);
    }
    var moved = p.b[0] - p.a[0];
    main.appendChild(el("section", { class: "pair" },
      el("h2", null, el("code", null, p.task), " (" + p.category + ") · " + p.model + " · ", el("code", null, p.config),
        el("span", { class: "badge " + (moved > 0 ? "pass" : "fail") }, (moved > 0 ? "+" : "") + moved + (Math.abs(moved) === 1 ? " pass" : " passes"))),
      el("div", { class: "side" }, side("A", p.trial_a, p.a), side("B", p.trial_b, p.b))));
  });
}

var TABS = {}, FIRST_TAB = null;
function show(name) {
  if (FIRST_TAB === null) FIRST_TAB = name;
  Object.keys(TABS).forEach(function (k) {
    TABS[k].button.className = k === name ? "on" : "";
    TABS[k].panel.hidden = k !== name;
  });
}

function addTab(name, label, draw) {
  var panel = el("section", { id: "tab-" + name, hidden: "" });
  var button = el("button", { onclick: function () { show(name); }, "data-tab": name }, label);
  document.getElementById("tabs").appendChild(button);
  document.getElementById("main").appendChild(panel);
  TABS[name] = { button: button, panel: panel };
  draw(panel);
}

// ---------- self-test (#selftest): used by the browser test ----------

function selftest() {
  var box = document.getElementById("selftest-result");
  var result = { errors: ERRORS.length, load_ms: Math.round(performance.now()) };
  if (D.kind === "report") {
    var cells = document.querySelectorAll("td.cell").length;
    result.cells = cells;
    result.expected_cells = D.configs.reduce(function (n, c) { return n + Math.min(c.tasks.length, PAGE_TASKS) * D.models.length; }, 0);
    var failing = document.querySelector("td.cell.failing") || document.querySelector("td.cell");
    result.first_tab = FIRST_TAB;
    var summary = document.getElementById("tab-summary");
    result.summary_text = summary ? summary.textContent : "";
    result.summary_tables = summary ? summary.querySelectorAll("table").length : 0;
    result.goto = Array.prototype.map.call(document.querySelectorAll("[data-goto]"), function (b) { return b.getAttribute("data-goto"); });
    if (!failing) { selftestDone(result); return; }
    // The click counts until the opened trial is drawn (its transcript file loaded, if any).
    var before = performance.now();
    failing.click();
    var open = document.querySelector("#panel details.trial[open]");
    result.clicked = failing.textContent;
    function seen() {
      result.click_ms = Math.round(performance.now() - before);
      result.opened_outcome = open ? open.getAttribute("data-outcome") : "";
      result.transcript_messages = open ? open.querySelectorAll(".transcript .msg").length : 0;
      result.reasons = open ? Array.prototype.map.call(open.querySelectorAll(".reasons li"), function (li) { return li.textContent; }) : [];
      result.failure_mode = open && open.querySelector(".failure-mode") ? open.querySelector(".failure-mode").textContent : "";
      lastTrial(result, function () { selftestDone(result); });
    }
    if (open) open.whenDrawn(seen); else seen();
    return;
  }
  result.first_tab = FIRST_TAB;
  result.metrics_tables = document.querySelectorAll("#tab-compare .md table").length;
  result.page_text = document.getElementById("tab-compare").textContent;
  result.pairs = document.querySelectorAll("section.pair").length;
  result.trials_open = document.querySelectorAll("section.pair details.trial[open] .trial-body").length;
  selftestDone(result);
}

/** Reads the last trial's line (in the last transcript file, for a large run): it must be the row's. */
function lastTrial(result, done) {
  var t = D.trials[D.trials.length - 1];
  if (!t) { done(); return; }
  withDetail(t[6], function (d) { result.last_trial_matches = !!d && d.outcome === t[4]; done(); });
}

/** Writes the self-test's result where the browser test reads it. */
function selftestDone(result) {
  var box = document.getElementById("selftest-result");
  var seen = {};
  result.duplicate_ids = [];
  Array.prototype.forEach.call(document.querySelectorAll("[id]"), function (e) {
    if (seen[e.id] && result.duplicate_ids.indexOf(e.id) < 0) result.duplicate_ids.push(e.id);
    seen[e.id] = 1;
  });
  result.errors = ERRORS.length;
  box.setAttribute("data-result", JSON.stringify(result));
  box.textContent = "selftest " + JSON.stringify(result) + (ERRORS.length ? " errors: " + ERRORS.join(" | ") : "");
  box.hidden = false;
}

function main() {
  document.getElementById("title").textContent = D.title;
  document.getElementById("caption").textContent = D.caption;
  var loading = document.getElementById("loading");
  if (loading) loading.remove();
  if (D.kind === "report") {
    addTab("summary", "Summary", summaryTab);
    addTab("grid", "Trials", gridTab);
    addTab("charts", "Charts", chartsTab);
    addTab("tables", "Tables", tablesTab);
    show(/^#(grid|charts|tables)$/.test(location.hash) ? location.hash.slice(1) : "summary");
  } else {
    addTab("compare", "Comparison", compareTab);
    show("compare");
  }
  if (location.hash === "#selftest") selftest();
}

main();
