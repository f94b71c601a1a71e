// The backprop explorer. Python runs the real engine and lays the graph out once; this view draws
// it as SVG and, as the passes run, only patches each node's numbers and highlights.
// mountExplorer(root, transport, opts) builds it in `root` (the page's document, or a notebook
// widget's shadow root) over any transport (common.js). opts.page: it is a whole page (the URL's
// ?layout= and ?from=train are read); opts.start: "program" (build the default program, as the
// page does) or "current" (show the graph the view already has: a notebook's explore(L)).
"use strict";

function mountExplorer(root, transport, opts = {}) {
const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => root.getElementById(id);
const showError = (id, message) => showErrorIn(root, id, message);
const host = root.host || document.body; // the element the view lives in

let view = null;          // the last answer from Python
let drawing = null;       // the laid-out graph
let zoom = null;          // null = fit to width (not below MIN_FIT), else a fixed scale
let selectedLeaf = null;  // id of the leaf being edited
let examples = [];        // the Examples menu's programs
const MIN_FIT = 0.8;  // below this the 12px numbers are too small to read: scroll instead
const params = new URLSearchParams(opts.page ? location.search : "");
const layoutEngine = ["dot", "layered"].includes(params.get("layout")) ? params.get("layout") : "auto";

// One call of the explorer view; on a refusal, its one line in `errorId` (if given).
async function ask(action, body, errorId) {
  try {
    const answer = await transport.call("explorer", action, body);
    if (errorId) showError(errorId, "");
    return answer;
  } catch (err) {
    if (errorId) showError(errorId, err.message);
    throw err;
  }
}

function svg(tag, attrs, parent) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

// ---------------------------------------------------------------- drawing the graph once

function draw(d) {
  drawing = d;
  const host = $("graph");
  host.textContent = "";
  const root = svg("svg", {
    viewBox: `0 0 ${d.width} ${d.height}`,
    // a group, not an img: an img's children are hidden from screen readers, and the leaves
    // inside are buttons
    role: "group",
    "aria-label": `Computation graph with ${d.nodes.filter((n) => n.kind === "value").length} values`,
  }, host);
  root.id = "graph-svg";
  const defs = svg("defs", {}, root);
  const marker = svg("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse",
  }, defs);
  svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

  const edges = svg("g", { class: "edges" }, root);
  for (const e of d.edges) {
    svg("path", { d: e.d, class: "edge", "data-from": e.from, "data-to": e.to, "marker-end": "url(#arrow)" }, edges);
  }
  const nodes = svg("g", { class: "nodes" }, root);
  const row = d.row;
  for (const n of d.nodes) {
    const g = svg("g", { class: `node ${n.kind}`, "data-id": n.id, transform: `translate(${n.x},${n.y})` }, nodes);
    if (n.kind === "op") {
      svg("ellipse", { rx: n.w / 2, ry: n.h / 2, class: "op-shape" }, g);
      const t = svg("text", { class: "op-text", "text-anchor": "middle", dy: "0.35em" }, g);
      t.textContent = n.caption;
      if (n.problem) { // a learner's own Value whose rule here is not its op's slope
        g.classList.add("wrong");
        svg("title", {}, g).textContent = n.problem;
      }
      continue;
    }
    if (n.problem) { // a learner's own Value whose rule here is not its op's slope
      g.classList.add("wrong");
      svg("title", {}, g).textContent = n.problem;
    }
    g.setAttribute("data-name", n.name);
    if (n.leaf) g.classList.add("leaf");
    const x0 = -n.w / 2, y0 = -n.h / 2;
    svg("rect", { x: x0, y: y0, width: n.w, height: n.h, rx: 4, class: "record" }, g);
    svg("line", { x1: x0, x2: x0 + n.w, y1: y0 + row + 3, y2: y0 + row + 3, class: "divider" }, g);
    const title = svg("title", {}, g);
    title.textContent = n.name;
    const label = svg("text", { x: x0 + 7, y: y0 + row - 1, class: n.named ? "label" : "label invented" }, g);
    label.textContent = n.name;
    const data = svg("text", { x: x0 + 7, y: y0 + 2 * row + 2, class: "data" }, g);
    const grad = svg("text", { x: x0 + 7, y: y0 + 3 * row + 1, class: "grad" }, g);
    data.textContent = "data";
    grad.textContent = "grad";
    if (n.leaf) {
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.addEventListener("click", () => openLeaf(n.id));
      g.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openLeaf(n.id); }
      });
    }
  }
  const note = [d.engine === "dot" ? "layout: Graphviz dot" : "layout: built-in", ...d.notes].join(" · ");
  $("layout-note").textContent = note;
  applyZoom();
}

