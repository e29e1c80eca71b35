// The newskg explorer: every view is the graph as of one day, from the /v1/explore endpoints (qa/explore.py).
// The API key the user types is kept in sessionStorage (this tab only) and sent as X-API-Key; the view (entities,
// day, filters) lives in the URL, so a link reproduces it. Data is always put in the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY_STORE = "newskg-api-key";
const state = { entities: [], asOf: "", variant: "", types: [], from: "", to: "", days: [] };
let cy = null;
let consoleCy = null; // the console's graph form of its last result
let renderSeq = 0; // a slider drag starts many renders: only the latest one draws

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

async function api(path, params, options) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(params || {})) {
    for (const v of [].concat(value)) if (v !== "" && v !== null && v !== undefined) url.searchParams.append(name, v);
  }
  const headers = { "X-API-Key": sessionStorage.getItem(KEY_STORE) || "" };
  if (options && options.body) headers["Content-Type"] = "application/json";
  const response = await fetch(url, { headers, ...(options || {}) });
  return response;
}

async function json(path, params) {
  const response = await api(path, params);
  const body = await response.json();
  if (!response.ok) throw new Error(`${response.status}: ${body.detail ? JSON.stringify(body.detail) : ""}`);
  return body;
}

function viewParams() {
  return { as_of: state.asOf, variant: state.variant, type: state.types, from: state.from, to: state.to };
}

// --- the URL reproduces the view
function readUrl() {
  const q = new URLSearchParams(window.location.search);
  state.entities = q.getAll("entity");
  state.asOf = q.get("as_of") || "";
  state.variant = q.get("variant") || "";
  state.types = q.getAll("type");
  state.from = q.get("from") || "";
  state.to = q.get("to") || "";
}

function writeUrl() {
  const q = new URLSearchParams();
  for (const e of state.entities) q.append("entity", e);
  for (const [name, value] of Object.entries(viewParams())) for (const v of [].concat(value)) if (v) q.append(name, v);
  const url = `${window.location.pathname}?${q}`;
  window.history.replaceState(null, "", url);
  $("permalink").href = url;
}

function syncControls() {
  $("asof").value = state.asOf;
  $("variant").value = state.variant;
  $("types").value = state.types.join(",");
  $("from").value = state.from;
  $("to").value = state.to;
  const index = state.days.indexOf(state.asOf);
  if (index >= 0) $("asof-slider").value = String(index);
}

