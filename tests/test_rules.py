"""Each op's derivative rule is written once and read by four backends: floats (backward()),
numpy (jit), Values (grad(create_graph=True)) and names (the text pages show). Changing tanh's
rule in its one place changes all four; the hand-written fast paths (+, *, dot, relu) equal
their rules; tanh is correctly rounded (checked against 60-digit decimal arithmetic) and the same
bits eagerly and under jit; a Value takes attributes of your own."""

from __future__ import annotations

import ast
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
from decimal import Context, Decimal

import numpy as np
import pytest
import torch

from micrograd import Value, grad
from micrograd.core import floats
from micrograd.core.registry import FLOATS
from micrograd.engine import OPS, explain_local
from micrograd.jit import jit
from tests.support.source import occurrences, replace_node

ROOT = pathlib.Path(__file__).resolve().parents[1]


def op_declarations(package: pathlib.Path) -> dict[str, list[tuple[pathlib.Path, ast.Call]]]:
    """Every `@_op("name", ...)` declaration in the package's syntax trees, by op name."""
    found: dict[str, list[tuple[pathlib.Path, ast.Call]]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "_op"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.setdefault(node.args[0].value, []).append((path, node))
    return found


def local_rule(package: pathlib.Path, op: str) -> tuple[pathlib.Path, ast.expr]:
    """The expression of the op's `local=` rule, where it is declared, its one declaration."""
    declared = op_declarations(package).get(op, [])
    assert len(declared) == 1, f"{op} is declared {len(declared)} times"
    path, call = declared[0]
    (rule,) = [k.value for k in call.keywords if k.arg == "local"]
    return path, rule


def function_return(path: pathlib.Path, name: str) -> ast.expr:
    """What the module-level function `name` returns (its one return)."""
    tree = ast.parse(path.read_text())
    (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    (ret,) = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    return ret.value


def same(a: float, b: float) -> bool:
    """The same float, bit for bit (the sign of zero too), or both NaN."""
    if a != a or b != b:
        return a != a and b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# --------------------------------------------------------------------------- one rule, four ways


def test_tanh_rule_edited_in_its_one_place_changes_all_four_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    triple = lambda xp, t, x: (3.0 * (1.0 - t * t),)  # noqa: E731
    monkeypatch.setattr(OPS["tanh"], "local", triple)
    x0 = 0.4
    t = math.tanh(x0)
    slope = 3.0 * (1.0 - t * t)
    # floats: the node's local derivative and backward()
    x = Value(x0)
    o = x.tanh()
    o.backward()
    assert x.grad == pytest.approx(slope, rel=1e-15)
    # Values: grad(create_graph=True), and differentiated again with the same rule
    x = Value(x0)
    d1 = grad(x.tanh(), x, create_graph=True)
    assert d1.data == pytest.approx(slope, rel=1e-15)
    assert grad(d1, x) == pytest.approx(3.0 * -2.0 * t * slope, rel=1e-12)
    # numpy: jit's backward
    p = Value(x0)
    jit(lambda k: (k * p).tanh(), reduce="sum")(np.array([1.0])).backward()
    assert p.grad == pytest.approx(slope, rel=1e-15)
    # names: the text the playground and the pictures show
    assert explain_local(o, ["n"], "o") == ("3·(1 - o²)",)
    assert OPS["tanh"].formula == "d/da = 3·(1 - out²)"


@pytest.mark.slow
def test_tanh_rule_is_written_once_and_editing_that_text_changes_all_four(
    tmp_path: pathlib.Path,
) -> None:
    # The rule is declared once in the package (one `@_op("tanh")`, its `1.0 - t * t` nowhere
    # else); a copy of the package with that one expression edited (as a contributor would)
    # computes, differentiates, jits and explains the new rule.
    package = ROOT / "micrograd"
    path, rule = local_rule(package, "tanh")
    assert ast.unparse(rule) == "lambda xp, t, x: (1.0 - t * t,)"
    assert occurrences(package, "1.0 - t * t") == 1
    shutil.copytree(package, tmp_path / "micrograd")
    copy = tmp_path / "micrograd" / path.relative_to(package)
    replace_node(copy, rule, "lambda xp, t, x: (2.0 * (1.0 - t * t),)")
    code = """
import math, numpy as np
from micrograd import Value, grad, jit
from micrograd.engine import explain_local
x = Value(0.4); o = x.tanh(); o.backward()
d1 = grad(Value(0.4).tanh(), [x], create_graph=True, allow_unused=True)
y = Value(0.4); d = grad(y.tanh(), y, create_graph=True)
p = Value(0.4); jit(lambda k: (k * p).tanh(), reduce='sum')(np.array([1.0])).backward()
t = math.tanh(0.4)
print(x.grad / (1 - t * t), d.data / (1 - t * t), p.grad / (1 - t * t),
      explain_local(o, ['n'], 'o')[0])
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [round(float(r), 12) for r in out[:3]] == [2.0, 2.0, 2.0]
    assert out[3:] == ["2·(1", "-", "o²)"]


@pytest.mark.parametrize("x0", [-3.0, -0.5, 0.0, 0.25, 2.0, math.nan, math.inf, 1e308])
def test_the_fast_paths_equal_their_rules(x0: float) -> None:
    # +, * and relu compute their values by hand for speed: value and local derivatives must be
    # exactly what their declared rules give on floats.
    for y0 in (-1.5, 0.0, 2.0, math.nan):
        a, b = Value(x0), Value(y0)
        for node, kind in ((_or_none(a.__add__, b), "+"), (_or_none(a.__mul__, b), "*")):
            if node is None:
                continue  # overflow: refused by the policy, checked elsewhere
            info = OPS[kind]
            assert same(node.data, info.value_on_floats(x0, y0))
            assert all(map(same, node._local, info.on_floats(node.data, x0, y0)))
    r = Value(x0).relu()
    assert same(r.data, OPS["ReLU"].value_on_floats(x0))
    assert all(map(same, r._local, OPS["ReLU"].on_floats(r.data, x0)))
    ws, xs = [Value(x0), Value(1.5)], [Value(-2.0), Value(0.5)]
    d = _or_none(Value.dot, ws, xs, 0.25)
    if d is not None:
        rule = OPS["dot"].on_floats(d.data, *(v.data for v in (*ws, *xs)), 0.25)
        assert all(map(same, d._local, rule))


# Each fast path's derivative is written once, in its rule: edited there (in a copy of the
# package, as a contributor would), the eager nodes store the new local derivatives. dot's rule
# calls _dot_local, whose return is the rule's one place.
FAST_RULES = {
    "+": ("(1.0, 1.0)", "(5.0, 7.0)"),
    "*": ("lambda xp, out, a, b: (b, a)", "lambda xp, out, a, b: (2.0 * b, 3.0 * a)"),
    "ReLU": (
        "lambda xp, out, a: (xp.where(a <= 0, 0.0, 1.0),)",
        "lambda xp, out, a: (xp.where(a <= 0, 0.0, 4.0),)",
    ),
    "dot": ("(*x, *w, 1.0)", "(*x, *w, 9.0)"),
    "sum": ("lambda xp, out, *c: (1.0,) * len(c)", "lambda xp, out, *c: (6.0,) * len(c)"),
}


def test_the_fast_paths_rules_edited_in_their_one_place_change_the_eager_nodes(
    tmp_path: pathlib.Path,
) -> None:
    package = ROOT / "micrograd"
    places = {}
    for op, (old, _) in FAST_RULES.items():
        path, rule = local_rule(package, op)
        if op == "dot":
            assert ast.unparse(rule.body) == "_dot_local(*_w_x_b(c))", ast.unparse(rule)
            rule = function_return(path, "_dot_local")
        assert ast.unparse(rule) == old, op
        places[op] = (path, rule)
    shutil.copytree(package, tmp_path / "micrograd")
    # one file at a time, from its last edit to its first, so that each node's place still holds
    edits = sorted(places.items(), key=lambda item: (item[1][0], -item[1][1].lineno))
    for op, (path, rule) in edits:
        replace_node(tmp_path / "micrograd" / path.relative_to(package), rule, FAST_RULES[op][1])
    code = """
from micrograd import Value
a, b = Value(2.0), Value(-3.0)
print(*(a + b)._local, *(a * b)._local, *a.relu()._local, *b.relu()._local)
print(*Value.dot([a, b], [b, a], 0.5)._local, *Value.sum([a, b])._local)
"""
    pure = {**os.environ, "MICROGRAD_PURE_PYTHON": "1"}  # core/fast.py's paths (the compiled
    # core's + and * are held equal to the rules by tests/test_compiled.py)
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env=pure,
    ).stdout.split()
    assert list(map(float, out)) == [5, 7, -6, 6, 4, 0, -3, 2, 2, -3, 9, 6, 6]


def _or_none(build, *args):  # noqa: ANN001, ANN002, ANN202
    try:
        return build(*args)
    except OverflowError:
        return None


# --------------------------------------------------------------------------- tanh


def _tanh_60_digits(x: float) -> float:
    """tanh(x) rounded to the nearest float, from 60-digit decimal arithmetic (independent of
    every libm): (e^2x - 1)/(e^2x + 1), or x - x³/3 for tiny x, then one rounding."""
    if abs(x) > 40:
        return math.copysign(1.0, x)
    c = Context(prec=60)
    if abs(x) < 1e-15:
        return float(c.subtract(Decimal(x), c.divide(c.power(Decimal(x), 3), 3)))
    e = c.exp(c.multiply(Decimal(x), 2))
    return float(c.divide(c.subtract(e, 1), c.add(e, 1)))


def _points(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    kinds = [
        lambda: rng.uniform(-1, 1),
        lambda: rng.uniform(-20, 20),
        lambda: rng.uniform(-1e-3, 1e-3),
        lambda: math.ldexp(rng.random(), -rng.randint(0, 40)) * rng.choice([-1, 1]),
    ]
    return [rng.choice(kinds)() for _ in range(n)]


@pytest.mark.slow
def test_tanh_is_correctly_rounded() -> None:
    # math.tanh and numpy's tanh miss the nearest float about a fifth of the time; ours never.
    xs = _points(20_000, 1) + [0.8813735870195432, 19.06, 19.07, 1e-300, 2**-27, 2**-26]
    wrong = [(x, Value(x).tanh().data) for x in xs if Value(x).tanh().data != _tanh_60_digits(x)]
    assert not wrong


def test_tanh_is_the_same_bits_eagerly_and_under_jit() -> None:
    xs = _points(20_000, 2) + [0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324]
    f = jit(lambda x: x.tanh())
    with np.errstate(all="ignore"):
        f.outputs(np.array(xs))
    assert all(map(same, f.last_outputs.tolist(), (Value(x).tanh().data for x in xs)))
    big = np.random.default_rng(3).normal(size=9000) * 4  # past 4096: computed in blocks
    assert f.outputs(big).tolist() == [Value(x).tanh().data for x in big.tolist()]


def test_tanh_tables_and_constants_are_exact() -> None:
    c = Context(prec=60)
    ln2_256 = c.divide(c.ln(Decimal(2)), 256)
    assert abs(Decimal(floats._LN2_256_HI) + Decimal(floats._LN2_256_LO) - ln2_256) < Decimal(
        "1e-30"
    )
    assert (floats._LN2_256_HI * 2**46).is_integer()  # 38 bits: k * it is exact for k < 2**15
    his, los = floats.tables()
    assert len(his) == len(los) > 2 * 19.1 * 256 / math.log(2)  # every k tanh can reach
    for k in [*range(300), *range(len(his) - 20, len(his))]:
        want = c.power(Decimal(2), c.divide(Decimal(k), 256))
        assert abs(Decimal(his[k]) + Decimal(los[k]) - want) < want * Decimal("1e-23")
        m, _ = math.frexp(his[k])
        assert (m * 2**26).is_integer()  # 26 bits: its products split exactly


def test_the_lectures_neuron_is_correctly_rounded_in_every_backend() -> None:
    # x1*w1 + x2*w2 + b with the lecture's numbers: n = 0.8813735870195432, o = 1/√2 rounded.
    def neuron(v):  # noqa: ANN001, ANN202
        x1, x2, w1, w2, b = map(v, (2.0, 0.0, -3.0, 1.0, 6.8813735870195432))
        return x1 * w1 + x2 * w2 + b, (x1, x2, w1, w2)

    n, (x1, x2, w1, w2) = neuron(Value)
    o = n.tanh()
    o.backward()
    assert (n.data, o.data) == (0.8813735870195432, 0.7071067811865476)
    assert (x1.grad, w1.grad, x2.grad, w2.grad) == (
        -1.4999999999999996,
        0.9999999999999998,
        0.4999999999999999,
        0.0,
    )
    assert 1 - o.data**2 == 0.4999999999999999  # the lecture's cell prints this
    tn, ts = neuron(lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True))
    to = torch.tanh(tn)
    to.backward()
    assert to.item() == o.data  # PyTorch's tanh, correctly rounded here too
    # its backward computes 1 - o² its own way: -1.4999999999999998, one float from the
    # lecture's (1 - t**2) * out.grad, which ours is
    for t, v in zip(ts, (x1, x2, w1, w2)):
        assert t.grad.item() == pytest.approx(v.grad, rel=2e-16, abs=0)
    f = jit(lambda x: (x[0] * x[2] + x[1] * x[3] + x[4]).tanh())
    f.outputs(np.array([[2.0, 0.0, -3.0, 1.0, 6.8813735870195432]]))
    assert f.last_outputs.tolist() == [0.7071067811865476]
    assert FLOATS.tanh(0.8813735870195432) == 0.7071067811865476


def test_tanh_sigmoid_and_softplus_stay_exact_at_the_extremes() -> None:
    cases = ((1e308, 1.0, 1.0), (-1e308, -1.0, 0.0), (20.0, 1.0, 1.0 / (1.0 + math.exp(-20))))
    for x, t, s in cases:
        assert (Value(x).tanh().data, Value(x).sigmoid().data) == (t, s)
    assert Value(1e308).softplus().data == 1e308 and Value(-1e308).softplus().data == 0.0


# --------------------------------------------------------------------------- the lecture's Value


def test_a_value_takes_attributes_of_your_own() -> None:
    # EurekaLabs' AdamW keeps its moments on the parameters, its picture code a colour.
    p = Value(1.0)
    p.m = 0
    p.v = 0
    setattr(p, "_vis_color", "lightgreen")  # noqa: B010 (as EurekaLabs' vis_color writes it)
    assert (p.m, p.v, p._vis_color, getattr(p, "_vis_color", "white")) == (
        0,
        0,
        "lightgreen",
        "lightgreen",
    )
    q = p * 2  # the attributes are the node's own, not its children's
    assert not hasattr(q, "_vis_color") and "data" not in Value.__dict__  # (Node's field)


def test_backward_of_one_node_returns_nothing_as_in_the_lecture() -> None:
    a, b = Value(2.0), Value(-3.0)
    e = a * b
    e.grad = 1.0
    assert e._backward() is None and (a.grad, b.grad) == (-3.0, 2.0)
    assert a._backward() is None  # a leaf: nothing to do, nothing returned
