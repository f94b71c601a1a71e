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
//
// The view is made of parts, one concern each, that share `ui` (the root, the view's state, and
// what each part offers the others, by name): train-transport.js (actions and frames),
// train-controls.js (settings, controls, wiring; train-downloads.js, the downloads),
// train-plot.js (the big plot, the curves), train-net.js (the network's picture),
// train-weights.js (reading and setting a link), train-graph.js (the chosen point's graph);
// train-health.js (the Health panel); train-heat.js draws the pictures they show.

import { fmt, showErrorIn, showPlaying } from "../common.js";
import { controlsPart } from "./train-controls.js";
import { graphPart } from "./train-graph.js";
import { healthPart } from "./train-health.js";
import { netPart } from "./train-net.js";
import { plotPart } from "./train-plot.js";
import { transportPart } from "./train-transport.js";
import { weightsPart } from "./train-weights.js";

export function mountTrain(root, transport, opts = {}) {
  const $ = (id) => root.getElementById(id);
  const showError = (id, message) => showErrorIn(root, id, message);
  const showIn = (id) => (err) => showError(id, err.message);
  const host = root.host || document.body; // the element the view lives in

  const view = {
    options: null, meta: null, frame: null, added: [], pick: 0,
    steps: [], losses: [], highs: [], accs: [], tests: [], source: null,
  };
  const ui = { root, transport, opts, $, showError, showIn, host, view, setFrame };
  for (const part of [transportPart, controlsPart, plotPart, netPart, weightsPart, graphPart, healthPart]) {
    const offered = part(ui);
    for (const name of Object.keys(offered)) {
      if (name in ui) throw new Error(`train view: two parts offer ${name}`);
    }
    Object.assign(ui, offered);
  }
  const handle = { // for tests and the curious: the view of the run (window.trainView on a page)
    history: () => view.steps.map((s, i) => [s, view.losses[i], view.highs[i], view.accs[i]]),
    tests: () => view.tests, // [step, test loss, test accuracy] per frame, when points are held out
    meta: () => view.meta,
    frame: () => view.frame,
    drawn: () => view.drawn, // frames drawn so far (at most one per screen refresh)
    drawMs: () => view.drawMs || 0, // milliseconds spent drawing them, in all (a benchmark reads it)
    regions: () => ui.regionImage(view.frame.grid, view.meta.grid), // the plot's region picture
    where: (l, j, i) => ui.linkEnds(l, j, i), // a link's middle (a bias's square: i null), in page px
    call: (action, body) => ui.post(action, body), // an action, as the page's controls send them
  };


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
    if (f.read) ui.setRead(f.read);
    $("run-state").textContent = f.playing ? "playing" : "paused";
    showPlaying(root, $("play"), $("pause"), f.playing, f.error);
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
    ui.drawPlot();
    ui.drawCurves();
    ui.drawNet();
    ui.drawGraphNumbers();
    ui.drawHealth();
    view.drawMs = (view.drawMs || 0) + performance.now() - start;
    view.drawn = (view.drawn || 0) + 1;
    $("step-count").dataset.drawn = view.drawn; // frames drawn, where a test or benchmark reads it
  }


  ui.start().catch((e) => showError("train-error", e.message));
  // stopped (the widget lost its kernel, or is gone): no frame comes any more, so it does not
  // read "playing"
  return { handle, stop() { ui.stop(); if (view.stopFrames) view.stopFrames(); $("run-state").textContent = "stopped"; } };
}
