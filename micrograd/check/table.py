"""The table of ops `check` runs on a learner's class, and how each usually goes wrong.

Each row is an expression over inputs a, b (`a * b`, `2.0 - a`, `a.tanh()`), the methods it needs,
the points to evaluate it at, its local derivative as a hint, and classic wrong derivatives with
the hint for each. Ops registered in the engine (`engine.OPS`) that the table does not spell out
get rows made from the registry, so an op added to the engine is checked too.
"""

from __future__ import annotations

import inspect
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..engine import OPS, Value
from .timeout import Failed, crash_frame
from .values import close

UPSTREAM = 2.5  # the out.grad each op's _backward is tried with: 1 would hide a missing × out.grad

# Leaf names, in order, for the expressions below.
NAMES = "abcd"


@dataclass(frozen=True)
class Row:
    """One op to check: the expression, which methods it needs, and how it usually goes wrong."""

    op: str  # how problems name it
    expr: str  # the expression, over inputs a, b, ...
    fn: Callable[..., Any]  # builds it from Values of either class
    needs: tuple[str, ...]  # methods the class must define
    points: tuple[tuple[float, ...], ...]  # where to evaluate it
    rule: str = ""  # the local derivative, as a hint
    # Classic wrong local derivatives, each with its hint: fn(*xs, out) -> one per input.
    mistakes: tuple[tuple[Callable[..., tuple[float, ...]], str], ...] = ()
    reflected: str = ""  # for `2.0 - a`: the method Python calls, __rsub__
    number: bool = False  # mixes a plain number in: needs numbers wrapped into Values
    primitive: bool = False  # out._prev must hold the inputs (+ and *: nothing to build them from)
    extra: bool = False  # beyond the lecture: missing is mentioned, never expected


def _row(op: str, expr: str, fn: Callable[..., Any], needs: str, points: Any, **kw: Any) -> Row:
    pts = tuple(p if isinstance(p, tuple) else (p,) for p in points)
    return Row(op, expr, fn, tuple(needs.split()), pts, **kw)


BIN = ((2.0, -3.0), (-0.5, 1.5), (1.25, 0.75))
POS = ((2.0, 0.5), (0.75, 1.5), (3.0, 2.5))
UN = (-1.5, 0.4, 2.0)
UNPOS = (0.5, 1.3, 2.0)

ASSIGN_HINT = "does _backward assign (=) instead of accumulating (+=)?"

