// The Train view's step and pictures in the browser, around a program micrograd.jit's JavaScript
// target writes (train_js.py's `step_source` puts the program, the MLP's `layers` and
// micrograd/jit/runtime.js's `powInt` before this). Every method takes and returns JSON-able
// values (the site's worker and Node.js pass JSON text, never objects).
//
// A step is what micrograd.train.Step and an optimizer of micrograd.optim do in Python, in the
// same order, so the numbers agree to rounding: the batch's per-sample terms (program.forward),
// their mean, backward with the seed 1/B, alpha·Σp² and l1·Σ|p| added, the grads zeroed (or kept:
// the lecture's bug), the accuracy on the training points before the update, then the update.
// A step the Health panel reads (`read`) is that step, and health.js's statistics of it (each
// layer's outputs and their grads are rows the program keeps, after the model's outputs).

/* global powInt, stepHealth */
// eslint-disable-next-line no-unused-vars -- the caller (train_js.step_source) returns it
function makeStep(program, layers, SIZES) {
  "use strict";
  const nin = SIZES[0], nout = SIZES[SIZES.length - 1];
  const nParams = SIZES.slice(1).reduce((n, w, i) => n + w * (SIZES[i] + 1), 0);
  const P = new Float64Array(nParams), GR = new Float64Array(nParams);
  const C = program.nCaptured, K = program.consts.length;
  const S = new Float64Array(C + K), SG = new Float64Array(C + K);
  S.set(program.consts, C);
  let cfg = {}, CAP = new Int32Array(0), DATA = null, INPUTS = null, N = 0, width = 0;
  let LABELS = null, TRAIN = null, GRIDX = null, HEATX = null;
  let buf = null, m = null, v = null, t = 0; // the optimizer's state
  let HEALTH = null; // what the Health panel reads (health.Monitor.layout): set once
  const arrays = new Map(); // batch size -> [V, G]

  function rows(B) {
    let a = arrays.get(B);
    if (!a) {
      if (arrays.size >= 2) arrays.clear();
      a = [new Float64Array(program.nRows * B), new Float64Array(program.nRows * B)];
      arrays.set(B, a);
    }
    return a;
  }

  // The program over the samples idx: V's input rows from DATA; the per-sample terms.
  function forward(idx) {
    const B = idx.length, [V, G] = rows(B);
    for (let r = 0; r < width; r++) {
      const o = r * B;
      for (let b = 0; b < B; b++) V[o + b] = DATA[idx[b] * width + r];
    }
    for (let c = 0; c < C; c++) S[c] = P[CAP[c]];
    program.forward(V, S, B);
    return [V, G, B];
  }

  // numpy's mean: its pairwise sum (the program's $psum), divided
  const meanOut = (V, B) => program.psum(V, program.outRow * B, B) / B;

  function predictions(X, n) {
    const out = layers(P, X, n);
    return out[out.length - 1];
  }

  function accuracy(idx) {
    if (cfg.regression) return null;
    const X = new Float64Array(idx.length * nin);
    for (let j = 0; j < idx.length; j++) X.set(INPUTS.subarray(idx[j] * nin, idx[j] * nin + nin), j * nin);
    const out = predictions(X, idx.length);
    let hits = 0;
    for (let j = 0; j < idx.length; j++) hits += predict(out, j) === LABELS[idx[j]];
    return hits / idx.length;
  }

  function predict(out, j) {
    if (nout === 1) return out[j] > 0 ? 1 : 0;
    let best = 0;
    for (let k = 1; k < nout; k++) if (out[j * nout + k] > out[j * nout + best]) best = k;
    return best;
  }

  // The accuracy on the training points from the program's own forward pass over them (its
  // rows of the model's outputs, program.keptRows' first): no second pass through the network.
  function accuracyOf(V, B) {
    if (cfg.regression) return null;
    const rows = program.keptRows, out = new Float64Array(B * nout);
    for (let k = 0; k < nout; k++) for (let j = 0; j < B; j++) out[j * nout + k] = V[rows[k] * B + j];
    let hits = 0;
    for (let j = 0; j < B; j++) hits += predict(out, j) === LABELS[TRAIN[j]];
    return hits / B;
  }

  // One training step on the samples idx: returns [loss, accuracy before the update].
  function step(idx) {
    const [V, G, B] = forward(idx);
    // (the batch is every training point: its accuracy is the forward pass's)
    const acc = idx === TRAIN && program.keptRows.length >= nout ? accuracyOf(V, B) : accuracy(TRAIN);
    let loss = meanOut(V, B);
    G.fill(0);
    G.fill(1 / B, program.outRow * B, program.outRow * B + B);
    SG.fill(0);
    program.backward(V, G, S, SG, B);
    const alpha = cfg.alpha, l1 = cfg.l1;
    if (alpha) { // alpha * Value.dot(ps, ps): the products added in order, from 0
      let d = 0;
      for (let i = 0; i < nParams; i++) d += P[i] * P[i];
      loss += alpha * d;
    }
    if (l1) {
      let s = 0;
      for (let i = 0; i < nParams; i++) s += Math.abs(P[i]);
      loss += l1 * s;
    }
    if (cfg.zeroGrad) GR.fill(0);
    // each parameter's grad, added in the order backward() reaches it: |p|, p·p (as w, as x), fn
    const jit = new Float64Array(nParams);
    for (let c = 0; c < C; c++) jit[CAP[c]] += SG[c];
    for (let i = 0; i < nParams; i++) {
      let g = GR[i];
      const p = P[i];
      if (l1) g += (p > 0 ? 1 : p < 0 ? -1 : 0) * l1;
      if (alpha) { g += p * alpha; g += p * alpha; }
      GR[i] = g + jit[i];
    }
    update();
    return [loss, acc];
  }

  // micrograd.optim's SGD (momentum, PyTorch's rule) and Adam, line for line.
  function update() {
    const lr = cfg.lr;
    if (cfg.optimizer === "adam") {
      t += 1;
      const b1 = 0.9, b2 = 0.999, eps = 1e-8;
      const stepSize = lr / (1 - powInt(b1, t)), bc2 = Math.sqrt(1 - powInt(b2, t));
      for (let i = 0; i < nParams; i++) {
        const g = GR[i];
        m[i] += (g - m[i]) * (1 - b1);
        v[i] = v[i] * b2 + (1 - b2) * (g * g);
        P[i] -= stepSize * (m[i] / (Math.sqrt(v[i]) / bc2 + eps));
      }
      return;
    }
    const mu = cfg.momentum, first = mu && buf === null;
    if (first) buf = new Float64Array(nParams);
    for (let i = 0; i < nParams; i++) {
      let g = GR[i];
      if (mu) { // the first step's buffer is the gradient itself
        g = first ? g : mu * buf[i] + (1 - 0) * g;
        buf[i] = g;
      }
      P[i] -= lr * g;
    }
  }

  // The Train view's pictures: train_frames.grid_views, from layers() over the grids.
  const b64 = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return btoa(s);
  };
  const rint = (x) => { const r = Math.round(x); return (r - x === 0.5 && r % 2 !== 0) ? r - 1 : r; };
  const byte = (v) => { const q = rint((v + 1) * 127.5); return q !== q ? 0 : q < 0 ? 0 : q > 255 ? 255 : q; };
  const short = (x) => Number.isFinite(x) ? Number(x.toPrecision(6)) : null;

  function heat(a, n, cols, col) { // column col of an (n x cols) array, scaled to its largest |a|
    let scale = 0;
    for (let p = 0; p < n; p++) { const x = Math.abs(a[p * cols + col]); if (x > scale || x !== x) scale = x; }
    if (!(scale > 0)) scale = 1;
    const out = new Uint8Array(n);
    for (let p = 0; p < n; p++) out[p] = byte(a[p * cols + col] / scale);
    return [b64(out), short(scale)];
  }

  function outputView(out, n, kind, range) {
    const bytes = new Uint8Array(n);
    if (kind === "value") {
      for (let p = 0; p < n; p++) bytes[p] = byte(out[p * nout] / range);
      return { kind: "value", b64: b64(bytes) };
    }
    if (kind === "one") {
      for (let p = 0; p < n; p++) bytes[p] = byte(Math.tanh(out[p]));
      return { kind: "score", b64: b64(bytes) };
    }
    const cls = new Uint8Array(n);
    for (let p = 0; p < n; p++) {
      let top = -Infinity, sum = 0;
      for (let k = 0; k < nout; k++) top = Math.max(top, out[p * nout + k]);
      for (let k = 0; k < nout; k++) sum += Math.exp(out[p * nout + k] - top);
      const c = predict(out, p);
      cls[p] = c;
      bytes[p] = byte(2 * (Math.exp(out[p * nout + c] - top) / sum) - 1);
    }
    return { kind: "classes", cls: b64(cls), b64: b64(bytes) };
  }

  function pictures(arg) {
    const nGrid = GRIDX.length / nin, nHeat = HEATX.length / nin;
    const big = layers(P, GRIDX, nGrid), small = layers(P, HEATX, nHeat);
    const maps = [], scales = [];
    let shown = null, which = arg.shown;
    for (let l = 0; l + 1 < small.length; l++) {
      const w = SIZES[l + 1];
      for (let k = 0; k < w; k++) { const [s, sc] = heat(small[l], nHeat, w, k); maps.push(s); scales.push(sc); }
      if (which !== null && which !== undefined && shown === null) {
        if (which < w) {
          const [s, sc] = heat(big[l], nGrid, w, which);
          shown = { neuron: arg.shown, b64: s, scale: sc };
        } else which -= w;
      }
    }
    return { grid: outputView(big[big.length - 1], nGrid, arg.kind, arg.range), heat: maps,
      heat_scale: scales, shown };
  }

  // Each parameter's link (w / scale) as one byte, and with `grads` each ∂L/∂p on a log scale of
  // `decades` below the largest |∂L/∂p| (returned): train_frames.link_bytes and grad_bytes.
  const clipByte = (v) => byte(v !== v ? 0 : v); // NaN as 0, as Python's bytes have it
  function weights(arg) {
    const links = new Uint8Array(nParams);
    for (let i = 0; i < nParams; i++) links[i] = clipByte(P[i] / arg.scale);
    if (!arg.grads) return { links: b64(links), grads: null, grad_max: null };
    let top = 0;
    for (let i = 0; i < nParams; i++) if (Number.isFinite(GR[i]) && Math.abs(GR[i]) > top) top = Math.abs(GR[i]);
    const gs = new Uint8Array(nParams);
    for (let i = 0; i < nParams; i++) {
      const g = GR[i];
      const t = top > 0 && g !== 0 && Number.isFinite(g) ? Math.max(0, 1 + Math.log10(Math.abs(g) / top) / arg.decades) : 0;
      gs[i] = clipByte(g < 0 ? -t : t);
    }
    return { links: b64(links), grads: b64(gs), grad_max: top };
  }

  function set(arg) {
    if (arg.params) P.set(arg.params);
    if (arg.captured) CAP = Int32Array.from(arg.captured);
    if (arg.data) {
      DATA = Float64Array.from(arg.data); INPUTS = Float64Array.from(arg.inputs);
      LABELS = Int32Array.from(arg.labels); N = arg.labels.length; width = DATA.length / N;
    }
    if (arg.train) TRAIN = Int32Array.from(arg.train);
    if (arg.grid) GRIDX = Float64Array.from(arg.grid);
    if (arg.heat) HEATX = Float64Array.from(arg.heat);
    for (const k of ["optimizer", "lr", "momentum", "alpha", "l1", "zeroGrad", "regression"]) {
      if (k in arg) cfg[k] = arg[k];
    }
    if (arg.health) {
      HEALTH = { ...arg.health, matrices: arg.health.matrices.map((a) => Int32Array.from(a)) };
    }
    if (arg.restart) { buf = null; m = new Float64Array(nParams); v = new Float64Array(nParams); t = 0; GR.fill(0); }
    return null;
  }

  return {
    set,
    // steps while time lasts: {steps, seconds, batches (index lists, or null: `train` each step)}
    train(arg) {
      const until = performance.now() + 1000 * arg.seconds;
      const losses = [], accs = [];
      for (let k = 0; k < arg.steps; k++) {
        const [loss, acc] = step(arg.batches ? arg.batches[k] : TRAIN);
        losses.push(Number.isFinite(loss) ? loss : String(loss));
        accs.push(acc);
        if (!Number.isFinite(loss) || performance.now() >= until) break;
      }
      let sum = 0; // finite exactly when every weight is (or past 1e308: diverged anyway)
      for (let i = 0; i < nParams; i++) sum += P[i];
      return { losses, accs, finite: Number.isFinite(sum) };
    },
    // One step (on the samples `batch`, or every training point) the Health panel reads:
    // `train`'s answer, and health.js's statistics of the step from its own arrays (each
    // layer's outputs over the batch and their grads, the weights before and after the update,
    // their grads), with the L2 and L1 alphas `alpha`, `l1` (health.Monitor's).
    read(arg) {
      const before = Float64Array.from(P);
      const idx = arg.batch ? arg.batch : TRAIN;
      const [loss, acc] = step(idx);
      const B = idx.length, [V, G] = rows(B), kept = program.keptRows;
      let at = nout; // (the model's outputs first)
      const total = HEALTH.layers.reduce((n, lay) => n + lay.units, nout);
      const layers = HEALTH.layers.map((lay) => {
        const units = lay.units;
        if (kept.length !== total) return { units, S: B, activation: lay.activation, V: null };
        const vals = new Float64Array(units * B), grads = new Float64Array(units * B);
        for (let j = 0; j < units; j++) {
          const r = kept[at + j] * B;
          vals.set(V.subarray(r, r + B), j * B);
          grads.set(G.subarray(r, r + B), j * B);
        }
        at += units;
        return { V: vals, G: grads, units, S: B, activation: lay.activation, bias: lay.bias };
      });
      const health = stepHealth({
        layers, matrices: HEALTH.matrices, before, after: P, grads: GR,
        alpha: arg.alpha, l1: arg.l1, saturated: HEALTH.saturated, bins: HEALTH.bins,
      });
      let sum = 0;
      for (let i = 0; i < nParams; i++) sum += P[i];
      return { losses: [Number.isFinite(loss) ? loss : String(loss)], accs: [acc],
        finite: Number.isFinite(sum), health };
    },
    state() { return { params: Array.from(P, (x) => Number.isFinite(x) ? x : String(x)), grads: Array.from(GR, (x) => Number.isFinite(x) ? x : String(x)) }; },
    metrics(arg) {
      const [V, , B] = forward(arg.idx);
      return [meanOut(V, B), accuracy(arg.idx)];
    },
    pictures,
    weights,
  };
}

