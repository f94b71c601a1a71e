"""Engine tests driven by the shared op table (tests/support/optable.py): values and gradients
against PyTorch float64, against central differences, under hypothesis, and on random expression
graphs with shared sub-expressions; plus backward()'s contract (iterative, deterministic,
accumulating)."""

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
from micrograd.nn import ACTIVATIONS
from tests.support.optable import BY_NAME, OPS, Op, ours_value_and_grads, torch_value_and_grads

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
        d2 = grad(d1, x, allow_unused=True)
        d2 = 0.0 if d2 is None else d2  # a constant d1 (of x + c): PyTorch's 0 below
        t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (t1,) = torch.autograd.grad(op.torch(t), t, create_graph=True)
        (t2,) = torch.autograd.grad(t1, t) if t1.requires_grad else (torch.tensor(0.0),)
        assert close(d1.data, t1.item())
        assert close(d2, t2.item(), rel_tol=1e-9, abs_tol=1e-9)


# --------------------------------------------------------------------------- random graphs
# A program is a list of steps (a row of the op table, argument indices into the values so far).
# Running it on micrograd and on PyTorch builds the same graph; indices repeat, so sub-expressions
# are shared. Every op of the table takes part (an op added there is drawn too); each argument is
# first squashed into the op's input range (lo + (hi - lo)·sigmoid(v)), on both sides alike.


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[float], list[tuple[Op, list[int]]]]:
    n_leaves = draw(st.integers(2, 4))
    leaves = draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=n_leaves, max_size=n_leaves))
    steps = []
    for i in range(draw(st.integers(1, 12))):
        op = draw(st.sampled_from(OPS))
        args = draw(
            st.lists(st.integers(0, n_leaves + i - 1), min_size=op.arity, max_size=op.arity)
        )
        steps.append((op, args))
    return leaves, steps


def run_program(leaves, steps, make_leaf, apply_op, sigmoid):  # noqa: ANN001, ANN201
    values = [make_leaf(x) for x in leaves]
    for op, args in steps:
        squashed = [op.low + (op.high - op.low) * sigmoid(values[i]) for i in args]
        values.append(apply_op(op, squashed))
    return values


@settings(max_examples=150, deadline=None)
@given(programs())
@pytest.mark.slow
def test_random_graphs_of_every_op_with_shared_subexpressions_match_pytorch(program) -> None:
    leaves, steps = program
    ours = run_program(leaves, steps, Value, lambda op, a: op.ours(*a), lambda v: v.sigmoid())
    ts = run_program(
        leaves,
        steps,
        lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True),
        lambda op, a: op.torch(*a),
        torch.sigmoid,
    )
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


@pytest.mark.slow
def test_million_deep_chain() -> None:
    x = Value(0.5)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0
    g = grad(y, x)
    assert g == 1.0


@pytest.mark.slow
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


def test_grad_of_an_input_the_output_does_not_use_raises_or_is_none_as_in_pytorch() -> None:
    a, b, unused = Value(2.0), Value(-3.0), Value(1.0, label="u")
    out = (a * b).relu()  # relu at rest: a and b are used, their gradients 0
    with pytest.raises(ValueError, match=r"^grad: input 2 Value\(data=1.0, .*allow_unused=True"):
        grad(out, [a, b, unused])
    with pytest.raises(ValueError, match=r"^grad: the input Value\(data=1.0"):
        grad(out, unused, create_graph=True)
    ours = grad(out, [a, b, unused], allow_unused=True)
    ta, tb, tu = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (2, -3, 1))
    with pytest.raises(RuntimeError, match="appears to not have been used"):  # PyTorch raises too
        torch.autograd.grad((ta * tb).relu(), [ta, tb, tu])
    theirs = torch.autograd.grad((ta * tb).relu(), [ta, tb, tu], allow_unused=True)
    assert ours == (0.0, 0.0, None)
    assert [None if t is None else t.item() for t in theirs] == [0.0, 0.0, None]
    assert grad(out, [unused], allow_unused=True, create_graph=True) == (None,)