function applyZoom() {
  const el = $("graph-svg");
  if (!el || !drawing) return;
  const avail = $("graph").clientWidth - 4;
  let scale = zoom;
  if (scale === null) scale = Math.max(MIN_FIT, Math.min(1.25, avail / drawing.width));
  el.setAttribute("width", Math.round(drawing.width * scale));
  el.setAttribute("height", Math.round(drawing.height * scale));
  el.dataset.scale = scale.toFixed(3);
}

// ---------------------------------------------------------------- patching numbers

function nodeEl(id) {
  return root.querySelector(`#graph-svg g.node[data-id="${id}"]`);
}

function update(state) {
  view = state;
  if (state.drawing) draw(state.drawing);
  const order = new Map(state.forward_order.map((id, i) => [id, i]));
  const stagger = Math.min(60, 1200 / Math.max(1, order.size));
  for (const [id, v] of Object.entries(state.values)) {
    const g = nodeEl(id);
    if (!g) continue;
    const dataText = g.querySelector("text.data");
    const gradText = g.querySelector("text.grad");
    const hidden = v.data === null;
    const wasHidden = dataText.classList.contains("unknown");
    dataText.textContent = hidden ? "data ?" : `data ${fmt(v.data)}`;
    dataText.classList.toggle("unknown", hidden);
    if (wasHidden && !hidden) {  // the forward pass reaches nodes in topological order
      dataText.style.animationDelay = `${(order.get(id) || 0) * stagger}ms`;
      dataText.classList.remove("arrive");
      void dataText.getBBox();
      dataText.classList.add("arrive");
    }
    gradText.textContent = `grad ${fmt(v.grad)}`;
    gradText.classList.toggle("zero", v.grad === 0);
    g.dataset.grad = String(v.grad);
    g.dataset.data = hidden ? "" : String(v.data);
    const name = g.dataset.name;
    if (g.classList.contains("leaf")) {
      g.setAttribute("aria-label", `Edit ${name}: data ${hidden ? "?" : fmt(v.data)}, grad ${fmt(v.grad)}`);
    }
  }
  root.querySelectorAll("#graph-svg .current, #graph-svg .touched, #graph-svg .hot").forEach((el) => {
    el.classList.remove("current", "touched", "hot");
  });
  if (state.current) {
    nodeEl(state.current)?.classList.add("current");
    nodeEl(state.current + "op")?.classList.add("current");
    for (const c of state.touched) {
      nodeEl(c)?.classList.add("touched");
      root.querySelectorAll(`#graph-svg path.edge[data-from="${c}"][data-to="${state.current}op"]`)
        .forEach((p) => p.classList.add("hot"));
    }
    root.querySelectorAll(`#graph-svg path.edge[data-from="${state.current}op"]`)
      .forEach((p) => p.classList.add("hot"));
  }
  $("verdict").textContent = state.verdict || "";
  $("verdict").hidden = !state.verdict;
  $("verdict").classList.toggle("bad", /marked red/.test(state.verdict || ""));
  renderLog(state);
  renderStatus(state);
  renderNudge(state);
  syncProgram(state);
  if (state.current) reveal([state.current, ...state.touched].map(nodeEl));
}

// The Expression box shows the graph's program (a leaf edit or a gradient step rewrites its
// numbers), and the Examples menu names it only while it is that example's text.
function syncProgram(state) {
  if (state.program !== undefined && $("program").value !== state.program) {
    $("program").value = state.program;
  }
  syncMenu();
}

function syncMenu() {
  const text = $("program").value;
  const i = examples.findIndex((ex) => ex.program === text);
  $("examples").value = i < 0 ? "" : String(i);
  // the box no longer holds the graph's program (typed into, not built yet): say so
  $("program-changed").hidden = !view || view.program === undefined || view.program === text;
}

