// The training view: Python trains (micrograd's MLP, losses, optim, jit); this view only draws.
// mountTrain(root, transport, opts) builds it in `root` (the page's document, or a notebook
// widget's shadow root) over any transport (common.js). On a page (opts.page) the settings live
// in the URL (reload or share the link: the same run); in a widget, the view starts from the run
// Python already has (opts.start "current"). Frames come from the transport; each carries the
// step, loss, accuracy, the decision grid, a heat map per hidden neuron, every weight and bias as
// the look of its link (and its gradient's, when shown) and the chosen point's graph numbers (its
// layout comes once, in meta): built at the size they are drawn, and only what changed since the
// frame before (train_frames.py says what a frame holds). The page tells Python what it shows
// (the `view` action): gradients or not, the graph in sight or not, the neuron on the big plot,
// the link or bias whose exact numbers it reads.
"use strict";

function mountTrain(root, transport, opts = {}) {
const COLORS = [[245, 147, 34], [8, 119, 189], [58, 166, 85]]; // class 0 orange, 1 blue, 2 green
const GRAD_COLORS = [[19, 141, 117], [192, 57, 43]]; // ∂L/∂w < 0 teal, > 0 red (the page's grad colour)
const PARTS = ["grid", "heat_scale", "shown", "links", "grads", "grad_max", "graph"]; // sent when changed
const BIAS = 7; // a bias's square, in pixels, at the bottom left of its neuron
const FIELDS = ["dataset", "points", "noise", "hidden", "activation", "loss", "optimizer", "lr",
  "momentum", "l2", "l1", "batch", "seed", "zero_grad", "data_seed", "test", "features"];
const LISTS = ["hidden", "features"]; // settings that are lists: "8,8" in the URL and the box
const $ = (id) => root.getElementById(id);
const showError = (id, message) => showErrorIn(root, id, message);
const showIn = (id) => (err) => showError(id, err.message);
const host = root.host || document.body; // the element the view lives in

const view = {
  options: null, meta: null, frame: null, added: [], pick: 0,
  steps: [], losses: [], highs: [], accs: [], tests: [], source: null,
};
const handle = { // for tests and the curious: the view of the run (window.trainView on a page)
  history: () => view.steps.map((s, i) => [s, view.losses[i], view.highs[i], view.accs[i]]),
  tests: () => view.tests, // [step, test loss, test accuracy] per frame, when points are held out
  meta: () => view.meta,
  frame: () => view.frame,
  drawn: () => view.drawn, // frames drawn so far (at most one per screen refresh)
  drawMs: () => view.drawMs || 0, // milliseconds spent drawing them, in all (a benchmark reads it)
  regions: () => regionImage(view.frame.grid, view.meta.grid), // the plot's region picture
  where: (l, j, i) => linkEnds(l, j, i), // a link's middle (a bias's square: i null), in page px
  call: (action, body) => post(action, body), // an action, as the page's controls send them
};

// ------------------------------------------------------------------ settings <-> URL and controls

function settingsFromUrl() {
  const q = new URLSearchParams(opts.page ? location.search : "");
  const s = {};
  for (const k of FIELDS) if (q.has(k)) s[k] = q.get(k);
  if (q.has("added")) {
    s.added = q.get("added").split(";").filter(Boolean).map((p) => p.split(":").map(Number));
  }
  if (q.has("pick")) view.urlPick = Number(q.get("pick")) || 0;
  if (q.has("speed") && [...$("speed").options].some((o) => o.value === q.get("speed"))) $("speed").value = q.get("speed");
  $("discretize").checked = q.get("discretize") === "1";
  $("show-grads").checked = q.get("grads") === "1";
  $("show-test").checked = q.get("showtest") === "1";
  return s;
}

function writeUrl() {
  const s = view.meta.settings;
  const q = new URLSearchParams();
  for (const k of FIELDS) q.set(k, LISTS.includes(k) ? s[k].join(",") : String(s[k]));
  if (s.added.length) q.set("added", s.added.map((p) => `${+p[0].toFixed(3)}:${+p[1].toFixed(3)}:${p[2]}`).join(";"));
  if (view.meta.pick) q.set("pick", String(view.meta.pick));
  if ($("speed").value !== "max") q.set("speed", $("speed").value);
  if ($("discretize").checked) q.set("discretize", "1");
  if ($("show-grads").checked) q.set("grads", "1");
  if ($("show-test").checked) q.set("showtest", "1");
  if (opts.page) history.replaceState(null, "", `${location.pathname}?${q}`);
}

function controlsToSettings() {
  const s = {};
  for (const k of FIELDS) s[k] = $(k).value.trim();
  if (view.meta && fixedData(view.meta)) { // its boxes show its own points, not the settings
    s.points = String(view.meta.settings.points);
    s.noise = String(view.meta.settings.noise);
  }
  s.hidden = s.hidden.split(",").map((x) => x.trim()).filter((x) => x !== "");
  s.features = s.features.split(",").filter((x) => x !== "");
  s.zero_grad = $("zero_grad").checked;  // a checkbox: its state, not its value
  s.added = view.added;
  return s;
}

function settingsToControls(s) {
  for (const k of FIELDS) $(k).value = LISTS.includes(k) ? s[k].join(",") : String(s[k]);
  for (const box of root.querySelectorAll("#feature-picker input")) {
    box.checked = s.features.includes(box.value);
  }
  fitHidden();
  $("zero_grad").checked = s.zero_grad;
  $("momentum-field").hidden = s.optimizer !== "sgd";
  view.added = s.added.map((p) => p.slice());
}

// The Hidden layers box is as wide as what it holds (6 layers of 32 is 17 characters).
function fitHidden() {
  $("hidden").size = Math.max(10, $("hidden").value.length + 1);
}

function fillSelect(id, items) {
  const sel = $(id);
  sel.textContent = "";
  for (const [value, text] of items) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    sel.append(o);
  }
}

// ------------------------------------------------------------------ talking to the server

// One call of the Train view; its answer shown; a refusal's one line in the page's error line.
// Actions go one after another, in the order the learner made them: two in flight at once (two
// toggles clicked in a row) could be taken in the other order, and the run end up with the first.
let actionChain = Promise.resolve();
async function post(action, body) {
  const call = actionChain.then(() => transport.call("train", action, body === undefined ? {} : body));
  actionChain = call.then(() => undefined, () => undefined); // the next waits for this one, either way
  let answer;
  try {
    answer = await call;
  } catch (err) {
    showError("train-error", err.message);
    throw err;
  }
  showError("train-error", "");
  show(answer);
  return answer;
}

// What the page shows, told to Python (in order, as every action: an earlier "graph: false"
// never undoes a later "graph: true").
function postView(body) {
  return post("view", body).catch(showIn("train-error"));
}

// New settings. Two quick changes (two toggles clicked in a row) are two requests: the answer to
// the first must not undo the second on the controls, so only the last one sets them.
async function configure(settings) {
  view.configuring = (view.configuring || 0) + 1;
  try {
    await post("config", settings);
  } catch (e) {
    showError("train-error", e.message);
    if (view.configuring === 1) settingsToControls(view.meta ? view.meta.settings : view.options.defaults); // keep the run
  } finally {
    view.configuring -= 1;
  }
}

function show(answer) {
  if (answer.meta) setMeta(answer.meta);
  if (answer.frame) setFrame(answer.frame);
  if (answer.read) setRead(answer.read);
}

function connect() {
  if (view.stopFrames) view.stopFrames();
  view.stream = null;
  view.stopFrames = transport.frames((f) => { if (f.type === "frame") onStreamFrame(f); });
}

