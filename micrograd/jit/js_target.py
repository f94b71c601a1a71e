"""micrograd.jit's JavaScript target: the traced program as JavaScript source, for a browser.

    from micrograd.jit.js_target import program_source
    src = program_source(fn, sample)     # fn traced on one sample, as `jit` traces it
    # src is the body of a JavaScript function returning {nInputs, nRows, ..., forward, backward}

The trace is `micrograd.jit`'s (`record`, then `Graph`, `group_nodes` and `Layout`): the same
steps, one per group of same-kind nodes at the same depth, over the same arrays -- ``V`` and
``G`` (rows x batch, row-major `Float64Array`s), ``S`` and ``SG`` (the numbers the same for every
sample, and their gradients summed over the batch). Only the emitter differs: where the numpy
target calls each op's registry rules on arrays, this one calls them on `JS`, one more array
module (`xp`) whose operations write source text (``const t3 = (1.0 - (t2 * t2));``). So every
forward and derivative rule is the engine's own, read a fifth time; nothing is written twice.
``tanh`` is the engine's correctly rounded algorithm (`floats.tanh`), written out the same way (the
same bits as the engine's); ``exp``, ``log``, ``sin`` are the browser's ``Math``.

``jit/runtime.js`` is what programs need beside them (`runtime_source`): ``powInt`` (b ** t
correctly rounded, for an optimizer's step) and ``makeRunner`` (a program alone, `runner_source`,
for tests). The Train view's step and pictures around a program live beside that view
(micrograd/playground/training/train_js.py); microgpt's step is gpt.py's. `NodeHost` runs such
source in Node.js, for tests and for Python without a browser; the site's worker compiles it with
``new Function``.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from ..core import floats
from ..core.registry import FUNCTIONS, OPS, by_method
from .js_shared import BATCH_OF_ONE, own_steps, shared_steps

__all__ = [
    "JS",
    "JsModule",
    "program_source",
    "graph_source",
    "runner_source",
    "NodeHost",
]


# ------------------------------------------------------------------------- the array module


def literal(x: Any) -> str:
    """A Python number (or bool) as a JavaScript literal, the same double."""
    if isinstance(x, JS):
        return x.code
    if isinstance(x, bool):
        return "true" if x else "false"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "(-Infinity)"
    text = repr(x)  # the shortest text that reads back as x: JavaScript reads it the same
    return f"({text})" if text.startswith("-") else text


class Lines:
    """Where `JS` operations write their statements: one `const` per result."""

    def __init__(self, prefix: str = "t") -> None:
        self.lines: list[str] = []
        self.n = 0
        self.prefix = prefix

    def bind(self, expr: str) -> JS:
        name = f"{self.prefix}{self.n}"
        self.n += 1
        self.lines.append(f"const {name} = {expr};")
        return JS(name, self)

    def take(self) -> list[str]:
        out, self.lines = self.lines, []
        return out


class JS:
    """A number in generated JavaScript (a name or a literal): arithmetic writes a statement and
    gives its result's name; a comparison gives a boolean expression (for `where`)."""

    __slots__ = ("code", "out")

    def __init__(self, code: str, out: Lines) -> None:
        self.code, self.out = code, out

    def _op(self, a: Any, sym: str, b: Any) -> JS:
        return self.out.bind(f"{literal(a)} {sym} {literal(b)}")

    def __add__(self, o: Any) -> JS:
        return self._op(self, "+", o)

    def __radd__(self, o: Any) -> JS:
        return self._op(o, "+", self)

    def __sub__(self, o: Any) -> JS:
        return self._op(self, "-", o)

    def __rsub__(self, o: Any) -> JS:
        return self._op(o, "-", self)

    def __mul__(self, o: Any) -> JS:
        return self._op(self, "*", o)

    def __rmul__(self, o: Any) -> JS:
        return self._op(o, "*", self)

    def __truediv__(self, o: Any) -> JS:
        return self._op(self, "/", o)

    def __rtruediv__(self, o: Any) -> JS:
        return self._op(o, "/", self)

    def __pow__(self, o: Any) -> JS:
        return self.out.bind(f"$pow({self.code}, {literal(o)})")

    def __rpow__(self, o: Any) -> JS:
        return self.out.bind(f"$pow({literal(o)}, {self.code})")

    def __neg__(self) -> JS:
        return self.out.bind(f"-{self.code}")

    def _cmp(self, sym: str, o: Any) -> JS:
        return JS(f"({self.code} {sym} {literal(o)})", self.out)

    def __lt__(self, o: Any) -> JS:
        return self._cmp("<", o)

    def __le__(self, o: Any) -> JS:
        return self._cmp("<=", o)

    def __gt__(self, o: Any) -> JS:
        return self._cmp(">", o)

    def __ge__(self, o: Any) -> JS:
        return self._cmp(">=", o)

    def __eq__(self, o: Any) -> JS:  # type: ignore[override]
        return self._cmp("===", o)

    def __ne__(self, o: Any) -> JS:  # type: ignore[override]
        return self._cmp("!==", o)

    __hash__ = None  # type: ignore[assignment]


