"""Run per-sample code once and record what it did: the graph, and the choices it made on the data.

`micrograd.jit` calls ``record(fn, args)``: it runs `fn` on one sample with placeholder Values and
returns a `Trace` -- the graph `fn` built, which of its leaves existed before the call (captured:
parameters) and which it made (constants), and the *guards*: every decision the Python code took
on a number read from a Value. While tracing, reading ``v.data`` gives fn a `TracedNumber`: a
stand-in for the number (a `numbers.Real`, not a float: float operations would read it unasked)
whose comparisons, ``bool()``, ``int()``, ``round()``, ``math.floor`` / ``ceil`` / ``trunc`` and
``is_integer()`` return this sample's answer and record it as a guard. jit checks the guards on
the whole batch on every call, with the parameters' current values, so a sample (or a parameter
update) that would take another path is caught instead of silently replaying the traced one.

What cannot be guarded is refused, with `TraceError`, at trace time: arithmetic on ``v.data``
(``x.data * 2``), ``float(x.data)``, ``math.exp(x.data)``, ``Value(x.data)``, ``x * x.data``, a
``backward()`` or float ``grad()`` inside `fn`, reading ``p.grad`` -- each would turn one sample's
(or one step's) number into a constant. Text (``print(x.data)``) is allowed and guarded as "this
exact value".

How uses are seen: through ``watch.watch_reads`` (micrograd/jit/watch.py), which tells this thread's
reads of ``.data``, ``._local`` and ``.grad`` during the call, and no other thread's. The engine's
op methods read ``.data`` too; their reads are the op itself (jit's numpy rule makes the same
choice per sample), so they are not told (the engine declares which code is an op's).
Everything else in the engine (``grad``'s symbolic rules, ``repr``) is treated like user code. A
Value made during the call is noticed when its ``__init__`` sets its data; ``backward()`` and
``grad()`` show themselves by reading the local derivatives of nodes made during the call.
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from sys import _getframe
from types import FrameType
from typing import Any

from ..engine import Value
from . import watch

__all__ = ["TraceError", "TracedNumber", "Guard", "Trace", "record", "number", "numbers_of"]


class TraceError(ValueError):
    """`fn` cannot be replayed as one graph for the whole batch: its Python code used a number
    computed from a sample in a way jit cannot check per sample, or a sample took another path
    than the traced one."""


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
UNARY = ("bool", "int", "floor", "ceil", "round", "is_integer", "same")


class Guard:
    """One decision `fn` took on traced data: `kind` (a comparison, or one of UNARY) of `a` (and
    `b`: a Value, or a plain number), which gave `expected` on the traced sample, at `where`."""

    __slots__ = ("kind", "a", "b", "expected", "where", "text")

    def __init__(
        self,
        kind: str,
        a: Value | None,
        b: Value | float | None,
        expected: Any,
        where: str,
        text: str,
    ) -> None:
        self.kind, self.a, self.b, self.expected = kind, a, b, expected
        self.where, self.text = where, text

    def __repr__(self) -> str:
        return f"Guard({self.text} -> {self.expected!r} at {self.where})"


def _where(frame: FrameType | None) -> str:
    if frame is None:
        return "?"
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"


# Every use of a TracedNumber is fn's (the engine's ops read plain floats): each method below
# records it as a decision (a guard) or refuses it, unless the trace is over (then it is a float).


def _compare(symbol: str) -> Callable:
    op = COMPARISONS[symbol]

    def method(self: TracedNumber, other: object) -> Any:
        o = other.value if type(other) is TracedNumber else other
        if type(o) is not float and (isinstance(o, Value) or not isinstance(o, numbers.Real)):
            return NotImplemented
        result = op(self.value, o)
        frame = _getframe(1)
        if self.trace.active:
            b = other.node if type(other) is TracedNumber else float(o)
            self.trace.guard(symbol, self.node, b, result, frame)
        return result

    return method


def _unary(kind: str, convert: Callable[[float], Any]) -> Callable:
    def method(self: TracedNumber) -> Any:
        result = convert(self.value)
        frame = _getframe(1)
        if self.trace.active:
            self.trace.guard(kind, self.node, None, result, frame)
        return result

    return method


def _number(what: str, op: Callable[..., Any], binary: bool, reflected: bool = False) -> Callable:
    """An operation that would make a new number from traced data: refused while tracing."""
    if reflected:

        def rmethod(self: TracedNumber, other: Any) -> Any:
            frame = _getframe(1)
            if self.trace.active:
                self.trace.refuse(what, frame)
            return op(other.value if type(other) is TracedNumber else other, self.value)

        return rmethod
    if binary:

        def method(self: TracedNumber, other: Any) -> Any:
            frame = _getframe(1)
            if self.trace.active:
                self.trace.refuse(what, frame)
            return op(self.value, other.value if type(other) is TracedNumber else other)

        return method

    def unary(self: TracedNumber) -> Any:
        frame = _getframe(1)
        if self.trace.active:
            self.trace.refuse(what, frame)
        return op(self.value)

    return unary


def _text(name: str) -> Callable:
    def method(self: TracedNumber, *args: Any) -> Any:
        frame = _getframe(1)
        if self.trace.active:
            self.trace.guard("same", self.node, self.value, True, frame)
        return getattr(self.value, name)(*args)

    return method


class TracedNumber:
    """``v.data`` while `fn` is traced: the float `value` of node `node`, reporting to `trace`."""

    __slots__ = ("value", "node", "trace")

    def __init__(self, value: float, node: Value, trace: Trace) -> None:
        self.value, self.node, self.trace = value, node, trace

    __lt__ = _compare("<")
    __le__ = _compare("<=")
    __gt__ = _compare(">")
    __ge__ = _compare(">=")
    __eq__ = _compare("==")  # type: ignore[assignment]
    __ne__ = _compare("!=")  # type: ignore[assignment]
    __bool__ = _unary("bool", bool)
    __int__ = _unary("int", int)
    __trunc__ = _unary("int", math.trunc)
    __floor__ = _unary("floor", math.floor)
    __ceil__ = _unary("ceil", math.ceil)

    def __round__(self, ndigits: int | None = None) -> Any:
        frame = _getframe(1)
        if ndigits is None:
            result = round(self.value)
            if self.trace.active:
                self.trace.guard("round", self.node, None, result, frame)
            return result
        if self.trace.active:
            self.trace.refuse("round(x.data, ndigits)", frame)
        return round(self.value, ndigits)

    def is_integer(self) -> bool:
        result = self.value.is_integer()
        frame = _getframe(1)
        if self.trace.active:
            self.trace.guard("is_integer", self.node, None, result, frame)
        return result

    __repr__ = _text("__repr__")  # type: ignore[assignment]
    __str__ = _text("__str__")  # type: ignore[assignment]
    __format__ = _text("__format__")  # type: ignore[assignment]
    __hash__ = _text("__hash__")  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:  # hex, as_integer_ratio, real, ...
        frame = _getframe(1)
        if self.trace.active:
            self.trace.refuse(f"x.data.{name}", frame)
        return getattr(self.value, name)


# A real number (isinstance(x.data, numbers.Real) holds for fn's type checks), not a float: every
# float operation would read its value unasked (math.exp would not call __float__).
numbers.Real.register(TracedNumber)

for _name, _what, _op in [
    ("__float__", "float(x.data) (or math.*, numpy, struct of it)", float),
    ("__complex__", "complex(x.data)", complex),
    ("__neg__", "-x.data", operator.neg),
    ("__pos__", "+x.data", operator.pos),
    ("__abs__", "abs(x.data)", abs),
]:
    setattr(TracedNumber, _name, _number(_what, _op, binary=False))
for _name, _sym, _op in [
    ("add", "+", operator.add),
    ("sub", "-", operator.sub),
    ("mul", "*", operator.mul),
    ("truediv", "/", operator.truediv),
    ("floordiv", "//", operator.floordiv),
    ("mod", "%", operator.mod),
    ("divmod", "divmod", divmod),
    ("pow", "**", operator.pow),
]:
    _what = f"arithmetic on x.data ({_sym})"
    setattr(TracedNumber, f"__{_name}__", _number(_what, _op, binary=True))
    setattr(TracedNumber, f"__r{_name}__", _number(_what, _op, binary=True, reflected=True))


# ------------------------------------------------------------------------- reading .data
# Through `watch.watch_reads`: a `_Watcher` hears of this
# thread's reads of `.data`, `._local` and `.grad` (except an op's own reads of `.data`, which
# the engine knows by its declarations), and nothing of other threads'.


def number(v: Value) -> float:
    """v's float, even while a trace is in progress in this thread (for jit's own bookkeeping)."""
    return watch.raw_data(v)


def numbers_of(vs: Sequence[Value]) -> list[float]:
    """The floats of `vs`, even while a trace is in progress in this thread."""
    if _in_trace.depth == 0:
        return [v.data for v in vs]  # the fast path: plain attribute reads
    return [watch.raw_data(v) for v in vs]


class _InTrace(threading.local):
    depth = 0  # traces in progress in this thread (a jit inside fn nests)


_in_trace = _InTrace()


class _Watcher(watch.ReadWatcher):
    """What a trace makes of the reads the engine tells it of."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def data(self, v: Value, x: float, frame: FrameType) -> Any:
        return TracedNumber(x, v, self.trace)

    def made(self, v: Value) -> None:
        self.trace.created.add(v)  # every Value made during the call sets its data first

    def stored(self, v: Value, x: Any, frame: FrameType) -> None:
        if type(x) is TracedNumber and x.trace.active:
            self.trace.refuse("a number read from a Value stored as another's .data", frame)

    def local(self, v: Value, frame: FrameType) -> None:
        # Local derivatives are numbers computed from the sample: read during the call only by
        # backward() or grad() (not create_graph, which builds Value ops), whose results jit
        # cannot replay per sample.
        if v in self.trace.created:
            what = f"the local derivatives of a traced node ({frame.f_code.co_name})"
            self.trace.refuse(what, frame)

    def grad(self, v: Value, frame: FrameType) -> None:
        # A gradient read by fn (p.grad) is a number from outside the graph -- the last
        # backward's -- that a replay would keep constant: refused.
        self.trace.refuse("a gradient (.grad) read inside fn", frame)