def test_float_item_and_comparisons_read_the_number_as_pytorch_does() -> None:
    pairs = [(2.0, 3.0), (3.0, 3.0), (-1.5, -2.0), (0.0, -0.0), (1.0, math.nan)]
    symbols = {"<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
    for x, y in pairs:
        v, w = Value(x), Value(y)
        t, u = torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
        assert float(v) == v.item() == float(t) == t.item() == x and type(v.item()) is float
        for symbol, method in symbols.items():
            want = bool(getattr(t, method)(u))
            for got in (getattr(v, method)(w), getattr(v, method)(y), getattr(w, method)(v)):
                assert type(got) is bool, (symbol, got)
            assert getattr(v, method)(w) is want, (x, symbol, y)
            assert getattr(v, method)(y) is want  # a plain number on the right
            assert getattr(u, method)(t).item() is getattr(w, method)(v)
        assert (x < v) is (x < t).item() and (1 > v) is bool(1 > t)  # a number on the left
    assert max([Value(1.0), Value(4.0), Value(2.0)]).data == 4.0


def test_equality_and_hash_stay_identity_so_graphs_keep_values_in_sets() -> None:
    a, b = Value(2.0), Value(2.0)
    assert a <= b and a >= b and not a < b  # the same number...
    assert a != b and a == a and len({a, b}) == 2  # ...but two nodes
    assert {a: 1, b: 2}[b] == 2


def test_comparing_with_something_not_a_number_names_the_op_and_the_value() -> None:
    for bad in ("1", None, [1.0], True):
        with pytest.raises(TypeError, match=r"^unsupported operand for >: Value\(data=1.0"):
            Value(1.0) > bad  # noqa: B015
    with pytest.raises(TypeError, match="unsupported operand for <="):
        Value(1.0) <= "x"  # noqa: B015


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


def _applied(kind: str, *xs: float, p: float | None = None) -> tuple[float, tuple]:
    node = ENGINE_OPS[kind].apply(*(Value(x) for x in xs), p=p)
    return node.data, tuple(node._local)


def test_registry_apply_builds_the_op_from_its_declaration() -> None:
    assert _applied("tanh", 0.5) == (math.tanh(0.5), (1 - math.tanh(0.5) ** 2,))
    assert _applied("**p", 3.0, p=2.0) == (9.0, (6.0,))
    assert _applied("dot", 1.0, 2.0, 3.0, 4.0, 0.5) == (11.5, (3.0, 4.0, 1.0, 2.0, 1.0))
    assert _applied("maximum", 2.0, 2.0) == (2.0, (0.5, 0.5))
    x, y = Value(3.0), Value(-2.0)
    for node in (x**2.5, x.maximum(y), Value.dot([x], [y], 1.0)):  # rebuilt on other children
        info = ENGINE_OPS[op_kind(node)]
        again = info.apply(*(Value(c.data + 1.0) for c in node._prev), p=info.parameter(node))
        assert op_kind(again) == op_kind(node) and again._op == node._op
    assert (again.data, ENGINE_OPS["**p"].parameter(x**2.5), ENGINE_OPS["*"].parameter(x)) == (
        4.0 * -1.0 + 2.0,
        2.5,
        None,
    )
    assert ENGINE_OPS["*"].formula == "d/da = b, d/db = a"
    assert ENGINE_OPS["tanh"].formula == "d/da = 1 - out²"


@pytest.mark.slow
def test_one_rule_gives_the_floats_the_text_and_the_second_derivative() -> None:
    # An op declared with its rule alone (a throwaway registry entry, removed after): the eager
    # node's floats, the text and the second-derivative rule all come from that one rule.
    from micrograd.core import registry

    def cube(self: Value) -> Value:
        info = ENGINE_OPS["cube"]
        out = info.value_on_floats(self.data)
        return Value(out, (self,), "cube", "", info.on_floats(out, self.data))

    rule = lambda xp, out, a: (3.0 * a * a / xp.power(1.0 - -a, 0.5),)  # noqa: E731
    try:
        registry.op("cube", 1, forward=lambda xp, a: a * a * a, local=rule)(cube)
        info = ENGINE_OPS["cube"]
        assert info.formula == "d/da = 3·a·a/(1 - (-a))^0.5"
        x = Value(0.5)
        node = cube(x)
        assert node._local == (3.0 * 0.5 * 0.5 / 1.5**0.5,)
        assert explain_local(node, ["x"], "y") == ("3·x·x/(1 - (-x))^0.5",)
        (d,) = info.on_values(node)
        assert isinstance(d, Value) and d.data == node._local[0]
        t = torch.tensor(0.5, dtype=torch.float64)
        want = torch.func.grad(lambda t: 3 * t * t / (1 + t) ** 0.5)(t).item()
        assert grad(d, x) == pytest.approx(want, rel=1e-12)  # the second derivative, vs PyTorch
        assert grad(grad(cube(x), x, create_graph=True), x) == pytest.approx(want, rel=1e-12)
    finally:
        ENGINE_OPS.pop("cube", None)


def test_a_rule_calling_a_function_values_lack_says_what_to_declare() -> None:
    from micrograd.core import registry

    def sgn(self: Value) -> Value:
        local = ENGINE_OPS["sgn"].on_floats(0.0, self.data)
        return Value(abs(self.data), (self,), "sgn", "", local)

    try:
        registry.op(
            "sgn", 1, forward=lambda xp, a: xp.abs(a), local=lambda xp, out, a: (xp.sign(a),)
        )(sgn)
        x = Value(-2.0)
        assert sgn(x)._local == (-1.0,)  # floats have it (numpy's name)
        assert explain_local(sgn(x), ["x"], "y") == ("sign(x)",)
        with pytest.raises(AttributeError, match=r"xp\.sign, which is neither an op nor declared"):
            grad(sgn(x), x, create_graph=True)
    finally:
        ENGINE_OPS.pop("sgn", None)


def _kinds_built_by(op: Op) -> set[str]:
    """The registry kinds of the nodes a table row's micrograd function builds."""
    rng = random.Random(op.name)
    out = op.ours(*[Value(x) for x in sample(op, rng)])
    nodes, stack = set(), [out]
    while stack:
        v = stack.pop()
        if v not in nodes:
            nodes.add(v)
            stack.extend(v._prev)
    return {op_kind(v) for v in nodes if v._prev}


def test_registry_jit_expression_language_and_op_table_cover_the_same_ops() -> None:
    # One truth, the registry; each consumer is checked against it, not against a list here.
    from micrograd.expr import ARITY, FUNCTIONS
    from micrograd.jit import _elementwise
    from micrograd.jit.plan import KERNELS

    registry = set(ENGINE_OPS)
    assert set().union(*(_kinds_built_by(op) for op in OPS)) == registry
    # jit: a numpy rule for every op, except the many-child ones it compiles specially
    elementwise = {k: _elementwise(k) for k in registry if _elementwise(k) is not None}
    assert set(elementwise) | set(KERNELS) == registry
    assert all(ENGINE_OPS[k].arity == rules[0] for k, rules in elementwise.items())
    # the expression language: every fixed-arity op with a public method of its own, as a
    # function taking the declared number of arguments
    named = {
        k
        for k, info in ENGINE_OPS.items()
        if info.arity and not info.param and not info.method.__name__.startswith("_")
    }
    assert {ENGINE_OPS[k].method for k in named} == set(FUNCTIONS.values())
    assert {ENGINE_OPS[k].method.__name__: ENGINE_OPS[k].arity for k in named} == ARITY
    assert all(name in BY_NAME for name in FUNCTIONS)  # each has its row in the op table
    for info in ENGINE_OPS.values():  # each op explains itself in words and is a Value method
        assert info.formula, f"{info.name}: no formula"
        assert getattr(Value, info.method.__name__, None) is not None, info.name


# --------------------------------------------------------------------------- edge points
# NaN, ±inf, 0 and ±1e308 in each argument (the others at a generic point), against PyTorch.
# The policy: finite inputs give a finite value or an error, exactly where PyTorch's value is not
# finite; NaN and ±inf put in give PyTorch's value and gradients, except that the domain errors
# (ValueError: log of x <= 0, a negative base to a non-integer power; ZeroDivisionError: a zero
# divisor, zero to a negative power) stand for any input but NaN -- where PyTorch's value is NaN
# or inf anyway. OverflowError only ever comes from finite inputs.

EDGES = (math.nan, math.inf, -math.inf, 0.0, 1e308, -1e308)


def edge_points(op: Op) -> list[list[float]]:
    """Each edge value in each argument (the others at a generic point), then the row's own whole
    points (a two-input op's ties, zeros and infinities together)."""
    base = sample(op, random.Random("edge" + op.name))
    points = []
    for i in range(op.arity):
        for e in (*EDGES, *op.edges):
            xs = list(base)
            xs[i] = e
            points.append(xs)
    return points + [list(p) for p in op.points]


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)


