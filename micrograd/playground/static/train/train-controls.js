// The Train view's controls: the settings (in the URL on a page, in the boxes and menus), what
// changes with them (the data's and the network's controls, the class picker, the layer buttons),
// and the wiring of every control's events; `start` begins the view.

import { POINT_KEY, runButtons, setDisabled } from "../common.js";
import { downloadModel, downloadPicture } from "./train-downloads.js";
import { COLORS } from "./train-heat.js";
import { readQuery, writeQuery } from "../url-state.js";

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function controlsPart(ui) {
  const { root, $, view, opts, transport, host, showError, showIn } = ui;
  // The settings a box holds, and those that are lists ("8,8" in the URL and the box): Python's
  // schema (train_settings.schema, sent with the options), never a list of the page's own
  let FIELDS = [], LISTS = [];
  runButtons($("run-buttons"), (action) => ui.post("control", { action }).catch(showIn("train-error")));

  // ---- settings <-> URL and controls

  function settingsFromUrl() {
    const q = readQuery(opts.page);
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

  // A link with a refused setting keeps its other settings: each is tried on top of those kept
  // so far (twice round, as a loss may fit only the data set named after it), and every refused
  // one is named; the defaults stand in for those alone. Gives [the settings kept, the line].
  async function keepTheRest(fromUrl, firstReason) {
    const kept = {};
    let left = Object.keys(fromUrl);
    const reasons = new Map();
    for (let round = 0; round < 2 && left.length; round++) {
      const still = [];
      for (const k of left) {
        try {
          await ui.post("config", Object.assign({}, kept, { [k]: fromUrl[k] }));
          kept[k] = fromUrl[k];
        } catch (err) {
          reasons.set(k, err.message);
          still.push(k);
        }
      }
      left = still;
    }
    const why = left.length ? left.map((k) => reasons.get(k)).join("; ") : firstReason;
    const which = left.length ? left.join(", ") : "its settings together";
    return [kept, `The link's settings were refused (${why}); the defaults stand in for ${which}.`];
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
    // a refused link stays in the address, to be mended, until the learner changes a setting
    if (!view.refused) writeQuery(opts.page, q);
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

  // ---- meta: what changes with settings

  function setMeta(meta) {
    const old = view.meta;
    view.meta = meta;
    if (view.refused && !view.refused.trying) { // a refused link: said until the settings change
      const now = JSON.stringify(meta.settings);
      if (view.refused.settings === null) view.refused.settings = now; // the defaults, in their place
      else if (view.refused.settings !== now) {
        view.refused = null;
        showError("train-error", "");
      }
    }
    if (!(view.configuring > 1)) settingsToControls(meta.settings); // a later change is on its way
    view.pick = meta.pick;
    $("pick").value = meta.pick;
    $("pick").max = meta.points.length - 1;
    $("engine").textContent = `engine: ${meta.engine_title}`;
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
    // A fixed set (the lecture's) is its own points, always, without noise: its boxes say so (the
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
      ui.buildNet(meta.sizes); // closes the editor of a link of the previous network, and its error
      ui.buildGraph(meta.graph);
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

  // The data set `key` as the view's options declare it (Python's micrograd.data.DATASETS):
  // [name, title, classes, dimensions, sized]
  function dataset(key) {
    return view.options.datasets.find(([k]) => k === key);
  }

  function fixedData(meta) {
    return !dataset(meta.settings.dataset)[4];
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
      minus.disabled = n <= 1;
      plus.disabled = n >= view.options.limits.neurons;
      minus.onclick = () => changeLayer(i, -1);
      plus.onclick = () => changeLayer(i, +1);
      group.append(minus, text, plus);
      box.append(group);
    });
    // what cannot act at a limit is disabled: a layer's "+" at the most neurons, its "−" at one
    // (the keyboard's focus then goes on to the next control: common.js's setDisabled)
    const limits = view.options.limits;
    setDisabled(root, $("add-layer"), hidden.length >= limits.layers, $("remove-layer"));
    setDisabled(root, $("remove-layer"), hidden.length === 0, $("add-layer"));
    if (focused) {
      const again = [...box.querySelectorAll("button")].find((b) => b.getAttribute("aria-label") === focused);
      // the same button, or (at a limit, now disabled) the other of its layer
      const usable = again && (again.disabled ? again.parentElement.querySelector("button:not(:disabled)") : again);
      (usable || $("add-layer")).focus();
    }
  }

  function changeLayer(i, delta) {
    const s = controlsToSettings();
    s.hidden = view.meta.settings.hidden.slice();
    s.hidden[i] += delta;
    ui.configure(s);
  }

  // ---- wiring: the controls' events; the view's start

  async function start() {
    view.options = await transport.call("train", "options", {});
    const o = view.options;
    FIELDS = o.settings.filter((f) => f.kind !== "points").map((f) => f.name);
    LISTS = o.settings.filter((f) => f.kind === "list").map((f) => f.name);
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
        ui.configure(controlsToSettings());
      });
      l.append(box, ` ${label}`);
      $("feature-picker").append(l);
    }
    $("clear-points").onclick = () => ui.post("points", { added: [] }).catch(showIn("train-error"));
    $("new-data").onclick = () => { // another random draw of the same data set
      const s = controlsToSettings();
      s.data_seed = Math.floor(Math.random() * 2147483647);
      ui.configure(s);
    };
    $("discretize").addEventListener("change", () => { writeUrl(); ui.drawPlot(); ui.drawNet(); });
    $("show-test").addEventListener("change", () => { writeUrl(); ui.drawPlot(); });
    $("download-model").onclick = () => downloadModel(ui).catch(showIn("train-error"));
    $("download-picture").onclick = () => downloadPicture(ui);
    $("plot").addEventListener("click", ui.onPlotClick);
    $("plot").addEventListener("keydown", ui.onPlotKey);
    $("plot").addEventListener("focus", ui.drawPlot);
    $("plot").addEventListener("blur", ui.drawPlot);
    $("hidden").addEventListener("input", fitHidden);
    const links = $("net-links");
    links.addEventListener("mousemove", ui.onLinkHover);
    links.addEventListener("mouseleave", () => { view.hoverItem = null; ui.syncRead(); });
    links.addEventListener("click", ui.onLinkClick);
    links.addEventListener("keydown", ui.onLinkKey);
    links.addEventListener("focus", ui.onLinkFocus);
    links.addEventListener("blur", () => ui.syncRead());
    $("show-grads").addEventListener("change", () => {
      writeUrl();
      ui.postView({ grads: $("show-grads").checked });
      ui.drawNet();
    });
    $("weight-form").addEventListener("submit", ui.setWeight);
    $("weight-close").addEventListener("click", ui.closeWeight);
    $("weight-value").addEventListener("keydown", (ev) => { if (ev.key === "Escape") ui.closeWeight(); });
    window.addEventListener("resize", onResize);
    $("speed").addEventListener("change", () => {
      ui.post("control", { action: "speed", value: $("speed").value }).then(writeUrl).catch(showIn("train-error"));
    });
    $("pick").addEventListener("change", () => ui.choose(Number($("pick").value)));
    $("add-layer").onclick = () => {
      const s = controlsToSettings();
      s.hidden = view.meta.settings.hidden.concat([4]);
      ui.configure(s);
    };
    $("remove-layer").onclick = () => {
      const s = controlsToSettings();
      s.hidden = view.meta.settings.hidden.slice(0, -1);
      ui.configure(s);
    };
    for (const k of FIELDS) {
      $(k).addEventListener("change", () => {
        const s = controlsToSettings();
        if (k === "dataset") { // a data set of its own: its own points, and a loss that fits it
          s.added = [];
          if (dataset(s.dataset)[3] !== 2) s.features = ["x1", "x2"]; // 3-D points go in as they are
          const fitting = o.fits[s.dataset]; // the losses it takes (Python's rule, train_settings.fits)
          if (!fitting.includes(s.loss)) s.loss = fitting[0];
        }
        ui.configure(s);
      });
    }
    $("explorer-link").hidden = !opts.page; // in a notebook, explore() a graph instead
    $("open-explorer").addEventListener("click", openExplorer);
    if (opts.start === "current") { // a notebook's train(...): the run Python already has
      await ui.post("state");
    } else {
      const fromUrl = settingsFromUrl();
      try {
        await ui.post("config", Object.assign({}, fromUrl));
      } catch (e) { // a bad link: keep what it got right, say what was refused (the line stays: setMeta)
        view.refused = { line: `The link's settings were refused (${e.message}).`, trying: true };
        const [kept, line] = await keepTheRest(fromUrl, e.message);
        view.refused = { line, settings: null };
        await ui.post("config", kept);
      }
      if ($("speed").value !== "max") await ui.post("control", { action: "speed", value: $("speed").value });
      const p = view.urlPick;
      if (p && p !== view.meta.pick && Number.isInteger(p) && p > 0 && p < view.meta.points.length) await ui.post("pick", { index: p });
    }
    await ui.postView({ grads: $("show-grads").checked }); // what this page draws
    // The chosen point's graph is computed for the frames only while it is in sight.
    if (typeof IntersectionObserver !== "undefined") {
      new IntersectionObserver((entries) => {
        const seen = entries[entries.length - 1].isIntersecting;
        if (seen !== view.graphSeen) {
          view.graphSeen = seen;
          ui.postView({ graph: seen });
        }
      }).observe($("graph-panel"));
    }
    ui.connect();
    host.dataset.ready = "1";
  }

  let resizing = null;
  function onResize() { // the network picture is drawn to the panel's width
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (view.meta) { ui.buildNet(view.meta.sizes); ui.drawNet(); ui.fitGraph(); } }, 100);
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

  return { settingsToControls, setMeta, chosenClass, start, stop() { window.removeEventListener("resize", onResize); } };
}
