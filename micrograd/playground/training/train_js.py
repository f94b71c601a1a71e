"""The Train view's step and pictures in the browser: a training step around a program of
micrograd.jit's JavaScript target, and an MLP's pictures (every layer's activations over a grid
of points) in WebAssembly, or JavaScript where a browser has no WebAssembly SIMD.

    from micrograd.playground.training.train_js import mlp_source, step_source
    src = mlp_source(model)   # JavaScript: `function layers(P, X, N)`, train_step.js calls it
    step = step_source(program, src)   # the body of a function returning train_step.js's makeStep

`step_source` joins the program (`micrograd.jit.js_target.program_source`), the MLP's `layers`,
jit/runtime.js (its correctly rounded `powInt`), jit/health.js (the Health panel's statistics of
a step, `read`) and train_step.js (forward, loss, backward,
L2/L1, the optimizer's update: SGD and Adam, as `micrograd.optim` computes them; the pictures and
heat maps). `NodeHost` runs such source in Node.js, for tests and for Python without a browser;
the site's worker compiles it with ``new Function`` (worker.js).

A 64x64 picture of six layers of 32 is a forward pass of 4,096 points through 5,409 weights (22
million multiply-adds) every frame. In JavaScript that took 25 ms of each frame (about 1 ns a
multiply-add); `kernel()` is one WebAssembly function of a few hundred bytes, assembled here,
that adds eight neurons' sums at once in SIMD lanes (two doubles to a lane) and applies tanh
there too: a few times quicker. A picture needs no fixed order of its sums and no correctly
rounded tanh (`QUICK_TANH`, within 3e-8): numpy's pictures use numpy's own
(`train_frames.layer_outputs`), and the step's numbers never come from here.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence
from importlib import resources
from typing import Any

from ...jit.js_target import (
    JS,
    MATH_HELPERS,
    JsModule,
    Lines,
    health_source,
    literal,
    runtime_source,
)

__all__ = ["QUICK_TANH", "quick_tanh_source", "kernel", "mlp_source", "step_js", "step_source"]


# tanh for pictures: x·p(x²)/q(x²) on |x| <= 9 (beyond, ±1), within 3e-8 of tanh everywhere
# (tests/test_playground_train_js.py measures it), three times quicker than 1 - 2/(e^2x + 1) by
# Math.exp. The coefficients: a degree 4/4 fit of tanh(x)/x in x² at 10,000 Chebyshev points of
# [0, 9] by least squares of the relative error, reweighted by the denominator three times (Loeb's
# iteration).
QUICK_TANH = (
    (
        0.999999992582371,
        0.1338501313578296,
        0.0035001923958207382,
        2.067950508803087e-05,
        1.3442183671719121e-08,
    ),
    (
        1.0,
        0.46718334311521553,
        0.025894840559205715,
        0.00032929344299827595,
        7.814505335983213e-07,
    ),
)
QUICK_TANH_LIMIT = 9.0


def quick_tanh_source() -> str:
    """``function $qtanh(x)``: a picture's tanh (QUICK_TANH) in JavaScript; NaN stays NaN."""

    def horner(c: Sequence[float]) -> str:
        text = literal(c[-1])
        for a in reversed(c[:-1]):
            text = f"({text} * s + {literal(a)})"
        return text

    p, q = QUICK_TANH
    m = literal(QUICK_TANH_LIMIT)
    return (
        f"function $qtanh(x) {{\n  const c = x > {m} ? {m} : x < -{m} ? -{m} : x, s = c * c;\n"
        f"  return c * {horner(p)} / {horner(q)};\n}}\n"
    )


# ------------------------------------------------------------------------- the WebAssembly