def check_edge(op: Op, xs: list[float]) -> None:
    with np.errstate(all="ignore"):
        theirs, their_grads = torch_value_and_grads(op, xs)
    finite_in = all(map(math.isfinite, xs))
    try:
        ours, our_grads = ours_value_and_grads(op, xs)
    except (ArithmeticError, ValueError) as e:
        assert not math.isfinite(theirs), f"{op.name}{xs}: raised {e!r}, torch gives {theirs!r}"
        assert finite_in or not isinstance(e, OverflowError), f"{op.name}{xs}: {e!r}"
        assert not any(map(math.isnan, xs)), f"{op.name}{xs}: a NaN must propagate, got {e!r}"
        return
    assert not (finite_in and not math.isfinite(theirs)), (
        f"{op.name}{xs}: finite inputs, torch {theirs!r}, ours {ours!r} without an error"
    )
    assert same(ours, theirs), f"{op.name}{xs}: value {ours!r} vs torch {theirs!r}"
    for i, (g, h) in enumerate(zip(our_grads, their_grads)):
        assert same(g, h), f"{op.name}{xs}: grad {i} {g!r} vs torch {h!r}"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_at_edge_points_matches_pytorch_or_raises_by_the_policy(op: Op) -> None:
    for xs in edge_points(op):
        check_edge(op, xs)