# numpy's semantics where JavaScript's Math differs: pow(1, NaN) is 1 (and pow(-1, ±inf)),
# maximum and minimum carry a NaN and keep a's zero on a tie, copysign, sign.
MATH_HELPERS = """\
const $pow = (a, b) => (a === 1 || b === 0 || (a === -1 && (b === Infinity || b === -Infinity)))
  ? 1 : Math.pow(a, b);
const $max = (a, b) => (a >= b || a !== a) ? a : b;
const $min = (a, b) => (a <= b || a !== a) ? a : b;
const $copysign = (x, s) => (s < 0 || Object.is(s, -0)) ? -Math.abs(x) : Math.abs(x);
const $sign = (x) => x > 0 ? 1 : x < 0 ? -1 : x;
"""
HELPERS = (
    MATH_HELPERS
    + """\
// numpy's sum of n numbers from a[off] (pairwise, 8 accumulators: numpy's pairwise_sum), so a
// batch's sums are numpy's to the bit
function $psum(a, off, n) {
  if (n < 8) { let r = 0; for (let i = 0; i < n; i++) r += a[off + i]; return r; }
  if (n <= 128) {
    let r0 = a[off], r1 = a[off + 1], r2 = a[off + 2], r3 = a[off + 3], r4 = a[off + 4],
      r5 = a[off + 5], r6 = a[off + 6], r7 = a[off + 7], i = 8;
    for (; i < n - (n % 8); i += 8) {
      const j = off + i;
      r0 += a[j]; r1 += a[j + 1]; r2 += a[j + 2]; r3 += a[j + 3];
      r4 += a[j + 4]; r5 += a[j + 5]; r6 += a[j + 6]; r7 += a[j + 7];
    }
    let r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) r += a[off + i];
    return r;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return $psum(a, off, n2) + $psum(a, off + n2, n - n2);
}
// $psum of the products a[ao + i] * b[bo + i], without storing them (the same roundings)
function $pdot(a, ao, b, bo, n) {
  if (n < 8) { let r = 0; for (let i = 0; i < n; i++) r += a[ao + i] * b[bo + i]; return r; }
  if (n <= 128) {
    let r0 = a[ao] * b[bo], r1 = a[ao + 1] * b[bo + 1], r2 = a[ao + 2] * b[bo + 2],
      r3 = a[ao + 3] * b[bo + 3], r4 = a[ao + 4] * b[bo + 4], r5 = a[ao + 5] * b[bo + 5],
      r6 = a[ao + 6] * b[bo + 6], r7 = a[ao + 7] * b[bo + 7], i = 8;
    for (; i < n - (n % 8); i += 8) {
      const j = ao + i, k = bo + i;
      r0 += a[j] * b[k]; r1 += a[j + 1] * b[k + 1]; r2 += a[j + 2] * b[k + 2];
      r3 += a[j + 3] * b[k + 3]; r4 += a[j + 4] * b[k + 4]; r5 += a[j + 5] * b[k + 5];
      r6 += a[j + 6] * b[k + 6]; r7 += a[j + 7] * b[k + 7];
    }
    let r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) r += a[ao + i] * b[bo + i];
    return r;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return $pdot(a, ao, b, bo, n2) + $pdot(a, ao + n2, b, bo + n2, n - n2);
}
// A layer's neurons o0 .. o0+K-1 over a batch (W: the K x n weights' places in S, row by row;
// Bi: the biases'; X: the n inputs' rows): V[o] = b + w0*x0 + w1*x1 + ..., each sum from the
// bias in index order (jit/plan.py: how every sum adds), four neurons at a time so that each
// input is read once for four
function $layer(V, S, W, Bi, X, n, K, o0, B) {
  if (B === 1) return $layer1(V, S, W, Bi, X, n, K, o0); // (js_shared.py)
  let k = 0;
  for (; k + 3 < K; k += 4) {
    const o = (o0 + k) * B, o1 = o + B, o2 = o1 + B, o3 = o2 + B;
    V.fill(S[Bi[k]], o, o1); V.fill(S[Bi[k + 1]], o1, o2);
    V.fill(S[Bi[k + 2]], o2, o3); V.fill(S[Bi[k + 3]], o3, o3 + B);
    for (let i = 0; i < n; i++) {
      const x = X[i] * B, r = k * n + i;
      const w0 = S[W[r]], w1 = S[W[r + n]], w2 = S[W[r + 2 * n]], w3 = S[W[r + 3 * n]];
      for (let b = 0; b < B; b++) {
        const v = V[x + b];
        V[o + b] += w0 * v; V[o1 + b] += w1 * v; V[o2 + b] += w2 * v; V[o3 + b] += w3 * v;
      }
    }
  }
  for (; k < K; k++) {
    const o = (o0 + k) * B;
    V.fill(S[Bi[k]], o, o + B);
    for (let i = 0; i < n; i++) {
      const w = S[W[k * n + i]], x = X[i] * B;
      for (let b = 0; b < B; b++) V[o + b] += w * V[x + b];
    }
  }
}
// Its inputs' gradients: G[x_i] += w_0i*g_0 + w_1i*g_1 + ..., over the neurons in order from
// the first product, four inputs at a time (their weights gathered first)
function $layerBack(G, S, W, X, n, K, o0, B) {
  if (B === 1) return $layerBack1(G, S, W, X, n, K, o0);
  const q = $temp(9, 4 * K), O = o0 * B;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    for (let k = 0; k < K; k++) {
      const r = k * n + i, j = 4 * k;
      q[j] = S[W[r]]; q[j + 1] = S[W[r + 1]]; q[j + 2] = S[W[r + 2]]; q[j + 3] = S[W[r + 3]];
    }
    const x0 = X[i] * B, x1 = X[i + 1] * B, x2 = X[i + 2] * B, x3 = X[i + 3] * B;
    for (let b = 0; b < B; b++) {
      let g = G[O + b], s0 = q[0] * g, s1 = q[1] * g, s2 = q[2] * g, s3 = q[3] * g;
      for (let k = 1; k < K; k++) {
        g = G[O + k * B + b];
        const j = 4 * k;
        s0 += q[j] * g; s1 += q[j + 1] * g; s2 += q[j + 2] * g; s3 += q[j + 3] * g;
      }
      G[x0 + b] += s0; G[x1 + b] += s1; G[x2 + b] += s2; G[x3 + b] += s3;
    }
  }
  for (; i < n; i++) {
    for (let k = 0; k < K; k++) q[k] = S[W[k * n + i]];
    const x = X[i] * B;
    for (let b = 0; b < B; b++) {
      let s = q[0] * G[O + b];
      for (let k = 1; k < K; k++) s += q[k] * G[O + k * B + b];
      G[x + b] += s;
    }
  }
}
const $scratch = [];
function $temp(i, B) {
  if (!$scratch[i] || $scratch[i].length < B) $scratch[i] = new Float64Array(B);
  return $scratch[i];
}
"""
)

