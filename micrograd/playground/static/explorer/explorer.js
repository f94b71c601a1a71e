// The backprop explorer. Python runs the real engine and lays the graph out once; this view draws
// it as SVG and, as the passes run, only patches what changed: the numbers of the nodes whose
// numbers changed, the highlights, the log's new entries (a 460-value graph's step costs what
// one node costs, not what the whole graph does).
// mountExplorer(root, transport, opts) builds it in `root` (the page's document, or a notebook
// widget's shadow root) over any transport (common.js). opts.page: it is a whole page (the URL's
// ?layout=, ?from=train and #program= are read, url-state.js, and the page scrolls to what
// changed); opts.start: "program" (build the default program, as the page does) or "current"
// (show the graph the view already has: a notebook's explore(L)).
//
// The view is made of parts that share `ui`: explorer-drawing.js (the graph, its highlights, its
// zoom and scrolling), explorer-panels.js (the log, the status and the other panels), predict.js
// (Predict each grad); this file holds the view's state, sends the learner's actions and shows
// each answer.
import { POINT_KEY, parseNumber, showErrorIn } from "../common.js";
import { drawingPart } from "./explorer-drawing.js";
import { panelsPart } from "./explorer-panels.js";
import { mountPredict } from "./predict.js";
import { readHash, readQuery, writeHashKey } from "../url-state.js";

export function mountExplorer(root, transport, opts = {}) {
const $ = (id) => root.getElementById(id);
const showError = (id, message) => showErrorIn(root, id, message);
const host = root.host || document.body; // the element the view lives in

let view = null;          // the last answer from Python
let selectedLeaf = null;  // id of the leaf being edited
let examples = [];        // the Examples menu's programs
let trainPoint = null;    // the Train view's point this graph came from (its nearest is offered)
let predict = null;       // Predict each grad (predict.js): its render(state)
const params = readQuery(opts.page);
const layoutEngine = ["dot", "layered"].includes(params.get("layout")) ? params.get("layout") : "auto";
const ui = { root, $, opts, openLeaf: (id) => openLeaf(id) };
const graph = drawingPart(ui);
ui.graph = graph;
const panels = panelsPart(ui);
const { nodeEl, reveal, bringIntoView } = graph;

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

// Show an answer. `show` says what the learner must see change, scrolled into view: "pass" (the
// node a step processed, its children and its chain-rule line; after the forward pass, the
// output), "leaf" (the leaf being edited and its editor), or "none". `typed`: the learner typed
// into the Expression box while this answer was coming, and the box keeps their words.
function update(state, show = "pass", typed = false) {
  view = state;
  if (state.drawing) {
    graph.draw(state.drawing);
    panels.newGraph();
  }
  graph.patchNodes(state);
  graph.highlight(state);
  panels.renderVerdict(state);
  panels.renderNotice(state, trainPoint);
  panels.renderLog(state);
  panels.renderStatus(state);
  if (predict) predict.render(state);
  panels.renderNudge(state);
  panels.renderLeafRole(state, selectedLeaf);
  syncProgram(state, typed);
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

// The Expression box shows the graph's program (a leaf edit or a gradient step rewrites its
// numbers), and the Examples menu names it only while it is that example's text.
function syncProgram(state, typed = false) {
  if (!typed && state.program !== undefined && $("program").value !== state.program) {
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

// A page's address carries the graph's program, in its fragment (url-state.js): a link to the
// page builds the same graph.
function linkedProgram() {
  return readHash(opts.page).get("program");
}

function writeLink(state) {
  // a graph no program builds (the Train view's point) has no program in its link
  writeHashKey(opts.page, "program", state.from_program ? state.program : null);
}

// Another link's fragment in this tab (typed in the address bar, or followed): its graph.
function onHashChange() {
  const program = linkedProgram();
  if (program === null || program === $("program").value) return;
  $("program").value = program;
  syncMenu();
  build();
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
    // typed over while the graph was laid out (Graphviz may take a second): the graph is drawn,
    // and the box keeps what was typed since (marked changed), for the next Build graph
    update(state, "none", $("program").value !== program);
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
  panels.renderLeafRole(view, selectedLeaf);
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
    panels.renderLeafRole(view, selectedLeaf);
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
  $("zoom-in").addEventListener("click", () => graph.zoomBy(1.25));
  $("zoom-out").addEventListener("click", () => graph.zoomBy(1 / 1.25));
  $("zoom-fit").addEventListener("click", graph.fit);
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

function onResize() { graph.refit(); fitBar(); }

init().catch((err) => showError("program-error", err.message));
return { stop() { window.removeEventListener("resize", onResize); window.removeEventListener("hashchange", onHashChange); } };
}