@pytest.mark.parametrize("op", [op for op in OPS if op.arity == 1], ids=lambda o: o.name)
def test_second_derivatives_at_edge_points_match_pytorch(op: Op) -> None:
    for (x0,) in edge_points(op):
        x = Value(x0)
        try:
            y = op.ours(x)
        except (ArithmeticError, ValueError):
            continue  # refused by the policy, checked above
        d1 = grad(y, x, create_graph=True)
        d2 = grad(d1, x, allow_unused=True)
        d2 = 0.0 if d2 is None else d2  # a constant d1 (of x + c): PyTorch's 0 below
        t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (t1,) = torch.autograd.grad(op.torch(t), t, create_graph=True)
        (t2,) = torch.autograd.grad(t1, t) if t1.requires_grad else (torch.tensor(0.0),)
        assert same(d1.data, t1.item()), f"{op.name}({x0}): d1 {d1.data!r} vs {t1.item()!r}"
        assert same(d2, t2.item()), f"{op.name}({x0}): d2 {d2!r} vs torch {t2.item()!r}"


def _eager(fn, X: list[float], params: list[Value]):  # noqa: ANN001, ANN202
    """Per-sample values and the parameters' summed gradients, or the first sample's error."""
    outs = []
    for k, x in enumerate(X):
        try:
            out = fn(Value(x))
        except (ArithmeticError, ValueError) as e:
            return k, e
        outs.append(out)
    for p in params:
        p.grad = 0.0
    for out in outs:
        out.backward()  # parameters are leaves: their grads add up over the samples
    return [o.data for o in outs], [p.grad for p in params]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_jit_agrees_with_the_engine_at_edge_points(op: Op) -> None:
    # The same policy, batch-wise: each edge point as one sample among generic ones; one argument
    # of the op comes from the batch, the others are parameters (captured Values).
    from micrograd.jit import jit

    generic = sample(op, random.Random("jit-edge" + op.name))
    for xs in edge_points(op):
        params = [Value(x) for x in xs]
        for j in range(op.arity):

            def fn(x: Value, j: int = j, params: list[Value] = params) -> Value:
                return op.ours(*[x if i == j else params[i] for i in range(op.arity)])

            X = [generic[j], xs[j], generic[j]]
            want = _eager(fn, X, params)
            if isinstance(want[1], Exception):
                k, e = want
                with pytest.raises(type(e)) as info:
                    jit(fn, reduce="sum")(np.array(X))
                assert str(e) in str(info.value) and f"batch sample {k}" in str(info.value)
                continue
            outs, grads = want
            for p in params:
                p.grad = 0.0
            f = jit(fn, reduce="sum")
            with np.errstate(all="ignore"):  # jit's sum over the batch may be inf or NaN here
                f(np.array(X)).backward()
            assert all(map(same, f.last_outputs.tolist(), outs)), (op.name, xs, j)
            for p, g in zip(params, grads):
                assert same(p.grad, g), (op.name, xs, j, p.grad, g)