// A frame from the transport holds what changed since the one before it: the stream's own
// picture is kept whole here (the answers to actions carry whole frames, drawn by their seq).
function onStreamFrame(f) {
  if (!f.full && !view.stream) { connect(); return; } // joined a stream under way: start it over
  if (f.full) view.stream = f;
  else {
    const base = view.stream, out = Object.assign({}, base, f);
    for (const k of PARTS) if (!(k in f)) out[k] = base[k];
    if (f.heat && base.heat && f.heat.length === base.heat.length) {
      out.heat = f.heat.map((h, i) => (h === null ? base.heat[i] : h));
    }
    view.stream = out;
  }
  setFrame(Object.assign({}, view.stream, { history: f.history, history_reset: f.history_reset }));
}

// ------------------------------------------------------------------ meta: what changes with settings

function setMeta(meta) {
  const old = view.meta;
  view.meta = meta;
  if (!(view.configuring > 1)) settingsToControls(meta.settings); // a later change is on its way
  view.pick = meta.pick;
  $("pick").value = meta.pick;
  $("pick").max = meta.points.length - 1;
  $("engine").textContent = meta.engine === "jit" ? "engine: micrograd.jit (numpy)" : "engine: eager micrograd";
  $("change-note").textContent = meta.change || "";
  // a transport's word on this network (the static site: too big to train live in a browser)
  $("size-note").textContent = meta.size_note || "";
  $("size-note").hidden = !meta.size_note;
  $("loss-formula").textContent = meta.loss_formula;
  $("output-rule").textContent = "Output: " + meta.output_rule;
  $("act-formula").textContent = meta.activation_formula;
  $("slice-note").hidden = !meta.slice;
  $("slice-note").textContent = meta.slice ? `3 inputs: the plane shows x₁, x₂ with ${meta.slice}; points are placed by x₁, x₂.` : "";
  setDisabled(root, $("clear-points"), meta.settings.added.length === 0, $("new-data"));
  // The lecture's set is its own four points, always, without noise: its boxes say so (the
  // settings' count and noise are kept for the next data set)
  const fixed = fixedData(meta);
  if (fixed) {
    $("points").value = String(meta.points.length);
    $("noise").value = "0";
  }
  $("points").disabled = $("noise").disabled = fixed;
  setDisabled(root, $("new-data"), fixed, $("clear-points"));
  for (const box of root.querySelectorAll("#feature-picker input")) box.disabled = !meta.features;
  buildClassPicker(meta.classes);
  $("discretize-box").hidden = meta.classes === 0; // a regression's output has no classes
  buildLayerButtons(meta.settings.hidden);
  if (!old || old.config_id !== meta.config_id) {
    buildNet(meta.sizes); // closes the editor of a link of the previous network, and its error
    buildGraph(meta.graph);
  }
  writeUrl();
}

function buildClassPicker(classes) {
  const box = $("class-picker");
  if (box.dataset.classes === String(classes)) return;
  box.dataset.classes = classes;
  box.textContent = "";
  $("class-legend").textContent = classes ? "Click adds a point of class" : "Click adds a point with the target value";
  $("add-hint").textContent = `Click the plot to add a point (shift-click: ${classes ? "the other class" : "the target's negative"}). Click a point to see its graph below.`;
  if (!classes) { // a regression: the new point's target, on the colour scale of the plot
    const input = Object.assign(document.createElement("input"), { type: "number", id: "target-value", min: -1, max: 1, step: 0.1, value: 0.5 });
    const label = Object.assign(document.createElement("label"), { htmlFor: "target-value", textContent: "y =" });
    const pair = Object.assign(document.createElement("span"), { className: "pair" });
    pair.append(label, input);
    box.append(pair);
    return;
  }
  const names = classes === 2 ? ["orange (−1)", "blue (+1)"] : ["orange (0)", "blue (1)", "green (2)"];
  for (let k = 0; k < classes; k++) {
    const id = `class-${k}`;
    const input = Object.assign(document.createElement("input"), { type: "radio", name: "cls", id, value: k, checked: k === 1 });
    const label = Object.assign(document.createElement("label"), { htmlFor: id, textContent: names[k] });
    label.style.color = `rgb(${COLORS[k]})`;
    const pair = Object.assign(document.createElement("span"), { className: "pair" });
    pair.append(input, label);
    box.append(pair);
  }
}

// The label of a point added by hand: the class chosen (shift: the next one), or on a regression
// the target value typed (shift: its negative), within the targets' range.
function chosenClass(shift) {
  if (view.meta.classes === 0) {
    const r = view.meta.target_range, y = Math.max(-r, Math.min(r, Number($("target-value").value) || 0));
    return shift ? -y : y;
  }
  const picked = root.querySelector('input[name="cls"]:checked');
  const k = picked ? Number(picked.value) : 1;
  const n = view.meta.classes;
  return shift ? (k + 1) % n : k;
}

function fixedData(meta) {
  return meta.settings.dataset === "lecture";
}

function buildLayerButtons(hidden) {
  const box = $("layer-buttons");
  // the button pressed is made again: the keyboard's focus goes to the new one, not the page
  const focused = box.contains(root.activeElement) ? root.activeElement.getAttribute("aria-label") : null;
  box.textContent = "";
  hidden.forEach((n, i) => {
    const group = document.createElement("span");
    group.className = "layer-group";
    const minus = Object.assign(document.createElement("button"), { type: "button", textContent: "−" });
    minus.setAttribute("aria-label", `Fewer neurons in layer ${i + 1}`);
    const plus = Object.assign(document.createElement("button"), { type: "button", textContent: "+" });
    plus.setAttribute("aria-label", `More neurons in layer ${i + 1}`);
    const text = Object.assign(document.createElement("span"), { textContent: `layer ${i + 1}: ${n}` });
    minus.onclick = () => changeLayer(i, -1);
    plus.onclick = () => changeLayer(i, +1);
    group.append(minus, text, plus);
    box.append(group);
  });
  if (focused) {
    const again = [...box.querySelectorAll("button")].find((b) => b.getAttribute("aria-label") === focused);
    (again || $("add-layer")).focus();
  }
}

function changeLayer(i, delta) {
  const s = controlsToSettings();
  s.hidden = view.meta.settings.hidden.slice();
  s.hidden[i] += delta;
  configure(s);
}

// ------------------------------------------------------------------ frames: what changes every step

function clearCurve() {
  view.steps = []; view.losses = []; view.highs = []; view.accs = []; view.tests = [];
}

function setFrame(f) {
  if (!view.meta || f.config_id !== view.meta.config_id) return; // a frame of a previous setup
  if (view.frame && view.frame.config_id === f.config_id && f.seq < view.frame.seq) return; // late
  // the frame drawn already (an action's answer and the stream both bring it): nothing to draw
  // unless it says something new of the run or its curve
  const old = view.frame;
  let again = !!old && old.config_id === f.config_id && old.seq === f.seq &&
    old.playing === f.playing && old.error === f.error && !f.history_reset;
  if (f.history_reset || f.step === 0) clearCurve();
  if (f.history) {
    // buckets of the loss curve: [first step, lowest loss, highest loss, accuracy]; the last one
    // sent again if it grew since
    for (const [k, lo, hi, a] of f.history) {
      const n = view.steps.length;
      if (n && k < view.steps[n - 1]) continue;
      if (n && k === view.steps[n - 1]) {
        again = again && view.losses[n - 1] === lo && view.highs[n - 1] === hi && view.accs[n - 1] === a;
        view.losses[n - 1] = lo; view.highs[n - 1] = hi; view.accs[n - 1] = a;
        continue;
      }
      again = false;
      view.steps.push(k); view.losses.push(lo); view.highs.push(hi); view.accs.push(a);
    }
  }
  if (f.step === 0) clearCurve();
  view.frame = f;
  if (f.test && f.step > 0) { // the test figures of this frame, on the curve beside the loss
    const t = view.tests;
    if (t.length && t[t.length - 1][0] >= f.step) t.length = t.findIndex((e) => e[0] >= f.step);
    t.push([f.step, f.test[0], f.test[1]]);
    if (t.length > 4096) view.tests = t.filter((_, i) => i % 2 === 0 || i === t.length - 1);
  }
  const regression = view.meta.classes === 0; // no classes: no accuracy, the loss says it all
  $("test-readout").hidden = $("test-key").hidden = !f.test;
  $("test-loss-text").textContent = f.test && f.test[0] != null ? `test loss ${fmt(f.test[0])}` : "test loss –";
  $("test-acc-text").textContent = f.test && f.test[1] != null ? `test accuracy ${(100 * f.test[1]).toFixed(1)}%` : "test accuracy –";
  $("test-acc-text").hidden = $("acc-text").hidden = regression;
  $("step-count").textContent = `step ${f.step}`;
  $("loss-text").textContent = f.loss == null ? "loss –" : `loss ${fmt(f.loss)}`;
  $("acc-text").textContent = f.accuracy == null ? "accuracy –" : `accuracy ${(100 * f.accuracy).toFixed(1)}%`;
  if (f.read) setRead(f.read);
  $("run-state").textContent = f.playing ? "playing" : "paused";
  // the one that can be pressed first: a keyboard user who pressed Play lands on Pause
  if (f.playing) {
    setDisabled(root, $("pause"), false);
    setDisabled(root, $("play"), true, $("pause"));
  } else {
    setDisabled(root, $("play"), !!f.error);
    setDisabled(root, $("pause"), true, $("play"));
  }
  if (f.error) showError("train-error", f.error);
  if (again) return;
  // Draw once per screen refresh, the newest frame: frames that arrive faster than the page can
  // draw them (a big network's 192 heat maps) are skipped, never queued.
  if (!view.drawPending) {
    view.drawPending = true;
    requestAnimationFrame(drawFrame);
  }
}

