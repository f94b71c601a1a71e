"""Engine tests driven by the shared op table (tests/optable.py): values and gradients against
PyTorch float64, against central differences, under hypothesis, and on random expression graphs
with shared sub-expressions; plus backward()'s contract (iterative, deterministic, accumulating)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from micrograd import Value, grad, gradcheck, numerical_grad
from micrograd.engine import OPS as ENGINE_OPS
from micrograd.engine import explain_local, op_kind
from tests.optable import OPS, Op, ours_value_and_grads, torch_value_and_grads

TOL = dict(rel_tol=1e-9, abs_tol=1e-12)


def close(a: float, b: float, **tol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, **(tol or TOL))


def sample(op: Op, rng: random.Random) -> list[float]:
    xs = []
    for _ in range(op.arity):
        x = rng.uniform(op.low, op.high)
        if op.kink is not None and abs(x - op.kink) < 1e-3:
            x += 0.01
        xs.append(x)
    return xs


def assert_matches_torch(op: Op, xs: list[float]) -> None:
    ours, our_grads = ours_value_and_grads(op, xs)
    theirs, their_grads = torch_value_and_grads(op, xs)
    assert close(ours, theirs), f"{op.name}{xs}: value {ours!r} vs torch {theirs!r}"
    for i, (g, h) in enumerate(zip(our_grads, their_grads)):
        assert close(g, h), f"{op.name}{xs}: grad {i} {g!r} vs torch {h!r}"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_matches_pytorch(op: Op) -> None:
    rng = random.Random(op.name)
    for _ in range(25):
        assert_matches_torch(op, sample(op, rng))


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_matches_central_differences(op: Op) -> None:
    rng = random.Random("fd" + op.name)
    for _ in range(10):
        assert gradcheck(op.ours, sample(op, rng), h=1e-6, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_under_hypothesis(op: Op) -> None:
    elements = st.floats(op.low, op.high, allow_nan=False, allow_infinity=False)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(elements, min_size=op.arity, max_size=op.arity))
    def check(xs: list[float]) -> None:
        if op.kink is not None and any(abs(x - op.kink) < 1e-9 for x in xs):
            return  # the derivative at the kink itself is a convention, tested separately
        assert_matches_torch(op, xs)

    check()


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_symbolic_rule_agrees_with_local_derivatives(op: Op) -> None:
    # grad(create_graph=True) uses the @_rule formulas; backward() uses the floats each op stores.
    rng = random.Random("rule" + op.name)
    for _ in range(5):
        xs = sample(op, rng)
        vs = [Value(x) for x in xs]
        out = op.ours(*vs)
        plain = grad(out, vs)
        symbolic = grad(out, vs, create_graph=True)
        for p, s in zip(plain, symbolic):
            assert isinstance(s, Value)
            assert close(p, s.data)


def test_every_primitive_has_a_symbolic_rule() -> None:
    ops = {"+", "*", "**", "**p", "exp", "log", "tanh", "sigmoid", "ReLU", "dot", "sum"}
    assert ops <= set(ENGINE_OPS)
    x = Value(2.0)
    assert op_kind(x**-1) == "**p" and (x**-1)._op == "**-1" and (x**-1)._p == -1.0
    assert op_kind(x ** Value(2.0)) == "**"


@pytest.mark.parametrize(
    "op", [op for op in OPS if op.arity == 1 and op.twice], ids=lambda o: o.name
)
def test_second_derivatives_match_pytorch(op: Op) -> None:
    rng = random.Random("2nd" + op.name)
    for _ in range(5):
        (x0,) = sample(op, rng)
        x = Value(x0)
        d1 = grad(op.ours(x), x, create_graph=True)
        d2 = grad(d1, x)
        t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (t1,) = torch.autograd.grad(op.torch(t), t, create_graph=True)
        (t2,) = torch.autograd.grad(t1, t) if t1.requires_grad else (torch.tensor(0.0),)
        assert close(d1.data, t1.item())
        assert close(d2, t2.item(), rel_tol=1e-9, abs_tol=1e-9)


# --------------------------------------------------------------------------- random graphs
# A program is a list of steps (op name, argument indices into the values so far). Running it on
# micrograd and on PyTorch builds the same graph; indices repeat, so sub-expressions are shared.

GRAPH_OPS = ["add", "sub", "mul", "tanh", "sigmoid", "square", "exp", "dot", "sum", "neg"]


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[float], list[tuple[str, list[int]]]]:
    n_leaves = draw(st.integers(2, 4))
    leaves = draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=n_leaves, max_size=n_leaves))
    steps = []
    for i in range(draw(st.integers(1, 12))):
        name = draw(st.sampled_from(GRAPH_OPS))
        arity = next(op.arity for op in OPS if op.name == name)
        args = draw(st.lists(st.integers(0, n_leaves + i - 1), min_size=arity, max_size=arity))
        steps.append((name, args))
    return leaves, steps


def run_program(leaves, steps, make_leaf, apply_op, squash, data):
    values = [make_leaf(x) for x in leaves]
    for name, args in steps:
        v = apply_op(name, [values[i] for i in args])
        if abs(data(v)) > 5:  # keep magnitudes tame so exp never overflows
            v = squash(v)
        values.append(v)
    return values


@settings(max_examples=150, deadline=None)
@given(programs())
def test_random_graphs_with_shared_subexpressions_match_pytorch(program) -> None:
    leaves, steps = program
    ops = {op.name: op for op in OPS}
    ours = run_program(
        leaves, steps, Value, lambda n, a: ops[n].ours(*a), lambda v: v.tanh(), lambda v: v.data
    )
    ts = run_program(
        leaves,
        steps,
        lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True),
        lambda n, a: ops[n].torch(*a),
        lambda t: t.tanh(),
        lambda t: t.item(),
    )
    # Squashing decisions follow each side's own data: they agree because values agree to 1e-9.
    out, tout = ours[-1], ts[-1]
    out.backward()
    tout.backward()
    assert close(out.data, tout.item())
    for v, t in zip(ours[: len(leaves)], ts[: len(leaves)]):
        assert close(
            v.grad, t.grad.item() if t.grad is not None else 0.0, rel_tol=1e-9, abs_tol=1e-9
        )


# --------------------------------------------------------------------------- the Value object


def test_lecture_constructor_and_fields() -> None:
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    d = Value(a.data * b.data, (a, b), "*")  # the lecture's positional form
    assert (d.data, d._prev, d._op, d.label, d.grad) == (-6.0, (a, b), "*", "", 0.0)
    e = a * b
    assert e._prev == (a, b) and e._op == "*"
    assert repr(Value(2.0)) == "Value(data=2.0, grad=0.0)"


@pytest.mark.parametrize(
    "number", [3, 2.5, Fraction(1, 4), np.float64(1.5), np.int64(7), np.float32(0.5)]
)
def test_accepts_any_real_number(number) -> None:
    v = Value(number)
    assert v.data == float(number) and type(v.data) is float
    assert (v + number).data == 2 * float(number)
    assert (number + v).data == 2 * float(number)
    assert (number * v).data == float(number) ** 2


def test_values_hash_and_compare_by_identity() -> None:
    a, b = Value(1.0), Value(1.0)
    assert a != b and a == a
    assert len({a, b, a}) == 2
    assert {a: 1}[a] == 1


def test_numpy_scalar_on_the_left_gives_a_value() -> None:
    v = Value(2.0)
    for out in (np.float64(3.0) * v, np.int64(3) * v, -np.int64(1) * v + 1):
        assert isinstance(out, Value)


def test_tanh_and_sigmoid_are_stable_at_the_extremes() -> None:
    for x, t, s in ((1e308, 1.0, 1.0), (-1e308, -1.0, 0.0), (800.0, 1.0, 1.0)):
        v = Value(x)
        assert v.tanh().data == t
        assert v.sigmoid().data == s
        v.tanh().backward()
        assert v.grad == 0.0


def test_pow_with_value_exponent_conventions() -> None:
    # The Go article squares a negative residual with a Value exponent:
    # the base's gradient is right, the exponent's is NaN.
    a, b = Value(-3.2), Value(2.0)
    out = a**b
    out.backward()
    assert math.isclose(out.data, 10.24) and math.isclose(a.grad, -6.4)
    assert math.isnan(b.grad)
    ta = torch.tensor(-3.2, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (ta**tb).backward()
    assert math.isnan(tb.grad.item()) and math.isclose(ta.grad.item(), a.grad)
    z, e = Value(0.0), Value(2.0)
    (z**e).backward()
    assert (z.grad, e.grad) == (0.0, 0.0)


def test_relu_derivative_at_zero_is_zero_like_pytorch() -> None:
    v = Value(0.0)
    v.relu().backward()
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    t.relu().backward()
    assert v.grad == t.grad.item() == 0.0


def test_sqrt_at_zero_has_infinite_slope_like_pytorch() -> None:
    v = Value(0.0)
    (v**0.5).backward()
    assert v.grad == math.inf


def test_lecture_manual_backward_step_by_step() -> None:
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    x1w1, x2w2 = x1 * w1, x2 * w2
    x1w1x2w2 = x1w1 + x2w2
    n = x1w1x2w2 + b
    o = n.tanh()
    o.grad = 1.0
    for node in (o, n, x1w1x2w2, x2w2, x1w1):  # the lecture calls them by hand, in this order
        node._backward()
    assert math.isclose(n.grad, 0.5)
    assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]


def test_a_learner_can_assign_a_closure_as_backward() -> None:
    # The lecture's own way of writing an op: out._backward = _backward.
    a = Value(3.0)
    out = Value(a.data**2, (a,), "square")

    def _backward() -> None:
        a.grad += 2 * a.data * out.grad

    out._backward = _backward
    (out * 2).backward()
    assert a.grad == 12.0


# --------------------------------------------------------------------------- backward's contract


def test_backward_twice_accumulates_into_leaves_only() -> None:
    x = Value(3.0)
    y = x * x * x
    y.backward()
    assert x.grad == 27.0
    y.backward()
    assert x.grad == 54.0  # karpathy's micrograd gives 72: it also accumulates intermediates
    t = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    ty = t * t * t
    ty.backward(retain_graph=True)
    ty.backward()
    assert t.grad.item() == x.grad


def test_backward_is_deterministic() -> None:
    def build() -> tuple[Value, list[Value]]:
        rng = random.Random(7)
        leaves = [Value(rng.uniform(-1, 1)) for _ in range(30)]
        nodes = list(leaves)
        for _ in range(400):
            a, b = rng.choice(nodes), rng.choice(nodes)
            nodes.append((a * b + a).tanh())
        return Value.sum(nodes[-50:]) + sum(nodes[-80:]), leaves

    runs = []
    for _ in range(3):
        out, leaves = build()
        out.backward()
        runs.append([v.grad.hex() for v in leaves])
    assert runs[0] == runs[1] == runs[2]


def test_million_deep_chain() -> None:
    x = Value(0.5)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0
    g = grad(y, x)
    assert g == 1.0


def test_two_hundred_thousand_term_sum() -> None:
    xs = [Value(float(i % 7)) for i in range(200_000)]
    s = sum(xs)  # a 200,000-deep left-leaning chain of + nodes
    s.backward()
    assert s.data == float(sum(i % 7 for i in range(200_000)))
    assert all(v.grad == 1.0 for v in xs)


def test_backward_of_a_leaf() -> None:
    x = Value(2.0)
    x.backward()
    assert x.grad == 1.0


# --------------------------------------------------------------------------- grad()


def test_grad_returns_without_touching_dot_grad() -> None:
    a, b = Value(2.0), Value(-3.0)
    out = a * b + a
    ga, gb = grad(out, [a, b])
    assert (ga, gb) == (-2.0, 2.0)
    assert (a.grad, b.grad) == (0.0, 0.0)
    assert grad(out, a) == -2.0
    assert grad(out, [Value(1.0)]) == (0.0,)  # an input the output does not depend on


def test_second_derivative_of_cube() -> None:
    x = Value(2.0)
    dy = grad(x**3, x, create_graph=True)
    assert isinstance(dy, Value) and dy.data == 12.0
    assert grad(dy, x) == 12.0  # d²/dx² x³ = 6x


def test_newtons_method_with_grad() -> None:
    x = Value(2.0)
    for _ in range(6):
        f = x**3 - 2 * x - 5
        x = Value(x.data - f.data / grad(f, x))
    assert x.data == 2.0945514815423265


def test_newton_optimisation_with_second_derivatives() -> None:
    # Minimise f(x) = x⁴ - 3x² + x with Newton steps x -= f'(x) / f''(x), both from grad().
    x = Value(1.5)
    for _ in range(20):
        f = x**4 - 3 * x**2 + x
        d1 = grad(f, x, create_graph=True)
        x = Value(x.data - d1.data / grad(d1, x))
    assert math.isclose(4 * x.data**3 - 6 * x.data + 1, 0.0, abs_tol=1e-12)
    assert 12 * x.data**2 - 6 > 0


def test_numerical_grad_is_central_differences() -> None:
    # f(x) = x³ at 2: central differences have error h² exactly, so the slope is 12 + h².
    (slope,) = numerical_grad(lambda x: x**3, [2.0], h=1e-3)
    assert math.isclose(slope, 12 + 1e-6, rel_tol=1e-9)


def test_gradcheck_reports_a_wrong_derivative() -> None:
    def bad(x: Value) -> Value:
        return Value(x.data**2, (x,), "bad", "", (1.0,))  # the local derivative should be 2x

    with pytest.raises(ValueError, match="backprop gives 1.0"):
        gradcheck(bad, [3.0])
    assert gradcheck(bad, [3.0], raise_exception=False) is False


def test_higher_derivatives_of_powers_at_zero_match_pytorch() -> None:
    for p in (2, 3, 0.5):
        x, t = Value(0.0), torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
        y, ty = x**p, t**p
        for _ in range(3 if p != 0.5 else 1):
            y = grad(y, x, create_graph=True)
            (ty,) = torch.autograd.grad(ty, t, create_graph=True)
            assert y.data == ty.item(), (p, y.data, ty.item())
            if not ty.requires_grad:
                break


def test_gradcheck_works_on_a_learners_own_closure_op() -> None:
    def cube(s: Value) -> Value:
        out = Value(s.data**3, (s,), "cube")

        def _backward() -> None:
            s.grad += 3 * s.data**2 * out.grad

        out._backward = _backward
        return out

    assert gradcheck(lambda a: cube(a) * 2, [0.7])


def test_dot_lifts_plain_number_weights() -> None:
    x, y = Value(3.0), Value(4.0)
    out = Value.dot([1.0, 2.0], [x, y], 0.5)
    out.backward()
    assert (out.data, x.grad, y.grad) == (11.5, 1.0, 2.0)


def test_gradcheck_takes_values_or_numbers() -> None:
    assert gradcheck(lambda a: (a * a).tanh(), [Value(0.3)])
    assert numerical_grad(lambda a: a * a, [Value(3.0)], h=1e-3)[0] == pytest.approx(6.0)
    with pytest.raises(TypeError, match="real number"):
        gradcheck(lambda a: a, ["0.3"])


# --------------------------------------------------------------------------- the op registry


def test_explain_local_fills_in_the_names() -> None:
    a, b, x = Value(2.0), Value(-3.0), Value(3.0)
    e = a * b
    assert explain_local(e, ["a", "b"], "e") == ("b", "a")
    assert explain_local(e.tanh(), ["e"], "o") == ("1 - o²",)
    assert explain_local(x**2, ["x"], "y") == ("2·x",)
    assert explain_local(x**3, ["x"], "y") == ("3·x²",)
    assert explain_local(a + b, ["a", "b"], "c") == ("1", "1")
    assert explain_local(Value.dot([a, b], [x, x], 1.0), ["w1", "w2", "x1", "x2", "b"], "n") == (
        "x1",
        "x2",
        "w1",
        "w2",
        "1",
    )
    assert explain_local(x, [], "x") == ()
    with pytest.raises(ValueError, match="2 children but 1 names"):
        explain_local(e, ["a"], "e")


def test_registry_forward_is_the_value_method() -> None:
    assert ENGINE_OPS["tanh"].forward(0.5) == (math.tanh(0.5), (1 - math.tanh(0.5) ** 2,))
    assert ENGINE_OPS["**p"].forward(3.0, p=2.0) == (9.0, (6.0,))
    assert ENGINE_OPS["dot"].forward(1.0, 2.0, 3.0, 4.0, 0.5) == (11.5, (3.0, 4.0, 1.0, 2.0, 1.0))
    assert ENGINE_OPS["*"].formula == "d/da = b, d/db = a"
    assert ENGINE_OPS["tanh"].formula == "d/da = 1 - out²"