ROWS: tuple[Row, ...] = (
    _row(
        "+",
        "a + b",
        lambda a, b: a + b,
        "__add__",
        BIN,
        primitive=True,
        rule="a.grad += out.grad; b.grad += out.grad",
    ),
    _row(
        "*",
        "a * b",
        lambda a, b: a * b,
        "__mul__",
        BIN,
        primitive=True,
        rule="a.grad += b.data * out.grad; b.grad += a.data * out.grad",
        mistakes=(
            (
                lambda a, b, o: (a, b),
                "each input's local derivative is the *other* input: a.grad += b.data * out.grad",
            ),
            (lambda a, b, o: (1.0, 1.0), "that is +'s rule; for * it is the other input"),
        ),
    ),
    _row("+", "a + 2.0", lambda a: a + 2.0, "__add__", UN, number=True),
    _row("*", "a * 3.0", lambda a: a * 3.0, "__mul__", UN, number=True),
    _row("+", "2.0 + a", lambda a: 2.0 + a, "__radd__", UN, number=True, reflected="__radd__"),
    _row("*", "3.0 * a", lambda a: 3.0 * a, "__rmul__", UN, number=True, reflected="__rmul__"),
    _row("neg", "-a", lambda a: -a, "__neg__", UN),
    _row("-", "a - b", lambda a, b: a - b, "__sub__", BIN),
    _row("-", "2.0 - a", lambda a: 2.0 - a, "__rsub__", UN, number=True, reflected="__rsub__"),
    _row(
        "**",
        "a ** 2",
        lambda a: a**2,
        "__pow__",
        UN,
        number=True,
        rule="a.grad += p * a.data**(p - 1) * out.grad",
        mistakes=(
            (lambda a, o: (a,), "forgot the factor p: p * a.data**(p - 1)"),
            (lambda a, o: (2 * a**2,), "the exponent drops by one: p * a.data**(p - 1)"),
        ),
    ),
    _row(
        "**",
        "a ** 3",
        lambda a: a**3,
        "__pow__",
        UN,
        number=True,
        rule="a.grad += p * a.data**(p - 1) * out.grad",
        mistakes=(
            (lambda a, o: (a**2,), "forgot the factor p: p * a.data**(p - 1)"),
            (lambda a, o: (3 * a**3,), "the exponent drops by one: p * a.data**(p - 1)"),
            (lambda a, o: (3 * o,), "p * out.data is p * a**p; it is p * a.data**(p - 1)"),
        ),
    ),
    _row(
        "**",
        "a ** -1",
        lambda a: a**-1,
        "__pow__",
        UNPOS,
        number=True,
        rule="a.grad += p * a.data**(p - 1) * out.grad",
        mistakes=(
            (lambda a, o: (a**-2,), "forgot the factor p: p * a.data**(p - 1)"),
            (lambda a, o: (-(a**-1),), "the exponent drops by one: p * a.data**(p - 1)"),
        ),
    ),
    _row(
        "**",
        "a ** 0.5",
        lambda a: a**0.5,
        "__pow__",
        UNPOS,
        number=True,
        rule="a.grad += p * a.data**(p - 1) * out.grad",
    ),
    _row("/", "a / b", lambda a, b: a / b, "__truediv__", POS),
    _row("-", "a - 2.0", lambda a: a - 2.0, "__sub__", UN, number=True),
    _row("/", "a / 2.0", lambda a: a / 2.0, "__truediv__", UN, number=True),
    _row(
        "/",
        "2.0 / a",
        lambda a: 2.0 / a,
        "__rtruediv__",
        UNPOS,
        number=True,
        reflected="__rtruediv__",
    ),
    _row(
        "exp",
        "a.exp()",
        lambda a: a.exp(),
        "exp",
        UN,
        rule="a.grad += out.data * out.grad  (d/dx e^x = e^x)",
        mistakes=(
            (lambda a, o: (a,), "d/dx e^x is e^x, the output (out.data), not x"),
            (lambda a, o: (1.0,), "d/dx e^x is e^x, the output (out.data)"),
        ),
    ),
    _row(
        "tanh",
        "a.tanh()",
        lambda a: a.tanh(),
        "tanh",
        UN,
        rule="a.grad += (1 - t**2) * out.grad, with t = tanh(a), the output",
        mistakes=(
            (
                lambda a, o: (1 - a**2,),
                "1 - x² uses the input; the derivative is 1 - t² with t = tanh(x), the output",
            ),
            (lambda a, o: (1 - o,), "forgot the square: 1 - t**2"),
            (lambda a, o: (o**2,), "it is 1 - t**2, not t**2"),
            (lambda a, o: (1 + o**2,), "it is 1 - t**2, not 1 + t**2"),
        ),
    ),
    _row(
        "relu",
        "a.relu()",
        lambda a: a.relu(),
        "relu",
        UN,
        rule="a.grad += (out.data > 0) * out.grad",
        mistakes=(
            (lambda a, o: (o,), "the slope is 1 where a > 0 (not the output's value), 0 elsewhere"),
            (lambda a, o: (1.0,), "the slope is 0 where a <= 0"),
        ),
    ),
    _row(
        "log",
        "a.log()",
        lambda a: a.log(),
        "log",
        UNPOS,
        extra=True,
        rule="a.grad += (1 / a.data) * out.grad",
        mistakes=((lambda a, o: (o,), "d/dx ln x is 1/x"),),
    ),
    _row(
        "sigmoid",
        "a.sigmoid()",
        lambda a: a.sigmoid(),
        "sigmoid",
        UN,
        extra=True,
        rule="a.grad += s * (1 - s) * out.grad, with s the output",
    ),
)