function drawFrame() {
  view.drawPending = false;
  const start = performance.now();
  drawPlot();
  drawCurves();
  drawNet();
  drawGraphNumbers();
  view.drawMs = (view.drawMs || 0) + performance.now() - start;
  view.drawn = (view.drawn || 0) + 1;
  $("step-count").dataset.drawn = view.drawn; // frames drawn, where a test or benchmark reads it
}

// ------------------------------------------------------------------ the plot: regions and points

function decode(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function mix(c, t) { // white -> colour c by t in [0, 1]
  return c.map((v) => Math.round(255 + (v - 255) * t));
}

// A number x in [-1, 1] as a colour: white at 0, blue (+) or orange (-) as strong as |x|·strength
// (`pair`: another two colours, [negative, positive]).
function signColor(x, strength, pair = [COLORS[0], COLORS[1]]) {
  return mix(x >= 0 ? pair[1] : pair[0], strength * Math.min(1, Math.abs(x)));
}

const HEAT_STRENGTH = 0.85; // a neuron's heat map, a regression's output
const REGION_STRENGTH = 0.65; // the decision regions: paler, so the points stand out

// A heat map's 256 shades (byte 0: -1, orange; 255: +1, blue) as RGBA words, made once: a pixel
// is then one array write (a 6x32 network draws 192 maps a frame).
const HEAT = (() => {
  const lut = new Uint32Array(256), bytes = new Uint8Array(lut.buffer);
  for (let v = 0; v < 256; v++) {
    const rgb = signColor(v / 127.5 - 1, HEAT_STRENGTH);
    bytes.set([rgb[0], rgb[1], rgb[2], 255], 4 * v);
  }
  return lut;
})();

// The big plot's picture of a frame's grid (only: one class's region), made once per grid: the
// plot and the output's square draw the same one.
let regionCache = {};
function regionImage(grid, side, only = null) {
  const hard = $("discretize").checked; // one colour per class: where the decision falls
  const c = regionCache;
  if (c.grid === grid && c.only === only && c.hard === hard && c.side === side) return c.img;
  const img = makeRegionImage(grid, side, only, hard);
  regionCache = { grid, only, hard, side, img };
  return img;
}

function makeRegionImage(grid, side, only, hard) {
  if (grid.kind === "value") return heatImage(grid.b64, side); // a regression: the output itself
  const img = new ImageData(side, side);
  const v = decode(grid.b64);
  const cls = grid.kind === "classes" ? decode(grid.cls) : null;
  for (let i = 0; i < side * side; i++) {
    let rgb;
    if (cls && only !== null) {
      rgb = cls[i] === only ? mix(COLORS[only], hard ? 0.6 : 0.3 + 0.6 * (v[i] / 255)) : [255, 255, 255];
    } else if (cls) {
      rgb = mix(COLORS[cls[i]], hard ? 0.45 : 0.25 + 0.45 * (v[i] / 255));
    } else {
      const x = v[i] / 127.5 - 1;
      rgb = hard ? signColor(x >= 0 ? 1 : -1, 0.5) : signColor(x, REGION_STRENGTH);
    }
    img.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * i);
  }
  return img;
}

// A scale's number, short: 3 significant digits, a true minus sign, + for the positive end.
function tick(x, plus = false) {
  const t = x === 0 ? "0" : String(Number(Math.abs(x).toPrecision(3)));
  return x < 0 ? `−${t}` : plus && x > 0 ? `+${t}` : t;
}

// A colour legend in the element `id`: `title`, a bar of the colours colorAt(t) for t from 0 to 1,
// and ticks [t, label] under it. Text, so that it reads as it looks.
function setLegend(id, title, colorAt, ticks) {
  const el = $(id);
  const key = JSON.stringify([title, ticks, colorAt(0), colorAt(0.5), colorAt(1)]);
  if (el.dataset.key === key) return; // the same legend: leave the page alone
  el.dataset.key = key;
  el.textContent = "";
  const stops = Array.from({ length: 21 }, (_, k) => `rgb(${colorAt(k / 20)}) ${5 * k}%`);
  const bar = Object.assign(document.createElement("span"), { className: "lg-bar" });
  bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
  const marks = Object.assign(document.createElement("span"), { className: "lg-ticks" });
  for (const [t, label] of ticks) {
    const m = Object.assign(document.createElement("span"), { textContent: label });
    m.style.left = `${100 * t}%`;
    if (t <= 0) m.className = "first"; else if (t >= 1) m.className = "last";
    marks.append(m);
  }
  const scale = Object.assign(document.createElement("span"), { className: "lg-scale" });
  scale.append(bar, marks);
  el.append(Object.assign(document.createElement("span"), { className: "lg-title", textContent: title }), scale);
}

// The big plot's legend: what its colours mean, with their scale.
function plotLegend(f, meta) {
  const shown = f && f.shown && f.shown.neuron === view.shownNeuron ? f.shown : null;
  if (view.shownNeuron != null && f && f.heat_scale) {
    const m = shown ? shown.scale : f.heat_scale[view.shownNeuron];
    setLegend("plot-legend", `neuron ${view.shownName}: its output h over the plane`,
      (t) => signColor(2 * t - 1, HEAT_STRENGTH), [[0, tick(-m)], [0.5, "0"], [1, tick(m, true)]]);
  } else if (meta.output_kind === "value") {
    const r = meta.target_range;
    setLegend("plot-legend", "the output s over the plane, and each point's target y",
      (t) => signColor(2 * t - 1, HEAT_STRENGTH), [-1, -0.5, 0, 0.5, 1].map((u) => [(u + 1) / 2, tick(u * r, true)]));
  } else if (meta.output_kind === "per class") {
    const n = meta.classes;
    setLegend("plot-legend", `the class argmax z, stronger as its p = softmax(z) goes from 1/${n} to 1`,
      (t) => { const k = Math.min(n - 1, Math.floor(n * t)), p = 1 / n + (n * t - k) * (1 - 1 / n); return mix(COLORS[k], 0.25 + 0.45 * p); },
      Array.from({ length: n }, (_, k) => [(k + 0.5) / n, `class ${k}`]));
  } else if ($("discretize").checked) {
    setLegend("plot-legend", "the class: the sign of the output s",
      (t) => signColor(t < 0.5 ? -1 : 1, 0.5), [[0.25, "−1 (s < 0)"], [0.75, "+1 (s > 0)"]]);
  } else { // tanh(s): every s has a shade, and the boundary s = 0 is white
    setLegend("plot-legend", "the output s (shaded by tanh s): class +1 where s > 0",
      (t) => signColor(2 * t - 1, REGION_STRENGTH), [-3, -1, 0, 1, 3].map((s) => [(Math.tanh(s) + 1) / 2, tick(s, true)]));
  }
}