// Scroll the graph (not the page) so that the current node and the children that just got their
// grads are in view (as many as fit, the current node first): on a phone the graph is wider than
// the screen and the backward pass walks right to left.
function reveal(els) {
  els = els.filter(Boolean);
  if (!els.length) return;
  const box = $("graph");
  const b = box.getBoundingClientRect();
  const r = els[0].getBoundingClientRect();
  let left = r.left, right = r.right, top = r.top, bottom = r.bottom;
  for (const el of els.slice(1)) {  // widen to each child while the whole still fits
    const c = el.getBoundingClientRect();
    const l = Math.min(left, c.left), rr = Math.max(right, c.right);
    const t = Math.min(top, c.top), bb = Math.max(bottom, c.bottom);
    if (rr - l <= b.width - 48) { left = l; right = rr; }
    if (bb - t <= b.height - 24) { top = t; bottom = bb; }
  }
  if (left < b.left) box.scrollLeft -= b.left - left + 24;
  else if (right > b.right) box.scrollLeft += right - b.right + 24;
  if (top < b.top) box.scrollTop -= b.top - top + 12;
  else if (bottom > b.bottom) box.scrollTop += bottom - b.bottom + 12;
}

function renderLog(state) {
  const log = $("log");
  log.textContent = "";
  state.log.forEach((entry, i) => {
    const li = document.createElement("li");
    if (i === state.log.length - 1) li.classList.add("latest");
    for (const line of entry.lines) {
      const div = document.createElement("div");
      div.textContent = line;
      if (line.startsWith("✗")) div.className = "wrong-line"; // a learner's rule, found wrong
      li.appendChild(div);
    }
    if (entry.source) {  // the op's own code in engine.py: what computed these numbers
      const src = entry.source;
      const details = document.createElement("details");
      details.className = "src";
      const summary = document.createElement("summary");
      summary.textContent = `the code: ${src.file}, lines ${src.first}–${src.last}`;
      const pre = document.createElement("pre");
      pre.textContent = src.code;
      details.append(summary, pre);
      li.appendChild(details);
    }
    log.appendChild(li);
  });
  $("log-empty").hidden = state.log.length > 0;
  log.scrollTop = log.scrollHeight;  // the latest step in view (the log scrolls, not the page)
}

function renderStatus(state) {
  let text;
  if (state.phase === "built") text = "Graph built. Inputs are known; run the forward pass to compute every node's data (a backward button runs it first).";
  else if (state.phase === "forward") text = `Forward pass done: ${state.forward_order.length} nodes, in topological order. Now step backward.`;
  else if (state.phase === "backward") text = `Backward step ${state.step} of ${state.steps}.`;
  else if (state.own_value) text = `Backward pass done (${state.steps} steps): every grad is what your _backward() of each node gave.`;
  else text = `Backward pass done (${state.steps} steps): every grad is what backward() gives.`;
  // a learner's own Value: its numbers are changed in the notebook, not here
  $("descend-form").hidden = $("descend-hint").hidden = !!state.own_value;
  $("status").textContent = state.note || text;
  $("forward").disabled = state.phase !== "built";
  $("step").disabled = state.phase === "done";
  $("backward").disabled = state.phase === "done";
  // Backward before Forward is allowed, and says what it does: backward() needs every data.
  const first = state.phase === "built" ? " (runs the forward pass first)" : "";
  $("step").title = `One step of the backward pass${first}`;
  $("backward").title = `The whole backward pass${first}`;
}

function renderNudge(state) {
  const box = $("nudge");
  const n = state.nudge;
  box.hidden = !n;
  box.textContent = "";
  if (!n) return;
  const a = document.createElement("div");
  a.textContent = n.text;
  box.appendChild(a);
  if (n.compare) {
    const b = document.createElement("div");
    b.className = "compare";
    b.textContent = n.compare;
    box.appendChild(b);
  }
}

// ---------------------------------------------------------------- actions

// One request at a time, in order: an answer computed before a later change (a nudge sent just
// before a Set) must never be drawn over that change's answer.
let queue = Promise.resolve();
function send(action, body, errorId) {
  const result = queue.then(() => ask(action, body, errorId));
  // The caller shows a failure; the queue only waits for this request to settle, either way.
  queue = result.then(() => undefined, () => undefined);
  return result;
}

async function build() {
  const program = $("program").value;
  try {
    const state = await send("load", { program, layout: layoutEngine }, "program-error");
    closeLeaf();
    update(state);
  } catch (err) {
    showError("program-error", err.message);
    $("program").focus();
  }
}

async function descend(ev) {
  ev.preventDefault();
  const text = $("lr").value.trim();
  const lr = Number(text);
  if (text === "" || !Number.isFinite(lr) || lr === 0) {
    showError("descend-error", `the step size must be a number other than 0, got ${JSON.stringify(text)}`);
    return;
  }
  closeLeaf();
  try {
    update(await send("descend", { lr }, "descend-error"));
  } catch (err) {
    showError("descend-error", err.message);
  }
}

