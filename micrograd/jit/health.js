// micrograd.train.health's statistics of one training step, in JavaScript, over the step's own
// arrays: the Train view's JavaScript step (playground/training/train_step.js) and the GPT view's
// (jit/gpt_step.js) hand them back for a step the Health panel reads, so that no second pass runs
// in Python (the site's Python, Pyodide, has no numpy: the same statistics in pure Python over a
// big net's batch cost a hundred of its steps). Each function is health.py's of the same name,
// with the same arithmetic, so the numbers are health.py's to rounding (the sums here are
// Neumaier's compensated sums, health.py's are math.fsum's: within an ulp or so of each other;
// the histograms' counts are the same to the count; tests/test_playground_health_js.py holds
// them to health.Monitor's to 1e-12). Python builds health.py's LayerHealth and WeightHealth from
// what `stepHealth` returns (health.Monitor.given_stats).

// eslint-disable-next-line no-unused-vars -- train_step.js and gpt_step.js call it
function stepHealth(arg) {
  "use strict";
  const { layers, matrices, before, after, grads, alpha, l1, saturated, bins } = arg;
  // (JSON has no NaN or Infinity: such a number goes as its text, which Python's float reads)
  const num = (x) => (Number.isFinite(x) ? x : String(x));

  // the sum of a[0 .. n-1], compensated (Neumaier): the rounding errors of the running sum kept
  // apart and added at the end
  function sum(a) {
    let s = 0, c = 0;
    for (let i = 0; i < a.length; i++) {
      const x = a[i], t = s + x;
      c += Math.abs(s) >= Math.abs(x) ? (s - t) + x : (x - t) + s;
      s = t;
    }
    return s + c;
  }
  const mean = (a) => (a.length ? sum(a) / a.length : NaN);
  function std(a) { // the population std (numpy's, ddof=0)
    if (!a.length) return NaN;
    const m = mean(a), d = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) d[i] = (a[i] - m) * (a[i] - m);
    return Math.sqrt(sum(d) / a.length);
  }
  const norm = (a) => { // sqrt(Σ x²)
    const d = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) d[i] = a[i] * a[i];
    return Math.sqrt(sum(d));
  };

  // np.histogram(a, bins): health.py's `histogram`, its edges by the same arithmetic; the range
  // (lo, hi) and the counts, or counts null when a value is not finite (no range to bin)
  function histogram(a) {
    let lo = a.length ? Infinity : 0, hi = a.length ? -Infinity : 1;
    for (let i = 0; i < a.length; i++) {
      const x = a[i];
      if (!Number.isFinite(x)) return { lo: num(x), hi: num(x), counts: null };
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (lo === hi) { lo -= 0.5; hi += 0.5; }
    const step = (hi - lo) / bins, scale = bins / (hi - lo);
    const edges = new Float64Array(bins + 1);
    for (let i = 0; i < bins; i++) edges[i] = lo + i * step;
    edges[bins] = hi;
    const counts = new Array(bins + 1).fill(0);
    for (let k = 0; k < a.length; k++) {
      const x = a[k];
      let i = Math.trunc((x - lo) * scale);
      // the rounding of (x - lo) * scale may land one bin off: the edges decide, as numpy's do
      if (x < edges[i]) i -= 1;
      else if (i < bins && x >= edges[i + 1]) i += 1;
      counts[i] += 1;
    }
    counts[bins - 1] += counts.pop(); // the last bin is closed: [edge, hi]
    return { lo, hi, counts };
  }

  // the derivative of an activation from its output alone (health.py's _SLOPE_FROM_OUTPUT)
  const SLOPES = {
    relu: (t) => (t > 0 ? 1 : 0),
    tanh: (t) => 1 - t * t,
    sigmoid: (t) => t * (1 - t),
    linear: () => 1,
  };

  // health.py's `stale_share`: the share of a layer's bias grads this step's batch does not
  // explain. V, G: the layer's outputs and their grads, units x samples; bias: its biases' places
  function staleShare(V, G, units, S, bias, activation) {
    const slope = SLOPES[activation];
    if (!slope || !S) return null;
    const left = new Float64Array(units), total = new Float64Array(units), size = new Float64Array(units);
    const terms = new Float64Array(S), abs = new Float64Array(S);
    for (let j = 0; j < units; j++) {
      for (let s = 0; s < S; s++) {
        terms[s] = G[j * S + s] * slope(V[j * S + s]);
        abs[s] = Math.abs(terms[s]);
      }
      const b = before[bias[j]];
      const fresh = sum(terms) + 2 * alpha * b + l1 * ((b > 0) - (b < 0));
      left[j] = grads[bias[j]] - fresh;
      total[j] = grads[bias[j]];
      size[j] = sum(abs); // the terms' size before they cancel
    }
    const n = Math.max(norm(total), norm(size));
    return n ? norm(left) / n : 0;
  }

  // health.py's `layer_health`: V, G the layer's outputs and their grads (units x S samples)
  function layerHealth(lay) {
    const { V, G, units, S, activation } = lay;
    if (!V || !V.length) return null; // not read
    const h = {
      mean: num(mean(V)), std: num(std(V)), hist: histogram(V),
      grad_mean: num(mean(G)), grad_std: num(std(G)), grad_hist: histogram(G),
      saturated: null, dead_units: null, stale: null,
    };
    if (activation === "tanh") {
      let n = 0;
      for (let i = 0; i < V.length; i++) n += Math.abs(V[i]) > saturated;
      h.saturated = n / V.length;
    }
    if (activation === "relu") {
      h.dead_units = [];
      for (let j = 0; j < units; j++) {
        let dead = true;
        for (let s = 0; s < S && dead; s++) dead = V[j * S + s] === 0;
        h.dead_units.push(dead);
      }
    }
    if (lay.bias) {
      const stale = staleShare(V, G, units, S, lay.bias, activation);
      h.stale = stale === null ? null : num(stale); // (null: the output does not tell the slope)
    }
    return h;
  }

  // health.py's `weight_health` and the update's std: one matrix, its weights' places
  function weightHealth(places) {
    const n = places.length, d = new Float64Array(n), g = new Float64Array(n), u = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const k = places[i];
      d[i] = before[k];
      g[i] = grads[k];
      u[i] = after[k] - before[k];
    }
    return { data_std: num(std(d)), grad_mean: num(mean(g)), grad_std: num(std(g)),
      grad_hist: histogram(g), update_std: num(std(u)) };
  }

  return { layers: layers.map(layerHealth), weights: matrices.map(weightHealth) };
}
