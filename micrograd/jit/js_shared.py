"""jit's JavaScript target for many programs of a batch of one (a GPT's word lengths, gpt.py).

`BATCH_OF_ONE`: the layer kernels for B = 1 (``$layer1``, ``$layerBack1``, and ``$layerGrads``
for any B): the batch kernels' sums in the same order, without the batch's loops, which V8 does
not unroll (a third of a GPT's step). js_target.py's programs carry them; its ``$layer`` and
``$layerBack`` call them when B is 1.

`shared_steps`: a program's steps as kernels shared by every program of the page
(``graph_source(graph, shared=True)``): each step's code, with its integers and index arrays made
parameters, is compiled once (``$kernel``, a cache on the worker's global object) and called with
this step's arrays. A GPT's 14 word lengths then run some 30 kernels in all, which V8 warms up
and optimises once, instead of 14 programs' thousands of functions (the step in Node.js, on
makemore's names: 114 -> 822 steps per CPU second in the first 3 s). Each step is a function of
its own either way: V8 optimises a function of up to some 60 KB of bytecode, and one whole
program of a word of 16 letters is past it (it ran 10x slower).
"""

from __future__ import annotations

import json
import re

BATCH_OF_ONE = """\
// $layer and $layerBack for a batch of one (a GPT's word a step): the same sums in the same order
function $layer1(V, S, W, Bi, X, n, K, o0) {
  for (let k = 0, r = 0; k < K; k++, r += n) {
    let s = S[Bi[k]];
    for (let i = 0; i < n; i++) s += S[W[r + i]] * V[X[i]];
    V[o0 + k] = s;
  }
}
function $layerBack1(G, S, W, X, n, K, o0) {
  for (let i = 0; i < n; i++) {
    let s = S[W[i]] * G[o0];
    for (let k = 1; k < K; k++) s += S[W[k * n + i]] * G[o0 + k];
    G[X[i]] += s;
  }
}
// The layer's weights' gradients: SG[w_ki] += Σ_b g_kb * x_ib, summed as numpy sums ($pdot; for
// a batch of one, its one term: the same number)
function $layerGrads(SG, G, V, W, X, n, K, o0, B) {
  for (let k = 0, r = 0; k < K; k++, r += n) {
    const o = (o0 + k) * B, g = G[o];
    if (B === 1) for (let i = 0; i < n; i++) SG[W[r + i]] += g * V[X[i]];
    else for (let i = 0; i < n; i++) SG[W[r + i]] += $pdot(G, o, V, X[i] * B, B);
  }
}
"""

# A step's code with its integers and index arrays made parameters (`_shared`): the same code for
# every step of the same kind, in every program of this page, compiled once (`$kernel`)
_INT = re.compile(r"(?<![\w.$])(?<![eE][-+])\d+(?![\w.])")
_ARRAY = re.compile(r"(?<![\w$])I\d+\b")
_HELPER = re.compile(r"\$\w+")
SHARED = """\
const $kernels = globalThis.$micrograd_kernels || (globalThis.$micrograd_kernels = new Map());
// the helpers of the first program: every shared step calls the same functions
const $H = $kernels.get("") || $kernels.set("", {
  $pow, $max, $min, $copysign, $sign, $psum, $pdot, $layer, $layerBack, $layer1, $layerBack1,
  $layerGrads, $temp, $tanh}).get("");
function $kernel(params, body) {
  const key = params + "|" + body;
  let f = $kernels.get(key);
  if (f === undefined) $kernels.set(key, f = new Function("$H", ...params.split(","), body));
  return f;
}
"""


def _shared(code: str, head: str) -> tuple[str, str]:
    """A step's code as a shared kernel: its definition (``$kernel(params, body)``) and the
    arguments of this step's call (its arrays and integers)."""
    arrays: dict[str, str] = {}
    code = _ARRAY.sub(lambda m: arrays.setdefault(m.group(), f"A{len(arrays)}"), code)
    ints: list[str] = []

    def number(m: re.Match) -> str:
        ints.append(m.group())
        return f"N{len(ints) - 1}"

    code = _INT.sub(number, code)
    helpers = sorted(set(_HELPER.findall(code)))
    prelude = f"const {{{', '.join(helpers)}}} = $H;\n" if helpers else ""
    params = ",".join([*head.split(", "), *arrays.values(), *(f"N{i}" for i in range(len(ints)))])
    args = ", ".join(["$H", *head.split(", "), *arrays, *ints])
    return f"$kernel({json.dumps(params)}, {json.dumps(prelude + code)})", args


def shared_steps(forward: list[str], backward: list[str]) -> tuple[list[str], str, str]:
    """The steps' code (`SHARED`, then each distinct kernel once) and the bodies of `forward`
    and `backward`: each step a call of its kernel with its arrays and integers."""
    made: dict[str, str] = {}  # a kernel's definition -> its name in this program
    calls: list[list[str]] = [[], []]
    for out, codes, head in (
        (calls[0], forward, "V, S, B"),
        (calls[1], backward, "V, G, S, SG, B"),
    ):
        for code in codes:
            define, args = _shared(code, head)
            name = made.setdefault(define, f"$k{len(made)}")
            out.append(f"{name}({args});")
    steps = [SHARED, *(f"const {name} = {define};" for define, name in made.items())]
    fwd = "\n".join(calls[0])
    bwd = "\n".join(reversed(calls[1]))
    return steps, fwd, bwd


def own_steps(forward: list[str], backward: list[str]) -> tuple[list[str], str, str]:
    """The same as `shared_steps`, each step a function of this program's own."""
    steps = [f"function F{i}(V, S, B) {{\n{code}\n}}" for i, code in enumerate(forward)]
    steps += [f"function B{i}(V, G, S, SG, B) {{\n{code}\n}}" for i, code in enumerate(backward)]
    fwd = "\n".join(f"F{i}(V, S, B);" for i in range(len(forward)))
    bwd = "\n".join(f"B{i}(V, G, S, SG, B);" for i in reversed(range(len(backward))))
    return steps, fwd, bwd
