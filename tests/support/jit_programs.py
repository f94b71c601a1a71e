"""Random per-sample programs, run by micrograd.jit and eagerly, must agree (or jit must refuse).

A program is a recipe drawn from a seed: inputs x (a few numbers per sample) and y, captured
parameters, constants made inside the program, every op of the shared table
(tests/support/optable.py, its inputs squashed into the op's domain), the fused `Value.dot` and
`Value.sum` over earlier results (shared sub-expressions: every result stays available), and Python
branches on `.data` (comparisons, `bool`, `int`, `round`) choosing between earlier results. Eagerly,
each sample records the decisions it took. `check(seed)` then demands: if every sample took sample
0's path, jit's per-sample values and its gradients for every parameter equal the eager ones;
otherwise jit raises TraceError naming a sample whose path differs. Used by tests/test_jit.py (a few
hundred seeds) and benchmarks/fuzz_jit.py (thousands)."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable

import numpy as np

from micrograd import Value, grad
from micrograd.jit import TraceError, jit

from .optable import OPS

TOL = 1e-9


def _squash(v: Value, low: float, high: float) -> Value:
    """v mapped into (low, high), inside the op's domain."""
    return low + (high - low) * v.sigmoid()


def random_program(seed: int) -> tuple[Callable, list[Value], list[np.ndarray]]:
    """(fn(x, y, decisions=None), its captured parameters, its input arrays [X, y])."""
    rng = random.Random(seed)
    width = rng.randint(1, 3)
    params = [Value(rng.uniform(-1.5, 1.5)) for _ in range(rng.randint(1, 4))]
    B = rng.randint(1, 8)
    data = np.random.default_rng(seed)
    X = data.normal(size=(B, width)) * rng.choice([0.1, 1.0, 3.0])
    y = data.normal(size=B)
    if rng.random() < 0.3:
        X[:, 0] = X[0, 0]  # a column that never varies: branches on it always agree
    recipe: list[tuple] = []
    size = width + 1 + len(params)  # the pool: x..., y, params..., then each step's result
    for _ in range(rng.randint(1, 14)):
        pick = lambda size=size: rng.randrange(size)  # noqa: E731
        r = rng.random()
        if r < 0.45:
            op = rng.choice(OPS)
            recipe.append(("op", op, [pick() for _ in range(op.arity)]))
        elif r < 0.6:
            n = rng.randint(1, 4)
            weights = [rng.choice([pick(), pick(), round(rng.uniform(-1, 1), 3)]) for _ in range(n)]
            recipe.append(("dot", weights, [pick() for _ in range(n)], rng.choice([pick(), 0.5])))
        elif r < 0.66:
            recipe.append(("sum", [pick() for _ in range(rng.randint(1, 4))]))
        elif r < 0.7:  # Python's sum(): a chain of + (jit adds it up as one node)
            terms = [pick() for _ in range(rng.randint(2, 6))]
            recipe.append(("pysum", terms, rng.choice([None, 0, 1]), rng.random() < 0.5))
        elif r < 0.78:
            recipe.append(("const", round(rng.uniform(-2, 2), 3), pick()))
        else:
            kind = rng.choice([">", "<=", "==", "bool", "int", "round"])
            threshold = rng.choice([0.0, round(rng.uniform(-1, 1), 2), -1e9])
            recipe.append(("branch", kind, pick(), threshold, pick(), pick(), pick()))
        size += 2 if recipe[-1][0] == "pysum" and recipe[-1][2] is not None else 1
    outputs = sorted({size - 1, rng.randrange(size)})

    def fn(x: list[Value], yv: Value, decisions: list | None = None) -> Value:
        pool: list = [*x, yv, *params]
        for step in recipe:
            if step[0] == "op":
                _, op, args = step
                pool.append(op.ours(*[_squash(pool[i], op.low, op.high) for i in args]))
            elif step[0] == "dot":
                _, ws, xs, b = step
                w = [pool[i] if isinstance(i, int) else i for i in ws]
                pool.append(
                    Value.dot(w, [pool[i] for i in xs], pool[b] if isinstance(b, int) else b)
                )
            elif step[0] == "sum":
                pool.append(Value.sum(pool[i] for i in step[1]))
            elif step[0] == "pysum":  # optionally a partial sum kept for later steps too
                _, terms, keep, reflected = step
                acc = 0.0
                for k, i in enumerate(terms):
                    acc = pool[i] + acc if reflected else acc + pool[i]
                    if k == keep:
                        partial = acc
                pool.append(acc)
                if keep is not None:
                    pool.append(partial * 1.0)
            elif step[0] == "const":
                pool.append(Value(step[1]) * pool[step[2]])
            else:
                _, kind, i, c, a, b, d = step
                v = pool[i]
                if kind == ">":
                    choice = v.data > c
                elif kind == "<=":
                    choice = v.data <= c
                elif kind == "==":
                    choice = v.data == pool[a].data
                elif kind == "bool":
                    choice = bool(v.relu().data)
                elif kind == "int":
                    choice = int((v.sigmoid() * 2).data)  # 0 or 1
                else:
                    choice = round(v.tanh().data) + 1  # 0, 1 or 2
                if decisions is not None:
                    decisions.append(choice)
                pool.append([pool[b], pool[a], pool[d]][int(choice)] * 1.0)
        return Value.sum(pool[k] for k in outputs)

    return fn, params, [X, y]