async function act(name) {
  try {
    update(await send(name, {}, "pass-error"));
  } catch (err) {
    showError("pass-error", err.message);
  }
}

function openLeaf(id) {
  const g = nodeEl(id);
  if (!g || !view) return;
  selectedLeaf = id;
  root.querySelectorAll("#graph-svg .selected").forEach((el) => el.classList.remove("selected"));
  g.classList.add("selected");
  const name = g.dataset.name;
  $("leaf-label").textContent = `Value of ${name}`;
  $("leaf-value").value = String(view.values[id].data);
  $("leaf-panel").hidden = false;
  showError("leaf-error", "");
  $("leaf-value").focus();
  $("leaf-value").select();
  // No error id: this answer may arrive after a Set's error, which must stay shown.
  send("nudge", { node: id }).then(update).catch((err) => showError("leaf-error", err.message));
}

function closeLeaf() {
  selectedLeaf = null;
  $("leaf-panel").hidden = true;
  root.querySelectorAll("#graph-svg .selected").forEach((el) => el.classList.remove("selected"));
}

async function setLeaf(ev) {
  ev.preventDefault();
  const text = $("leaf-value").value.trim();
  const value = Number(text);
  if (text === "" || !Number.isFinite(value)) {
    showError("leaf-error", `not a number: ${JSON.stringify(text)}`);
    return;
  }
  const id = selectedLeaf;
  try {
    update(await send("set", { node: id, value }, "leaf-error"));
    nodeEl(id)?.classList.add("selected");
  } catch (err) {
    showError("leaf-error", err.message);
  }
}

async function init() {
  $("build").addEventListener("click", build);
  $("program").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); build(); }
  });
  $("forward").addEventListener("click", () => act("forward"));
  $("step").addEventListener("click", () => act("step"));
  $("backward").addEventListener("click", () => act("backward"));
  $("reset").addEventListener("click", () => act("reset"));
  $("leaf-form").addEventListener("submit", setLeaf);
  $("descend-form").addEventListener("submit", descend);
  $("program").addEventListener("input", syncMenu);
  $("leaf-close").addEventListener("click", () => { const id = selectedLeaf; closeLeaf(); if (id) nodeEl(id)?.focus(); });
  $("leaf-value").addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") { const id = selectedLeaf; closeLeaf(); if (id) nodeEl(id)?.focus(); }
  });
  $("zoom-in").addEventListener("click", () => { zoom = Math.min(2, currentScale() * 1.25); applyZoom(); });
  $("zoom-out").addEventListener("click", () => { zoom = Math.max(0.25, currentScale() / 1.25); applyZoom(); });
  $("zoom-fit").addEventListener("click", () => { zoom = null; applyZoom(); });
  window.addEventListener("resize", onResize);

  const answer = await ask("examples", {}, "program-error");
  examples = answer.examples;
  const { default: program, functions } = answer;
  $("functions").textContent = functions.join(", ");
  const select = $("examples");
  const blank = document.createElement("option");
  blank.value = "";
  blank.textContent = "Choose an example…";
  select.appendChild(blank);
  examples.forEach((ex, i) => {
    const opt = document.createElement("option");
    opt.value = String(i);
    opt.textContent = ex.title;
    select.appendChild(opt);
  });
  select.addEventListener("change", () => {
    if (select.value === "") return;
    $("program").value = examples[Number(select.value)].program;
    build();
  });
  $("program").value = program;
  const fromTrain = opts.page && params.get("from") === "train";
  if (opts.start === "current") { // a graph built in a notebook: no program to edit here
    $("program").closest(".panel").hidden = true;
    root.querySelector("main.explorer").classList.add("in-notebook");
    update(await send("state", {}, "program-error"));
  } else if (fromTrain) {
    // The Train view's chosen point (it left it in this tab's sessionStorage): its loss graph.
    try {
      const point = JSON.parse(sessionStorage.getItem(POINT_KEY) || "null");
      closeLeaf();
      update(await send("point", { layout: layoutEngine, from: point }, "program-error"));
    } catch (err) {
      await build();  // the default expression instead, and why (after: a build clears errors)
      showError("program-error", err.message);
    }
  } else {
    await build();
  }
  host.dataset.ready = "1";
}

function onResize() { if (zoom === null) applyZoom(); }

function currentScale() {
  const el = $("graph-svg");
  return el ? Number(el.dataset.scale) : 1;
}

init().catch((err) => showError("program-error", err.message));
return { stop() { window.removeEventListener("resize", onResize); } };
}
