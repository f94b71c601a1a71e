"""An op added the way CONTRIBUTING.md says, after import: `sin`, its derivative written once
(``xp.cos(a)``, cos declared as a function, not a second op). It must then work everywhere an op
works, each checked against its own truth: values, gradients and second derivatives against
PyTorch float64, jit against the eager engine, the text, the expression language, the pictures,
`nn.ACTIVATIONS` (an MLP of sin neurons against PyTorch), the learner checker's rows and jit's
tracer (sin's method reads `.data` itself, as a contributor's may)."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from micrograd import MLP, Value, grad
from micrograd.core import registry
from micrograd.engine import OPS, explain_local, op_kind
from micrograd.io import TORCH_MODULES, torch_module
from micrograd.nn import ACTIVATION_OPS

from . import test_engine
from .support.optable import Op
from .test_engine import assert_matches_torch, check_edge, edge_points

ROOT = Path(__file__).resolve().parent.parent


def contributing(pattern: str) -> str:
    """The one line of CONTRIBUTING.md's sin recipe that `pattern` matches, the part after its
    `=` or in its call, as written there: the test runs the document's own recipe, so the two
    cannot drift apart."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    found = re.findall(pattern, text, re.M)
    assert len(found) == 1, f"CONTRIBUTING.md's sin recipe should have one line {pattern}"
    return found[0]


def contributing_cos() -> str:
    return contributing(r'^function\("cos", (lambda xp, a: .+?)\)\s*(?:#.*)?$')


@pytest.fixture
def sin_op(monkeypatch: pytest.MonkeyPatch) -> Iterator[Op]:
    """sin as a contributor adds it: the method with its @op declaration, cos as a function,
    its rows as an activation (nn) and in PyTorch (io), and the op table's row. Everything is
    taken away again afterwards."""

    @registry.op("sin", 1, forward=lambda xp, a: xp.sin(a), local=lambda xp, out, a: (xp.cos(a),))
    def sin(self: Value) -> Value:
        x = self.data
        out = math.sin(x) if math.isfinite(x) else math.nan
        return Value(out, (self,), "sin", "", OPS["sin"].on_floats(out, x))

    monkeypatch.setattr(Value, "sin", sin, raising=False)
    registry.function("cos", eval(contributing_cos(), {"math": math}))  # for second derivatives
    row = contributing(r'^ACTIVATION_OPS\["sin"\] = (.+?)\s*(?:#.*)?$')
    monkeypatch.setitem(ACTIVATION_OPS, "sin", eval(row))
    module = contributing(r'^TORCH_MODULES\["sin"\] = (lambda torch: .+?)\s*(?:#.*)?$')
    monkeypatch.setitem(TORCH_MODULES, "sin", eval(module, {"torch_module": torch_module}))
    try:
        yield Op("sin", 1, lambda a: a.sin(), lambda a: a.sin(), edges=(math.pi, 1e6))
    finally:
        OPS.pop("sin", None)
        registry.FUNCTIONS.pop("cos", None)


def test_sin_matches_pytorch_values_gradients_and_edges(sin_op: Op) -> None:
    rng = random.Random("sin")
    for _ in range(50):
        assert_matches_torch(sin_op, [rng.uniform(-10, 10)])
    for xs in edge_points(sin_op):  # NaN, ±inf (NaN out, as PyTorch), 0, ±1e308, π, 1e6
        check_edge(sin_op, xs)


# Every check the op table runs on the engine's own ops (tests/test_engine.py), run on the
# contributor's sin: generic points, central differences, hypothesis, the symbolic rule, second
# derivatives, and the edge points (NaN, ±inf, 0, ±1e308, π, 1e6) for values, first and second
# derivatives and jit. A recipe that is only right on a few interior points fails here.
OP_TABLE_CHECKS = [
    test_engine.test_op_matches_pytorch,
    test_engine.test_op_matches_central_differences,
    test_engine.test_op_under_hypothesis,
    test_engine.test_symbolic_rule_agrees_with_local_derivatives,
    test_engine.test_second_derivatives_match_pytorch,
    test_engine.test_op_at_edge_points_matches_pytorch_or_raises_by_the_policy,
    test_engine.test_second_derivatives_at_edge_points_match_pytorch,
    test_engine.test_jit_agrees_with_the_engine_at_edge_points,
]


