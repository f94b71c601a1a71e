"""micrograd.jit: the batched replay equals the eager graph over the batch (values and every
captured gradient to 1e-9), for every op of the shared table, several nets and losses, and a few
hundred random programs; Python decisions on the data are guarded (never a silent wrong answer);
plus retracing, refusals, errors and composition with eager code."""

from __future__ import annotations

import inspect
import math
import numbers
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from micrograd import MLP, Value, grad
from micrograd.core.compiled import Node
from micrograd.jit import Jitted, TraceError, jit

from .support import jit_programs
from .support.optable import OPS


def plain_field(name: str) -> bool:
    """Value's field `name` is its Node's again (no watcher's property left on Value)."""
    return inspect.getattr_static(Value, name) is Node.__dict__[name]


TOL = 1e-9


# ------------------------------------------------------------------------- helpers


def values(x):  # noqa: ANN001, ANN201 - a nested list of floats -> the same of Values
    return [values(e) for e in x] if isinstance(x, list) else Value(x)


def eager(fn, arrays, params, reduce="mean"):  # noqa: ANN001, ANN201
    """The reference: fn on every sample, summed (or averaged) by the engine, backward."""
    for p in params:
        p.grad = 0.0
    B = len(arrays[0])
    outs = [fn(*[values(a[i].tolist()) for a in arrays]) for i in range(B)]
    total = Value.sum(outs)
    if reduce == "mean":
        total = total * (1.0 / B)
    total.backward()
    return total.data, [p.grad for p in params]


def compiled(f, arrays, params):  # noqa: ANN001, ANN201
    for p in params:
        p.grad = 0.0
    out = f(*arrays)
    out.backward()
    return out.data, [p.grad for p in params]


def close(a: float, b: float, tol: float = TOL) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def assert_close(got, want, tol: float = TOL) -> None:  # noqa: ANN001
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w, tol)
    else:
        assert close(float(got), float(want), tol), (got, want)


def moons_like(B: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(B, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    return X, y


def hinge(model):  # noqa: ANN001, ANN201
    return lambda x, y: (1 + -y * model(x)).relu()


# ------------------------------------------------------------------------- every op, one table


def _inputs(op, rng: random.Random, n: int) -> list[float]:  # noqa: ANN001
    out = []
    while len(out) < n:
        v = rng.uniform(op.low, op.high)
        if op.kink is None or abs(v - op.kink) > 1e-3:
            out.append(v)
    return out


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_table_op_matches_eager_with_each_argument_captured(op) -> None:  # noqa: ANN001
    rng = random.Random(op.name)
    B = 7
    X = np.array([_inputs(op, rng, op.arity) for _ in range(B)])
    for j in range(op.arity):  # argument j is a parameter; the others come from the batch
        p = Value(_inputs(op, rng, 1)[0])

        def fn(x, j=j, p=p):  # noqa: ANN001, ANN202
            return op.ours(*[p if i == j else x[i] for i in range(op.arity)])

        f = jit(fn, reduce="sum")
        assert_close(compiled(f, [X], [p]), eager(fn, [X], [p], "sum"))
        want = [fn(values(row)).data for row in X.tolist()]
        assert_close(list(f.last_outputs), want)


@pytest.mark.parametrize("op", [op for op in OPS if op.arity == 1], ids=lambda op: op.name)
def test_unary_ops_per_sample_through_a_parameter(op) -> None:  # noqa: ANN001
    rng = random.Random(op.name + "2")
    X = np.array(_inputs(op, rng, 9))
    p = Value(0.7)
    fn = lambda x: op.ours(x) * p  # noqa: E731 - d/dp = op(x): checks op's forward per sample
    assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X], [p]))


# ------------------------------------------------------------------------- nets and losses


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear"])
@pytest.mark.parametrize("reduce", ["mean", "sum"])
def test_mlp_hinge_loss_equals_eager(activation: str, fused: bool, reduce: str) -> None:
    random.seed(5)
    model = MLP(2, [8, 6, 1], activation=activation, fused=fused)
    params = model.parameters()
    X, y = moons_like()
    f = jit(hinge(model), reduce=reduce)
    assert_close(compiled(f, [X, y], params), eager(hinge(model), [X, y], params, reduce))


