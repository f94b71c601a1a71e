"""engine.py is the lecture's file: short, backward() runs the lecture's chain-rule loop written in
it, the numbers policy is applied in one place, and the fast paths of + and * (core/fast.py)
give exactly what the declared methods give."""

from __future__ import annotations

import ast
import math
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from micrograd.engine import OPS, Value
from tests.support.source import calls, names, occurrences, replace_node

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "micrograd" / "engine.py"
ITER = "zip(v._prev, v._local)"
UPDATE = "child.grad += local * v.grad"


def _backward_function() -> ast.FunctionDef:
    tree = ast.parse(ENGINE.read_text())
    value = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Value")
    return next(n for n in value.body if isinstance(n, ast.FunctionDef) and n.name == "backward")


def _chain_rule(backward: ast.FunctionDef) -> tuple[ast.For, ast.AugAssign]:
    """The lecture's loop in backward(), `for child, local in zip(v._prev, v._local):`, and its
    one statement, `child.grad += local * v.grad`, found in the syntax tree."""
    (loop,) = [
        n for n in ast.walk(backward) if isinstance(n, ast.For) and ast.unparse(n.iter) == ITER
    ]
    assert ast.unparse(loop.target) == "(child, local)"
    (update,) = loop.body
    assert isinstance(update, ast.AugAssign) and ast.unparse(update) == UPDATE
    return loop, update


def test_backward_shows_the_topological_order_and_the_lectures_loop_in_its_own_code() -> None:
    backward = _backward_function()
    (order,) = [
        n
        for n in ast.walk(backward)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "topological_order"
    ]
    assert ast.unparse(order.args[0]) == "self"
    loop, update = _chain_rule(backward)
    assert order.lineno < loop.lineno < update.lineno


GRADS = """
from micrograd import Value
a, b, c = Value(2.0), Value(-3.0), Value(0.5)
d = (a * b + c).relu() + Value.dot([a, b], [c, c], 1.0) + Value.sum([a, b]) + (a ** 2).exp()
d.backward()
print(repr(a.grad), repr(b.grad), repr(c.grad))
"""


def grads_of_package(root: Path) -> list[float]:
    # the pure engine runs engine.py's loop (the compiled core is held equal to it by
    # tests/test_compiled.py)
    env = {**os.environ, "MICROGRAD_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", GRADS],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return [float(t) for t in done.stdout.split()]


def test_the_loop_written_in_backward_is_the_one_that_runs(tmp_path: Path) -> None:
    # In a copy of the package, the one line of the chain rule edited: every gradient changes.
    shutil.copytree(ROOT / "micrograd", tmp_path / "micrograd")
    before = grads_of_package(tmp_path)
    _, update = _chain_rule(_backward_function())
    assert occurrences(ROOT / "micrograd", "local * v.grad") == 1  # the one place of the update
    replace_node(tmp_path / "micrograd" / "engine.py", update.value, "2.0 * local * v.grad")
    after = grads_of_package(tmp_path)
    assert before == grads_of_package(ROOT)  # the copy computed what the package computes
    assert all(x != y for x, y in zip(before, after)), (before, after)


def test_the_overflow_policy_is_applied_in_one_place() -> None:
    (call,) = calls(ENGINE, "check_overflow")  # in _finite, which Value.__init__ calls
    finite = next(
        n for n in ast.parse(ENGINE.read_text()).body if getattr(n, "name", 0) == "_finite"
    )
    assert finite.lineno < call.lineno <= finite.end_lineno
    assert "isfinite" not in names(ENGINE)


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


NUMBERS = [0.0, -0.0, 1.0, -2.5, 3.0e-310, 1e308, -1e308, 0.1, 7.0, math.inf, -math.inf, math.nan]


def outcome(method: object, *args: object) -> object:
    """What `method(*args)` gives: a node as (data, local derivatives, _op, children, type,
    exponent) with numbers as bits, or its error as (type, message)."""
    try:
        v = method(*args)  # type: ignore[operator]
    except (OverflowError, ValueError, ZeroDivisionError, TypeError) as e:
        return type(e), str(e)
    exponent = v.__dict__.get("_p")
    children = [c is a or bits(c.data) for c, a in zip(v._prev, args)]  # (a number: lifted)
    return (bits(v.data), [bits(d) for d in v._local], v._op, children, type(v), exponent)


FAST = {"+": "__add__", "*": "__mul__", "ReLU": "relu", "exp": "exp", "log": "log", "**": "__pow__"}


@pytest.mark.parametrize("kind", FAST)
def test_the_fast_paths_give_what_the_declared_methods_give(kind: str) -> None:
    fast, declared = getattr(Value, FAST[kind]), OPS[kind].method
    assert fast is not declared  # the fast path is installed; the method stays in the registry
    xs = [*NUMBERS, 700.0, 709.5, 710.0, -745.5, 1e-300, 2.0**-1074]
    others: list[object] = [*NUMBERS, 2, -1, 0, 10**400, True, "2"]  # numbers are handed on
    for x in xs:
        for y in others if OPS[kind].arity == 2 or kind == "**" else [None]:
            args = [Value(x)] if y is None else [Value(x), y]
            assert outcome(fast, *args) == outcome(declared, *args), (kind, x, y)
            if isinstance(y, float) and kind != "**":
                pair = [Value(x), Value(y)]
                assert outcome(fast, *pair) == outcome(declared, *pair), (kind, x, y)
