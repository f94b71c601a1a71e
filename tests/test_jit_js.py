"""micrograd.jit's JavaScript target against its numpy target and the eager engine, run in Node.js.

Every op of the table (tests/support/optable.py) is traced once and emitted as JavaScript
(`micrograd.jit.js_target`), then run over a batch in Node.js: each sample's output and the gradient
of their sum w.r.t. captured Values equal numpy's jit (and so the eager engine's, which test_jit
holds numpy's to) -- the same bits where a rule uses + - * / and tanh alone (tanh is the engine's
algorithm, written out), to the last bits where it calls exp, log or pow (the browser's Math and the
C library's each round their own way)."""

from __future__ import annotations

import math
import random
import shutil
from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.jit import jit
from micrograd.jit import js_target as js_target
from micrograd.nn import MLP

from .support.optable import OPS

np = pytest.importorskip("numpy")
if shutil.which("node") is None and shutil.which("nodejs") is None:
    pytest.skip("Node.js is not installed (apt install nodejs)", allow_module_level=True)

# rules that call the platform's exp, log or pow (numpy's power and Math.pow may differ in the
# last bit even for x**3): equal to a few ulps, not to the bit
MATH = {
    "pow2",
    "pow3",
    "pow-1",
    "pow0",
    "pow0.5",
    "pow1.5",
    "pow-value",
    "rpow",
    "exp",
    "log",
    "sigmoid",
    "softplus",
    "div",
    "rdiv",
}


@pytest.fixture(scope="module")
def node() -> Any:
    host = js_target.NodeHost()
    host.compile("return {};")  # its Node.js started here: the module's, not its first test's
    yield host
    host.close()


def _both(fn: Any, X: Any, node: Any) -> tuple[list, list, list, list]:
    f = jit(fn, reduce="sum")
    out = f(X)
    src, captured = js_target.program_source(fn, [X[0].tolist()])
    run = node.compile(js_target.runner_source(src))
    got = run(
        "run",
        {
            "B": len(X),
            "data": X.ravel().tolist(),
            "captured": [c.data for c in captured],
            "seed": 1.0,
        },
    )
    return (
        [float(x) for x in got["outs"]],
        f.last_outputs.tolist(),
        [float(x) for x in got["grads"]],
        list(out._local),
    )


def _eager_ok(op: Any, x: float) -> bool:
    """Does the engine compute op at x (not an error, where jit explains one eagerly)?"""
    try:
        op.ours(Value(x))
    except (ValueError, OverflowError, ZeroDivisionError):
        return False
    return True


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_every_op_of_the_table_in_javascript_is_numpys_jit(op: Any, node: Any) -> None:
    shifts = [Value(0.0) for _ in range(op.arity)]  # captured: their grads are the batch sums
    fn = lambda x: op.ours(*[x[i] + shifts[i] for i in range(op.arity)])  # noqa: E731
    rng = np.random.default_rng(len(op.name))
    X = rng.uniform(op.low, op.high, size=(9, op.arity))
    edges = [e for e in op.edges if op.arity == 1 and math.isfinite(e) and _eager_ok(op, e)]
    if edges and op.arity == 1:
        X = np.concatenate([X, np.array(edges)[:, None]])
    outs, want_outs, grads, want_grads = _both(fn, X, node)
    if op.name in MATH:
        assert outs == pytest.approx(want_outs, rel=1e-14, abs=0)
        assert grads == pytest.approx(want_grads, rel=1e-14, abs=0)
    else:
        assert outs == want_outs and grads == want_grads


def test_tanh_in_javascript_is_the_engines_correctly_rounded_tanh_bit_for_bit(node: Any) -> None:
    # where libm's and numpy's own tanh miss the nearest float about one time in five
    rng = random.Random(7)
    xs = [rng.uniform(-20, 20) for _ in range(400)] + [rng.uniform(-1e-3, 1e-3) for _ in range(100)]
    xs += [0.0, -0.0, 7.450580596923828e-09, 19.1, -19.1, 19.2, 1e-300, 355.0, -800.0]
    X = np.array(xs)[:, None]
    outs, _, grads, _ = _both(lambda x: x[0].tanh(), X, node)
    want = [Value(x).tanh() for x in xs]
    assert outs == [v.data for v in want]
    assert [math.copysign(1, o) for o in outs] == [math.copysign(1, v.data) for v in want]
    assert grads == []  # nothing captured: no gradient to send


def test_a_network_with_its_loss_in_javascript_is_numpys_jit(node: Any) -> None:
    random.seed(3)
    model = MLP(2, [8, 8, 1], activation="tanh")
    fn = lambda x, y: (1 + -y * model(x)).relu()  # noqa: E731
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(50, 2)), rng.choice([-1.0, 1.0], size=(50, 1))], axis=1)
    f = jit(fn, reduce="sum")
    out = f(X[:, :2], X[:, 2])
    src, captured = js_target.program_source(fn, [X[0, :2].tolist(), float(X[0, 2])])
    got = node.compile(js_target.runner_source(src))(
        "run",
        {"B": 50, "data": X.ravel().tolist(), "captured": [c.data for c in captured], "seed": 1.0},
    )
    # every sum in the one order both targets follow: the same bits
    assert [float(x) for x in got["outs"]] == f.last_outputs.tolist()
    assert [float(x) for x in got["grads"]] == list(out._local)
    assert len(captured) == len(model.parameters())


def test_what_the_javascript_target_cannot_replay_is_refused_in_one_line() -> None:
    def fn(x: Any) -> Value:  # a Python decision on the sample's number: a guard
        return x[0] * 2 if x[0].data > 0 else x[0]

    with pytest.raises(NotImplementedError, match="JavaScript target.*guards"):
        js_target.program_source(fn, [[1.0]])


@pytest.mark.slow
def test_adams_bias_correction_power_is_correctly_rounded(node: Any) -> None:
    """b ** t in the JavaScript steps (jit/runtime.js's powInt: the Train view's and the GPT's)
    is the double nearest the exact power, as C's pow gives Python's `b1 ** t` (the browser's own
    ** misses it for 0.9 ** 4)."""
    from fractions import Fraction

    cases = [(b, t) for b in (0.9, 0.999, 0.5, 0.95) for t in range(0, 3000, 7)] + [(0.9, 4)]
    run = node.compile(
        js_target.runtime_source()
        + "\nreturn {pow: (cases) => cases.map(([x, n]) => powInt(x, n)),"
        + " builtin: (cases) => cases.map(([x, n]) => x ** n)};"
    )
    got = run("pow", cases)
    assert got == [float(Fraction(b) ** t) for b, t in cases]
    assert got[-1] == 0.9**4 != run("builtin", [(0.9, 4)])[0]