def registry_rows(covered: set[str] | None = None) -> tuple[Row, ...]:
    """Rows for the engine's registered ops (engine.OPS) with a method of their own that ROWS
    does not spell out, one input or several (``a.tanh()``, ``a.maximum(b)``).

    So an op added to the engine is checked on learners' classes too, with no second table: the
    method the class must define is the registered method's name, its inputs are as many as the
    declaration's arity, the points are drawn from a few candidates where micrograd's own op is
    defined, and the hint is the registry's formula.
    """
    covered = {n for row in ROWS for n in row.needs} if covered is None else covered
    rows = []
    for info in OPS.values():
        method = getattr(info.method, "__name__", "")
        if not info.arity or info.param or method in covered or not method.isidentifier():
            continue  # many-input ops (dot, sum) and ops with a number of their own (** p)
        if method.startswith("__"):
            continue  # operators are spelled out in ROWS
        points = []
        for k in range(len(_CANDIDATES)):  # each point a rotation of the candidates: distinct
            xs = tuple(_CANDIDATES[(k + i) % len(_CANDIDATES)] for i in range(info.arity))
            try:
                info.apply(*(Value(x) for x in xs))
            except (ArithmeticError, ValueError):
                continue
            points.append(xs)
        if not points:
            continue
        args = ", ".join(NAMES[1 : info.arity])
        rows.append(
            Row(
                info.name,
                f"a.{method}({args})",
                _method_call(method),
                (method,),
                tuple(points[:3]),
                rule=f"micrograd's rule: {info.formula}",
                extra=True,
            )
        )
    return tuple(rows)


_CANDIDATES = (-1.5, 0.4, 2.0, 0.7, 1.3, 2.5)


def _method_call(name: str) -> Callable[..., Any]:
    return lambda a, *others: getattr(a, name)(*others)


_REFLECTED = {
    "+": "__radd__",
    "-": "__rsub__",
    "*": "__rmul__",
    "/": "__rtruediv__",
    "** or pow()": "__rpow__",
}


def operand_hint(exc: BaseException | None) -> str:
    # `2.0 * a` inside a learner's derived op (other * self**-1) needs the reflected method.
    text = str(exc)
    if not isinstance(exc, TypeError) or "unsupported operand type(s) for " not in text:
        return ""
    op = text.split("unsupported operand type(s) for ", 1)[1].split(":", 1)[0]
    first = text.split("'")[1] if text.count("'") >= 4 else ""
    if op in _REFLECTED and first in ("float", "int"):
        return f" — a number on the left of {op} needs {_REFLECTED[op]}"
    return ""


def is_unwrapped_number(exc: BaseException) -> bool:
    # The lecture's first __add__ reads other.data: with a plain number that is an AttributeError.
    text = str(exc)
    return isinstance(exc, AttributeError) and any(
        f"'{t}' object has no attribute" in text for t in ("float", "int")
    )


NO_UPSTREAM = "it is the local derivative without × out.grad: multiply by out.grad (the chain rule)"
NOT_RUN = "did _backward run at all? each op sets out._backward = _backward"


def local_causes(
    row: Row, xs: tuple[float, ...], out: float, got: list[float | None], want: list[float]
) -> list[str]:
    """Every known mistake that explains `got` (after _backward with out.grad = UPSTREAM) at
    this one point, most likely first. One point can fit several (relu's out.data × out.grad
    looks like a missing × out.grad where out.data happens to be 1/UPSTREAM): the caller keeps
    only the causes that fit at every point tried."""
    if any(g is None for g in got):
        return []
    causes = []
    if all(close(g, w / UPSTREAM) for g, w in zip(got, want)):
        causes.append(NO_UPSTREAM)
    for mistake, hint in row.mistakes:
        try:
            wrong = mistake(*xs, out)
        except (ArithmeticError, ValueError):
            continue
        if all(close(g, UPSTREAM * m) for g, m in zip(got, wrong)):
            causes.append(hint)
        elif all(close(g, m) for g, m in zip(got, wrong)):
            causes.append(hint + ", and multiply by out.grad")
    if all(g == 0 for g in got):
        causes.append(NOT_RUN)
    return causes


