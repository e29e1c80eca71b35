// The newskg explorer: every view is the graph as of one day, from the /v1/explore endpoints (qa/explore.py).
// The API key the user types is kept in sessionStorage (this tab only) and sent as X-API-Key; the view (entities,
// day, filters) lives in the URL, so a link reproduces it. Data is always put in the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY_STORE = "newskg-api-key";
const state = { entities: [], asOf: "", variant: "", types: [], from: "", to: "", days: [], facts: new Map() };
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
// Labels stay legible at any neighbourhood size: names and fact texts are cut (the side panel has them whole), the
// font keeps LABEL_PX on screen whatever the zoom, edge labels show only while few edges are drawn (else those of the
// node under the pointer or selected), and the view is fitted with its labels inside the canvas.
const NAME_CHARS = 28;
const EDGE_CHARS = 36;
const EDGE_LABELS_UP_TO = 14; // pairs of entities with facts drawn: more, and their labels would cover each other
const LABEL_PX = { node: 12, edge: 10 };
const ZOOM = { max: 1.6 };
const MIN_NODE_PX = 10;

function cut(text, chars) {
  return text.length <= chars ? text : `${text.slice(0, chars - 1).trimEnd()}…`;
}

function plural(n, word, words) {
  return `${n} ${n === 1 ? word : words || `${word}s`}`;
}

// The fact's text without its subject's name when it starts with it (the edge leaves that node), cut, and its day.
function edgeLabel(e, subject) {
  const text = subject && e.text.startsWith(`${subject} `) ? `… ${e.text.slice(subject.length + 1)}` : e.text;
  return `${cut(text, EDGE_CHARS)} (${e.day})`;
}

// Every fact of the view (an interaction between two entities, or a fact with no object entity), by id.
function factsOf(views) {
  const facts = new Map();
  for (const view of views) for (const e of view.edges) facts.set(e.id, e);
  return facts;
}

function elementsOf(views) {
  const nodes = new Map();
  for (const view of views) for (const n of view.nodes) nodes.set(n.id, n);
  const facts = [...state.facts.values()];
  const solo = new Map(); // facts with no object entity, per subject: shown on the node, listed in the side panel
  for (const f of facts) if (!f.target) solo.set(f.source, (solo.get(f.source) || 0) + 1);
  // A node's size: its facts in the view (only the views' own entities carry counts as of the day; counting every
  // neighbour's would cost all its facts, issue #30).
  const shown = new Map();
  for (const f of facts) for (const end of new Set([f.source, f.target])) if (end) shown.set(end, (shown.get(end) || 0) + 1);
  const maxFacts = Math.max(1, ...shown.values());
  return [
    ...[...nodes.values()].map((n) => {
      const own = solo.get(n.id) || 0;
      const many = shown.get(n.id) || 0;
      return {
        group: "nodes",
        data: { id: n.id, name: n.name, label: cut(n.name, NAME_CHARS) + (own ? `\n+${plural(own, "fact")}` : ""),
                type: n.type, facts: many, solo: own, size: 24 + 36 * Math.sqrt(many / maxFacts),
                focus: state.entities.includes(n.id) ? 1 : 0, named: 1 },
      };
    }),
    ...facts.filter((e) => e.target && nodes.has(e.source) && nodes.has(e.target)).map((e) => ({
      group: "edges",
      data: { id: e.id, source: e.source, target: e.target, label: edgeLabel(e, nodes.get(e.source).name), day: e.day, text: e.text },
    })),
  ];
}

// The font sizes (graph units) that show LABEL_PX on screen at the current zoom.
let scaledAt = 1;
function scaleLabels() {
  const zoom = cy.zoom();
  scaledAt = zoom;
  cy.batch(() => {
    cy.nodes().style({ "font-size": LABEL_PX.node / zoom, "text-margin-y": 3 / zoom, "text-max-width": 180 / zoom,
                       "text-background-padding": 2 / zoom });
    cy.edges().style({ "font-size": LABEL_PX.edge / zoom, "text-background-padding": 1 / zoom, "text-max-width": 130 / zoom,
                       width: Math.max(1.5, 1.2 / zoom) });
    // a node stays at least MIN_NODE_PX across on screen, however far the view is zoomed out
    cy.nodes().forEach((n) => {
      const size = Math.max(n.data("size"), MIN_NODE_PX / zoom);
      n.style({ width: size, height: size });
    });
  });
}