class Trace:
    """One run of `fn` on one sample: its `placeholders` (with display `names`), output `out`,
    the Values made during the call (`created`), the `guards` and any `refused` use."""

    def __init__(self, fn: Callable[..., Value], args: Sequence[Any]) -> None:
        self.placeholders: list[Value] = []
        self.names: list[str] = []
        self.created: set[Value] = set()
        self.guards: list[Guard] = []
        self.refused: list[str] = []
        self.active = True
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = []
        names = [params[k] if k < len(params) else f"arg{k}" for k in range(len(args))]
        placed = [self._place(a, name) for a, name in zip(args, names)]
        try:
            _in_trace.depth += 1
            with watch.watch_reads(_Watcher(self)):
                self.out = fn(*placed)
        except Exception as e:
            if self.refused and not isinstance(e, TraceError):
                raise TraceError(self.refused[0]) from e  # what made fn fail, likely
            raise
        finally:
            _in_trace.depth -= 1
            self.active = False
        if self.refused:  # refused even if fn caught the TraceError and went on
            raise TraceError(self.refused[0])

    def _place(self, x: Any, name: str) -> Any:
        if isinstance(x, list):
            return [self._place(e, f"{name}[{k}]") for k, e in enumerate(x)]
        v = Value(x)
        self.placeholders.append(v)
        self.names.append(name)
        return v

    def describe(self, v: Value) -> str:
        """How fn's code names node v: ``x[1].data`` for an input, else what it is."""
        for p, name in zip(self.placeholders, self.names):
            if p is v:
                return f"{name}.data"
        if v not in self.created:
            return f"(captured {v.label or v._op or 'Value'}).data"
        return f"(a {v._op!r} node).data"

    def guard(self, kind: str, a: Value, b: Value | float | None, result: Any, frame: Any) -> None:
        if kind in COMPARISONS:
            rhs = self.describe(b) if isinstance(b, Value) else repr(b)
            text = f"{self.describe(a)} {kind} {rhs}"
        elif kind == "same":
            text = f"the exact value of {self.describe(a)} (turned into text)"
        else:
            text = f"{kind}({self.describe(a)})"
        self.guards.append(Guard(kind, a, b, result, _where(_user_frame(frame)), text))

    def refuse(self, what: str, frame: FrameType) -> None:
        where = _where(frame)
        role = watch.code_role(frame)
        if role == "constant":
            what = "a number taken from x.data used as a constant (Value(x.data), x * x.data)"
            where = _where(_user_frame(frame))
        elif role:
            what = f"{what} inside micrograd's {_called(frame)}()"
            where = _where(_user_frame(frame))
        message = (
            f"jit: fn uses the number of a traced Value in a way jit cannot check per sample: "
            f"{what}, at {where}. jit replays Value ops and checks comparisons, bool(), int() "
            f"and rounding of .data; compute with Value ops instead, or run fn eagerly."
        )
        self.refused.append(message)
        raise TraceError(message)


def _called(frame: FrameType) -> str:
    """The engine's function the user's code called, of the engine's frames up from `frame`."""
    name = frame.f_code.co_name
    while frame is not None and watch.code_role(frame):
        name = frame.f_code.co_name
        frame = frame.f_back  # type: ignore[assignment]
    return name


def _user_frame(frame: FrameType | None) -> FrameType | None:
    while frame is not None and watch.code_role(frame):
        frame = frame.f_back
    return frame


def record(fn: Callable[..., Value], args: Sequence[Any]) -> Trace:
    """Run ``fn(*args)`` once, `args` being floats or nested lists of floats, on placeholders."""
    return Trace(fn, args)