const offscreen = document.createElement("canvas");

function toPixel(x, y) {
  const [x0, x1, y0, y1] = view.meta.extent;
  const c = $("plot");
  return [(x - x0) / (x1 - x0) * c.width, (y1 - y) / (y1 - y0) * c.height];
}

function drawPlot() {
  const c = $("plot"), ctx = c.getContext("2d");
  const f = view.frame, meta = view.meta;
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, c.width, c.height);
  const k = view.shownNeuron; // a hovered hidden neuron: its output over the plane, big
  const big = f && f.shown && f.shown.neuron === k ? f.shown : null; // at the plot's size
  if (f && k != null && (big || (f.heat && f.heat[k]))) {
    const side = big ? meta.grid : meta.heat;
    offscreen.width = offscreen.height = side;
    offscreen.getContext("2d").putImageData(heatImage(big ? big.b64 : f.heat[k], side), 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(offscreen, 0, 0, c.width, c.height);
  } else if (f && f.grid) {
    offscreen.width = offscreen.height = meta.grid;
    offscreen.getContext("2d").putImageData(regionImage(f.grid, meta.grid), 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(offscreen, 0, 0, c.width, c.height);
  }
  plotLegend(f, meta);
  const held = new Set(meta.test || []), showTest = $("show-test").checked;
  const order = meta.points.map((_, i) => i)
    .filter((i) => i !== view.pick && (showTest || !held.has(i)));
  if (view.pick < meta.points.length) order.push(view.pick); // the chosen point on top
  order.forEach((i) => {
    const p = meta.points[i];
    const [px, py] = toPixel(p[0], p[1]);
    const label = p[p.length - 1];
    const regression = meta.classes === 0; // the label is a target value: its colour on the scale
    ctx.beginPath();
    ctx.arc(px, py, i === view.pick ? 7 : 4.5, 0, 2 * Math.PI);
    ctx.fillStyle = `rgb(${regression ? signColor(label / meta.target_range, 1) : COLORS[label]})`;
    ctx.fill();
    // a test point: a dark ring (it is measured, never trained on)
    ctx.lineWidth = i === view.pick ? 3 : held.has(i) ? 1.8 : 1.2;
    ctx.strokeStyle = i === view.pick || held.has(i) ? "#111" : regression ? "#4a4f57" : "#fff";
    ctx.stroke();
  });
  ctx.strokeStyle = "#c9ced6";
  ctx.lineWidth = 1;
  ctx.strokeRect(0.5, 0.5, c.width - 1, c.height - 1);
  if (view.cross && root.activeElement === c) { // the keyboard's cross: where Enter adds
    const [px, py] = toPixel(view.cross[0], view.cross[1]);
    ctx.strokeStyle = "#111";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(px - 10, py); ctx.lineTo(px + 10, py);
    ctx.moveTo(px, py - 10); ctx.lineTo(px, py + 10);
    ctx.stroke();
  }
}

// The plot by keyboard: arrow keys move a cross (Shift: farther), Enter adds a point of the chosen
// class there (Shift+Enter: the other class), [ and ] choose the previous and next point.
function onPlotKey(ev) {
  const meta = view.meta;
  if (!meta) return;
  const [x0, x1, y0, y1] = meta.extent;
  if (!view.cross) view.cross = [(x0 + x1) / 2, (y0 + y1) / 2];
  const step = (ev.shiftKey ? 0.1 : 0.02);
  const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
  if (moves[ev.key]) {
    const [dx, dy] = moves[ev.key];
    view.cross = [Math.min(x1, Math.max(x0, view.cross[0] + dx * step * (x1 - x0))),
      Math.min(y1, Math.max(y0, view.cross[1] + dy * step * (y1 - y0)))];
    $("plot-status").textContent = `cross at x₁ = ${fmt(view.cross[0])}, x₂ = ${fmt(view.cross[1])}`;
  } else if (ev.key === "Enter") {
    const [x, y] = view.cross;
    const added = meta.settings.added.concat([[+x.toFixed(3), +y.toFixed(3), chosenClass(ev.shiftKey)]]);
    post("points", { added }).catch(showIn("train-error"));
  } else if (ev.key === "[" || ev.key === "]") {
    const n = meta.points.length;
    choose((view.pick + (ev.key === "]" ? 1 : n - 1)) % n);
  } else {
    return;
  }
  ev.preventDefault();
  drawPlot();
}

function onPlotClick(ev) {
  const c = $("plot"), r = c.getBoundingClientRect();
  const px = (ev.clientX - r.left) * c.width / r.width, py = (ev.clientY - r.top) * c.height / r.height;
  // a click on a point chooses it; elsewhere it adds one
  let best = -1, bestD = 8 * 8;
  view.meta.points.forEach((p, i) => {
    const [qx, qy] = toPixel(p[0], p[1]);
    const d = (qx - px) ** 2 + (qy - py) ** 2;
    if (d < bestD) { best = i; bestD = d; }
  });
  if (best >= 0) { choose(best); return; }
  const [x0, x1, y0, y1] = view.meta.extent;
  const x = x0 + px / c.width * (x1 - x0), y = y1 - py / c.height * (y1 - y0);
  const added = view.meta.settings.added.concat([[+x.toFixed(3), +y.toFixed(3), chosenClass(ev.shiftKey)]]);
  post("points", { added }).catch(showIn("train-error"));
}

function choose(i) {
  view.pick = i; // at once, so a second key press moves on from here (the answer confirms it)
  drawPlot();
  post("pick", { index: i }).catch(showIn("train-error"));
}

// ------------------------------------------------------------------ curves

function drawCurves() {
  const c = $("curves"), ctx = c.getContext("2d");
  const W = c.width, H = c.height, pad = 4;
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, W, H);
  ctx.strokeStyle = "#e3e7ec";
  ctx.strokeRect(0.5, 0.5, W - 1, H - 1);
  const n = view.steps.length;
  if (n < 2) return;
  const last = view.steps[n - 1] || 1;
  const log = (l) => Math.log10(Math.max(l == null ? 1e-12 : l, 1e-12));
  const ls = view.losses.map(log), hs = view.highs.map(log);  // each bucket's lowest and highest
  let lo = Math.min(...ls), hi = Math.max(...hs);
  if (hi - lo < 1e-9) { hi += 0.5; lo -= 0.5; }
  const X = (k) => pad + (W - 2 * pad) * k / last;
  const line = (vals, y, color) => {
    ctx.beginPath();
    // every bucket (the server keeps at most HISTORY_CAP): skipping some would drop spikes
    for (let i = 0; i < n; i += 1) {
      const px = X(view.steps[i]), py = y(vals[i]);
      if (i === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
    }
    ctx.lineTo(X(view.steps[n - 1]), y(vals[n - 1]));
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.6;
    ctx.stroke();
  };
  if (view.meta.classes) line(view.accs, (a) => H - pad - (H - 2 * pad) * a, "#3aa655"); // a regression has none
  const yLoss = (l) => H - pad - (H - 2 * pad) * (l - lo) / (hi - lo);
  line(hs, yLoss, "#1d2430");  // the band's top and bottom: one line while a bucket is one step
  line(ls, yLoss, "#1d2430");
  const t = view.tests.filter((e) => e[1] != null);
  if (t.length > 1) { // the test data's loss and accuracy, dashed
    ctx.setLineDash([4, 3]);
    const dashed = (k, y, color) => {
      ctx.beginPath();
      t.forEach((e, i) => { const px = X(e[0]), py = y(e[k]); if (i) ctx.lineTo(px, py); else ctx.moveTo(px, py); });
      ctx.strokeStyle = color; ctx.lineWidth = 1.4; ctx.stroke();
    };
    if (view.meta.classes) dashed(2, (a) => H - pad - (H - 2 * pad) * a, "#3aa655");
    dashed(1, (l) => Math.max(pad, Math.min(H - pad, yLoss(log(l)))), "#1d2430");
    ctx.setLineDash([]);
  }
  ctx.fillStyle = "#5b6472";
  ctx.font = "11px sans-serif";
  ctx.textAlign = "right";
  ctx.fillText(`step ${last + 1}`, W - 6, 14);
  ctx.textAlign = "left";
}

// ------------------------------------------------------------------ the network: heat maps, links, biases

function netGeometry(sizes) {
  const W = $("net").clientWidth || 420;
  const tallest = Math.max(...sizes);
  // a neuron's square (its heat map has as many cells a side: train_frames.neuron_box)
  const box = view.meta.box;
  const H = Math.max(tallest * (box + 6) + 10, 120);
  const cols = sizes.length;
  const xs = sizes.map((_, i) => 12 + i * (W - 24 - box) / Math.max(cols - 1, 1));
  const pos = sizes.map((n, i) => Array.from({ length: n }, (_, j) => [xs[i], (H - n * (box + 6)) / 2 + j * (box + 6) + 3]));
  return { W, H, box, pos };
}

function buildNet(sizes) {
  const net = $("net");
  for (const el of net.querySelectorAll("canvas:not(#net-links), .nlabel")) el.remove();
  const g = netGeometry(sizes);
  view.net = g;
  net.style.height = `${g.H}px`;
  // The links are drawn on one canvas: thousands of SVG lines restyled every frame took the page
  // to 10 frames a second at 6 layers of 32; a canvas of them draws in a few milliseconds.
  const links = $("net-links");
  links.className = "links";
  const dpr = window.devicePixelRatio || 1;
  links.width = Math.round(g.W * dpr); links.height = Math.round(g.H * dpr);
  Object.assign(links.style, { width: `${g.W}px`, height: `${g.H}px` });
  view.links = []; // [layer][neuron][input] = [x1, y1, x2, y2], in CSS pixels
  view.biases = []; // [layer][neuron] = [x, y] of its bias's square (top left)
  view.offsets = []; // [layer]: where its neurons' parameters start in model.parameters()
  let off = 0;
  for (let l = 1; l < sizes.length; l++) {
    view.links.push(g.pos[l].map(([x2, y2]) => g.pos[l - 1].map(([x1, y1]) =>
      [x1 + g.box, y1 + g.box / 2, x2, y2 + g.box / 2])));
    view.biases.push(g.pos[l].map(([x, y]) => [x - BIAS - 1, y + g.box - BIAS]));
    view.offsets.push(off);
    off += sizes[l] * (sizes[l - 1] + 1);
  }
  view.heat = [];
  view.heatDrawn = [];
  view.outCanvases = [];
  sizes.forEach((n, l) => g.pos[l].forEach(([x, y], j) => {
    const cv = document.createElement("canvas");
    cv.width = cv.height = view.meta.heat;
    Object.assign(cv.style, { left: `${x}px`, top: `${y}px`, width: `${g.box}px`, height: `${g.box}px` });
    const last = l === sizes.length - 1;
    const feature = view.meta.features ? view.meta.features[j] : `x${j + 1}`;
    cv.title = l === 0 ? `input ${feature}` : last ? `output ${sizes[l] > 1 ? j + 1 : ""}` : `neuron h${l}.${j + 1}`;
    net.append(cv);
    if (l === 0) cv.getContext("2d").putImageData(heatImage(view.meta.inputs[j], cv.width), 0, 0);
    else if (!last) {
      const k = view.heat.length, name = `h${l}.${j + 1}`;
      cv.tabIndex = 0;
      cv.setAttribute("role", "img");
      cv.setAttribute("aria-label", `neuron ${name}: hover or focus to see its output on the plot`);
      cv.addEventListener("mouseenter", () => showNeuron(k, name));
      cv.addEventListener("focus", () => showNeuron(k, name));
      cv.addEventListener("mouseleave", () => showNeuron(null));
      cv.addEventListener("blur", () => showNeuron(null));
      view.heat.push(cv);
    } else view.outCanvases.push(cv);
  }));
  const outLayer = sizes.length - 1;
  const names = sizes.map((n, l) => l === 0 ? "inputs" : l === outLayer ? "output" : `layer ${l}`);
  const labels = names.map((name, l) => {
    const s = Object.assign(document.createElement("span"), { className: "nlabel", textContent: name });
    if (l === outLayer) s.style.right = "0"; // the last one ends at the edge, not past it
    else s.style.left = `${g.pos[l][0][0]}px`;
    net.append(s);
    return s;
  });
  // On a narrow panel (a phone, six hidden layers) "layer 6" runs into "output": then the short
  // names, those of the neurons' tooltips (h1 for layer 1's h1.1, h1.2, ...).
  const edges = labels.map((s) => s.getBoundingClientRect());
  if (edges.some((b, l) => l > 0 && edges[l - 1].right + 4 > b.left)) {
    labels.forEach((s, l) => { s.textContent = l === 0 ? "in" : l === outLayer ? "out" : `h${l}`; });
  }
  view.focusItem = null;
  view.hoverItem = null;
  view.readItem = null; // Python forgets it too when the network is new
  view.shownNeuron = null;
  closeWeight();
}

// Where parameter (layer l, neuron j, input i) is in model.parameters(): each neuron's weights,
// then its bias (i null).
function paramIndex(l, j, i) {
  const nin = view.meta.sizes[l];
  return view.offsets[l] + j * (nin + 1) + (i == null ? nin : i);
}

function gradsShown() {
  return $("show-grads").checked && !!(view.frame && view.frame.grads);
}

function drawNet() {
  const f = view.frame;
  if (!f || !view.links) return;
  if (f.heat) f.heat.forEach((b64, i) => {
    const cv = view.heat[i];
    if (!cv || view.heatDrawn[i] === b64) return; // unchanged since the last frame drawn
    cv.getContext("2d").putImageData(heatImage(b64, cv.width), 0, 0);
    view.heatDrawn[i] = b64;
  });
  if (f.grid) { // one output: the regions; one per class: where that class wins
    const side = view.meta.grid;
    view.outCanvases.forEach((cv, k) => {
      if (cv.width !== side) cv.width = cv.height = side;
      cv.getContext("2d").putImageData(regionImage(f.grid, side, view.outCanvases.length > 1 ? k : null), 0, 0);
    });
  }
  // the links again only if what they show changed (a settled network's bytes often do not)
  const key = [gradsShown() ? f.grads : f.links, JSON.stringify(currentItem()), view.net];
  if (!view.linksKey || key.some((k, i) => k !== view.linksKey[i])) drawLinks(f);
  netLegend(f);
}

// One neuron's output over the plane (`side` x `side` bytes, -1 orange .. +1 blue) as an image.
function heatImage(b64, side) {
  const img = new ImageData(side, side), v = decode(b64), px = new Uint32Array(img.data.buffer);
  for (let k = 0; k < side * side; k++) px[k] = HEAT[v[k]];
  return img;
}

// Show hidden neuron `i`'s output on the big plot (null: the network's output again); Python
// then sends it at the plot's size.
function showNeuron(i, name) {
  view.shownNeuron = i;
  view.shownName = name;
  $("plot-status").textContent = i == null ? "" : `the plot shows neuron ${name}'s output (orange −, blue +)`;
  drawPlot();
  postView({ neuron: i });
}

// How a parameter's link (or bias square) looks, from its byte: [colour, width, alpha]. A weight:
// blue positive, orange negative, thicker and darker the larger (the same past meta.link_scale).
// A gradient: red positive, teal negative, its width on a log scale of meta.grad_decades.
function looks(byte, widest, grads) {
  const x = byte / 127.5 - 1;
  if (grads) {
    const t = Math.min(1, Math.abs(x)) ** 2; // the top decades stand out, the rest fade
    return [GRAD_COLORS[x > 0 ? 1 : 0], 0.4 + (widest - 0.4) * t, 0.1 + 0.85 * t];
  }
  const a = Math.abs(x) * view.meta.link_scale;
  return [COLORS[x >= 0 ? 1 : 0], Math.min(widest, 0.4 + 2.2 * a), Math.min(0.95, 0.25 + 0.5 * a)];
}

// The links and the bias squares. Links of the same look go in one path (a few dozen strokes, not
// thousands). The parameter being edited, focused or hovered is drawn over a dark halo.
function drawLinks(f) {
  view.linksKey = [gradsShown() ? f.grads : f.links, JSON.stringify(currentItem()), view.net];
  const cv = $("net-links"), ctx = cv.getContext("2d"), dpr = cv.width / (view.net.W || 1);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, view.net.W, view.net.H);
  ctx.lineCap = "butt"; // round caps on thousands of lines cost more than they show
  const grads = gradsShown();
  const bytes = decode(grads ? f.grads : f.links);
  const sizes = view.meta.sizes;
  const paths = new Map(); // look -> Path2D
  const widths = sizes.slice(1).map((n, l) => // between two wide layers the links are many and
    Math.max(1, Math.min(7, 32 / Math.sqrt(n * sizes[l])))); // close: thinner, so they stay apart
  view.links.forEach((layer, l) => {
    // each byte's look in this layer, once (256 of them, not one per link), as its path
    const pathOf = Array.from({ length: 256 }, (_, v) => {
      const [c, width, alpha] = looks(v, widths[l], grads);
      const look = `${c} ${width.toFixed(1)} ${alpha.toFixed(2)}`;
      if (!paths.has(look)) paths.set(look, new Path2D());
      return paths.get(look);
    });
    layer.forEach((neuron, j) => {
      const base = paramIndex(l, j, 0);
      neuron.forEach((seg, i) => {
        const p = pathOf[bytes[base + i]];
        p.moveTo(seg[0], seg[1]); p.lineTo(seg[2], seg[3]);
      });
    });
  });
  for (const [look, p] of paths) {
    const [c, width, alpha] = look.split(" ");
    ctx.strokeStyle = `rgba(${c}, ${alpha})`;
    ctx.lineWidth = Number(width);
    ctx.stroke(p); // an empty path (a look no link has) draws nothing
  }
  ctx.lineWidth = 1;
  view.biases.forEach((layer, l) => layer.forEach(([x, y], j) => {
    const [c, , alpha] = looks(bytes[paramIndex(l, j, null)], 1, grads);
    ctx.fillStyle = `rgb(${mix(c, alpha)})`;
    ctx.fillRect(x, y, BIAS, BIAS);
    ctx.strokeStyle = "#5b6472";
    ctx.strokeRect(x + 0.5, y + 0.5, BIAS - 1, BIAS - 1);
  }));
  const item = currentItem();
  if (item) { // the link or bias being read: a dark halo, then itself again on top
    const [l, j, i] = item, [c, width, alpha] = looks(bytes[paramIndex(l, j, i)], widths[l], grads);
    ctx.strokeStyle = "#111";
    if (i == null) {
      const [x, y] = view.biases[l][j];
      ctx.lineWidth = 2.5;
      ctx.strokeRect(x - 1.5, y - 1.5, BIAS + 3, BIAS + 3);
    } else {
      const [x1, y1, x2, y2] = view.links[l][j][i];
      ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x2, y2);
      ctx.lineWidth = width + 4;
      ctx.stroke();
      ctx.strokeStyle = `rgb(${mix(c, Math.max(alpha, 0.6))})`;
      ctx.lineWidth = Math.max(width, 1.5);
      ctx.stroke();
    }
  }
}