// Labels are placed in turn, each only where it covers no label placed before it: the names of the view's entities,
// then the other names (the most mentioned first), then one label per pair of entities (their latest fact, "+N" for
// the others) for every pair while few pairs are drawn, else for the pairs of the selected node. What is left out
// shows on hover, or when zooming in makes room.
function placeLabels() {
  const opts = { includeNodes: false, includeEdges: false, includeLabels: true };
  const placed = [];
  const place = (element) => {
    const box = element.boundingBox(opts);
    if (placed.some((o) => box.x1 < o.x2 && o.x1 < box.x2 && box.y1 < o.y2 && o.y1 < box.y2)) return false;
    placed.push(box);
    return true;
  };
  const byRank = cy.nodes().sort((a, b) => b.data("focus") - a.data("focus") || b.data("facts") - a.data("facts"));
  cy.batch(() => {
    byRank.forEach((n) => n.data("named", 1));
    cy.edges().removeClass("labelled");
  });
  const unnamed = byRank.filter((n) => !place(n));
  const pairs = new Map();
  cy.edges().forEach((e) => {
    const key = [e.data("source"), e.data("target")].sort().join(" ");
    if (!pairs.has(key)) pairs.set(key, []);
    pairs.get(key).push(e);
  });
  const few = pairs.size <= EDGE_LABELS_UP_TO;
  const latestFirst = (a, b) => (a.data("day") < b.data("day") ? 1 : a.data("day") > b.data("day") ? -1 : 0) ||
    (a.id() < b.id() ? -1 : 1);
  const candidates = [...pairs.values()]
    .filter((edges) => few || edges[0].connectedNodes().some((n) => n.selected()))
    .sort((a, b) => b.length - a.length)
    .map((edges) => {
      const [first] = edges.sort(latestFirst);
      first.data("shown", first.data("label") + (edges.length > 1 ? ` +${edges.length - 1}` : ""));
      return first;
    });
  cy.batch(() => {
    unnamed.forEach((n) => n.data("named", 0));
    candidates.forEach((e) => e.addClass("labelled"));
  });
  const unlabelled = candidates.filter((e) => !place(e));
  cy.batch(() => unlabelled.forEach((e) => e.removeClass("labelled")));
}

// Fit the whole view, labels included, inside the canvas (the labels' size follows the zoom: a few rounds), never
// closer than ZOOM.max (one entity is a node, not the whole canvas).
function fitView() {
  for (let round = 0; round < 4; round += 1) {
    cy.fit(cy.elements(), 24);
    if (cy.zoom() > ZOOM.max) { cy.zoom(ZOOM.max); cy.center(); }
    if (Math.abs(cy.zoom() / scaledAt - 1) < 0.03) break;
    scaleLabels();
  }
  // The loop stops within 3% of the zoom the labels were sized for: size them for the zoom it kept, so an edge's
  // label is LABEL_PX.edge on screen, not 9.7 px (the fit's 24 px padding takes the few pixels they grow).
  if (cy.zoom() !== scaledAt) scaleLabels();
}

// cose spaces the nodes by their labels' size; the labels grow (in graph units) as the fit zooms out, so a view
// that does not fit at the labels' size is laid out once more with the labels it will have.
function layout(graph) {
  graph.zoom(1);
  scaleLabels();
  for (let round = 0; round < 2; round += 1) {
    graph.layout({ name: "cose", animate: false, randomize: false, fit: false, nodeDimensionsIncludeLabels: true,
                   idealEdgeLength: () => 170, nodeRepulsion: () => 9000, padding: 24 }).run();
    const before = graph.zoom();
    fitView();
    if (graph.zoom() > 0.8 * before) break;
  }
}

function ensureGraph() {
  if (cy) return cy;
  cy = cytoscape({
    container: $("graph"),
    minZoom: 0.05,
    maxZoom: 4,
    wheelSensitivity: 0.3,
    style: [
      { selector: "node", style: { label: "data(label)", width: "data(size)", height: "data(size)", "font-size": 12,
                                   "text-valign": "bottom", "text-halign": "center", "text-wrap": "wrap",
                                   "text-max-width": 400, "text-background-color": "#fff",
                                   "text-background-opacity": 0.85, "text-background-shape": "roundrectangle",
                                   "background-color": "#6d8fd6", "border-width": 1, "border-color": "#4a6bb0" } },
      { selector: "node[named = 0]", style: { label: "" } },
      { selector: "node[named = 0].hovered, node[named = 0]:selected", style: { label: "data(label)", "z-index": 10 } },
      { selector: "node[focus = 1]", style: { "background-color": "#d6762f", "border-color": "#a85518",
                                              "font-weight": "bold" } },
      { selector: "edge", style: { "font-size": 10, "curve-style": "bezier", width: 1.5, "line-color": "#aab",
                                   "target-arrow-color": "#aab", "target-arrow-shape": "triangle",
                                   "control-point-step-size": 28, "text-rotation": "autorotate", color: "#333", "text-wrap": "wrap",
                                   "text-background-color": "#fff", "text-background-opacity": 0.85 } },
      { selector: "edge.labelled", style: { label: "data(shown)" } },
      { selector: "edge:selected, edge.hovered", style: { label: "data(label)", "line-color": "#222",
                                                         "target-arrow-color": "#222", "z-index": 10 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#222" } },
    ],
  });
  cy.on("tap", "node", (event) => expand(event.target.id()));
  cy.on("tap", "edge", (event) => showEvidence(event.target.id()));
  cy.on("mouseover", "node", (event) => event.target.union(event.target.connectedEdges()).addClass("hovered"));
  cy.on("mouseout", "node", (event) => event.target.union(event.target.connectedEdges()).removeClass("hovered"));
  cy.on("mouseover", "edge", (event) => event.target.addClass("hovered"));
  cy.on("mouseout", "edge", (event) => event.target.removeClass("hovered"));
  cy.on("select unselect", "node", placeLabels);
  let pending = false;
  cy.on("zoom", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (Math.abs(cy.zoom() / scaledAt - 1) >= 0.03) { scaleLabels(); placeLabels(); }
    });
  });
  return cy;
}