@pytest.mark.parametrize("reduce", ["mean", "sum"])
def test_an_l2_term_written_with_python_sum_inside_fn(reduce: str) -> None:
    # karpathy's `sum((p*p for p in model.parameters()))` inside the per-sample function: a
    # chain of 2x68 + nodes that reads no input. The same numbers as eager; and it is worth
    # compiling (one sum step run once per call, not 136 steps run over the batch).
    random.seed(3)
    model = MLP(2, [8, 6, 1])
    params = model.parameters()

    def loss(x, y):  # noqa: ANN001, ANN202
        return (1 + -y * model(x)).relu() + 1e-2 * sum(p * p for p in model.parameters())

    X, y = moons_like()
    f = jit(loss, reduce=reduce)
    assert_close(compiled(f, [X, y], params), eager(loss, [X, y], params, reduce), tol=1e-12)
    prog = next(iter(f._programs.values()))
    steps = len(prog.forward) + len(prog.prelude.forward)
    assert steps < 15, steps


def test_a_partial_sum_used_twice_stays_a_node_of_its_own() -> None:
    p, q = Value(0.5), Value(-2.0)

    def fn(x, y):  # noqa: ANN001, ANN202
        partial = x[0] + p
        whole = partial + q + x[1]  # a chain of + that `partial` starts, and `partial` again:
        return whole * partial  # it must not be folded away into the chain

    X, y = moons_like(B=5)
    f = jit(fn, reduce="sum")
    assert_close(compiled(f, [X, y], [p, q]), eager(fn, [X, y], [p, q], "sum"), tol=1e-12)


LOSSES = {
    "mse-pow2": lambda out, y: (out - y) ** 2,
    "abs-pow0.5": lambda out, y: ((out - y) ** 2 + 1e-3) ** 0.5,
    "pow-value-exponent": lambda out, y: (out.sigmoid() + 0.5) ** (y + 2.0),
    "bce-with-logits": lambda out, y: (1 + (-y * out).exp()).log(),
    "division": lambda out, y: (out * out + 1) / (y * y + out.tanh() + 2.0),
    "subtraction": lambda out, y: (y - out).tanh() - 1 - out,
    "rpow-exp": lambda out, y: 2.0 ** (out * 0.1) - out.exp() * 0.01,
    "relu": lambda out, y: (1 - y * out).relu() + (out - 3).relu(),
    "reciprocal": lambda out, y: 1 / (out * out + 1),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_equal_eager(name: str) -> None:
    random.seed(11)
    model = MLP(2, [5, 1], activation="tanh", out_activation="tanh")
    params = model.parameters()
    X, y = moons_like(B=10, seed=3)
    fn = lambda x, t: LOSSES[name](model(x), t)  # noqa: E731
    assert_close(compiled(jit(fn), [X, y], params), eager(fn, [X, y], params))


def test_multi_output_cross_entropy_with_sum_and_log() -> None:
    random.seed(2)
    model = MLP(3, [6, 4], activation="relu")
    params = model.parameters()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    T = np.eye(4)[rng.integers(0, 4, size=12)]  # one-hot targets, shape (12, 4)

    def ce(x, t):  # noqa: ANN001, ANN202
        z = model(x)
        lse = Value.sum(zi.exp() for zi in z).log()
        return lse - Value.dot(z, t)  # t is a per-sample one-hot: a dot with data weights

    assert_close(compiled(jit(ce), [X, T], params), eager(ce, [X, T], params))


def test_matches_pytorch_float64() -> None:
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    X, y = moons_like(B=32, seed=7)
    loss, grads = compiled(jit(hinge(model)), [X, y], params)
    Ws = [
        torch.tensor([[w.data for w in n.w] for n in lay.neurons], dtype=torch.float64)
        for lay in model.layers
    ]
    bs = [
        torch.tensor([n.b.data for n in lay.neurons], dtype=torch.float64) for lay in model.layers
    ]
    for t in Ws + bs:
        t.requires_grad_()
    h = torch.tensor(X)
    for k, (W, b) in enumerate(zip(Ws, bs)):
        h = h @ W.T + b
        h = torch.relu(h) if k < 2 else h
    t_loss = torch.relu(1 - torch.tensor(y) * h.squeeze(1)).mean()
    t_loss.backward()
    want = []
    for W, b in zip(Ws, bs):
        for row, bi in zip(W.grad.tolist(), b.grad.tolist()):
            want += row + [bi]
    assert close(loss, t_loss.item())
    assert_close(grads, want)


@pytest.mark.parametrize("B", [1, 2, 300])
def test_each_samples_sums_add_as_the_engine_adds_them_so_outputs_are_its_bits(B: int) -> None:
    # A layer of 32 neurons over 32 inputs (a matrix product step), per-sample weights (weighted
    # sums), a sum node: each sample's output is the eager engine's to the bit, whatever the
    # batch size (numpy's own sum along an axis adds pairwise or in order by the layout; BLAS in
    # its own blocked, fused order). The JavaScript target adds in this order too.
    random.seed(8)
    model = MLP(3, [32, 32, 1], activation="tanh")
    v = Value(0.375)

    def fn(x):  # noqa: ANN001, ANN202
        h = model(x)
        ws = [x[j % 3] * (j + 1) + h for j in range(12)]  # weights from the sample
        d = Value.dot(ws, [x[(j + 1) % 3] for j in range(12)], v)
        return Value.sum([x[j % 3] * (j + 0.5) for j in range(12)] + [h * h, d])

    f, rng = jit(fn), np.random.default_rng(B)
    for _ in range(10 if B < 10 else 1):
        X = rng.normal(size=(B, 3)) * np.exp(rng.normal(size=(B, 3)) * 3)
        assert f.outputs(X).tolist() == [fn(values(row)).data for row in X.tolist()]


def test_nested_per_sample_inputs_and_dot_with_inputs_as_weights() -> None:
    w = [Value(0.3), Value(-1.2), Value(0.5)]
    c = Value(0.25)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2, 3))  # each sample: a 2x3 nested list of Values

    def fn(x):  # noqa: ANN001, ANN202
        a = Value.dot(x[0], w, c)  # the batch on the w side: the swapped fast path
        b = Value.dot(x[0], x[1], c)  # both sides from the batch: the general path
        s = Value.sum([x[1][0], x[1][0], a])  # a child twice
        return a * b + s + Value.dot(w, [x[0][1], x[0][1], 2.0])

    assert_close(compiled(jit(fn), [X], w + [c]), eager(fn, [X], w + [c]))