def fallback_cause(row: Row) -> str:
    """What to say when no known mistake fits every point."""
    return f"expected {row.rule}" if row.rule else "check its _backward"


def forgets_cause(row: Row, lost: list[int]) -> str:
    names = " and ".join(NAMES[i] for i in lost)
    return (
        f"out._prev does not lead back to {names}: the result forgets its child, so "
        f"backward() never reaches what {names} came from (a one-node graph still works, "
        f"which hides it) — make the new Value with its children, Value(..., (self,), "
        f"'{row.op}'), or build it from ops that do"
    )


def crash_hint(failed: Failed, V: type | None = None) -> str:
    """What a crash's line says about its cause, when it says something for sure (`V`, the
    learner's class: its code is read for the line that caused it)."""
    text = failed.text
    if "'NoneType' object is not callable" in text and V is not None:
        stored = called_closure(V)
        if stored:
            return stored
    if "'NoneType' object is not iterable" in text and ".reverse()" in text:
        return (
            " — list.reverse() reverses the list in place and returns None: loop over "
            "reversed(topo)"
        )
    if "unhashable type" in text:
        return (
            " — a visited set needs nodes that hash by identity: a class that defines __eq__ "
            "(as @dataclass does) loses __hash__; use @dataclass(eq=False), or no __eq__"
        )
    if isinstance(failed.exc, RecursionError):
        frame = crash_frame(failed.exc)
        if frame is not None and frame.name.startswith("__r"):
            return (
                f" — {frame.name} calls itself again ({frame.line.strip()}): with the number "
                f"on the left, Python comes back to {frame.name}; put the Value on the left "
                f"(self + other for __radd__), or wrap the number first"
            )
    return ""


def walk_cause(out_grad: float | None, kept_seed: Callable[[], float | None]) -> str:
    """Why backward() gives wrong grads though each op's _backward alone is right, from what
    it left in out.grad: 0, and 0 again when out.grad was set beforehand (`kept_seed()`), means
    the walk wiped the grads it had set (a backward() that never seeds keeps what was set)."""
    if out_grad == 0 and kept_seed() == 0:
        return (
            "out._backward() alone is right, and after backward() out.grad itself is 0, "
            "not 1: the grads are wiped during the walk — is each node's grad set to 0 "
            "while backward() walks the graph (in build_topo, or in the loop), after "
            "self.grad = 1.0? zero them before the walk, never during it"
        )
    return (
        "out._backward() alone is right, so look at backward(): does it set self.grad = 1.0 "
        "first, then call every node's _backward, output first?"
    )


_CALLED = re.compile(r"\._backward\s*=\s*_backward\s*\(\s*\)")


def called_closure(V: type) -> str:
    """The op of `V` whose build stores what its closure returns (``out._backward =
    _backward()``: the closure runs at once, and None is kept), with the line to fix; ''."""
    for cls in V.__mro__[:-1]:
        for name, fn in vars(cls).items():
            fn = getattr(fn, "__func__", fn)
            if not inspect.isfunction(fn):
                continue
            try:
                lines, first = inspect.getsourcelines(fn)
            except (OSError, TypeError):  # no source to read (built in a string, say)
                continue
            for i, line in enumerate(lines):
                if _CALLED.search(line):
                    return (
                        f" — {name} stores what its closure returns: `{line.strip()}` (line "
                        f"{first + i}) runs _backward at once, while building, and keeps "
                        f"its result, None; store the function itself: out._backward = "
                        f"_backward"
                    )
    return ""


def more_points(row: Row) -> list[tuple[float, ...]]:
    """A few more points near the row's own (seeded: the same every run), where micrograd's op
    is defined, so one lucky point cannot single out the wrong cause."""
    rng = random.Random(row.expr)
    points = []
    for _ in range(4):
        xs = tuple(x * rng.uniform(0.6, 1.4) + rng.uniform(-0.2, 0.2) for x in row.points[0])
        try:
            row.fn(*(Value(x) for x in xs))
        except (ArithmeticError, ValueError):
            continue
        points.append(xs)
    return points