def _close(a: float, b: float, scale: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= TOL * max(1.0, abs(a), abs(b), scale)


def check(seed: int) -> str:
    """Run program `seed` both ways, then again after moving its parameters (an optimiser step:
    the same jitted function must follow, retracing if the path changed); raise AssertionError on
    a disagreement. Returns 'same', or 'refused' if jit raised TraceError (rightly)."""
    fn, params, (X, y) = random_program(seed)
    f = jit(fn, reduce="sum")
    result = _compare(seed, f, fn, params, X, y)
    rng = random.Random(-seed)
    for p in params:
        p.data += rng.choice([0.0, 0.1, -1.0, 2.0])
    second = _compare(seed, f, fn, params, X, y)
    return "same" if result == second == "same" else "refused"


def _compare(
    seed: int, f: Callable, fn: Callable, params: list[Value], X: np.ndarray, y: np.ndarray
) -> str:
    B = len(y)
    paths, outs, grads = [], [], []
    for i in range(B):
        decisions: list = []
        out = fn([Value(v) for v in X[i].tolist()], Value(float(y[i])), decisions)
        paths.append(decisions)
        outs.append(out.data)
        unused_as_zero = (0.0 if g is None else g for g in grad(out, params, allow_unused=True))
        grads.append(tuple(unused_as_zero))  # a parameter this program never reads: 0
    for p in params:
        p.grad = 0.0
    try:
        total = f(X, y)
    except TraceError as e:
        differs = [i for i in range(B) if paths[i] != paths[0]]
        named = re.search(r"batch sample (\d+)", str(e))
        assert differs, (seed, "jit refused a batch whose samples all take one path", str(e))
        assert named and int(named.group(1)) in differs, (seed, str(e), differs)
        return "refused"
    assert all(path == paths[0] for path in paths), (seed, "samples take other paths, jit ran")
    total.backward()
    for i, (got, want) in enumerate(zip(f.last_outputs.tolist(), outs)):
        assert _close(got, want, 0.0), (seed, "sample", i, got, want)
    for k, p in enumerate(params):
        per_sample = [g[k] for g in grads]
        finite = all(map(math.isfinite, per_sample))
        want = math.fsum(per_sample) if finite else sum(per_sample)
        scale = math.fsum(abs(g) for g in per_sample) if finite else 0.0
        assert _close(p.grad, want, scale), (seed, "param", k, p.grad, want)
    return "same"