def test_shared_weights_and_repeated_children() -> None:
    p, q = Value(0.9), Value(-0.4)
    X = np.linspace(-2, 2, 9).reshape(9, 1)

    def fn(x):  # noqa: ANN001, ANN202
        h = [Value.dot([p, p], [x[0], x[0]], q), Value.dot([p, q], [x[0], x[0]], p)]
        return Value.dot([q, p], h, q).tanh() * x[0] * x[0] + p * p

    assert_close(compiled(jit(fn), [X], [p, q]), eager(fn, [X], [p, q]))


def test_output_that_does_not_depend_on_the_batch() -> None:
    p = Value(1.5)
    X = np.zeros((4, 1))
    for fn in (lambda x: p, lambda x: p * p + 1, lambda x: x[0]):
        assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X], [p]))


def test_a_captured_intermediate_value_passes_its_gradient_on() -> None:
    w = Value(0.5)
    h = (w * 3).tanh()  # built before the call: jit reads its .data, the engine backprops it
    X = np.arange(1.0, 6.0)
    fn = lambda x: h * x + w  # noqa: E731
    f = jit(fn)
    out = f(X)
    assert set(out._prev) == {h, w}
    assert_close(compiled(f, [X], [w]), eager(fn, [X], [w]))


def test_nan_and_infinity_follow_the_engine() -> None:
    p = Value(2.0)
    X = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0])
    for fn in (
        lambda x: (x * p).relu(),
        lambda x: (x * p).tanh() + (x * p).sigmoid(),
        lambda x: x * p,
    ):
        assert_close(compiled(jit(fn, reduce="sum"), [X], [p]), eager(fn, [X], [p], "sum"))


# ------------------------------------------------------------------------- composition, API


def test_composes_with_eager_code_and_fills_grads_like_the_eager_graph() -> None:
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    X, y = moons_like(B=20)
    f = jit(hinge(model))
    for p in params:
        p.grad = 0.0
    total = f(X, y) + 1e-4 * sum(p * p for p in params)
    total.backward()
    got = [p.grad for p in params]
    for p in params:
        p.grad = 0.0
    scores = [model(values(row)) for row in X.tolist()]
    losses = [(1 + -yi * si).relu() for yi, si in zip(y.tolist(), scores)]
    want_total = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in params)
    want_total.backward()
    assert close(total.data, want_total.data)
    assert_close(got, [p.grad for p in params])
    # the fused L2 suggested for speed is the same number and gradient
    fused = f(X, y) + 1e-4 * Value.dot(params, params)
    assert close(fused.data, want_total.data)
    assert grad(fused, params[5]) == pytest.approx(params[5].grad, rel=TOL)


def test_one_jit_node_with_the_parameters_as_children() -> None:
    random.seed(0)
    model = MLP(2, [3, 1])
    X, y = moons_like(B=4)
    out = jit(hinge(model))(X, y)
    assert out._op == "jit"
    assert out._prev == tuple(model.parameters())
    assert len(out._local) == len(out._prev)