// The network's legend: what the links, the bias squares and the neuron squares mean.
function netLegend(f) {
  if (gradsShown()) {
    const m = f.grad_max == null ? 0 : f.grad_max, d = view.meta.grad_decades;
    setLegend("net-legend", `links and bias squares: ∂L/∂w of step ${f.step} (thickest: |∂L/∂w| = ${tick(m)}; a log scale, the thinnest ${10 ** d} times less)`,
      (t) => { const [c, , alpha] = looks(Math.round(255 * t), 1, true); return mix(c, alpha); }, [[0, tick(-m)], [0.5, "0"], [1, tick(m, true)]]);
  } else {
    const s = view.meta.link_scale;
    setLegend("net-legend", `links and bias squares: the weight w (thicker and darker as |w| grows, up to ${s})`,
      (t) => { const [c, , alpha] = looks(Math.round(255 * t), 1, false); return mix(c, alpha); }, [[0, tick(-s)], [0.5, "0"], [1, tick(s, true)]]);
  }
  setLegend("heat-legend", "neuron squares: each neuron's output h over the plane, scaled to its own largest |h| (hover one: its scale, on the plot)",
    (t) => signColor(2 * t - 1, HEAT_STRENGTH), [[0, "−max"], [0.5, "0"], [1, "+max"]]);
}