// --- the as-of slider runs over every day between the graph's first and last day
function isoDays(first, last) {
  const days = [];
  for (let d = new Date(`${first}T00:00:00Z`); d <= new Date(`${last}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
    days.push(d.toISOString().slice(0, 10));
  }
  return days;
}

async function loadDays() {
  const range = await json("/v1/explore/days");
  if (!range.first) return;
  state.days = isoDays(range.first, range.last);
  $("asof-slider").max = String(state.days.length - 1);
  if (!state.asOf) state.asOf = range.last;
}

// --- the graph
function edgeLabel(e) {
  return `${e.text} (${e.day}, ${e.n_sources} src)`;
}

function elementsOf(views) {
  const nodes = new Map();
  const edges = new Map();
  for (const view of views) {
    for (const n of view.nodes) nodes.set(n.id, n);
    for (const e of view.edges) if (e.target) edges.set(e.id, e);
  }
  const maxMentions = Math.max(1, ...[...nodes.values()].map((n) => n.mentions));
  return [
    ...[...nodes.values()].map((n) => ({
      group: "nodes",
      data: { id: n.id, label: n.name, type: n.type, mentions: n.mentions, size: 20 + 40 * Math.sqrt(n.mentions / maxMentions),
              focus: state.entities.includes(n.id) ? 1 : 0 },
    })),
    ...[...edges.values()].map((e) => ({
      group: "edges",
      data: { id: e.id, source: e.source, target: e.target, label: edgeLabel(e), day: e.day, text: e.text },
    })),
  ];
}

function ensureGraph() {
  if (cy) return cy;
  cy = cytoscape({
    container: $("graph"),
    style: [
      { selector: "node", style: { label: "data(label)", width: "data(size)", height: "data(size)", "font-size": 11,
                                   "background-color": "#6d8fd6" } },
      { selector: "node[focus = 1]", style: { "background-color": "#d6762f" } },
      { selector: "edge", style: { label: "data(label)", "font-size": 8, "curve-style": "bezier", width: 1.5,
                                   "target-arrow-shape": "triangle", "text-rotation": "autorotate", color: "#555" } },
      { selector: ":selected", style: { "border-width": 3, "border-color": "#222", "line-color": "#222" } },
    ],
  });
  cy.on("tap", "node", (event) => expand(event.target.id()));
  cy.on("tap", "edge", (event) => showEvidence(event.target.id()));
  return cy;
}

async function render() {
  const seq = ++renderSeq;
  writeUrl();
  syncControls();
  if (!state.entities.length) return;
  status("loading…");
  try {
    const views = await Promise.all(
      state.entities.map((id) => json(`/v1/explore/entities/${encodeURIComponent(id)}/neighbourhood`, viewParams())
        .catch((error) => (error.message.startsWith("404") ? { nodes: [], edges: [] } : Promise.reject(error)))),
    );
    if (seq !== renderSeq) return; // a later render (the day or a filter moved on meanwhile) draws instead
    const graph = ensureGraph();
    graph.elements().remove();
    graph.add(elementsOf(views));
    graph.layout({ name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true }).run();
    status(`as of ${state.asOf || "now"}: ${graph.nodes().length} entities, ${graph.edges().length} interactions`);
    // The side panel lists the shown entity's edges of the view: rebuild it, or it keeps edges of another day.
    if (state.shown) await showEntity(state.shown);
  } catch (error) {
    status(String(error.message), true);
  }
}

async function expand(entityId) {
  if (!state.entities.includes(entityId)) state.entities.push(entityId);
  await render();
  await showEntity(entityId);
}

// --- the side panel: timeline (daily mentions, spike days) and the entity's interactions
function svg(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function drawTimeline(body) {
  const box = $("timeline");
  box.replaceChildren();
  const series = body.series;
  const spikes = new Set(body.spike_days);
  const max = Math.max(1, ...series.map((p) => p.count));
  const width = 400, height = 120, bar = width / series.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  series.forEach((p, i) => {
    const h = (p.count / max) * (height - 20);
    const rect = svg("rect", { x: i * bar, y: height - 12 - h, width: Math.max(1, bar - 1), height: h,
                               fill: spikes.has(p.day) ? "#d33" : "#6d8fd6" });
    const tip = svg("title", {});
    tip.textContent = `${p.day}: ${p.count} mentions${spikes.has(p.day) ? " (spike)" : ""}`;
    rect.appendChild(tip);
    chart.appendChild(rect);
  });
  const label = svg("text", { x: 2, y: height - 1, "font-size": 9 });
  const source = body.spike_source === "neon" ? "NEON evaluation" : "rolling-sum rule";
  label.textContent = `${series[0].day} … ${series[series.length - 1].day}; spikes (${source}): ${body.spike_days.length}`;
  chart.appendChild(label);
  box.appendChild(chart);
}

async function showEntity(entityId) {
  state.shown = entityId;
  try {
    const body = await json(`/v1/explore/entities/${encodeURIComponent(entityId)}/timeline`, { as_of: state.asOf });
    $("entity-name").textContent = body.name;
    drawTimeline(body);
    const list = $("entity-edges");
    list.replaceChildren();
    for (const edge of cy.edges().filter((e) => e.data("source") === entityId || e.data("target") === entityId)) {
      const item = document.createElement("li");
      item.textContent = edge.data("label");
      item.dataset.id = edge.id();
      item.addEventListener("click", () => showEvidence(edge.id()));
      list.appendChild(item);
    }
  } catch (error) {
    status(String(error.message), true);
  }
}

function marked(text, names) {
  // The chunk's text with the entity names marked, built from text nodes only.
  const wanted = names.filter(Boolean).map((n) => n.toLowerCase());
  const fragment = document.createDocumentFragment();
  let rest = text;
  while (rest) {
    let at = -1, length = 0;
    for (const name of wanted) {
      const i = rest.toLowerCase().indexOf(name);
      if (i >= 0 && (at < 0 || i < at)) { at = i; length = name.length; }
    }
    if (at < 0) { fragment.appendChild(document.createTextNode(rest)); break; }
    fragment.appendChild(document.createTextNode(rest.slice(0, at)));
    const mark = document.createElement("mark");
    mark.textContent = rest.slice(at, at + length);
    fragment.appendChild(mark);
    rest = rest.slice(at + length);
  }
  return fragment;
}

// An M0 fact's confidence (the fitted chance a reader finds it clean); LLM facts have none.
function confidenceNote(confidence) {
  return confidence === null || confidence === undefined ? "" : `, confidence ${confidence.toFixed(2)}`;
}

async function showEvidence(interactionId) {
  const box = $("evidence");
  box.replaceChildren();
  try {
    const body = await json(`/v1/explore/interactions/${encodeURIComponent(interactionId)}/evidence`, { as_of: state.asOf });
    const head = document.createElement("p");
    head.textContent = `${body.text} — ${body.day}, ${body.variant}${confidenceNote(body.confidence)}; sources: ${body.sources.join(", ")}`;
    box.appendChild(head);
    const names = [body.subject && body.subject.name, body.object && body.object.name];
    for (const c of body.evidence) {
      const div = document.createElement("div");
      div.className = "chunk";
      const title = document.createElement("strong");
      title.textContent = c.title || c.url || c.chunk_id;
      const text = document.createElement("p");
      text.className = "chunk-text";
      text.appendChild(marked(c.chunk_text || "", names));
      const meta = document.createElement("p");
      meta.className = "meta";
      meta.textContent = `${c.source} · published ${c.published} · ingested ${c.ingested_at} · ${c.url}`;
      div.append(title, text, meta);
      box.appendChild(div);
    }
  } catch (error) {
    box.textContent = String(error.message);
  }
}

// --- search with suggestions
let searchTimer = null;
function suggest() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(async () => {
    const q = $("search").value.trim();
    const list = $("suggestion-list");
    if (!q) { list.replaceChildren(); return; }
    try {
      const body = await json("/v1/explore/search", { q, as_of: state.asOf, limit: 10 });
      list.replaceChildren(...body.entities.map((e) => {
        const item = document.createElement("li");
        item.textContent = `${e.name} (${e.type}, ${e.interactions} interactions)`;
        item.dataset.id = e.id;
        item.addEventListener("click", () => {
          list.replaceChildren();
          state.entities = [e.id];
          render().then(() => showEntity(e.id));
        });
        return item;
      }));
    } catch (error) {
      status(String(error.message), true);
    }
  }, 200);
}

// --- the console: table and graph of the rows
function cell(value) {
  if (value && typeof value === "object" && value.kind === "node") return `(${value.labels.join(":")} ${value.properties.name || value.id})`;
  if (value && typeof value === "object" && value.kind === "relationship") return `[:${value.type}]`;
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function consoleGraph(rows) {
  const elements = new Map();
  const visit = (v) => {
    if (!v || typeof v !== "object") return;
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (v.kind === "node") elements.set(`n${v.id}`, { group: "nodes", data: { id: `n${v.id}`, label: v.properties.name || v.labels.join(":") } });
    if (v.kind === "relationship") elements.set(`r${v.id}`, { group: "edges", data: { id: `r${v.id}`, source: `n${v.start}`, target: `n${v.end}`, label: v.type } });
    if (v.kind === "path") { v.nodes.forEach(visit); v.edges.forEach(visit); }
  };
  rows.forEach((row) => row.forEach(visit));
  const nodes = [...elements.values()].filter((e) => e.group === "nodes");
  const ids = new Set(nodes.map((n) => n.data.id));
  const edges = [...elements.values()].filter((e) => e.group === "edges" && ids.has(e.data.source) && ids.has(e.data.target));
  if (consoleCy) consoleCy.destroy();
  consoleCy = null;
  $("cypher-graph").replaceChildren();
  if (!nodes.length) return;
  consoleCy = cytoscape({ container: $("cypher-graph"), elements: [...nodes, ...edges], layout: { name: "cose", animate: false },
              style: [{ selector: "node", style: { label: "data(label)", "font-size": 9 } },
                      { selector: "edge", style: { label: "data(label)", "font-size": 7 } }] });
}

async function runCypher() {
  const out = $("cypher-table");
  out.replaceChildren();
  let params;
  try {
    params = JSON.parse($("cypher-params").value || "{}");
  } catch (error) {
    $("cypher-status").textContent = "parameters are not JSON";
    return;
  }
  const response = await api("/v1/explore/cypher", {}, { method: "POST", body: JSON.stringify({ query: $("cypher").value, params, as_of: state.asOf || null }) });
  const body = await response.json();
  if (!response.ok) {
    $("cypher-status").textContent = `refused (${response.status}${body.reason ? ", " + body.reason : ""}): ${JSON.stringify(body.detail)}`;
    $("cypher-status").className = "error";
    return;
  }
  $("cypher-status").className = "";
  $("cypher-status").textContent = `${body.rows.length} rows${body.truncated ? ` (first ${body.max_rows})` : ""}`;
  const table = document.createElement("table");
  const head = table.insertRow();
  for (const column of body.columns) { const th = document.createElement("th"); th.textContent = column; head.appendChild(th); }
  for (const row of body.rows) { const tr = table.insertRow(); for (const value of row) tr.insertCell().textContent = cell(value); }
  out.appendChild(table);
  consoleGraph(body.rows);
}

// --- export: fetched with the key, saved as a file
async function exportAs(format) {
  if (!state.entities.length) return;
  const response = await api("/v1/explore/export", { entity: state.entities, format, ...viewParams() });
  if (!response.ok) { status(`export failed: ${response.status}`, true); return; }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await response.blob());
  link.download = `newskg-${state.asOf || "now"}.${format}`;
  link.click();
  URL.revokeObjectURL(link.href);
}

function bind() {
  $("key").value = sessionStorage.getItem(KEY_STORE) || "";
  $("key").addEventListener("change", () => { sessionStorage.setItem(KEY_STORE, $("key").value); start(); });
  $("search").addEventListener("input", suggest);
  $("asof").addEventListener("change", () => { state.asOf = $("asof").value; render(); });
  $("asof-slider").addEventListener("input", () => { state.asOf = state.days[Number($("asof-slider").value)] || ""; render(); });
  $("variant").addEventListener("change", () => { state.variant = $("variant").value; render(); });
  $("types").addEventListener("change", () => { state.types = $("types").value.split(",").map((t) => t.trim().toUpperCase()).filter(Boolean); render(); });
  $("from").addEventListener("change", () => { state.from = $("from").value; render(); });
  $("to").addEventListener("change", () => { state.to = $("to").value; render(); });
  $("run-cypher").addEventListener("click", runCypher);
  $("export-json").addEventListener("click", () => exportAs("json"));
  $("export-graphml").addEventListener("click", () => exportAs("graphml"));
}

async function start() {
  try {
    await loadDays();
    await render();
    if (state.entities.length) await showEntity(state.entities[0]);
    document.body.dataset.ready = "1";
  } catch (error) {
    status(String(error.message), true);
  }
}

readUrl();
bind();
start();