def test_outputs_and_last_outputs() -> None:
    random.seed(8)
    model = MLP(2, [4, 1])
    X, y = moons_like(B=6)
    f = jit(hinge(model))
    want = [hinge(model)(values(x), t).data for x, t in zip(X.tolist(), y.tolist())]
    assert f.last_outputs is None
    loss = f(X, y)
    assert_close(list(f.last_outputs), want)
    assert close(loss.data, sum(want) / 6)
    scores = jit(lambda x: model(x))
    assert_close(list(scores.outputs(X)), [model(values(x)).data for x in X.tolist()])
    assert scores.outputs(X).shape == (6,)
    assert isinstance(f, Jitted) and "reduce='mean'" in repr(f)


def test_integer_arrays_are_accepted() -> None:
    p = Value(0.5)
    X = np.array([[1, 2], [3, 4]])
    fn = lambda x: x[0] * p + x[1]  # noqa: E731
    assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X.astype(float)], [p]))


# ------------------------------------------------------------------------- tracing


def counting(fn):  # noqa: ANN001, ANN201
    calls = []

    def wrapped(*args):  # noqa: ANN002, ANN202
        calls.append(1)
        return fn(*args)

    return wrapped, calls


def test_parameter_updates_are_picked_up_without_retracing() -> None:
    random.seed(3)
    model = MLP(2, [4, 4, 1])
    params = model.parameters()
    X, y = moons_like(B=16)
    fn, calls = counting(hinge(model))
    f = jit(fn)
    for step in range(4):
        assert_close(compiled(f, [X, y], params), eager(hinge(model), [X, y], params))
        for p in params:
            p.data -= 0.1 * p.grad
        if step == 0:
            traced = len(calls)
    assert f.traces == 1 and len(calls) == traced
    f(X[:5], y[:5])  # another batch size: the same program
    assert f.traces == 1


def test_new_per_sample_shapes_retrace() -> None:
    w = [Value(0.1 * k) for k in range(4)]
    fn = lambda x: Value.dot(w[: len(x)], x).tanh()  # noqa: E731
    f = jit(fn)
    X2, X3 = np.ones((5, 2)), np.ones((5, 3))
    f(X2)
    f(X3)
    assert f.traces == 2
    f(X2)  # both programs are kept
    assert f.traces == 2
    assert_close(compiled(f, [X3], w), eager(fn, [X3], w))


def test_the_issue_example_is_refused_not_answered_wrongly() -> None:
    f = jit(lambda x: x.relu() if x.data > 0 else x * 2)
    want = r"sample 1 .*test_jit\.py:\d+, `x\.data > 0\.0` was True when tracing; for sample 1, -1"
    with pytest.raises(TraceError, match=want):
        f(np.array([1.0, -1.0, 2.0, -5.0, 3.0]))
    assert f.traces == 1  # traced once, on this batch: no second try
    # a batch on which every sample takes the traced path replays it, exactly as eager
    p = Value(1.5)
    fn = lambda x: (x * p).relu() if x.data > 0 else x * p * 2  # noqa: E731
    g = jit(fn)
    X = np.array([1.0, 2.0, 3.0])
    assert_close(compiled(g, [X], [p]), eager(fn, [X], [p]))
    # a batch whose samples all take the other path is traced again
    X = np.array([-1.0, -2.0])
    assert_close(compiled(g, [X], [p]), eager(fn, [X], [p]))
    assert g.traces == 2


def test_decisions_on_intermediate_nodes_are_guarded() -> None:
    p = Value(0.5)

    def fn(x, y):  # noqa: ANN001, ANN202
        h = Value.dot([p, p], x) + y  # a fused node, then an add node: both made while tracing
        if h.data >= 1:
            return h.tanh()
        return h * p

    X = np.array([[1.0, 2.0], [3.0, 1.0], [0.0, 0.1]])
    y = np.array([0.0, 0.0, 0.0])
    with pytest.raises(TraceError, match=r"sample 2 .*\(a '\+' node\)\.data >= 1"):
        jit(fn)(X, y)
    assert_close(compiled(jit(fn), [X[:2], y[:2]], [p]), eager(fn, [X[:2], y[:2]], [p]))


def test_a_decision_on_a_node_outside_the_output_graph_is_still_checked() -> None:
    p = Value(2.0)

    def fn(x):  # noqa: ANN001, ANN202
        probe = (x * 3).tanh()  # only looked at, never part of the result
        return x * p if probe.data < 0.5 else x * p * p

    with pytest.raises(TraceError, match="batch sample 2"):
        jit(fn)(np.array([0.0, 0.1, 1.0]))
    X = np.array([0.0, 0.1, -1.0])
    assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X], [p]))