// ---- reading a link or a bias: hover, keyboard, the editor

// The parameter whose numbers the page reads: the one being edited, else the one the keyboard
// chose (while the links have the focus), else the one under the pointer; [l, j, i] or null.
function currentItem() {
  if (view.editing) return view.editing;
  if (view.focusItem && root.activeElement === $("net-links")) return view.focusItem;
  return view.hoverItem || null;
}

function sameItem(a, b) {
  return !!a && !!b && a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

function itemName([l, j, i]) {
  return i == null ? `b (layer ${l + 1}, neuron ${j + 1})` : `w (layer ${l + 1}, neuron ${j + 1}, input ${i + 1})`;
}

// Ask Python for the exact numbers of the parameter now read (each frame then carries them).
function syncRead() {
  const item = currentItem();
  if (sameItem(item, view.readItem) || (!item && !view.readItem)) { showTip(); return; }
  view.readItem = item;
  view.read = null;
  showTip();
  if (view.frame) drawLinks(view.frame);
  postView({ read: item });
}

function setRead(r) {
  if (!r || !sameItem([r.layer, r.neuron, r.input], view.readItem)) return;
  view.read = r;
  if (view.editFill && sameItem(view.editing, view.readItem)) { // the editor's starting value
    view.editFill = false;
    $("weight-value").value = typeof r.value === "number" ? String(r.value) : "";
    $("weight-value").select();
  }
  showTip();
}

// The tooltip of the parameter read: its value and its gradient, exact, as each frame brings them.
function showTip() {
  const tip = $("net-tip"), item = view.readItem;
  const r = view.read, d = item && item[2] == null ? "∂L/∂b" : "∂L/∂w";
  const num = (v) => (v == null ? "…" : fmt(v));
  const when = view.frame && view.frame.step === 0 ? " (no step yet)" : "";
  // the editor says the gradient too (a phone has no hover to read it by)
  const said = view.editing && r ? `${d} = ${num(r.grad)}${when}` : "";
  if ($("weight-grad").textContent !== said) { $("weight-grad").textContent = said; placeEditor(); }
  if (!item || view.editing) { tip.hidden = true; return; }
  tip.textContent = `${itemName(item)} = ${num(r && r.value)} · ${d} = ${num(r && r.grad)}${when}`;
  tip.hidden = false;
  const [x, y] = itemCentre(item);
  tip.style.left = `${Math.max(0, Math.min(x - 60, view.net.W - tip.offsetWidth))}px`;
  tip.style.top = `${Math.min(y + 10, view.net.H - 4)}px`;
}

// A link's middle, or a bias square's centre, in CSS pixels of the network's panel.
function itemCentre([l, j, i]) {
  if (i == null) { const [x, y] = view.biases[l][j]; return [x + BIAS / 2, y + BIAS / 2]; }
  const [x1, y1, x2, y2] = view.links[l][j][i];
  return [(x1 + x2) / 2, (y1 + y2) / 2];
}

function linkEnds(l, j, i) { // for tests: where a link or bias is, in the page's coordinates
  const r = $("net-links").getBoundingClientRect(), [x, y] = itemCentre([l, j, i]);
  return { x: r.left + x, y: r.top + y };
}

// The bias square or the link nearest the pointer (within a few pixels): [layer, neuron, input
// or null], or null.
function itemAt(x, y) {
  let best = null, bestD = 5;
  view.biases.forEach((layer, l) => layer.forEach(([bx, by], j) => {
    if (x >= bx - 2 && x <= bx + BIAS + 2 && y >= by - 2 && y <= by + BIAS + 2) { best = [l, j, null]; bestD = 0; }
  }));
  if (best) return best;
  view.links.forEach((layer, l) => layer.forEach((neuron, j) => neuron.forEach(([x1, y1, x2, y2], i) => {
    const dx = x2 - x1, dy = y2 - y1, t = Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy || 1)));
    const d = Math.hypot(x - (x1 + t * dx), y - (y1 + t * dy));
    if (d < bestD) { bestD = d; best = [l, j, i]; }
  })));
  return best;
}