# --------------------------------------------------------------------------- the overflow policy


@pytest.mark.parametrize(
    "expr, words",
    [
        (lambda: Value(1e308) * 10, "multiplication: 1e+308 * 10.0 overflows"),
        (lambda: 10 * Value(1e308), "multiplication: 10.0 * 1e+308 overflows"),
        (lambda: Value(1e308) + 1e308, "addition: 1e+308 + 1e+308 overflows"),
        (lambda: Value(-1e308) - 1e308, "subtraction: -1e+308 - 1e+308 overflows"),
        (lambda: -1e308 - Value(1e308), "subtraction: -1e+308 - 1e+308 overflows"),
        (lambda: Value(1.0) / 1e-320, "division: 1.0 / 1e-320 overflows"),
        (lambda: Value(1e300) / 1e-10, "division: 1e+300 / 1e-10 overflows"),
        (lambda: 1e300 / Value(1e-10), "division: 1e+300 / 1e-10 overflows"),
        (lambda: Value(1e200) ** 2, "pow: 1e+200 ** 2.0 overflows"),
        (lambda: 10 ** Value(400.0), "pow: 10.0 ** 400.0 overflows"),
        (lambda: Value(1000.0).exp(), "exp(1000.0) overflows"),
        (lambda: Value.dot([Value(1e308)], [Value(10.0)]), "dot: w·x + b overflows"),
        (lambda: Value.sum([Value(1e308), Value(1e308)]), "sum overflows"),
    ],
)
def test_overflow_is_an_error_naming_the_op_you_wrote(expr, words: str) -> None:  # noqa: ANN001
    with pytest.raises(OverflowError) as info:
        expr()
    assert str(info.value).startswith(words), str(info.value)


def test_nan_and_inf_put_in_propagate_without_an_error() -> None:
    nan, inf = Value(math.nan), Value(math.inf)
    assert math.isnan((nan * 10).data) and (inf * 10).data == math.inf
    assert math.isnan((inf - inf).data) and (inf + 1e308).data == math.inf
    r = nan.relu()
    r.backward()
    assert math.isnan(r.data) and nan.grad == 1.0  # as PyTorch: NaN does not become 0
    model_out = Value.dot([Value(0.5), Value(-1.0)], [nan, Value(1.0)], 0.0).relu().tanh()
    assert math.isnan(model_out.data)


def test_jit_names_the_op_you_wrote() -> None:
    from micrograd.jit import jit

    p = Value(1.0)
    with pytest.raises(ZeroDivisionError, match=r"division by zero: 1\.0 / 0\.0.*batch sample 1"):
        jit(lambda x: p / x)(np.array([1.0, 0.0, 2.0, 4.0, 3.0]))
    with pytest.raises(OverflowError, match=r"division: 1\.0 / 1e-320 overflows.*sample 1"):
        jit(lambda x: p / x)(np.array([1.0, 1e-320, 2.0, 4.0, 3.0]))
    with pytest.raises(OverflowError, match=r"multiplication: 1e\+308 \* 10\.0.*sample 3"):
        jit(lambda x: (x * 10).tanh())(np.array([1.0, 2.0, 3.0, 1e308, 5.0]))


