// micrograd.gpt's training step in JavaScript: microgpt's steps (one word a step, in the run's
// order; the loss, backward, his Adam with the rate decaying linearly to 0) around the programs
// jit's JavaScript target writes of `GPT.loss`, one per word length (micrograd/jit/gpt.py traces
// them; they come in as they are needed: `program`). A step the Health panel reads (`read`) is
// that step and jit/health.js's statistics of it (each position's ReLU outputs are rows the
// programs keep, after the logits). Every method takes and returns JSON-able
// values (the site's worker and Node.js pass JSON text). `powInt` is jit/runtime.js's (its
// source comes first): b**t correctly rounded, as Python's float ** int.

/* global powInt, stepHealth */
// eslint-disable-next-line no-unused-vars -- the caller (gpt_step_source) returns it
function makeGPTStep() {
  "use strict";
  let P = new Float64Array(0), GR = P, M = P, V2 = P; // the weights, grads and Adam's moments
  let TOK = new Int32Array(0), OFF = new Int32Array(1); // every word's tokens, one after another
  let vocab = 0, cut = 0, steps = 1, lr = 0.01, b1 = 0.85, b2 = 0.99, eps = 1e-8, t = 0;
  const programs = new Map(); // tokens a word is read as -> its program and arrays
  let HEALTH = null; // what the Health panel reads (health.Monitor.layout, and n_layer): set once

  // A word's tokens as the loss reads them: [bos, ..., bos], its first block_size + 1
  const tokensOf = (d) => Math.min(OFF[d + 1] - OFF[d], cut);

  // One step on word d: the loss, its gradient, microgpt's Adam; returns the loss.
  function step(d) {
    const n = tokensOf(d), { program, CAP, S, SG, V, G } = programs.get(n);
    V.fill(0, 0, program.nInputs); // the tokens, one-hot: row pos * vocab + token is 1
    for (let i = 0; i < n; i++) V[i * vocab + TOK[OFF[d] + i]] = 1;
    const C = CAP.length;
    for (let c = 0; c < C; c++) S[c] = P[CAP[c]];
    program.forward(V, S, 1);
    const loss = V[program.outRow];
    G.fill(0);
    G[program.outRow] = 1;
    SG.fill(0);
    program.backward(V, G, S, SG, 1);
    GR.fill(0); // (a weight the word does not reach has no grad: 0, as eager's)
    for (let c = 0; c < C; c++) GR[CAP[c]] += SG[c];
    // micrograd.gpt.Adam.step, line for line
    const rate = lr * (1 - t / steps);
    t += 1;
    const c1 = 1 - powInt(b1, t), c2 = 1 - powInt(b2, t);
    for (let i = 0; i < P.length; i++) {
      const g = GR[i];
      M[i] = b1 * M[i] + (1 - b1) * g;
      V2[i] = b2 * V2[i] + (1 - b2) * (g * g);
      P[i] -= (rate * (M[i] / c1)) / (Math.sqrt(V2[i] / c2) + eps);
    }
    return loss;
  }

  // The logits of position `pos` of `tokens` (a word's tokens so far, the start first): the
  // forward pass of the shortest program that reads position pos, the rest of its input the
  // start token (no position reads a later one, so they change nothing before it).
  function logitsAt(tokens, pos, lengths) {
    const n = lengths.find((k) => k >= pos + 2);
    const { program, CAP, S, V } = programs.get(n);
    V.fill(0, 0, program.nInputs);
    for (let i = 0; i < n; i++) V[i * vocab + (i < tokens.length ? tokens[i] : vocab - 1)] = 1;
    for (let c = 0; c < CAP.length; c++) S[c] = P[CAP[c]];
    program.forward(V, S, 1);
    const rows = program.keptRows, out = new Float64Array(vocab);
    for (let j = 0; j < vocab; j++) out[j] = V[rows[pos * vocab + j]];
    return out;
  }

  // gpt_frames.pick: softmax(logits / temperature) as micrograd.gpt.softmax computes it (the
  // largest first subtracted), then random.choices' draw with the uniform number u.
  function pick(logits, temperature, u) {
    const inv = 1 / temperature, x = Array.from(logits, (l) => l * inv);
    const top = Math.max(...x), e = x.map((v) => Math.exp(v - top));
    let total = 0;
    for (const v of e) total += v;
    const invTotal = 1 / total, cum = [];
    let acc = 0;
    for (const v of e) cum.push((acc += v * invTotal));
    const target = u * cum[cum.length - 1];
    let lo = 0, hi = cum.length - 1; // bisect_right(cum, target, 0, n - 1)
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (target < cum[mid]) hi = mid; else lo = mid + 1;
    }
    return lo;
  }

  // (JSON has no NaN or Infinity: such a loss goes as its text, which Python's float reads)
  const json = (x) => (Number.isFinite(x) ? x : String(x));

  function finite() {
    let s = 0;
    for (let i = 0; i < P.length; i++) s += P[i];
    return Number.isFinite(s);
  }

  return {
    // A new run (params: the model's weights; tokens and offsets: its words in order; cut:
    // block_size + 1; steps, lr, betas, eps: its Adam), or new weights (params alone).
    set(arg) {
      if (arg.params !== undefined) {
        P = Float64Array.from(arg.params);
        GR = new Float64Array(P.length);
        M = new Float64Array(P.length);
        V2 = new Float64Array(P.length);
        t = 0;
      }
      if (arg.tokens !== undefined) {
        TOK = Int32Array.from(arg.tokens);
        OFF = Int32Array.from(arg.offsets);
        vocab = arg.vocab;
        cut = arg.cut;
      }
      if (arg.steps !== undefined) ({ steps, lr } = arg);
      if (arg.betas !== undefined) [b1, b2] = arg.betas;
      if (arg.eps !== undefined) eps = arg.eps;
      if (arg.health !== undefined) {
        HEALTH = { ...arg.health, matrices: arg.health.matrices.map((a) => Int32Array.from(a)) };
      }
      return { t };
    },
    // The program of words read as n tokens (`graph_source`'s text) and the weights it reads
    // (captured: each one's index in params).
    program(arg) {
      const program = new Function(arg.source)();
      const rows = program.nRows, S = new Float64Array(program.nCaptured + program.consts.length);
      S.set(program.consts, program.nCaptured);
      programs.set(arg.n, {
        program, S, SG: new Float64Array(S.length), CAP: Int32Array.from(arg.captured),
        V: new Float64Array(rows), G: new Float64Array(rows),
      });
      return programs.size;
    },
    // Steps until `steps` are taken, `seconds` have passed (after the first), the run's steps
    // are done, a loss is not finite, or the next word's length has no program yet (need: n).
    train(arg) {
      const start = performance.now(), losses = [];
      let need = null;
      while (losses.length < arg.steps && t < steps) {
        const d = t % (OFF.length - 1), n = tokensOf(d);
        if (!programs.has(n)) { need = n; break; }
        const loss = step(d);
        losses.push(loss);
        if (!Number.isFinite(loss) || performance.now() - start >= arg.seconds * 1000) break;
      }
      return { losses: losses.map(json), need, t, finite: finite() };
    },
    // The next step, which the Health panel reads: `train`'s answer for one step (need: a
    // length with no program yet, and no step taken), and health.js's statistics of it from its
    // own arrays (each block's ReLU outputs over the word's positions and their grads, the
    // weights before and after his Adam, their grads).
    read() {
      if (t >= steps) return { losses: [], need: null, t, finite: finite(), health: null };
      const d = t % (OFF.length - 1), n = tokensOf(d);
      if (!programs.has(n)) return { losses: [], need: n, t, finite: finite(), health: null };
      const before = Float64Array.from(P);
      const loss = step(d);
      const { program, V, G } = programs.get(n), kept = program.keptRows;
      const blocks = HEALTH.layers.length, S = n - 1; // (positions: each token's but the last)
      const units = blocks ? HEALTH.layers[0].units : 0, first = S * vocab; // (the logits first)
      const layers = HEALTH.layers.map((lay, li) => {
        if (kept.length !== first + S * blocks * units) return { units, S, activation: "relu", V: null };
        const vals = new Float64Array(units * S), grads = new Float64Array(units * S);
        for (let p = 0; p < S; p++) {
          for (let j = 0; j < units; j++) {
            const r = kept[first + (p * blocks + li) * units + j];
            vals[j * S + p] = V[r];
            grads[j * S + p] = G[r];
          }
        }
        return { V: vals, G: grads, units, S, activation: lay.activation, bias: null };
      });
      const health = stepHealth({
        layers, matrices: HEALTH.matrices, before, after: P, grads: GR,
        alpha: 0, l1: 0, saturated: HEALTH.saturated, bins: HEALTH.bins,
      });
      return { losses: [json(loss)], need: null, t, finite: finite(), health };
    },
    // The weights (their bytes, little-endian doubles, in base64: a fifth of JSON's time in the
    // worker's Python) and the step count, for Python's model (a frame reads them there).
    state() {
      const bytes = new Uint8Array(P.buffer, P.byteOffset, P.byteLength);
      let text = "";
      for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
      return { params: btoa(text), t };
    },
    lengths() {
      return Array.from(programs.keys());
    },
    // Words drawn from the model as gpt_frames.sample_words draws them (uniforms: a row of
    // block_size numbers a word, read in order, a word going on where the one before stopped,
    // as micrograd.gpt.sample reads its random stream): each a list of tokens, the start
    // token left out, until it comes back or the block is full. The longest program (block + 1
    // tokens) must be loaded (need: its length, if not).
    sample(arg) {
      const block = arg.uniforms[0] ? arg.uniforms[0].length : 0, bos = vocab - 1;
      const lengths = Array.from(programs.keys()).sort((a, b) => a - b);
      if (!programs.has(block + 1)) return { need: block + 1, words: null };
      const numbers = arg.uniforms.flat();
      let next = 0;
      const words = arg.uniforms.map(() => {
        const tokens = [bos];
        for (let pos = 0; pos < block; pos++) {
          const token = pick(logitsAt(tokens, pos, lengths), arg.temperature, numbers[next++]);
          if (token === bos) break;
          tokens.push(token);
        }
        return tokens.slice(1);
      });
      return { need: null, words };
    },
  };
}