@pytest.mark.parametrize(
    "pick, ok, bad",
    [
        (lambda v: int(v.data), [0.2, 0.9, 0.0], [0.2, 1.5]),
        (lambda v: round(v.data), [-0.4, 0.4, 0.5], [0.2, 0.6]),  # 0.5 rounds to 0, as Python
        (lambda v: math.floor(v.data), [0.2, 0.9], [0.2, -0.1]),
        (lambda v: math.ceil(v.data) - 1, [0.2, 0.9, 1.0], [0.2, 1.1]),
        (lambda v: math.trunc(v.data), [-0.9, 0.9], [0.9, 1.0]),
        (lambda v: int(bool(v.data)), [1.0, -2.0, math.nan], [1.0, 0.0]),
        (lambda v: int(v.data.is_integer()), [0.5, -0.25], [0.5, 3.0]),
    ],
    ids=["int", "round", "floor", "ceil", "trunc", "bool", "is_integer"],
)
def test_integers_taken_from_data_are_guarded(pick, ok, bad) -> None:  # noqa: ANN001
    w = [Value(0.5), Value(-2.0), Value(3.0)]
    fn = lambda x: w[pick(x)] * x  # noqa: E731
    assert_close(compiled(jit(fn), [np.array(ok)], w), eager(fn, [np.array(ok)], w))
    with pytest.raises(TraceError, match=f"batch sample {len(bad) - 1}"):
        jit(fn)(np.array(bad))


def test_comparing_two_traced_numbers_and_sorting() -> None:
    def fn(x):  # noqa: ANN001, ANN202
        hi = max(x, key=lambda v: v.data)  # Python's max compares the samples' numbers
        return hi * 2 + Value.sum(sorted(x, key=lambda v: v.data)[:1])

    X = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, -1.0]])
    assert_close(compiled(jit(fn), [X], []), eager(fn, [X], []))
    with pytest.raises(TraceError, match="batch sample 1"):
        jit(fn)(np.array([[1.0, 2.0, 0.0], [5.0, 4.0, 0.0]]))


def test_comparing_values_as_pytorch_does_is_a_decision_checked_on_every_sample() -> None:
    p = Value(0.5)
    f = jit(lambda x: x * p if x > 0 else x * p * 2.0)  # v > 0: a bool by the data
    assert f(np.array([1.0, 3.0])).data == 1.0  # mean of 0.5, 1.5: both samples take one path
    assert f(np.array([-1.0, -3.0])).data == -2.0  # both the other path: traced again
    with pytest.raises(TraceError, match=r"at test_jit\.py:\d+, `x\.data > 0\.0` was True"):
        f(np.array([1.0, -2.0]))  # the samples disagree: named, with the line that decided
    g = jit(lambda x: x * p if x >= p else x)  # two Values compared
    assert g(np.array([1.0, 2.0])).data == 0.75
    with pytest.raises(TraceError, match="another path"):
        g(np.array([1.0, 0.1]))


@pytest.mark.parametrize(
    "use",
    [
        lambda x, p: x * p * x.data,  # a number taken from the data as a constant
        lambda x, p: x * Value(x.data),
        lambda x, p: x**x.data,
        lambda x, p: Value.dot([p], [x.data]),
        lambda x, p: Value.sum([x, x.data]),
        lambda x, p: x + (x.data * 2 > 1),  # the comparison is fine; x.data * 2 is not
        lambda x, p: x * math.exp(x.data),
        lambda x, p: x * float(x.data),
        lambda x, p: x * np.float64(x.data),
        lambda x, p: x * abs(x.data),
        lambda x, p: x * -x.data,
        lambda x, p: x * round(x.data, 1),
        lambda x, p: x * len(x.data.hex()),
        lambda x, p: x + sum([x.data]),
        lambda x, p: x * (x * p).data ** 2,
        lambda x, p: (setattr(Value(0.0), "data", x.data), x)[1],  # a number moved to a Value
        lambda x, p: x * float(x),  # as PyTorch's float(t): a number, not a Value
        lambda x, p: x * x.item(),
        lambda x, p: x * math.exp(x),  # math calls float(x)
    ],
)
def test_uses_of_traced_numbers_that_cannot_be_guarded_are_refused(use) -> None:  # noqa: ANN001
    p = Value(1.0)
    f = jit(lambda x: use(x, p))
    with pytest.raises(TraceError, match=r"cannot check per sample: .*at test_jit\.py:\d+"):
        f(np.array([1.0, 2.0]))
    assert f.traces == 0