@pytest.mark.parametrize("check", OP_TABLE_CHECKS, ids=lambda f: f.__name__[5:])
def test_sin_passes_every_op_table_check(sin_op: Op, check) -> None:  # noqa: ANN001
    check(sin_op)


def test_sin_differentiates_twice_through_the_declared_cos(sin_op: Op) -> None:
    for x0 in (-2.5, 0.3, 1.2, 4.0):
        x = Value(x0)
        d1 = grad(x.sin(), x, create_graph=True)  # cos x, built as sin(x + π/2): Value nodes
        d2 = grad(d1, x, create_graph=True)  # -sin x
        d3 = grad(d2, x)  # -cos x
        t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        (t1,) = torch.autograd.grad(t.sin(), t, create_graph=True)
        (t2,) = torch.autograd.grad(t1, t, create_graph=True)
        (t3,) = torch.autograd.grad(t2, t)
        assert d1.data == pytest.approx(t1.item(), rel=1e-12, abs=1e-15)
        assert d2.data == pytest.approx(t2.item(), rel=1e-12, abs=1e-15)
        assert d3 == pytest.approx(t3.item(), rel=1e-12, abs=1e-15)


def test_sin_under_jit_equals_the_engine(sin_op: Op) -> None:
    from micrograd.jit import jit

    p = Value(0.7)
    X = np.linspace(-4, 4, 9)
    f = jit(lambda x: (x * p).sin() * x, reduce="sum")  # sin's method reads x.data: no guard
    f(X).backward()
    outs = [((Value(x) * p).sin() * x) for x in X]
    q = Value(0.7)
    eager = Value.sum([((Value(x) * q).sin() * x) for x in X])
    eager.backward()
    assert f.last_outputs.tolist() == pytest.approx([o.data for o in outs], rel=1e-13, abs=1e-15)
    assert p.grad == pytest.approx(q.grad, rel=1e-13)
    # and after an edge sample: the engine's NaN for sin(inf) propagates in both
    with np.errstate(all="ignore"):
        assert math.isnan(jit(lambda x: x.sin())(np.array([0.5, math.inf])).data)


def test_sin_is_explained_drawn_and_part_of_the_language(sin_op: Op) -> None:
    from micrograd import expr
    from micrograd.viz import render_text

    x = Value(0.5, label="x")
    y = x.sin()
    assert explain_local(y, ["x"], "y") == ("cos(x)",)
    assert OPS["sin"].formula == "d/da = cos(a)"
    assert op_kind(y) == "sin"
    names = expr.parse_program("x = 0.5; y = sin(x) * 2")
    names["y"].backward()
    assert names["x"].grad == pytest.approx(2 * math.cos(0.5), rel=1e-15)
    assert "sin" in expr.LANGUAGE and expr.ARITY["sin"] == 1
    y.backward()
    assert "{ sin [x] }" in render_text(y)


def test_sin_neurons_train_as_pytorch_computes_them(sin_op: Op) -> None:
    from micrograd.io import to_torch
    from micrograd.nn import ACTIVATIONS

    assert ACTIVATIONS["sin"].title == "Sin" and ACTIVATIONS["sin"].equation == "sin x"
    random.seed(5)
    model = MLP(2, [4, 1], activation="sin")
    assert repr(model.layers[0].neurons[0]) == "SinNeuron(2)"
    net = to_torch(model)
    x = [0.3, -1.1]
    out = model(x)
    out.backward()
    t = net(torch.tensor([x], dtype=torch.float64))
    t.sum().backward()
    assert out.data == pytest.approx(t.item(), rel=1e-13)
    first = next(net.parameters())
    assert model.layers[0].neurons[0].w[0].grad == pytest.approx(first.grad[0, 0].item(), rel=1e-12)
    numpy_out = ACTIVATIONS["sin"].numpy(np, np.array([0.25, -2.0]))  # the forward rule, on numpy
    assert numpy_out.tolist() == pytest.approx([math.sin(0.25), math.sin(-2.0)], rel=1e-15)


def test_the_learner_checker_checks_sin_too(sin_op: Op) -> None:
    from micrograd.check.table import registry_rows

    rows = {row.expr: row for row in registry_rows(covered=set())}
    assert rows["a.sin()"].rule == "micrograd's rule: d/da = cos(a)"
