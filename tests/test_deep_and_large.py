"""Inputs as large or as deep as an adversary makes them (issue 35, items 7, 8, 11): a model file
that never ends, a long program, a graph a million nodes deep."""

from __future__ import annotations

import copy
import os
import pickle
import sys

import pytest

from micrograd import io
from micrograd.engine import Value
from micrograd.expr import parse_program
from micrograd.nn import MLP

# ------------------------------------------------------------------ 7. io.load reads a bounded size


def test_load_refuses_a_file_over_the_documented_size_before_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:  # 64 MiB, sparse: no disk used, and not a byte of it read
        f.truncate(64 * 1024 * 1024)
    read = []
    real_open = open

    def watching_open(*args, **kwargs):
        f = real_open(*args, **kwargs)
        real_read = f.read
        f.read = lambda *a: read.append(a) or real_read(*a)  # type: ignore[method-assign]
        return f

    monkeypatch.setattr("builtins.open", watching_open)
    with pytest.raises(ValueError, match=f"{path}.*67,108,864 bytes.*at most 8,388,608"):
        io.load(path)
    assert read == []


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_load_of_an_endless_device_stops_at_the_size():
    with pytest.raises(ValueError, match="more than 8,388,608 bytes"):
        io.load("/dev/zero")


def test_a_model_file_at_the_limit_still_loads(tmp_path):
    model = MLP(2, [4, 1])
    path = tmp_path / "m.json"
    io.save(model, path)
    assert os.path.getsize(path) < io.MAX_FILE_BYTES
    assert [p.data for p in io.load(path).parameters()] == [p.data for p in model.parameters()]


# ------------------------------------------------------------------ 8. parsing is linear


def _work(n: int) -> int:
    """How many lines of the program's text ast's source lookup splits while a program of n
    statements is parsed (each number's source found by splitting the whole text again was
    the quadratic work), counted, not timed."""
    import ast

    seen = [0]
    program = "a = 1.5\n" + "".join(f"a = a * 1.0001 + {k}.5\n" for k in range(n))
    original = ast._splitlines_no_ff  # type: ignore[attr-defined]

    def counted(source, *args):
        out = original(source, *args)
        seen[0] += len(out)
        return out

    ast._splitlines_no_ff = counted  # type: ignore[attr-defined]
    try:
        parse_program(program)
    finally:
        ast._splitlines_no_ff = original  # type: ignore[attr-defined]
    return seen[0]


def test_parsing_does_work_linear_in_the_program():
    small, large = _work(200), _work(2000)
    assert large <= 10 * small + 100, (small, large)  # quadratic would be 100 times


@pytest.mark.slow
def test_a_4000_statement_program_parses():
    names = parse_program("a = 1.5\n" + "".join(f"a = a * 1.0001 + {k}.5\n" for k in range(4000)))
    assert len(names) == 1 and names["a"].label == "a₄₀₀₁"


# ------------------------------------------------------------------ 11. deep graphs copy and pickle


def _chain(n: int) -> Value:
    x = Value(0.5, label="x")
    for k in range(n):
        x = (x * 0.999 + 0.001).tanh() if k % 3 else x + Value(0.25, label=f"c{k}")
    return x


def _nodes(v: Value) -> list[tuple]:
    out, stack, seen = [], [v], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append((n.data, n.grad, n._op, n.label, tuple(n._local), len(n._prev)))
        stack.extend(n._prev)
    return out


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.slow
def test_a_graph_far_deeper_than_the_recursion_limit_copies_and_pickles(how):
    depth = 20 * sys.getrecursionlimit()
    root = _chain(depth)
    root.backward()
    root.note = "mine"  # an attribute of the learner's own comes along
    twin = copy.deepcopy(root) if how == "deepcopy" else pickle.loads(pickle.dumps(root))
    assert twin is not root and _nodes(twin) == _nodes(root)
    assert twin.note == "mine"
    twin.backward()  # a working graph: its own grads, not the original's
    leaves = [v for v in _find(twin) if v.label == "x"]
    assert (
        len(leaves) == 1
        and leaves[0].grad == 2 * [v for v in _find(root) if v.label == "x"][0].grad
    )


def _find(v: Value) -> list[Value]:
    out, stack, seen = [], [v], set()
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
            stack.extend(n._prev)
    return out


def test_shared_nodes_stay_shared_and_powers_keep_their_exponent():
    a = Value(2.0, label="a")
    b = a * a + a**3
    got = copy.deepcopy({"out": b, "a": a})
    sa = got["a"]
    mul, power = got["out"]._prev
    assert mul._prev == (sa, sa) and power._prev == (sa,) and power._op == "**3"
    assert pickle.loads(pickle.dumps(b)).data == b.data == 12.0