function pointerItem(ev) {
  const r = $("net-links").getBoundingClientRect();
  return view.frame && view.links ? itemAt(ev.clientX - r.left, ev.clientY - r.top) : null;
}

function onLinkHover(ev) {
  const item = pointerItem(ev);
  if (sameItem(item, view.hoverItem) || (!item && !view.hoverItem)) return;
  view.hoverItem = item;
  $("net-links").style.cursor = item ? "pointer" : "default";
  syncRead();
}

// The links by keyboard: Up and Down go through a neuron's inputs and then its bias (and on to
// the next neuron), Left and Right to the neuron above or below, Page Up and Page Down to the
// layer before or after; Enter sets the one chosen.
function onLinkKey(ev) {
  const sizes = view.meta.sizes, layers = sizes.length - 1;
  let [l, j, i] = view.focusItem || [0, 0, 0];
  const slot = (k) => (k === sizes[l] ? null : k); // past the last input: the bias
  let k = i == null ? sizes[l] : i;
  if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    k += ev.key === "ArrowDown" ? 1 : -1;
    if (k > sizes[l]) { k = 0; j = (j + 1) % sizes[l + 1]; }
    if (k < 0) { j = (j - 1 + sizes[l + 1]) % sizes[l + 1]; k = sizes[l]; }
  } else if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
    j = (j + (ev.key === "ArrowRight" ? 1 : sizes[l + 1] - 1)) % sizes[l + 1];
  } else if (ev.key === "PageDown" || ev.key === "PageUp") {
    l = (l + (ev.key === "PageDown" ? 1 : layers - 1)) % layers;
    j = Math.min(j, sizes[l + 1] - 1);
    k = Math.min(k, sizes[l]);
  } else if (ev.key === "Enter" || ev.key === " ") {
    ev.preventDefault();
    if (view.focusItem) openEditor(view.focusItem, true);
    return;
  } else {
    return;
  }
  ev.preventDefault();
  i = slot(k);
  view.focusItem = [l, j, i];
  syncRead();
}

function onLinkFocus() {
  if (!view.focusItem) view.focusItem = [0, 0, 0];
  syncRead();
}

// Click a link or a bias: an editor for it, beside it.
function onLinkClick(ev) {
  const item = pointerItem(ev);
  if (item) openEditor(item, false);
}

function openEditor(item, fromKeyboard) {
  view.editing = item;
  view.editFromKeyboard = fromKeyboard;
  const form = $("weight-form");
  $("weight-label").textContent = itemName(item);
  $("weight-value").value = "";
  form.hidden = false;
  placeEditor();
  showError("weight-error", "");
  $("weight-value").focus();
  view.editFill = true; // the exact value goes in the box when Python sends it
  syncRead();
  if (view.read) setRead(view.read);
}

// The editor beside the parameter it edits, inside the network's panel.
function placeEditor() {
  const form = $("weight-form");
  if (form.hidden || !view.editing) return;
  const [x, y] = itemCentre(view.editing);
  form.style.left = `${Math.max(0, Math.min(x - 40, view.net.W - form.offsetWidth))}px`;
  form.style.top = `${y + 8}px`;
}

function closeWeight() {
  const wasKeyboard = view.editing && view.editFromKeyboard;
  $("weight-form").hidden = true;
  showError("weight-error", "");
  view.editing = null;
  if (wasKeyboard) $("net-links").focus(); // back where the keyboard was
  if (view.links) syncRead();
}

async function setWeight(ev) {
  ev.preventDefault();
  const [layer, neuron, input] = view.editing;
  let value;
  try {
    value = parseNumber($("weight-value").value, input == null ? "a bias" : "a weight");
  } catch (err) {
    showError("weight-error", err.message);
    return;
  }
  try {
    if (input == null) await post("bias", { layer, neuron, value });
    else await post("weight", { layer, neuron, input, value });
    closeWeight();
  } catch (err) {
    showError("weight-error", err.message);
  }
}

// ------------------------------------------------------------------ the chosen point's graph

// The graph at its natural size (11 px text), or a little smaller when that makes it fit the
// panel (the loss, at its right end, then in view at 1280 wide); never below 85% (9 px text): a
// wider graph, and any on a phone, scrolls in its panel instead.
const GRAPH_MIN_SCALE = 0.85;

function fitGraph() {
  if (!view.graphSize) return;
  const svg = $("graph"), [W, H] = view.graphSize;
  const room = svg.parentElement.clientWidth;
  const fit = room > 0 ? room / W : 1;
  const scale = fit >= 1 || fit < GRAPH_MIN_SCALE ? 1 : fit;
  svg.setAttribute("width", Math.floor(W * scale));
  svg.setAttribute("height", Math.floor(H * scale));
}

function buildGraph(graph) {
  const svg = $("graph"), ns = "http://www.w3.org/2000/svg";
  svg.textContent = "";
  const [w, h] = graph.box, pad = 6;
  svg.setAttribute("viewBox", `${-pad} ${-pad} ${graph.width + 2 * pad} ${graph.height + 2 * pad}`);
  view.graphSize = [graph.width + 2 * pad, graph.height + 2 * pad];
  fitGraph();
  const edges = document.createElementNS(ns, "g");
  edges.setAttribute("class", "edges");
  svg.append(edges);
  graph.nodes.forEach((node, i) => node.children.forEach((c) => {
    const [x1, y1] = graph.pos[c], [x2, y2] = graph.pos[i];
    const p = document.createElementNS(ns, "path");
    const mx = (x1 + w + x2) / 2;
    p.setAttribute("d", `M${x1 + w},${y1 + h / 2} C${mx},${y1 + h / 2} ${mx},${y2 + h / 2} ${x2},${y2 + h / 2}`);
    edges.append(p);
  }));
  view.gnodes = graph.nodes.map((node, i) => {
    const [x, y] = graph.pos[i];
    const g = document.createElementNS(ns, "g");
    g.setAttribute("class", `gnode${node.label === "loss" ? " loss" : ""}${node.op ? "" : " leaf"}`);
    g.setAttribute("transform", `translate(${x},${y})`);
    g.dataset.label = node.label;
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("width", w); r.setAttribute("height", h); r.setAttribute("rx", 5);
    const t = (cls, ty, text) => {
      const e = document.createElementNS(ns, "text");
      e.setAttribute("x", 6); e.setAttribute("y", ty); e.setAttribute("class", cls);
      e.textContent = text;
      g.append(e);
      return e;
    };
    g.append(r);
    t("gname", 13, `${node.label || ""}${node.op ? (node.label ? "  " : "") + node.op : ""}`);
    const d = t("gdata", 27, "data");
    const gr = t("ggrad", 41, "grad");
    svg.append(g);
    return { d, gr };
  });
  const p = view.meta.points[view.meta.pick];
  // the last number is the point's class, or on a regression set its target
  const y = p && (view.meta.classes ? `class ${p[p.length - 1]}` : `target ${fmt(p[p.length - 1])}`);
  $("graph-point").textContent = p ? `(point ${view.meta.pick}: x = ${p.slice(0, -1).map(fmt).join(", ")}, ${y})` : "";
}