def test_a_refusal_caught_inside_fn_still_refuses() -> None:
    def fn(x):  # noqa: ANN001, ANN202
        try:
            scale = float(x.data)
        except Exception:  # noqa: BLE001 - what a careless fn might do
            scale = 1.0
        return x * scale

    with pytest.raises(TraceError, match=r"float\(x\.data\)"):
        jit(fn)(np.array([1.0, 2.0]))


def test_backward_inside_fn_is_refused() -> None:
    p = Value(1.0)

    def fn(x):  # noqa: ANN001, ANN202
        out = x * p
        out.backward()  # the gradient of one sample, a number jit cannot replay
        return out * p.grad

    with pytest.raises(TraceError, match=r"inside micrograd's backward\(\).*test_jit\.py"):
        jit(fn)(np.array([1.0, 2.0]))


def test_second_order_terms_inside_fn_are_replayed() -> None:
    # grad(create_graph=True) builds Value ops: jit replays them; its rules' own choices on
    # the data (pow at 0) become guards.
    p = Value(0.7)

    def fn(x):  # noqa: ANN001, ANN202
        out = (x * p).tanh() * x
        (dp,) = grad(out, [p], create_graph=True)
        return out + dp * dp

    X = np.array([0.5, -1.0, 2.0])
    assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X], [p]))


def test_text_of_a_traced_number_pins_its_value() -> None:
    p = Value(1.0)
    shown = []
    fn = lambda x: (shown.append(f"{x.data:.2f}"), x * p)[1]  # noqa: E731
    assert_close(compiled(jit(fn), [np.array([2.0, 2.0])], [p]), (2.0, [2.0]))
    assert shown == ["2.00"]
    with pytest.raises(TraceError, match=r"exact value of x\.data \(turned into text\)"):
        jit(fn)(np.array([2.0, 3.0]))


def test_traced_numbers_are_real_numbers_and_turn_back_into_floats() -> None:
    kept = []

    def fn(x):  # noqa: ANN001, ANN202
        # a real number for fn's type checks, and honest about its class: not a float, whose
        # operations (math.exp, numpy) would read the number without asking
        assert isinstance(x.data, numbers.Real) and not isinstance(x.data, float)
        assert type(x.data).__name__ == "TracedNumber"
        h = x * 2
        kept.extend([x, h])
        return h

    jit(fn)(np.array([1.0, 2.0]))
    assert [type(v.data) for v in kept] == [float, float]
    assert kept[1].data * 3 == 6.0  # after tracing, plain numbers again


def test_a_decision_on_parameters_retraces_when_they_change() -> None:
    p = Value(1.0)
    fn = lambda x: x * p if (p * 1).data > 0 else (x * p).tanh()  # noqa: E731
    f = jit(fn)
    X = np.array([0.5, 1.5, -2.0])
    assert_close(compiled(f, [X], [p]), eager(fn, [X], [p]))
    p.data = -1.0  # an optimiser step across the decision: every sample now takes the other path
    assert_close(compiled(f, [X], [p]), eager(fn, [X], [p]))
    assert f.traces == 2
    g = jit(lambda x: x * p if (x * p).data > 0 else (x * p).tanh())  # mixing x and p
    X = np.array([-0.5, -1.5])
    assert_close(compiled(g, [X], [p]), eager(g.fn, [X], [p]))
    p.data = 1.0
    assert_close(compiled(g, [X], [p]), eager(g.fn, [X], [p]))
    assert g.traces == 2


def test_a_sample_on_another_path_fails_its_guard_before_an_op_it_would_not_run() -> None:
    p = Value(1.0)

    def fn(x):  # noqa: ANN001, ANN202
        h = x.tanh().tanh().tanh()  # deeper than the log below
        return (x * p).log() if h.data > 0 else x * p

    with pytest.raises(TraceError, match="batch sample 1"):  # not log's ValueError
        jit(fn)(np.array([1.0, -2.0]))


def test_new_nodes_made_by_fn_are_constants_and_parameters_are_captured() -> None:
    p = Value(2.0)
    out = jit(lambda x: x * p + Value(3.0) * Value(0.5))(np.ones(3))
    assert out._prev == (p,)


def test_the_module_is_callable_and_exposes_its_names() -> None:
    import micrograd
    import micrograd.jit as mj

    assert mj.TraceError is TraceError and mj.Jitted is Jitted and mj.jit is jit
    assert micrograd.jit is mj
    p = Value(1.0)
    assert isinstance(micrograd.jit(lambda x: x * p), Jitted)
    assert isinstance(mj(lambda x: x * p, reduce="sum"), Jitted)