def _uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        done = (n == 0 and not byte & 0x40) or (n == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


class _Code:
    """A function body, instruction by instruction (the WebAssembly spec's opcodes by name)."""

    OPS = {"end": 0x0B, "i32.add": 0x6A, "i32.mul": 0x6C, "i32.shl": 0x74, "i32.lt_u": 0x49}
    OPS |= {"i32.eq": 0x46, "drop": 0x1A}
    SIMD = {"f64x2.splat": 0x14, "f64x2.add": 240, "f64x2.mul": 242, "f64x2.div": 243}
    SIMD |= {"f64x2.pmin": 246, "f64x2.pmax": 247}

    def __init__(self) -> None:
        self.out = bytearray()

    def __call__(self, *names: str) -> _Code:
        for name in names:
            if name in self.OPS:
                self.out.append(self.OPS[name])
            else:
                self.out += b"\xfd" + _uleb(self.SIMD[name])
        return self

    def get(self, i: int) -> _Code:
        self.out += b"\x20" + _uleb(i)
        return self

    def set(self, i: int) -> _Code:
        self.out += b"\x21" + _uleb(i)
        return self

    def i32(self, n: int) -> _Code:
        self.out += b"\x41" + _sleb(n)
        return self

    def f64x2(self, x: float) -> _Code:  # v128.const of two equal doubles
        self.out += b"\xfd\x0c" + struct.pack("<dd", x, x)
        return self

    def load(self, offset: int = 0) -> _Code:  # v128.load (alignment 8)
        self.out += b"\xfd\x00\x03" + _uleb(offset)
        return self

    def store(self, offset: int = 0) -> _Code:  # v128.store
        self.out += b"\xfd\x0b\x03" + _uleb(offset)
        return self

    def load_f64(self) -> _Code:
        self.out += b"\x2b\x03\x00"
        return self

    def loop(self) -> _Code:
        self.out += b"\x03\x40"
        return self

    def if_(self) -> _Code:
        self.out += b"\x04\x40"
        return self

    def br_if(self, depth: int) -> _Code:
        self.out += b"\x0d" + _uleb(depth)
        return self

    def bump(self, i: int, by: int | None = None, by_local: int | None = None) -> _Code:
        """local i += a constant (or another local)."""
        self.get(i)
        if by_local is not None:
            self.get(by_local)
        else:
            self.i32(by or 0)
        return self("i32.add").set(i)


WASM_FROM = 1000  # multiply-adds a point from which the pictures use the kernel
LANES = 8  # neurons a pass adds at once: four SIMD values of two doubles


def kernel() -> bytes:
    """The WebAssembly module: memory ``mem`` and ``dense(x, wt, bias, h, n, nin, width,
    tanh)``, byte addresses and counts (each at least 1; `width` a multiple of LANES): for each
    of n points, h[p, :] = bias + x[p, :] @ wt (wt: nin x width, row-major), then its quick tanh
    when `tanh` is 1. The sums of neurons k .. k+7 run in four SIMD accumulators."""
    X, WT, BIAS, H, N, NIN, WIDTH, TANH = range(8)  # the parameters (i32)
    P, K, IN, XA, WA, ROW, XP = range(8, 15)  # i32 locals (IN: the input i)
    ACC, V = 15, 19  # v128 locals: ACC .. ACC+3, V
    c = _Code()
    c.get(WIDTH).i32(3)("i32.shl").set(ROW)  # a row of wt, in bytes
    c.i32(0).set(P).loop()  # for p in range(n)
    c.get(X).get(P).get(NIN)("i32.mul").i32(3)("i32.shl", "i32.add").set(XP)
    c.i32(0).set(K).loop()  # for k in range(0, width, 8)
    for j in range(4):  # the biases
        c.get(BIAS).get(K).i32(3)("i32.shl", "i32.add").load(16 * j).set(ACC + j)
    c.get(WT).get(K).i32(3)("i32.shl", "i32.add").set(WA)
    c.get(XP).set(XA).i32(0).set(IN).loop()  # for i in range(nin)
    c.get(XA).load_f64()("f64x2.splat").set(V)
    for j in range(4):  # acc_j += wt[i, k+2j : k+2j+2] * x[p, i]
        c.get(ACC + j).get(WA).load(16 * j).get(V)("f64x2.mul", "f64x2.add").set(ACC + j)
    c.bump(WA, by_local=ROW).bump(XA, 8).bump(IN, 1)
    c.get(IN).get(NIN)("i32.lt_u").br_if(0)("end")
    c.get(TANH).i32(1)("i32.eq").if_()
    p, q = QUICK_TANH
    for j in range(4):  # c = clamp(acc); acc = c * p(c²) / q(c²)
        a = ACC + j
        c.get(a).f64x2(QUICK_TANH_LIMIT)("f64x2.pmin").f64x2(-QUICK_TANH_LIMIT)("f64x2.pmax")
        c.set(a).get(a).get(a)("f64x2.mul").set(V)
        for coef in (p, q):
            c.f64x2(coef[-1])
            for k in reversed(coef[:-1]):
                c.get(V)("f64x2.mul").f64x2(k)("f64x2.add")
        c.set(V)  # q(c²), with p(c²) under it on the stack
        c.get(a)("f64x2.mul").get(V)("f64x2.div").set(a)
    c("end")
    c.get(H).get(P).get(WIDTH)("i32.mul").get(K)("i32.add").i32(3)("i32.shl", "i32.add").set(XA)
    for j in range(4):
        c.get(XA).get(ACC + j).store(16 * j)
    c.bump(K, LANES).get(K).get(WIDTH)("i32.lt_u").br_if(0)("end")
    c.bump(P, 1).get(P).get(N)("i32.lt_u").br_if(0)("end", "end")
    body = _uleb(2) + _uleb(7) + b"\x7f" + _uleb(5) + b"\x7b" + bytes(c.out)

    def section(n: int, payload: bytes) -> bytes:
        return bytes([n]) + _uleb(len(payload)) + payload

    def name(s: str) -> bytes:
        return _uleb(len(s)) + s.encode()

    return b"".join(
        [
            b"\0asm\1\0\0\0",
            section(1, b"\x01\x60" + _uleb(8) + b"\x7f" * 8 + b"\x00"),  # (i32 x 8) -> ()
            section(3, b"\x01\x00"),  # one function, of that type
            section(5, b"\x01\x00\x01"),  # one memory, one page to start
            section(7, b"\x02" + name("mem") + b"\x02\x00" + name("dense") + b"\x00\x00"),
            section(10, b"\x01" + _uleb(len(body)) + body),
        ]
    )


# ------------------------------------------------------------------------- the MLP's layers


def mlp_source(model: Any) -> str:
    """``function layers(P, X, N)``: every layer's activations of an MLP over N points (X: N x
    nin, row-major), each layer an (N x width) Float64Array, from the parameters P (in
    ``model.parameters()`` order). By `kernel` where the browser compiles it (train_step.js's
    `wasmLayers`; an activation other than tanh is applied by its own forward rule, run on
    `JS`), else in JavaScript: each point's sums four neurons at a time, then the activation
    (tanh: ``$qtanh``)."""
    from ...nn import ACTIVATIONS

    parts, acts, offset = [], [], 0
    sizes = [len(model.layers[0].neurons[0].w)] + [len(la.neurons) for la in model.layers]
    for i, layer in enumerate(model.layers):
        op = ACTIVATIONS[layer.neurons[0].activation].op
        parts.append(_layer_source(i, sizes[i], sizes[i + 1], offset, op))
        acts.append(_in_place(op))
        offset += sizes[i + 1] * (sizes[i] + 1)
    calls = " ".join(
        f"const h{i} = layer{i}(P, {f'h{i - 1}' if i else 'X'}, N);" for i in range(len(parts))
    )
    wasm = base64.b64encode(kernel()).decode()
    # the kernel's padding and copies cost more than they save below about 1,000 weights
    macs = sum(a * b for a, b in zip(sizes, sizes[1:]))
    pick = f"wasmLayers(SIZES, [{', '.join(acts)}], '{wasm}') || " if macs >= WASM_FROM else ""
    return (
        f"{MATH_HELPERS}{quick_tanh_source()}const SIZES = [{','.join(map(str, sizes))}];\n"
        + "\n".join(parts)
        + f"\nfunction jsLayers(P, X, N) {{\n{calls}\n"
        f"return [{', '.join(f'h{i}' for i in range(len(parts)))}]; }}\n"
        f"const layers = {pick}jsLayers;\n"
    )


def _in_place(op: Any) -> str:
    """A layer's activation for `wasmLayers`: 1 (tanh: the kernel's), 0 (linear), or a function
    (F, a, n) applying the op's forward rule to F[a .. a+n-1] in place."""
    if op is None:
        return "0"
    if op.name == "tanh":
        return "1"
    lines = Lines()
    out = op.forward(JsModule(exact_tanh=False), JS("x", lines))
    return (
        f"(F, a, n) => {{ for (let j = a; j < a + n; j++) {{ const x = F[j]; "
        f"{' '.join(lines.take())} F[j] = {literal(out)}; }} }}"
    )


def _layer_source(i: int, nin: int, width: int, offset: int, op: Any) -> str:
    """``function layer{i}(P, X, N)``: layer i's activations at N points in JavaScript (its own
    function: V8 optimizes each loop nest on its own), its weights from P[offset]."""
    xp = JsModule(exact_tanh=False)

    def neurons(m: int, k: str) -> str:
        """Neurons k .. k+m-1 at point p (w{j}: where their weights start, bias last)."""
        lines = Lines()
        sums = (JS(f"s{j}", lines) for j in range(m))
        outs = [s if op is None else op.forward(xp, s) for s in sums]
        starts = " ".join(
            f"const w{j} = {offset} + ({k} + {j}) * {nin + 1}; let s{j} = P[w{j} + {nin}];"
            for j in range(m)
        )
        adds = " ".join(f"s{j} += P[w{j} + i] * v;" for j in range(m))
        stores = " ".join(f"h[o + {k} + {j}] = {literal(out)};" for j, out in enumerate(outs))
        return (
            f"{{ {starts}\n    for (let i = 0; i < {nin}; i++) {{ const v = X[x + i]; {adds} }}"
            f"\n    {' '.join(lines.take())}\n    {stores} }}"
        )

    full, rest = divmod(width, 4)
    blocks = f"for (let k = 0; k < {4 * full}; k += 4) {neurons(4, 'k')}\n  " if full else ""
    if rest:
        blocks += neurons(rest, str(4 * full))
    return (
        f"function layer{i}(P, X, N) {{\nconst h = new Float64Array(N * {width});\n"
        f"for (let p = 0; p < N; p++) {{ const x = p * {nin}, o = p * {width};\n"
        f"  {blocks} }}\nreturn h; }}"
    )


# ------------------------------------------------------------------------- the step


def step_js() -> str:
    """train_step.js: ``makeStep`` (the step, the pictures, the heat maps) and ``wasmLayers``."""
    return (resources.files(__package__) / "train_step.js").read_text("utf-8")


def step_source(program: str, mlp: str) -> str:
    """The body of a JavaScript function that returns a training step (train_step.js's
    `makeStep`) for this program (`js_target.graph_source`) and this MLP (`mlp_source`)."""
    return (
        f"const program = (function () {{\n{program}}})();\n{mlp}\n{runtime_source()}\n"
        f"{health_source()}\n{step_js()}\nreturn makeStep(program, layers, SIZES);\n"
    )