function drawGraphNumbers() {
  const f = view.frame;
  if (!f || !view.gnodes || !f.graph) return;
  // null: NaN; none at all: the forward pass failed (diverged weights, the note says so)
  const shown = (x) => x === undefined ? "–" : x == null ? "nan" : fmt(x);
  view.gnodes.forEach((n, i) => {
    n.d.textContent = `data ${shown(f.graph.data[i])}`;
    n.gr.textContent = `grad ${shown(f.graph.grad[i])}`;
  });
  $("graph-note").textContent = f.graph.note || "";
  $("graph-note").hidden = !f.graph.note;
}

// ------------------------------------------------------------------ downloads

function download(blob, name) {
  const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: name });
  document.body.append(a); // the document's own body: a download link needs to be in it
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

async function downloadModel() {
  const model = await post("model");
  download(new Blob([JSON.stringify(model, null, 1)], { type: "application/json" }), "micrograd-model.json");
}

function downloadPicture() {
  const src = $("plot"), c = document.createElement("canvas");
  c.width = src.width; c.height = src.height + 28;
  const ctx = c.getContext("2d");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(src, 0, 0);
  ctx.fillStyle = "#1d2430"; ctx.font = "13px sans-serif";
  const s = view.meta.settings;
  ctx.fillText(`${s.dataset}, MLP ${view.meta.sizes.join("-")} ${s.activation}, ${$("step-count").textContent}, ${$("loss-text").textContent}, ${$("acc-text").textContent}`, 6, src.height + 19);
  c.toBlob((blob) => download(blob, "micrograd-playground.png"), "image/png");
}

// ------------------------------------------------------------------ wiring

async function main() {
  view.options = await transport.call("train", "options", {});
  const o = view.options;
  fillSelect("dataset", o.datasets.map(([k, text]) => [k, text]));
  fillSelect("activation", o.activations.map((k) => [k, k]));
  fillSelect("loss", o.losses.map(([k, text]) => [k, text]));
  fillSelect("optimizer", o.optimizers);
  for (const [key, label] of o.features) { // the network's inputs, as toggles
    const l = document.createElement("label");
    l.className = "feature";
    const box = Object.assign(document.createElement("input"), { type: "checkbox", value: key });
    box.addEventListener("change", () => {
      const on = [...root.querySelectorAll("#feature-picker input")].filter((b) => b.checked);
      if (!on.length) { box.checked = true; return; } // at least one input
      $("features").value = on.map((b) => b.value).join(",");
      configure(controlsToSettings());
    });
    l.append(box, ` ${label}`);
    $("feature-picker").append(l);
  }
  const control = (action) => post("control", { action }).catch(showIn("train-error"));
  $("play").onclick = () => control("play");
  $("pause").onclick = () => control("pause");
  $("step").onclick = () => control("step");
  $("reset").onclick = () => control("reset");
  $("new-weights").onclick = () => control("new_weights");
  $("clear-points").onclick = () => post("points", { added: [] }).catch(showIn("train-error"));
  $("new-data").onclick = () => { // another random draw of the same data set
    const s = controlsToSettings();
    s.data_seed = Math.floor(Math.random() * 2147483647);
    configure(s);
  };
  $("discretize").addEventListener("change", () => { writeUrl(); drawPlot(); drawNet(); });
  $("show-test").addEventListener("change", () => { writeUrl(); drawPlot(); });
  $("download-model").onclick = () => downloadModel().catch(showIn("train-error"));
  $("download-picture").onclick = downloadPicture;
  $("plot").addEventListener("click", onPlotClick);
  $("plot").addEventListener("keydown", onPlotKey);
  $("plot").addEventListener("focus", drawPlot);
  $("plot").addEventListener("blur", drawPlot);
  $("hidden").addEventListener("input", fitHidden);
  const links = $("net-links");
  links.addEventListener("mousemove", onLinkHover);
  links.addEventListener("mouseleave", () => { view.hoverItem = null; syncRead(); });
  links.addEventListener("click", onLinkClick);
  links.addEventListener("keydown", onLinkKey);
  links.addEventListener("focus", onLinkFocus);
  links.addEventListener("blur", () => syncRead());
  $("show-grads").addEventListener("change", () => {
    writeUrl();
    postView({ grads: $("show-grads").checked });
    drawNet();
  });
  $("weight-form").addEventListener("submit", setWeight);
  $("weight-close").addEventListener("click", closeWeight);
  $("weight-value").addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeWeight(); });
  window.addEventListener("resize", onResize);
  $("speed").addEventListener("change", () => {
    post("control", { action: "speed", value: $("speed").value }).then(writeUrl).catch(showIn("train-error"));
  });
  $("pick").addEventListener("change", () => choose(Number($("pick").value)));
  $("add-layer").onclick = () => {
    const s = controlsToSettings();
    s.hidden = view.meta.settings.hidden.concat([4]);
    configure(s);
  };
  $("remove-layer").onclick = () => {
    const s = controlsToSettings();
    s.hidden = view.meta.settings.hidden.slice(0, -1);
    configure(s);
  };
  for (const k of FIELDS) {
    $(k).addEventListener("change", () => {
      const s = controlsToSettings();
      if (k === "dataset") { // a data set of its own: its own points, and a loss that fits it
        s.added = [];
        if (s.dataset === "lecture") s.features = ["x1", "x2"]; // 3-D points go in as they are
        const fitting = o.fits[s.dataset]; // the losses it takes (Python's rule, train_settings.fits)
        if (!fitting.includes(s.loss)) s.loss = fitting[0];
      }
      configure(s);
    });
  }
  $("explorer-link").hidden = !opts.page; // in a notebook, explore() a graph instead
  $("open-explorer").addEventListener("click", openExplorer);
  if (opts.start === "current") { // a notebook's train(...): the run Python already has
    await post("state");
  } else {
    const fromUrl = settingsFromUrl();
    try {
      await post("config", Object.assign({}, fromUrl));
    } catch (e) { // a bad link: say so, and start from the defaults
      await post("config", {});
      showError("train-error", `The link's settings were refused (${e.message}); using the defaults.`);
    }
    if ($("speed").value !== "max") await post("control", { action: "speed", value: $("speed").value });
    const p = view.urlPick;
    if (p && p !== view.meta.pick && Number.isInteger(p) && p > 0 && p < view.meta.points.length) await post("pick", { index: p });
  }
  await postView({ grads: $("show-grads").checked }); // what this page draws
  // The chosen point's graph is computed for the frames only while it is in sight.
  if (typeof IntersectionObserver !== "undefined") {
    new IntersectionObserver((entries) => {
      const seen = entries[entries.length - 1].isIntersecting;
      if (seen !== view.graphSeen) {
        view.graphSeen = seen;
        postView({ graph: seen });
      }
    }).observe($("graph-panel"));
  }
  connect();
  host.dataset.ready = "1";
}

let resizing = null;
function onResize() { // the network picture is drawn to the panel's width
  clearTimeout(resizing);
  resizing = setTimeout(() => { if (view.meta) { buildNet(view.meta.sizes); drawNet(); fitGraph(); } }, 100);
}

// "Step through this point's graph in the explorer": the chosen point (network and all) goes
// with this tab to the explorer page, which builds its graph; the same on every transport.
async function openExplorer(ev) {
  ev.preventDefault();
  const href = ev.currentTarget.href;
  try {
    const point = await transport.call("train", "point", {});
    sessionStorage.setItem(POINT_KEY, JSON.stringify(point));
    location.href = href;
  } catch (err) {
    showError("train-error", err.message);
  }
}

main().catch((e) => showError("train-error", e.message));
return { handle, stop() { window.removeEventListener("resize", onResize); if (view.stopFrames) view.stopFrames(); } };
}