def test_second_derivative_of_sqrt_at_zero_is_minus_inf_like_pytorch() -> None:
    x = Value(0.0)
    d1 = grad(x**0.5, x, create_graph=True)
    assert d1.data == math.inf and grad(d1, x) == -math.inf
    y = Value(1e-320)  # d/dy log(y) = 1e320 overflows: a derivative may be inf, as in PyTorch
    assert grad(y.log(), y, create_graph=True).data == math.inf
    with pytest.raises(OverflowError):  # ... while the values you compute may not
        Value(1.0) / y


# --------------------------------------------------------------------------- hand-made nodes


@pytest.mark.parametrize("local", [[3.0, 2.0], (3.0, 2.0), np.array([3.0, 2.0])])
def test_backward_and_grad_agree_on_a_hand_written_local(local) -> None:  # noqa: ANN001
    def build() -> tuple[Value, Value, Value]:
        a, b = Value(2.0), Value(3.0)
        return Value(6.0, (a, b), "mine", "", local) * 2, a, b

    out, a, b = build()
    out.backward()
    assert (a.grad, b.grad) == (6.0, 4.0)
    out, a, b = build()
    assert grad(out, [a, b]) == (6.0, 4.0)
    out, a, b = build()
    out._prev[0].grad = 1.0
    out._prev[0]._backward()  # the lecture's one step by hand
    assert (a.grad, b.grad) == (3.0, 2.0)


@pytest.mark.parametrize(
    "local, error", [([1.0], ValueError), ((1.0, 2.0, 3.0), ValueError), (5.0, TypeError)]
)
def test_backward_and_grad_refuse_a_wrong_local_alike(local, error: type) -> None:  # noqa: ANN001
    a, b = Value(2.0), Value(3.0)
    out = Value(6.0, (a, b), "mine", "", local)
    with pytest.raises(error, match="local derivative"):
        out.backward()
    with pytest.raises(error, match="local derivative"):
        grad(out, [a, b])


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_symbolic_rules_agree_with_the_float_path_at_edge_points(op: Op) -> None:
    # grad(create_graph=True) builds the derivative from the @_op rules; at the edge points (NaN,
    # ±inf, 0, ±1e308) it must give what backward() and grad() give, which match PyTorch.
    for xs in edge_points(op):
        vs = [Value(x) for x in xs]
        try:
            out = op.ours(*vs)
        except (ArithmeticError, ValueError):
            continue
        plain = grad(out, vs)
        symbolic = grad(out, vs, create_graph=True)
        for i, (p, s) in enumerate(zip(plain, symbolic)):
            assert same(p, s.data), f"{op.name}{xs}: grad {i}: {p!r} vs symbolic {s.data!r}"


@pytest.mark.parametrize("activation", sorted(set(ACTIVATIONS) - {"linear"}))
def test_a_nan_fed_to_an_mlp_comes_out_nan_eagerly_and_with_jit(activation: str) -> None:
    from micrograd import MLP
    from micrograd.jit import jit

    random.seed(3)
    model = MLP(2, [4, 4, 1], activation=activation)
    assert math.isnan(model([math.nan, 1.0]).data)
    f = jit(lambda x: model(x))
    with np.errstate(all="ignore"):
        f(np.array([[0.5, 1.0], [math.nan, 1.0], [1.0, -1.0]]))
    out = f.last_outputs
    assert math.isfinite(out[0]) and math.isnan(out[1]) and math.isfinite(out[2])


def test_a_node_without_local_derivatives_stops_the_gradient_in_backward_and_grad() -> None:
    # The lecture's positional form, Value(data, children, op), has no backward of its own yet.
    a, b = Value(2.0), Value(3.0)
    out = Value(6.0, (a, b), "*") * 2
    out.backward()
    assert (a.grad, b.grad) == (0.0, 0.0)
    assert grad(out, [a, b]) == (0.0, 0.0)