@pytest.mark.slow
def test_random_programs_agree_with_eager_or_are_refused() -> None:
    # benchmarks/fuzz_jit.py runs thousands; JIT_PROGRAMS=n runs n here
    n = int(os.environ.get("JIT_PROGRAMS", "500"))
    results = [jit_programs.check(seed) for seed in range(n)]
    assert results.count("refused") > n // 10 and results.count("same") > n // 2


# ------------------------------------------------------------------------- errors


@pytest.fixture
def f() -> Jitted:
    p = Value(1.0)
    return jit(lambda x, y: (x[0] * p - y).relu())


def test_empty_batch(f) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="empty batch"):
        f(np.zeros((0, 2)), np.zeros(0))


def test_mismatched_batch_sizes(f) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=r"batch size.*\[3, 4\]"):
        f(np.zeros((3, 2)), np.zeros(4))


@pytest.mark.parametrize("bad", [[[1.0, 2.0]], 3.0, "ab", torch.zeros(3)])
def test_non_arrays(f, bad) -> None:  # noqa: ANN001
    with pytest.raises(TypeError, match="argument 0 must be a numpy array"):
        f(bad, np.zeros(1))


def test_other_bad_inputs(f) -> None:  # noqa: ANN001
    with pytest.raises(TypeError, match="dtype bool"):
        f(np.zeros((2, 2), dtype=bool), np.zeros(2))
    with pytest.raises(TypeError, match="dtype complex"):
        f(np.zeros((2, 2), dtype=complex), np.zeros(2))
    with pytest.raises(ValueError, match="0-d"):
        f(np.zeros((2, 2)), np.array(1.0))
    with pytest.raises(TypeError, match="one array per argument"):
        f()


