// The backprop explorer. Python runs the real engine and lays the graph out once; this view draws
// it as SVG and, as the passes run, only patches what changed: the numbers of the nodes whose
// numbers changed, the highlights, the log's new entries (a 460-value graph's step costs what
// one node costs, not what the whole graph does).
// mountExplorer(root, transport, opts) builds it in `root` (the page's document, or a notebook
// widget's shadow root) over any transport (common.js). opts.page: it is a whole page (the URL's
// ?layout= and ?from=train are read, and the page scrolls to what changed); opts.start:
// "program" (build the default program, as the page does) or "current" (show the graph the view
// already has: a notebook's explore(L)).
import { POINT_KEY, fmt, parseNumber, setDisabled, showErrorIn } from "./common.js";
import { mountPredict } from "./predict.js";

export function mountExplorer(root, transport, opts = {}) {
const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => root.getElementById(id);
const showError = (id, message) => showErrorIn(root, id, message);
const host = root.host || document.body; // the element the view lives in

let view = null;          // the last answer from Python
let drawing = null;       // the laid-out graph
let zoom = null;          // null = fit to width (not below MIN_FIT), else a fixed scale
let selectedLeaf = null;  // id of the leaf being edited
let examples = [];        // the Examples menu's programs
let trainPoint = null;    // the Train view's point this graph came from (its nearest is offered)
let nodes = new Map();    // node id -> {g, data, grad, role, ...what it shows now}
let edgesInto = new Map(); // an op's id -> the edges from its children into it
let edgesOutOf = new Map(); // an op's id -> the edge from it to its result
let lit = [];             // the elements highlighted now (current, touched, hot)
let predict = null;       // Predict each grad (predict.js): its render(state)
const logShown = { count: 0, first: "", last: "" }; // what the log's list holds
const MIN_FIT = 0.8;  // below this the 12px numbers are too small to read: scroll instead
const params = new URLSearchParams(opts.page ? location.search : "");
const layoutEngine = ["dot", "layered"].includes(params.get("layout")) ? params.get("layout") : "auto";

// What makes this graph again on a server that no longer holds it (common.js's httpTransport):
// its program as it is now, or the Train view's point it came from.
if (transport.restorers) {
  transport.restorers.explorer = (action) => {
    if (!view || ["load", "point", "examples"].includes(action)) return null;
    if (view.from_program) return { action: "load", body: { program: view.program, layout: layoutEngine } };
    return trainPoint ? { action: "point", body: { layout: layoutEngine, from: trainPoint } } : null;
  };
}

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

function pushTo(map, key, value) {
  if (!map.has(key)) map.set(key, []);
  map.get(key).push(value);
}

// ---------------------------------------------------------------- drawing the graph once

function draw(d) {
  drawing = d;
  nodes = new Map();
  edgesInto = new Map();
  edgesOutOf = new Map();
  lit = [];
  const box = $("graph");
  box.textContent = "";
  const top = svg("svg", {
    viewBox: `0 0 ${d.width} ${d.height}`,
    // a group, not an img: an img's children are hidden from screen readers, and the leaves
    // inside are buttons
    role: "group",
    "aria-label": `Computation graph with ${d.nodes.filter((n) => n.kind === "value").length} values`,
  }, box);
  top.id = "graph-svg";
  const defs = svg("defs", {}, top);
  const marker = svg("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse",
  }, defs);
  svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

  const edges = svg("g", { class: "edges" }, top);
  for (const e of d.edges) {
    const path = svg("path", { d: e.d, class: "edge", "data-from": e.from, "data-to": e.to, "marker-end": "url(#arrow)" }, edges);
    pushTo(edgesInto, e.to, path);
    pushTo(edgesOutOf, e.from, path);
  }
  const layer = svg("g", { class: "nodes" }, top);
  const row = d.row;
  for (const n of d.nodes) {
    const g = svg("g", { class: `node ${n.kind}`, "data-id": n.id, transform: `translate(${n.x},${n.y})` }, layer);
    if (n.problem) { // a learner's own Value whose rule here is not its op's slope
      g.classList.add("wrong");
      svg("title", {}, g).textContent = n.problem;
    }
    if (n.kind === "op") {
      svg("ellipse", { rx: n.w / 2, ry: n.h / 2, class: "op-shape" }, g);
      const t = svg("text", { class: "op-text", "text-anchor": "middle", dy: "0.35em" }, g);
      t.textContent = n.caption;
      nodes.set(n.id, { g });
      continue;
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
    // a leaf says what it is: a parameter (a gradient step moves it) or data (it stays)
    const role = n.switchable || n.leaf
      ? svg("text", { x: x0 + n.w - 7, y: y0 + row - 1, class: "role", "text-anchor": "end" }, g) : null;
    nodes.set(n.id, { g, data, grad, role, switchable: !!n.switchable, name: n.name });
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
  logShown.count = 0; // a new graph: its log from the start
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
  const n = nodes.get(id);
  return n ? n.g : null;
}

// Show an answer. `show` says what the learner must see change, scrolled into view: "pass" (the
// node a step processed, its children and its chain-rule line; after the forward pass, the
// output), "leaf" (the leaf being edited and its editor), or "none".
function update(state, show = "pass") {
  view = state;
  if (state.drawing) draw(state.drawing);
  patchNodes(state);
  highlight(state);
  $("verdict").textContent = state.verdict || "";
  $("verdict").hidden = !state.verdict;
  $("verdict").classList.toggle("bad", /marked red/.test(state.verdict || ""));
  renderNotice(state);
  renderLog(state);
  renderStatus(state);
  if (predict) predict.render(state);
  renderNudge(state);
  renderLeafRole(state);
  syncProgram(state);
  writeLink(state);
  if (show === "leaf" && selectedLeaf) {
    reveal([nodeEl(selectedLeaf)]);
    bringIntoView([nodeEl(selectedLeaf), $("leaf-panel")]);
  } else if (show === "pass") {
    const ask = state.predict && state.predict.ask;
    if (ask) { // the grad asked now: its node and its parent, and the box the answer goes in
      reveal([ask.node, ask.parent].map(nodeEl));
      bringIntoView([nodeEl(ask.node), $("predict-form"), $("predict-feedback")]);
    } else if (state.current) {
      reveal([state.current, ...state.touched].map(nodeEl));
      bringIntoView([nodeEl(state.current), $("log").lastElementChild]);
    } else if (state.phase !== "built") { // the forward pass, or a step by hand: the output
      reveal([nodeEl(state.output)]);
      bringIntoView([$("graph"), state.log.length ? $("log").lastElementChild : null]);
    }
  }
}

// Each node's numbers, where they changed (a step changes a node and its children, not the
// other 450).
function patchNodes(state) {
  const order = new Map(state.forward_order.map((id, i) => [id, i]));
  const stagger = Math.min(60, 1200 / Math.max(1, order.size));
  const params = new Set(state.params || []);
  for (const [id, v] of Object.entries(state.values)) {
    const n = nodes.get(id);
    if (!n || !n.data) continue;
    const hidden = v.data === null;
    if (n.dataRaw !== v.data) {
      n.data.textContent = hidden ? "data ?" : `data ${fmt(v.data)}`;
      n.data.classList.toggle("unknown", hidden);
      if (hidden) n.data.classList.remove("arrive");
      else if (n.dataRaw === null) { // the forward pass reaches nodes in topological order
        n.data.style.animationDelay = `${(order.get(id) || 0) * stagger}ms`;
        n.data.classList.add("arrive");
      }
      n.g.dataset.data = hidden ? "" : String(v.data);
      n.dataRaw = v.data;
    }
    if (n.gradRaw !== v.grad) {
      n.grad.textContent = `grad ${fmt(v.grad)}`;
      n.grad.classList.toggle("zero", v.grad === 0);
      n.g.dataset.grad = String(v.grad);
      n.gradRaw = v.grad;
    }
    if (n.role) {
      const role = params.has(id) ? "param" : n.switchable ? "data" : "";
      if (n.roleShown !== role) {
        n.role.textContent = role;
        n.role.classList.toggle("param", role === "param");
        n.g.dataset.role = role;
        n.roleShown = role;
      }
    }
    if (n.g.classList.contains("leaf")) {
      const label = `Edit ${n.name}: data ${hidden ? "?" : fmt(v.data)}, grad ${fmt(v.grad)}${n.roleShown ? `, ${n.roleShown === "param" ? "a parameter" : "data"}` : ""}`;
      if (n.ariaShown !== label) { n.g.setAttribute("aria-label", label); n.ariaShown = label; }
    }
  }
}

// The node a step processed (and its op), the children that just got their grads, the edges
// between them: the elements lit last time are unlit, not the whole graph searched.
function highlight(state) {
  for (const [el, cls] of lit) el.classList.remove(cls);
  lit = [];
  const mark = (el, cls) => { if (el) { el.classList.add(cls); lit.push([el, cls]); } };
  markAsked(state, mark);
  if (!state.current) return;
  const op = state.current + "op";
  mark(nodeEl(state.current), "current");
  mark(nodeEl(op), "current");
  const touched = new Set(state.touched);
  for (const c of touched) mark(nodeEl(c), "touched");
  for (const p of edgesInto.get(op) || []) if (touched.has(p.dataset.from)) mark(p, "hot");
  for (const p of edgesOutOf.get(op) || []) mark(p, "hot");
}

// Predict each grad: the node whose grad is asked, and the parent whose step writes it (its op
// and the edge between them).
function markAsked(state, mark) {
  const ask = state.predict && state.predict.ask;
  if (!ask) return;
  mark(nodeEl(ask.node), "asked");
  if (!ask.parent) return;
  mark(nodeEl(ask.parent), "asked-parent");
  mark(nodeEl(ask.parent + "op"), "asked-parent");
  for (const p of edgesInto.get(ask.parent + "op") || []) if (p.dataset.from === ask.node) mark(p, "hot");
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

// A page's address carries the graph's program, in its fragment (#program=..., as TensorFlow
// Playground keeps its state; the server never sees it): a link to the page builds the same graph.
function linkedProgram() {
  return opts.page ? new URLSearchParams(location.hash.slice(1)).get("program") : null;
}

function writeLink(state) {
  if (!opts.page) return;
  const q = new URLSearchParams(location.hash.slice(1));
  if (state.from_program) q.set("program", state.program);
  else q.delete("program"); // a graph no program builds (the Train view's point)
  const hash = q.toString();
  if (hash === new URLSearchParams(location.hash.slice(1)).toString()) return;
  history.replaceState(history.state, "", `${location.pathname}${location.search}${hash ? `#${hash}` : ""}`);
}

// Another link's fragment in this tab (typed in the address bar, or followed): its graph.
function onHashChange() {
  const program = linkedProgram();
  if (program === null || program === $("program").value) return;
  $("program").value = program;
  syncMenu();
  build();
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

// Scroll the page (a whole page only: never a notebook) so that `els` are in view, above the bar
// of buttons where it sits at the bottom of the screen (a phone): what a tap changed is seen
// without scrolling. A graph node counts only with the part the graph's frame shows of it. If
// they cannot all be in view, the first is.
function bringIntoView(els) {
  els = els.filter(Boolean);
  if (!opts.page || !els.length) return;
  const bar = $("pass-panel");
  const fixed = getComputedStyle(bar).position === "fixed";
  const top = 6, bottom = (fixed ? bar.getBoundingClientRect().top : window.innerHeight) - 6;
  const frame = $("graph").getBoundingClientRect();
  const spans = els.map((el) => {
    const r = el.getBoundingClientRect();
    if (!$("graph").contains(el)) return [r.top, r.bottom];
    return [Math.max(r.top, frame.top), Math.min(r.bottom, frame.bottom)];
  });
  let lo = Math.min(...spans.map((s) => s[0])), hi = Math.max(...spans.map((s) => s[1]));
  if (hi - lo > bottom - top) { lo = spans[0][0]; hi = Math.min(spans[0][1], lo + bottom - top); }
  let dy = 0;
  if (lo < top) dy = lo - top;
  else if (hi > bottom) dy = hi - bottom;
  if (dy) window.scrollBy(0, dy);
}

function logItem(entry) {
  const li = document.createElement("li");
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
  return li;
}

// The log grows by one entry a step: only the new entries are added (a whole new log, after a
// Reset, an edit or a new graph, is drawn again).
function renderLog(state) {
  const log = $("log");
  const entries = state.log;
  const key = (e) => e.lines.join("\n");
  const n = logShown.count;
  const same = n > 0 && entries.length >= n && key(entries[0]) === logShown.first &&
    key(entries[n - 1]) === logShown.last;
  if (!same) {
    log.textContent = "";
    logShown.count = 0;
  }
  if (entries.length !== logShown.count) {
    log.lastElementChild?.classList.remove("latest");
    for (let i = logShown.count; i < entries.length; i++) log.appendChild(logItem(entries[i]));
    log.lastElementChild?.classList.add("latest");
    log.scrollTop = log.scrollHeight;  // the latest step in view (the log scrolls, not the page)
  }
  logShown.count = entries.length;
  logShown.first = entries.length ? key(entries[0]) : "";
  logShown.last = entries.length ? key(entries[entries.length - 1]) : "";
  $("log-empty").hidden = entries.length > 0;
}

function renderStatus(state) {
  let text;
  if (state.phase === "built") text = "Graph built. Inputs are known; run the forward pass to compute every node's data (a backward button runs it first).";
  else if (state.phase === "forward") text = `Forward pass done: ${state.forward_order.length} nodes, in topological order. Now step backward.`;
  else if (state.phase === "backward") text = `Backward step ${state.step} of ${state.steps}.`;
  else if (state.own_value) text = `Backward pass done (${state.steps} steps): every grad is what your _backward() of each node gave.`;
  else text = `Backward pass done (${state.steps} steps): every grad is what backward() gives.`;
  const ask = state.predict && state.predict.ask;
  if (ask) text = `Predict ${ask.name}.grad before the step writes it (Hint helps; Show me applies the step).`;
  // a learner's own Value: its numbers are changed in the notebook, not here
  $("descend-panel").hidden = !!state.own_value;
  $("status").textContent = state.note || text;
  // Enabled first, then disabled: the keyboard's focus moves on to a button that can be pressed
  setDisabled(root, $("forward"), state.phase !== "built", $("step"));
  setDisabled(root, $("step"), state.phase === "done", $("reset"));
  setDisabled(root, $("backward"), state.phase === "done", $("reset"));
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
  if (n.why) { // an h other than the lecture's, or a nudge that cannot see the slope: why
    const c = document.createElement("div");
    c.className = "why";
    c.textContent = n.why;
    box.appendChild(c);
  }
}

// What to know about this graph before stepping through it: a point whose loss is 0 (why every
// grad is 0), and the nearest point whose loss is not, one click away.
function renderNotice(state) {
  const n = state.notice;
  $("notice").hidden = !n;
  if (!n) return;
  $("notice-text").textContent = n.text;
  $("notice-offer-text").hidden = $("notice-offer").hidden = !n.offer || !trainPoint;
  if (n.offer) {
    $("notice-offer-text").textContent = n.offer.text;
    $("notice-offer").textContent = n.offer.button;
  }
}

// The open leaf's editor says what the leaf is, and switches it (a program's leaf: its marker is
// written into the program).
function renderLeafRole(state) {
  const n = selectedLeaf ? nodes.get(selectedLeaf) : null;
  const box = $("leaf-role"), note = $("leaf-role-note");
  if (!n) { box.hidden = note.hidden = true; return; }
  box.hidden = !n.switchable;
  $("leaf-param").checked = (state.params || []).includes(selectedLeaf);
  note.hidden = n.switchable || !!state.own_value;
  note.textContent = n.switchable ? "" : `${n.name} is a number written inside the expression: a constant, which a Gradient step never moves (give it a name, k = ${view.values[selectedLeaf].data}, to make it a parameter).`;
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
    trainPoint = null;
    update(state, "none");
  } catch (err) {
    showError("program-error", err.message);
    $("program").focus();
  }
}

async function descend(ev) {
  ev.preventDefault();
  let lr;
  try {
    lr = parseNumber($("lr").value, "the step size");
  } catch (err) {
    showError("descend-error", err.message);
    return;
  }
  if (lr === 0) {
    showError("descend-error", "the step size must not be 0: a step of 0 moves nothing");
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
    const state = await send(name, {}, "pass-error");
    update(state, name === "reset" ? "none" : "pass");
    if (state.predict && state.predict.ask && name === "step") $("predict-value").focus();
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
  renderLeafRole(view);
  // The leaf stays where it is on the screen: the editor's input takes the focus without
  // scrolling, and the page scrolls only as far as the leaf and its editor need.
  $("leaf-value").focus({ preventScroll: true });
  $("leaf-value").select();
  bringIntoView([g, $("leaf-panel")]);
  // No error id: this answer may arrive after a Set's error, which must stay shown.
  send("nudge", { node: id }).then((s) => update(s, "leaf")).catch((err) => showError("leaf-error", err.message));
}

function closeLeaf() {
  selectedLeaf = null;
  $("leaf-panel").hidden = true;
  root.querySelectorAll("#graph-svg .selected").forEach((el) => el.classList.remove("selected"));
}

async function setLeaf(ev) {
  ev.preventDefault();
  let value;
  try {
    value = parseNumber($("leaf-value").value, "the value");
  } catch (err) {
    showError("leaf-error", err.message);
    return;
  }
  const id = selectedLeaf;
  try {
    update(await send("set", { node: id, value }, "leaf-error"), "leaf");
    nodeEl(id)?.classList.add("selected");
  } catch (err) {
    showError("leaf-error", err.message);
  }
}

async function setRole() {
  const id = selectedLeaf;
  const role = $("leaf-param").checked ? "param" : "data";
  try {
    update(await send("role", { node: id, role }, "leaf-error"), "leaf");
  } catch (err) {
    showError("leaf-error", err.message);
    renderLeafRole(view);
  }
}

// The Train view's point whose loss is 0: step through the nearest point whose loss is not.
async function openNearest() {
  try {
    closeLeaf();
    update(await send("point", { layout: layoutEngine, from: trainPoint, nearest: true }, "program-error"), "none");
  } catch (err) {
    showError("program-error", err.message);
  }
}

// On a phone the pass bar sits at the bottom of the screen, over the page: the page ends that
// much lower, so that nothing stays hidden under it.
function fitBar() {
  const bar = $("pass-panel");
  const fixed = getComputedStyle(bar).position === "fixed";
  root.querySelector("main.explorer").style.paddingBottom = fixed ? `${bar.offsetHeight + 12}px` : "";
}

async function init() {
  predict = mountPredict(root, {
    send, update,
    // after a step: Backward step again (the next grads), or Reset once the pass is done
    focusNext: () => ($("step").disabled ? $("reset") : $("step")).focus(),
  });
  $("build").addEventListener("click", build);
  $("program").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); build(); }
  });
  $("forward").addEventListener("click", () => act("forward"));
  $("step").addEventListener("click", () => act("step"));
  $("backward").addEventListener("click", () => act("backward"));
  $("reset").addEventListener("click", () => act("reset"));
  $("leaf-form").addEventListener("submit", setLeaf);
  $("leaf-param").addEventListener("change", setRole);
  $("descend-form").addEventListener("submit", descend);
  $("notice-offer").addEventListener("click", openNearest);
  $("program").addEventListener("input", syncMenu);
  $("leaf-close").addEventListener("click", () => { const id = selectedLeaf; closeLeaf(); if (id) nodeEl(id)?.focus(); });
  $("leaf-value").addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") { const id = selectedLeaf; closeLeaf(); if (id) nodeEl(id)?.focus(); }
  });
  $("zoom-in").addEventListener("click", () => { zoom = Math.min(2, currentScale() * 1.25); applyZoom(); });
  $("zoom-out").addEventListener("click", () => { zoom = Math.max(0.25, currentScale() / 1.25); applyZoom(); });
  $("zoom-fit").addEventListener("click", () => { zoom = null; applyZoom(); });
  window.addEventListener("resize", onResize);
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(fitBar).observe($("pass-panel"));

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
    update(await send("state", {}, "program-error"), "none");
  } else if (fromTrain) {
    // The Train view's chosen point (it left it in this tab's sessionStorage): its loss graph.
    try {
      const point = JSON.parse(sessionStorage.getItem(POINT_KEY) || "null");
      closeLeaf();
      const state = await send("point", { layout: layoutEngine, from: point }, "program-error");
      trainPoint = point;
      update(state, "none");
    } catch (err) {
      await build();  // the default expression instead, and why (after: a build clears errors)
      showError("program-error", err.message);
    }
  } else if (linkedProgram() !== null) { // a link's program: built as it was written
    $("program").value = linkedProgram();
    syncMenu();
    await build();
  } else {
    await build();
  }
  if (opts.page) window.addEventListener("hashchange", onHashChange);
  fitBar();
  await transport.pythonReady; // (the site: drawn from its snapshot, interactive once Python is)
  host.dataset.ready = "1";
}

function onResize() { if (zoom === null) applyZoom(); fitBar(); }

function currentScale() {
  const el = $("graph-svg");
  return el ? Number(el.dataset.scale) : 1;
}

init().catch((err) => showError("program-error", err.message));
return { stop() { window.removeEventListener("resize", onResize); window.removeEventListener("hashchange", onHashChange); } };
}