function summary(graph) {
  const facts = [...state.facts.values()];
  const between = facts.filter((f) => f.target).length;
  return `as of ${state.asOf || "now"}: ${plural(graph.nodes().length, "entity", "entities")}, ` +
    `${plural(facts.length, "fact")} (${between} between two entities, ${facts.length - between} about one)`;
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
    state.facts = factsOf(views);
    const graph = ensureGraph();
    graph.elements().remove();
    graph.add(elementsOf(views));
    layout(graph);
    placeLabels();
    status(summary(graph));
    // The side panel lists the shown entity's facts of the view: rebuild it, or it keeps those of another day.
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

// The entity's facts of the view, the latest event day first: those with another entity and those about it alone.
function entityFacts(entityId) {
  return [...state.facts.values()]
    .filter((f) => f.source === entityId || f.target === entityId)
    .sort((a, b) => b.event_day - a.event_day || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}

function dayIso(key) {
  const text = String(key);
  return `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}`;
}

// Daily mentions as bars (spike days red) and, above them, a mark on each event day of the entity's facts.
function drawTimeline(body, facts) {
  const box = $("timeline");
  box.replaceChildren();
  const series = body.series;
  const spikes = new Set(body.spike_days);
  const perDay = new Map();
  for (const f of facts) perDay.set(f.event_day, (perDay.get(f.event_day) || 0) + 1);
  const max = Math.max(1, ...series.map((p) => p.count));
  const width = 400, height = 120, top = 16, bar = width / series.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  let inPeriod = 0;
  series.forEach((p, i) => {
    const h = (p.count / max) * (height - 20 - top);
    const rect = svg("rect", { x: i * bar, y: height - 12 - h, width: Math.max(1, bar - 1), height: h,
                               fill: spikes.has(p.day) ? "#d33" : "#6d8fd6" });
    const tip = svg("title", {});
    tip.textContent = `${dayIso(p.day)}: ${p.count} mentions${spikes.has(p.day) ? " (spike)" : ""}`;
    rect.appendChild(tip);
    chart.appendChild(rect);
    const n = perDay.get(p.day);
    if (n) {
      inPeriod += n;
      const x = i * bar + bar / 2, r = Math.min(6, 2.5 + Math.sqrt(n));
      const mark = svg("path", { d: `M${x} ${top - r - 3} l${r} ${r} l${-r} ${r} l${-r} ${-r} z`, fill: "#333",
                                 class: "fact-mark" });
      const factTip = svg("title", {});
      factTip.textContent = `${dayIso(p.day)}: ${plural(n, "fact")}`;
      mark.appendChild(factTip);
      chart.appendChild(mark);
    }
  });
  const label = svg("text", { x: 2, y: height - 1, "font-size": 9 });
  const source = body.spike_source === "neon" ? "NEON evaluation" : "rolling-sum rule";
  label.textContent = `${dayIso(series[0].day)} … ${dayIso(series[series.length - 1].day)}; ` +
    `spikes (${source}): ${body.spike_days.length}; ◆ facts: ${inPeriod}`;
  chart.appendChild(label);
  box.appendChild(chart);
}

async function showEntity(entityId) {
  state.shown = entityId;
  try {
    const body = await json(`/v1/explore/entities/${encodeURIComponent(entityId)}/timeline`, { as_of: state.asOf });
    const facts = entityFacts(entityId);
    const names = new Map(cy ? cy.nodes().map((n) => [n.id(), n.data("name")]) : []);
    $("entity-name").textContent = body.name;
    const between = facts.filter((f) => f.target).length;
    $("entity-summary").textContent = facts.length
      ? `${plural(facts.length, "fact")} as of ${state.asOf || "now"}: ${between} with another entity, ` +
        `${facts.length - between} about ${body.name} alone`
      : `no facts as of ${state.asOf || "now"} in this view`;
    drawTimeline(body, facts);
    const list = $("entity-edges");
    list.replaceChildren();
    for (const fact of facts) {
      const item = document.createElement("li");
      const other = fact.source === entityId ? fact.target : fact.source;
      const day = document.createElement("span");
      day.className = "meta";
      day.textContent = `${fact.day} · `;
      const text = document.createElement("span");
      text.textContent = fact.text;
      const about = document.createElement("span");
      about.className = "meta";
      const sources = fact.n_sources ? ` · ${fact.n_sources} src` : "";
      about.textContent = other ? ` · with ${names.get(other) || other}${sources}` : ` · no other entity${sources}`;
      item.append(day, text, about);
      item.className = other ? "with-entity" : "solo";
      item.dataset.id = fact.id;
      item.addEventListener("click", () => showEvidence(fact.id));
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
