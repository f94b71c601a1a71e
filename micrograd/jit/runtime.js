// micrograd.jit's JavaScript target, the part that is the same for every program: what the
// programs js_target.py writes need beside them. `powInt`, b ** t correctly rounded (the
// optimizers' bias correction in a step: the Train view's, micrograd/playground/training/train_step.js,
// and the GPT's, gpt_step.js), and `makeRunner`, a program run alone (for tests). Every method
// takes and returns JSON-able values (the site's worker and Node.js pass JSON text, never objects).

// x ** n for a whole n >= 0, correctly rounded, as C's pow gives Python's `b1 ** t` (the browser's
// ** differs in the last bit: 0.9 ** 4, one power in ten): squarings and products in double-double
// (Dekker's exact product, no fused multiply-add in JavaScript), rounded once at the end.
// eslint-disable-next-line no-unused-vars -- the steps that follow this source call it
function powInt(x, n) {
  "use strict";
  const split = (a) => { const c = 134217729 * a, h = c - (c - a); return [h, a - h]; };
  const mul = (ah, al, bh, bl) => { // (ah + al) * (bh + bl), as a normalized pair
    const p = ah * bh, [a1, a2] = split(ah), [b1, b2] = split(bh);
    const e = ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2 + (ah * bl + al * bh);
    const h = p + e;
    return [h, e - (h - p)];
  };
  let rh = 1, rl = 0, bh = x, bl = 0;
  for (let k = n; k > 0; k = Math.floor(k / 2)) {
    if (k % 2) [rh, rl] = mul(rh, rl, bh, bl);
    if (k > 1) [bh, bl] = mul(bh, bl, bh, bl);
  }
  return rh + rl;
}

// The program alone (the op table's tests): per-sample outputs of inputs `data` (B rows of the
// program's inputs, numbers or their text: "NaN", "Infinity") and, with a seed, the captured
// values' gradients of seed * Σ outputs. Numbers come back as text (JSON has no NaN).
// eslint-disable-next-line no-unused-vars -- the caller (js_target.runner_source) returns it
function makeRunner(program) {
  "use strict";
  return {
    run(arg) {
      const B = arg.B, width = program.nInputs, C = program.nCaptured;
      const V = new Float64Array(program.nRows * B), G = new Float64Array(program.nRows * B);
      const S = new Float64Array(C + program.consts.length), SG = new Float64Array(S.length);
      S.set(Float64Array.from(arg.captured, Number));
      S.set(program.consts, C);
      for (let r = 0; r < width; r++) for (let b = 0; b < B; b++) V[r * B + b] = Number(arg.data[b * width + r]);
      program.forward(V, S, B);
      const o = program.outRow * B;
      const text = (x) => Object.is(x, -0) ? "-0" : String(x); // (String(-0) is "0")
      const outs = Array.from(V.subarray(o, o + B), text);
      G.fill(arg.seed, o, o + B);
      program.backward(V, G, S, SG, B);
      return { outs, grads: Array.from(SG.subarray(0, C), text) };
    },
  };
}
