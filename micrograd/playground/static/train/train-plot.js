// The Train view's output: the big plot (the decision regions, or the neuron hovered, and the
// points, which a click or the keyboard adds or chooses) and the loss and accuracy curves.

import { fmt } from "../common.js";
import { COLORS, HEAT_STRENGTH, REGION_STRENGTH, heatImage, makeRegionImage, mix, signColor, setLegend, tick } from "./train-heat.js";

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function plotPart(ui) {
  const { root, $, view, showIn } = ui;

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


  // The big plot's legend: what its colours mean, with their scale.
  function plotLegend(f, meta) {
    const shown = f && f.shown && f.shown.neuron === view.shownNeuron ? f.shown : null;
    if (view.shownNeuron != null && f && f.heat_scale) {
      const m = shown ? shown.scale : f.heat_scale[view.shownNeuron];
      setLegend($("plot-legend"), `neuron ${view.shownName}: its output h over the plane`,
        (t) => signColor(2 * t - 1, HEAT_STRENGTH), [[0, tick(-m)], [0.5, "0"], [1, tick(m, true)]]);
    } else if (meta.output_kind === "value") {
      const r = meta.target_range;
      setLegend($("plot-legend"), "the output s over the plane, and each point's target y",
        (t) => signColor(2 * t - 1, HEAT_STRENGTH), [-1, -0.5, 0, 0.5, 1].map((u) => [(u + 1) / 2, tick(u * r, true)]));
    } else if (meta.output_kind === "per class") {
      const n = meta.classes;
      setLegend($("plot-legend"), `the class argmax z, stronger as its p = softmax(z) goes from 1/${n} to 1`,
        (t) => { const k = Math.min(n - 1, Math.floor(n * t)), p = 1 / n + (n * t - k) * (1 - 1 / n); return mix(COLORS[k], 0.25 + 0.45 * p); },
        Array.from({ length: n }, (_, k) => [(k + 0.5) / n, `class ${k}`]));
    } else if ($("discretize").checked) {
      setLegend($("plot-legend"), "the class: the sign of the output s",
        (t) => signColor(t < 0.5 ? -1 : 1, 0.5), [[0.25, "−1 (s < 0)"], [0.75, "+1 (s > 0)"]]);
    } else { // tanh(s): every s has a shade, and the boundary s = 0 is white
      setLegend($("plot-legend"), "the output s (shaded by tanh s): class +1 where s > 0",
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
      const added = meta.settings.added.concat([[+x.toFixed(3), +y.toFixed(3), ui.chosenClass(ev.shiftKey)]]);
      ui.post("points", { added }).catch(showIn("train-error"));
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
    const added = view.meta.settings.added.concat([[+x.toFixed(3), +y.toFixed(3), ui.chosenClass(ev.shiftKey)]]);
    ui.post("points", { added }).catch(showIn("train-error"));
  }

  function choose(i) {
    view.pick = i; // at once, so a second key press moves on from here (the answer confirms it)
    drawPlot();
    ui.post("pick", { index: i }).catch(showIn("train-error"));
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


  return { regionImage, drawPlot, drawCurves, choose, onPlotKey, onPlotClick };
}
