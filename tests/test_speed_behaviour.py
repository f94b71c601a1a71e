"""What the speed work changed must not change any number: backward()'s walk without the leaves,
jit's arrays kept between calls (per batch size, per thread), and ReLU's numpy rule.

Truth is the eager engine (jit must equal it, signs of zero and NaN included), PyTorch in float64
for gradients, and the full walk for the order of the nodes.
"""

from __future__ import annotations

import math
import random
import threading

import pytest

from micrograd.engine import Value, topological_order

np = pytest.importorskip("numpy")


def _graphs() -> list[Value]:
    """A chain, a diamond with a shared leaf, a fused node with every parameter twice, a leaf."""
    w, c, y = Value(0.9), Value(0.1), Value(0.5)
    for _ in range(50):
        y = y * w + c
    a, b = Value(2.0), Value(-3.0)
    e = a * b
    diamond = (e + a).tanh() * (e * e + b)
    ps = [Value(random.Random(k).uniform(-1, 1)) for k in range(40)]
    fused = Value.dot(ps, ps) + Value.sum(ps).relu()
    return [y, diamond, fused, Value(4.0)]


@pytest.mark.parametrize("root", _graphs(), ids=["chain", "diamond", "fused", "leaf"])
def test_the_walk_without_leaves_is_the_full_walk_minus_its_leaves(root: Value) -> None:
    full = topological_order(root)
    inner = topological_order(root, leaves=False)
    assert inner == [v for v in full if v._prev or v is root]
    assert full[-1] is root and inner[-1] is root


def test_backward_still_runs_a_hand_written_backward_on_a_leaf() -> None:
    calls = []
    a = Value(2.0)
    a._backward = lambda: calls.append(a.grad)  # the lecture's style, on a leaf
    out = a * 3.0
    out.backward()
    assert calls == [3.0]
    assert a.grad == 3.0


def test_a_wide_node_backpropagates_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = random.Random(0)
    xs = [rng.uniform(-2, 2) for _ in range(700)]
    ps = [Value(x) for x in xs]
    out = Value.dot(ps, ps) * 0.5 + Value.sum(ps[::3]).tanh()
    out.backward()
    t = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    ((t * t).sum() * 0.5 + t[::3].sum().tanh()).backward()
    for p, g in zip(ps, t.grad.tolist()):
        assert p.grad == pytest.approx(g, rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------- jit's arrays kept between calls


def _model() -> tuple[list[Value], object]:
    rng = random.Random(1)
    w = [Value(rng.uniform(-1, 1)) for _ in range(3)]
    b = Value(0.2)

    def fn(x: list[Value], t: Value) -> Value:
        h = Value.dot(w[:2], x, b).relu()
        return (1 + -t * (h * w[2] + x[0] * x[1])).relu()

    return [*w, b], fn


def _eager(params: list[Value], fn: object, X: object, y: object) -> tuple[list, list]:
    """Per-sample outputs and the mean's gradients, by the eager engine."""
    for p in params:
        p.grad = 0.0
    outs = [fn([Value(a) for a in row], Value(t)) for row, t in zip(X.tolist(), y.tolist())]
    total = Value.sum(outs) * (1.0 / len(outs))
    total.backward()
    return [o.data for o in outs], [p.grad for p in params]


def _jit_grads(loss: Value, params: list[Value]) -> list[float]:
    """The jit node's gradient for each of `params` (its children are the captured Values)."""
    by_child = dict(zip(loss._prev, loss._local))
    return [by_child.get(p, 0.0) for p in params]


def test_jit_results_stay_put_when_the_arrays_are_reused() -> None:
    from micrograd.jit import jit

    params, fn = _model()
    f = jit(fn)
    rng = np.random.default_rng(0)
    batches = [(rng.normal(size=(n, 2)), rng.choice([-1.0, 1.0], size=n)) for n in (5, 7, 5, 3)]
    got = []
    for X, y in batches:  # sizes 5, 7, 5 (its arrays reused), 3 (one size too many: new ones)
        loss = f(X, y)
        got.append((loss, f.last_outputs, f.outputs(X, y)))
    for (X, y), (loss, outs, again) in zip(batches, got):
        want_outs, want_grads = _eager(params, fn, X, y)
        assert outs.tolist() == pytest.approx(want_outs, rel=1e-12, abs=1e-15)
        assert again.tolist() == outs.tolist()  # a later call did not write into them
        assert _jit_grads(loss, params) == pytest.approx(want_grads, rel=1e-12, abs=1e-15)
    assert f.traces == 1


def test_jit_from_two_threads_at_once() -> None:
    from micrograd.jit import jit

    params, fn = _model()
    f = jit(fn)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(64, 2)), rng.choice([-1.0, 1.0], size=64)
    f(X, y)  # traced here, once
    want = {n: _eager(params, fn, X[:n], y[:n]) for n in (64, 40)}
    errors: list[str] = []

    def work(n: int) -> None:
        for _ in range(200):
            got = _jit_grads(f(X[:n], y[:n]), params)
            if got != pytest.approx(want[n][1], rel=1e-12, abs=1e-15):
                errors.append(f"batch of {n}: {got} != {want[n][1]}")
                return

    threads = [threading.Thread(target=work, args=(n,)) for n in (64, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# ---------------------------------------------------------------- ReLU's numpy rule

EDGES = [-math.inf, -1.5, -0.0, 0.0, 5e-324, 1e-310, 2.0, 1e308, math.inf, math.nan]


def _same(a: float, b: float) -> bool:
    """The same float: equal with the same sign, or both NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


@pytest.mark.parametrize("x", EDGES)
def test_jit_relu_equals_the_engines_at_the_edges(x: float) -> None:
    from micrograd.jit import jit

    c = Value(1.0)
    f = jit(lambda v: (v * c).relu(), reduce="sum")
    loss = f(np.array([x]))
    eager = (Value(x) * c).relu()
    c.grad = 0.0
    eager.backward()
    assert _same(f.last_outputs[0], eager.data)
    assert _same(loss._local[0], c.grad)  # d/dc = relu'(x·c) · x