// The pictures' layers by train_js.py's WebAssembly kernel: `layers(P, X, N)` as
// the JavaScript one gives them (every layer's activations, N x width), or null where this
// JavaScript has no WebAssembly SIMD (then the JavaScript layers draw). In the kernel's memory:
// the points, then per layer its weights transposed (nin x width, both padded to 8 with zeros:
// a padded input's weights are 0, so it adds nothing), its biases and its activations.
// ACTS: 1 the kernel's tanh, 0 none, or a function applying an op's rule in place.
// eslint-disable-next-line no-unused-vars -- train_js.mlp_source's `layers` calls it
function wasmLayers(SIZES, ACTS, wasm) {
  "use strict";
  const bytes = Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0));
  if (typeof WebAssembly !== "object" || !WebAssembly.validate(bytes)) return null;
  const { mem, dense } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
  const pad = (n) => Math.ceil(n / 8) * 8;
  return function layers(P, X, N) {
    // where each part starts, in doubles
    let at = N * pad(SIZES[0]);
    const parts = [];
    for (let l = 0; l + 1 < SIZES.length; l++) {
      const pin = pad(SIZES[l]), pw = pad(SIZES[l + 1]);
      parts.push({ wt: at, bias: at + pin * pw, h: at + pin * pw + pw });
      at += pin * pw + pw + N * pw;
    }
    const need = at * 8 - mem.buffer.byteLength;
    if (need > 0) mem.grow(Math.ceil(need / 65536));
    const F = new Float64Array(mem.buffer);
    const nin0 = SIZES[0], pin0 = pad(nin0);
    F.fill(0, 0, N * pin0);
    for (let p = 0; p < N; p++) for (let i = 0; i < nin0; i++) F[p * pin0 + i] = X[p * nin0 + i];
    const out = [];
    let input = 0, off = 0;
    for (let l = 0; l < parts.length; l++) {
      const nin = SIZES[l], w = SIZES[l + 1], pin = pad(nin), pw = pad(w), { wt, bias, h } = parts[l];
      F.fill(0, wt, h);
      for (let k = 0; k < w; k++) {
        const r = off + k * (nin + 1);
        for (let i = 0; i < nin; i++) F[wt + i * pw + k] = P[r + i];
        F[bias + k] = P[r + nin];
      }
      dense(input * 8, wt * 8, bias * 8, h * 8, N, pin, pw, ACTS[l] === 1 ? 1 : 0);
      if (typeof ACTS[l] === "function") ACTS[l](F, h, N * pw);
      const a = new Float64Array(N * w);
      for (let p = 0; p < N; p++) for (let k = 0; k < w; k++) a[p * w + k] = F[h + p * pw + k];
      out.push(a);
      input = h;
      off += w * (nin + 1);
    }
    return out;
  };
}