_MATH = {
    "exp": "Math.exp",
    "log": "Math.log",
    "log1p": "Math.log1p",
    "sqrt": "Math.sqrt",
    "floor": "Math.floor",
    "abs": "Math.abs",
    "sin": "Math.sin",
    "cos": "Math.cos",
    "power": "$pow",
    "maximum": "$max",
    "minimum": "$min",
    "copysign": "$copysign",
    "sign": "$sign",
}


class JsModule:
    """The `xp` of rules run on `JS` numbers: each function writes a statement. ``tanh`` calls
    ``$tanh`` (the engine's algorithm, written by `tanh_source`), or with `exact_tanh` False (the
    Train view's pictures: playground/training/train_js.py) ``$qtanh``; an op by its method name
    runs the op's forward rule, a declared function (`registry.function`) its definition, as
    `registry.ArrayModule` does."""

    def __init__(self, exact_tanh: bool = True) -> None:
        self.exact_tanh = exact_tanh
        self.tables: dict[int, tuple[str, list[float]]] = {}  # tanh's tables, when read

    @staticmethod
    def where(c: Any, a: Any, b: Any) -> Any:
        if isinstance(c, bool):
            return a if c else b
        return c.out.bind(f"{c.code} ? {literal(a)} : {literal(b)}")

    def take(self, table: list[float], k: JS) -> JS:
        name = self.tables.setdefault(id(table), (f"$T{len(self.tables)}", table))[0]
        return k.out.bind(f"{name}[{k.code}]")

    def tanh(self, x: JS) -> JS:
        return x.out.bind(f"{'$tanh' if self.exact_tanh else '$qtanh'}({x.code})")

    def __getattr__(self, name: str) -> Any:
        if name in _MATH:
            fn = _MATH[name]

            def call(*args: Any) -> Any:
                out = next(a.out for a in args if isinstance(a, JS))
                return out.bind(f"{fn}({', '.join(map(literal, args))})")

            return call
        info = by_method(name)
        if info is not None and info.forward is not None:
            return lambda *args: info.forward(self, *args)
        if name in FUNCTIONS:
            return lambda *args: FUNCTIONS[name](self, *args)
        raise AttributeError(f"jit's JavaScript target has no function {name!r} for rules")