def test_bad_jit_arguments() -> None:
    with pytest.raises(TypeError, match="callable"):
        jit(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reduce must be one of"):
        jit(lambda x: x, reduce="max")
    with pytest.raises(TypeError, match="must return one Value"):
        jit(lambda x: [x, x])(np.zeros(3))


def test_log_of_a_non_positive_sample_names_log_and_the_value() -> None:
    p = Value(1.0)
    f = jit(lambda x: (x * p).log())  # traces sample 0; fails in the replay
    with pytest.raises(ValueError, match=r"log is defined.*log\(-2\.0\).*batch sample 1"):
        f(np.array([1.0, -2.0, 3.0, 4.0, 5.0]))
    with pytest.raises(ValueError, match=r"log\(0\.0\).*jit: batch sample 0"):
        jit(lambda x: (x * p).log())(np.array([0.0, 3.0, 1.0, 4.0]))


def test_exp_overflow() -> None:
    p = Value(1.0)
    with pytest.raises(OverflowError, match=r"exp\(800\.0\) overflows.*sample 1"):
        jit(lambda x: (x * p).exp())(np.array([1.0, 800.0, 2.0]))


def test_pow_errors_match_the_engine() -> None:
    p = Value(1.0)
    with pytest.raises(ZeroDivisionError, match=r"pow: 0\.0 \*\* -1\.0"):
        jit(lambda x: (x * p) ** -1)(np.array([1.0, 2.0, 0.0]))
    with pytest.raises(ValueError, match=r"pow: -4\.0 \*\* 0\.5 is not a real number"):
        jit(lambda x: (x * p) ** 0.5)(np.array([4.0, 1.0, -4.0]))
    with pytest.raises(OverflowError, match=r"pow: 1e\+200 \*\* 2\.0 overflows"):
        jit(lambda x: (x * p) ** 2)(np.array([1.0, 1e200]))
    with pytest.raises(ValueError, match=r"pow: -2\.0 \*\* 0\.5"):
        jit(lambda x, e: (x * p) ** e)(np.array([1.0, -2.0]), np.array([2.0, 0.5]))


def test_importing_micrograd_jit_does_not_import_numpy() -> None:
    code = "import sys, micrograd.jit; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_function_returning_a_constant() -> None:
    f = jit(lambda x: Value(3.0))
    out = f(np.ones(4))
    assert out.data == 3.0 and out._prev == ()
    assert list(f.last_outputs) == [3.0] * 4


def test_a_decision_on_a_parameter_number_is_guarded_too() -> None:
    p = Value(0.5)
    fn = lambda x: x * p if p.data > 0 else (x * p).tanh()  # noqa: E731 - p.data read directly
    f = jit(fn)
    X = np.array([1.0, -2.0, 3.0])
    assert_close(compiled(f, [X], [p]), eager(fn, [X], [p]))
    p.data = -0.5  # the next step takes the other branch for every sample: traced again
    assert_close(compiled(f, [X], [p]), eager(fn, [X], [p]))
    assert f.traces == 2
    with pytest.raises(TraceError, match=r"arithmetic on x\.data \(\*\)"):
        jit(lambda x: x * (p.data * 2))(X)  # a parameter's number as a constant: stale later


def test_float_gradients_inside_fn_are_refused() -> None:
    p = Value(1.0)

    def fn(x):  # noqa: ANN001, ANN202
        out = (x * p).tanh()
        return out * grad(out, p)  # a number computed from one sample, not a Value op

    with pytest.raises(TraceError, match=r"local derivatives of a traced node.*test_jit\.py"):
        jit(fn)(np.array([1.0, 2.0]))


def test_tracing_leaves_value_and_other_threads_alone() -> None:
    import threading

    p = Value(2.0)
    seen = []
    started, go_on = threading.Event(), threading.Event()

    def reader() -> None:
        started.wait(5)
        # Another thread, while fn is being traced: eager work with everything the tracer
        # watches (reading .data, comparing it, backward(), reading .grad) sees plain floats
        # and leaves no guard or refusal in the trace.
        q = Value(1.5)
        y = (q * p).tanh() + q
        if y.data > 0:
            y.backward()
        seen.append((type(p.data), (p * 3).data, type(y.data), q.grad))
        go_on.set()

    def fn(x):  # noqa: ANN001, ANN202
        started.set()
        go_on.wait(5)
        return x * p

    t = threading.Thread(target=reader)
    t.start()
    f = jit(fn)
    out = f(np.array([1.0, 2.0]))
    t.join()
    want_q = 2.0 * (1 - math.tanh(3.0) ** 2) + 1.0  # d/dq tanh(2q) + q at q = 1.5
    assert seen == [(float, 6.0, float, pytest.approx(want_q, rel=1e-12))]
    assert out.data == pytest.approx((1.0 * 2.0 + 2.0 * 2.0) / 2)  # the batch mean
    (program,) = f._programs.values()
    assert program.graph.guards == []  # the other thread's comparison is not fn's decision
    assert plain_field("data") and plain_field("_local")
    with pytest.raises(TraceError):
        jit(lambda x: x * float(x.data))(np.array([1.0]))
    assert plain_field("data")  # also after a refusal
    assert sys.getprofile() is None


def test_watch_reads_tells_a_watcher_of_its_own_threads_reads_only() -> None:
    # watch.watch_reads, jit's one way into the engine: this thread's reads other than an op's
    # own are told; another thread reading the same Values at the same time is not.
    import threading

    from micrograd.jit.watch import ReadWatcher, watch_reads

    told = []

    class Watcher(ReadWatcher):
        def data(self, v, x, frame):  # noqa: ANN001, ANN201
            told.append(("data", x))
            return x

        def made(self, v):  # noqa: ANN001, ANN201
            told.append(("made", None))

        def grad(self, v, frame):  # noqa: ANN001, ANN201
            told.append(("grad", None))

    a = Value(2.0)
    other = []
    with watch_reads(Watcher()):
        b = a * 3.0  # the op's reads of a.data and 3.0's: not told; the two new Values are
        worker = threading.Thread(target=lambda: other.append(((a * b).data, a.grad, b.data)))
        worker.start()
        worker.join()
        assert b.data == 6.0 and a.grad == 0.0
    assert told == [("made", None), ("made", None), ("data", 6.0), ("grad", None)]
    assert other == [(12.0, 0.0, 6.0)]
    assert plain_field("data")  # the field is back


def test_a_jit_inside_a_traced_function() -> None:
    p = Value(1.5)
    inner = jit(lambda x: x * p, reduce="sum")

    def fn(x):  # noqa: ANN001, ANN202
        if x.data > 0:  # a guard of the outer trace
            inner(np.array([1.0, 2.0]))  # a whole inner trace and replay, nested
        return x * p

    X = np.array([1.0, 2.0])
    assert_close(compiled(jit(fn), [X], [p]), eager(fn, [X], [p]))


def test_reading_a_gradient_inside_fn_is_refused() -> None:
    p = Value(1.0)
    p.grad = 0.25  # left over from the last step: a replay would keep it forever
    with pytest.raises(TraceError, match=r"gradient \(\.grad\) read inside fn.*test_jit\.py"):
        jit(lambda x: x * p * p.grad)(np.array([1.0, 2.0]))
    assert p.grad == 0.25  # outside a trace: a plain read again
    f = jit(lambda x: (repr(p), x * p)[1])  # repr reads .grad inside the engine: fine
    assert_close(compiled(f, [np.array([1.0, 2.0])], [p]), (1.5, [1.5]))
