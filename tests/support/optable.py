"""The one shared table of ops that drives the engine tests.

Each row says how to compute the op with micrograd and with PyTorch, and where its inputs may be
drawn from. Adding an op to the engine = one method (with its @_op registry entry) there + one row
here; every table-driven test (PyTorch values and gradients at generic and edge points, central
differences, hypothesis, second derivatives, jit == eager, the expression language) then covers it,
and tests/test_engine.py checks that the rows cover exactly the ops of the registry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from micrograd.engine import Value


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    ours: Callable[..., Value]  # takes `arity` Values
    torch: Callable  # takes `arity` float64 tensors
    low: float = -3.0  # inputs are drawn from [low, high]
    high: float = 3.0
    kink: float | None = None  # a point where the derivative jumps: keep samples away from it
    twice: bool = True  # twice differentiable: include in second-derivative tests
    edges: tuple[float, ...] = ()  # special inputs besides NaN, ±inf, 0 and ±1e308 (tested too)
    points: tuple[tuple[float, ...], ...] = ()  # whole input points to test too (ties, ...)


def _t():
    import torch

    return torch


def _pairs(*xs: float) -> tuple[tuple[float, float], ...]:
    """Two-input edge points: ties at each x (a == b), and each x against its neighbours."""
    ties = tuple((x, x) for x in xs)
    return ties + tuple((x, y) for x in xs for y in xs if x != y)


EXTREMES = _pairs(0.0, 1.5, math.inf, -math.inf, 1e308, -1e308) + (
    (0.0, -0.0),
    (-0.0, 0.0),
    (math.nan, math.nan),
)


OPS: list[Op] = [
    Op("add", 2, lambda a, b: a + b, lambda a, b: a + b),
    Op("radd", 1, lambda a: 2.5 + a, lambda a: 2.5 + a),
    Op("sub", 2, lambda a, b: a - b, lambda a, b: a - b),
    Op("rsub", 1, lambda a: 2.5 - a, lambda a: 2.5 - a),
    Op("mul", 2, lambda a, b: a * b, lambda a, b: a * b),
    Op("rmul", 1, lambda a: -1.5 * a, lambda a: -1.5 * a),
    Op("square", 1, lambda a: a * a, lambda a: a * a),
    Op("neg", 1, lambda a: -a, lambda a: -a),
    Op("div", 2, lambda a, b: a / b, lambda a, b: a / b, low=0.5, high=3.0, edges=(1e-320,)),
    Op("rdiv", 1, lambda a: 3.0 / a, lambda a: 3.0 / a, low=0.5, high=3.0),
    Op("pow2", 1, lambda a: a**2, lambda a: a**2),
    Op("pow3", 1, lambda a: a**3, lambda a: a**3),
    Op("pow-1", 1, lambda a: a**-1, lambda a: a**-1, low=0.5, high=3.0, edges=(1e-320, -0.0)),
    Op("pow0", 1, lambda a: a**0, lambda a: a**0),
    Op("pow0.5", 1, lambda a: a**0.5, lambda a: a**0.5, low=0.2, high=3.0, edges=(1e-320,)),
    Op("pow1.5", 1, lambda a: a**1.5, lambda a: a**1.5, low=0.2, high=3.0),
    Op("pow-value", 2, lambda a, b: a**b, lambda a, b: a**b, low=0.3, high=2.5),
    Op("rpow", 1, lambda a: 2.0**a, lambda a: 2.0**a),
    Op("exp", 1, lambda a: a.exp(), lambda a: a.exp(), edges=(709.0, 710.0, -745.0)),
    Op("log", 1, lambda a: a.log(), lambda a: a.log(), low=0.1, high=5.0, edges=(-1.0, 1e-320)),
    Op("tanh", 1, lambda a: a.tanh(), lambda a: a.tanh(), edges=(-800.0, 800.0)),
    Op("sigmoid", 1, lambda a: a.sigmoid(), lambda a: a.sigmoid(), edges=(-800.0, 800.0)),
    Op("relu", 1, lambda a: a.relu(), lambda a: a.relu(), kink=0.0, twice=False),
    Op("abs", 1, lambda a: a.abs(), lambda a: a.abs(), kink=0.0, edges=(-0.0,)),
    Op(
        "softplus",
        1,
        lambda a: a.softplus(),
        lambda a: _t().nn.functional.softplus(a, threshold=40.0),  # exact in float64
        edges=(-800.0, 30.0, 800.0),
    ),
    Op(
        "dot",
        5,
        lambda w1, w2, x1, x2, b: Value.dot([w1, w2], [x1, x2], b),
        lambda w1, w2, x1, x2, b: b + w1 * x1 + w2 * x2,
    ),
    Op("sum", 4, lambda *v: Value.sum(v), lambda *v: sum(v)),
    Op("maximum", 2, Value.maximum, lambda a, b: _t().maximum(a, b), points=EXTREMES),
    Op("minimum", 2, Value.minimum, lambda a, b: _t().minimum(a, b), points=EXTREMES),
    Op("sum-builtin", 3, lambda *v: sum(v), lambda *v: sum(v)),
]


BY_NAME = {op.name: op for op in OPS}


def torch_value_and_grads(op: Op, xs: list[float]) -> tuple[float, list[float]]:
    """PyTorch float64: the op's value and its gradient w.r.t. each input."""
    torch = _t()
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out = op.torch(*ts)
    out.backward()
    return out.item(), [t.grad.item() if t.grad is not None else 0.0 for t in ts]


def ours_value_and_grads(op: Op, xs: list[float]) -> tuple[float, list[float]]:
    vs = [Value(x) for x in xs]
    out = op.ours(*vs)
    out.backward()
    return out.data, [v.grad for v in vs]