def _table(table: list[float]) -> str:
    """A table as JavaScript: tanh's (2^(k/256), `floats.tables`) from its first 256 entries
    times powers of two, as it is built (exact: the same doubles), rather than 14,000 numbers."""
    base = table[:256]
    if all(x == base[k % 256] * 2.0 ** (k // 256) for k, x in enumerate(table)):
        return (
            f"((t) => Float64Array.from({{length: {len(table)}}}, (_, k) => "
            f"t[k % 256] * 2 ** Math.floor(k / 256)))([{','.join(map(literal, base))}])"
        )
    return f"Float64Array.from([{','.join(map(literal, table))}])"


@functools.lru_cache(maxsize=1)
def tanh_source() -> str:
    """``function $tanh(x)``: `floats.tanh`, the engine's correctly rounded tanh, run on `JS`
    numbers (so written out statement by statement), with its tables."""
    xp = JsModule()
    lines = Lines("h")
    t = floats.tanh(xp, JS("x", lines))
    tables = "".join(f"const {name} = {_table(table)};\n" for name, table in xp.tables.values())
    body = "\n  ".join(lines.take())
    return f"{tables}function $tanh(x) {{\n  {body}\n  return {literal(t)};\n}}\n"


# ------------------------------------------------------------------------- the program


def _ints(values: Sequence[int]) -> str:
    return f"Int32Array.from([{','.join(str(int(v)) for v in values)}])"


class _Emitter:
    """The forward and backward source of one traced graph, step by step (see jit._Program)."""

    def __init__(self, graph: Any) -> None:
        from .plan import Layout, group_nodes, is_scalar

        if graph.guards:
            raise NotImplementedError(
                "jit's JavaScript target replays graphs without Python decisions on the data "
                "(guards); this fn has some: run it with jit's numpy target"
            )
        if graph.prelude is not None:
            raise NotImplementedError(
                "jit's JavaScript target: fn computes numbers that read no input (a prelude); "
                "run it with jit's numpy target"
            )
        self.g = graph
        self.is_scalar = is_scalar
        self.groups = group_nodes(graph)
        self.at = Layout(graph, self.groups)
        self.consts: list[str] = []  # module-level constants (index arrays)
        self.forward: list[str] = []
        self.backward: list[str] = []

    def const(self, values: Sequence[int]) -> str:
        name = f"I{len(self.consts)}"
        self.consts.append(f"const {name} = {_ints(values)};")
        return name

    def emit(self) -> None:
        for step, members in self.groups:
            refs_of = [self.g.nodes[j][2] for j in members]
            o0 = self.at.row[_node(members[0])]
            K = len(members)
            if step.kernel == "matrix product":
                self._matrix_product(step, refs_of, o0, K)
            elif step.kernel == "weighted sums":
                self._weighted_sums(step.size, refs_of, o0, K)
            elif step.kernel == "sums":
                self._sums(step.size, refs_of, o0, K)
            else:
                self._elementwise(step.kernel, step.param, refs_of, o0, K)

    # -- operands: a child position across the group, as rows of V or entries of S
    def operand(self, refs: Sequence[Any], allow_scalar: bool) -> tuple[bool, str, bool]:
        at = self.at
        wanted = any(map(at.wants, refs))
        if allow_scalar and all(map(self.is_scalar, refs)):
            return True, self.const([at.scalar(r) for r in refs]), wanted
        return False, self.const([at.row_of(r) for r in refs]), wanted

    def _elementwise(self, kind: str, p: float | None, refs_of: list, o0: int, K: int) -> None:
        info = OPS[kind]
        ops = [self.operand(pos, True) for pos in zip(*refs_of)]
        extra = (p,) if info.param else ()
        xp = JsModule()
        # forward
        lines = Lines()
        args = [JS(f"a{i}", lines) for i in range(len(ops))]
        out = info.forward(xp, *args, *extra)  # type: ignore[misc]
        body = lines.take()
        head = [
            f"const a{i} = S[{name}[j]];" if scalar else f"const r{i} = {name}[j] * B;"
            for i, (scalar, name, _) in enumerate(ops)
        ]
        reads = [f"const a{i} = V[r{i} + b];" for i, (scalar, _, _) in enumerate(ops) if not scalar]
        self.forward.append(
            f"for (let j = 0; j < {K}; j++) {{ {' '.join(head)} const o = ({o0} + j) * B;\n"
            f"  for (let b = 0; b < B; b++) {{ {' '.join(reads)}\n    {' '.join(body)}\n"
            f"    V[o + b] = {literal(out)}; }} }}"
        )
        # backward
        if not any(w for _, _, w in ops):
            return
        lines = Lines()
        args = [JS(f"a{i}", lines) for i in range(len(ops))]
        ds = info.local(xp, JS("out", lines), *args, *extra)
        body = lines.take()
        accs, adds, sums = [], [], []
        for i, ((scalar, name, wanted), d) in enumerate(zip(ops, ds)):
            if not wanted:
                continue
            term = "g" if isinstance(d, float) and d == 1.0 else f"{literal(d)} * g"
            if scalar:  # summed over the batch as numpy sums: pairwise
                accs.append(f"const s{i} = $temp({i}, B);")
                adds.append(f"s{i}[b] = {term};")
                sums.append(f"SG[{name}[j]] += $psum(s{i}, 0, B);")
            else:
                adds.append(f"G[r{i} + b] += {term};")
        self.backward.append(
            f"for (let j = 0; j < {K}; j++) {{ {' '.join(head)} const o = ({o0} + j) * B; "
            f"{' '.join(accs)}\n  for (let b = 0; b < B; b++) {{ const g = G[o + b]; "
            f"const out = V[o + b]; {' '.join(reads)}\n    {' '.join(body)}\n    "
            f"{' '.join(adds)} }}\n  {' '.join(sums)} }}"
        )

    def _matrix_product(self, step: Any, refs_of: list, o0: int, K: int) -> None:
        n, x = step.size, step.inputs
        at = self.at
        ws = [
            at.scalar(r)
            for refs in refs_of
            for r in (refs[:n] if refs[n : 2 * n] == x else refs[n : 2 * n])
        ]
        W = self.const(ws)
        Bi = self.const([at.scalar(refs[-1]) for refs in refs_of])
        X = self.const([at.row_of(r) for r in x])
        wants_x = any(map(at.wants, x))
        # values[o] = b + W @ X, each sum from the bias in index order (jit_graph: how every
        # sum adds)
        self.forward.append(f"$layer(V, S, {W}, {Bi}, {X}, {n}, {K}, {o0}, B);")
        back = ""
        if wants_x:  # dX = W.T @ g: over the neurons in order, from the first product; then added
            back += f"$layerBack(G, S, {W}, {X}, {n}, {K}, {o0}, B);\n"
        # dW and db: sums over the batch, pairwise (numpy's sum: $psum)
        back += (
            f"$layerGrads(SG, G, V, {W}, {X}, {n}, {K}, {o0}, B);\n"
            f"for (let k = 0; k < {K}; k++) SG[{Bi}[k]] += $psum(G, ({o0} + k) * B, B);"
        )
        self.backward.append(back)

    def _weighted_sums(self, n: int, refs_of: list, o0: int, K: int) -> None:
        cols = list(zip(*refs_of))
        w = self.operand([r for c in zip(*cols[:n]) for r in c], False)
        x = self.operand([r for c in zip(*cols[n : 2 * n]) for r in c], False)
        bias = self.operand(cols[-1], False)
        Wn, Xn, Bn = w[1], x[1], bias[1]
        # b + w0*x0 + w1*x1 + ..., in order (jit_graph: how every sum adds)
        self.forward.append(
            f"for (let k = 0; k < {K}; k++) {{ const o = ({o0} + k) * B, c = {Bn}[k] * B;\n"
            f"  for (let b = 0; b < B; b++) V[o + b] = V[c + b];\n"
            f"  for (let i = 0; i < {n}; i++) {{ const w = {Wn}[k * {n} + i] * B, "
            f"x = {Xn}[k * {n} + i] * B;\n"
            f"    for (let b = 0; b < B; b++) V[o + b] += V[w + b] * V[x + b]; }} }}"
        )
        # the gradients added as numpy's step adds them: every w's, then every x's, then b's
        back = []
        for wanted, into, by in ((w[2], "w", "x"), (x[2], "x", "w")):
            if wanted:
                back.append(
                    f"for (let k = 0; k < {K}; k++) {{ const o = ({o0} + k) * B;\n"
                    f"  for (let i = 0; i < {n}; i++) {{ const w = {Wn}[k * {n} + i] * B, "
                    f"x = {Xn}[k * {n} + i] * B;\n"
                    f"    for (let b = 0; b < B; b++) "
                    f"G[{into} + b] += V[{by} + b] * G[o + b]; }} }}"
                )
        if bias[2]:
            back.append(
                f"for (let k = 0; k < {K}; k++) {{ const o = ({o0} + k) * B, "
                f"c = {Bn}[k] * B; for (let b = 0; b < B; b++) G[c + b] += G[o + b]; }}"
            )
        if back:
            self.backward.append("\n".join(back))

    def _sums(self, n: int, refs_of: list, o0: int, K: int) -> None:
        c = self.operand([r for refs in refs_of for r in refs], False)
        self.forward.append(
            f"for (let k = 0; k < {K}; k++) {{ const o = ({o0} + k) * B; V.fill(0, o, o + B);\n"
            f"  for (let i = 0; i < {n}; i++) {{ const c = {c[1]}[k * {n} + i] * B;\n"
            f"    for (let b = 0; b < B; b++) V[o + b] += V[c + b]; }} }}"
        )
        if c[2]:
            self.backward.append(
                f"for (let k = 0; k < {K}; k++) {{ const o = ({o0} + k) * B;\n"
                f"  for (let i = 0; i < {n}; i++) {{ const c = {c[1]}[k * {n} + i] * B;\n"
                f"    for (let b = 0; b < B; b++) G[c + b] += G[o + b]; }} }}"
            )


def _node(j: int) -> Any:
    from .plan import Ref

    return Ref("node", j)


def graph_source(graph: Any, shared: bool = False) -> str:
    """JavaScript statements ending in ``return {...}``: a traced `jit._Graph`'s program over a
    batch of B (`shared`: its steps are the page's shared kernels, js_shared.py). ``forward(V,
    S, B)`` fills V (rows x B; the inputs' rows, and S: captured values then constants, are the
    caller's); ``backward(V, G, S, SG, B)`` adds into G and SG from G's output row (its seed)."""
    e = _Emitter(graph)
    e.emit()
    at = e.at
    SR, SIR = e.const(at.scalar_rows), e.const(at.scalars_in_rows)
    out_row = at.row_of(graph.out)
    steps, fwd, bwd = (shared_steps if shared else own_steps)(e.forward, e.backward)
    return (
        f"{HELPERS}{BATCH_OF_ONE}{tanh_source()}{chr(10).join(e.consts)}\n{chr(10).join(steps)}\n"
        f"function forward(V, S, B) {{\n"
        f"for (let i = 0; i < {SR}.length; i++) {{ const r = {SR}[i] * B; "
        f"V.fill(S[{SIR}[i]], r, r + B); }}\n{fwd}\n}}\n"
        f"function backward(V, G, S, SG, B) {{\n{bwd}\n"
        f"for (let i = 0; i < {SR}.length; i++) SG[{SIR}[i]] += $psum(G, {SR}[i] * B, B);\n}}\n"
        f"return {{nInputs: {graph.n_inputs}, nRows: {at.n_rows}, "
        f"nCaptured: {len(graph.captured)}, "
        f"consts: Float64Array.from([{','.join(map(literal, graph.consts))}]), "
        f"outRow: {out_row}, keptRows: [{', '.join(str(at.row_of(r)) for r in graph.kept)}], "
        f"forward, backward, psum: $psum}};\n"
    )


def program_source(
    fn: Callable[..., Any], sample: Sequence[Any], keep: Callable[[], Sequence[Any]] = tuple
) -> tuple[str, list[Any]]:
    """`fn` traced on one `sample` (floats, or lists of floats: one per argument), as
    `graph_source` writes it; and the Values it captured (their order: S's first entries).
    `keep()`, asked after the trace, names nodes of it whose rows the program tells too
    (``keptRows``: the model's outputs, say)."""
    from .plan import Graph
    from .tracing import record

    tr = record(fn, list(sample))
    graph = Graph(tr, keep())
    return graph_source(graph), graph.captured


# ------------------------------------------------------------------------- the runtime


def runtime_source() -> str:
    """jit/runtime.js: what programs need beside them (``powInt``, ``makeRunner``)."""
    return (resources.files(__package__) / "runtime.js").read_text("utf-8")


def health_source() -> str:
    """jit/health.js: `stepHealth`, train.health's statistics of a step in JavaScript, over a
    JavaScript engine's own arrays (playground/training/train_step.js and jit/gpt_step.js call
    it for a step the Health panel reads)."""
    return (resources.files(__package__) / "health.js").read_text("utf-8")


def runner_source(program: str) -> str:
    """The body of a JavaScript function that returns the program alone (jit/runtime.js's
    `makeRunner`: its outputs and captured gradients over a batch), for tests."""
    return (
        f"const program = (function () {{\n{program}}})();\n{runtime_source()}\n"
        f"return makeRunner(program);\n"
    )


# ------------------------------------------------------------------------- Node.js


class NodeHost:
    """Runs generated JavaScript in Node.js (one process, started on first use): `compile`
    source into an object whose methods take and give JSON (`call`). For tests, and for CPython
    wherever the JavaScript target is wanted outside a browser."""

    _SERVER = r"""
const readline = require('readline');
const objects = [];
const rl = readline.createInterface({input: process.stdin});
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  let reply;
  try {
    if (msg.source !== undefined) {
      objects.push(new Function(msg.source)());
      reply = {result: objects.length - 1};
    } else {
      reply = {result: objects[msg.handle][msg.method](msg.arg)};
    }
  } catch (err) {
    reply = {error: String(err && err.stack || err)};
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
});
"""

    def __init__(self, node: str | None = None) -> None:
        self.node = node or shutil.which("node") or shutil.which("nodejs")
        if self.node is None:
            raise RuntimeError("jit's JavaScript target needs Node.js here: install nodejs")
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _ask(self, msg: dict[str, Any]) -> Any:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = subprocess.Popen(
                    [self.node, "-e", self._SERVER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    env={**os.environ, "NODE_OPTIONS": ""},
                )
            stdin, stdout = self._proc.stdin, self._proc.stdout  # (pipes: never None here)
            stdin.write(json.dumps(msg, allow_nan=False) + "\n")  # type: ignore[union-attr]
            stdin.flush()  # type: ignore[union-attr]
            line = stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("Node.js stopped while running micrograd's JavaScript")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"JavaScript failed: {reply['error'].splitlines()[0]}")
        return reply["result"]

    def compile(self, source: str) -> Any:
        handle = self._ask({"source": source})
        return lambda method, arg=None: self._ask({"handle": handle, "method": method, "arg": arg})

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._proc.stdin.close()  # type: ignore[union-attr]
                self._proc.wait(timeout=10)
                self._proc = None
