"""Run per-sample code once and record what it did: the graph, and the choices it made on the data.

`micrograd.jit` calls ``record(fn, args)``: it runs `fn` on one sample with placeholder Values and
returns a `Trace` -- the graph `fn` built, which of its leaves existed before the call (captured:
parameters) and which it made (constants), and the *guards*: every decision the Python code took
on a number read from a Value. While tracing, reading ``v.data`` gives fn a `TracedNumber`: a
stand-in for the float (``isinstance(v.data, float)`` holds) whose comparisons, ``bool()``,
``int()``, ``round()``, ``math.floor`` / ``ceil`` / ``trunc`` and ``is_integer()`` return this
sample's answer and record it as a guard. jit checks the guards on the whole batch on every call,
with the parameters' current values, so a sample (or a parameter update) that would take another
path is caught instead of silently replaying the traced one.

What cannot be guarded is refused, with `TraceError`, at trace time: arithmetic on ``v.data``
(``x.data * 2``), ``float(x.data)``, ``math.exp(x.data)``, ``Value(x.data)``, ``x * x.data``, a
``backward()`` or float ``grad()`` inside `fn`, reading ``p.grad`` -- each would turn one sample's
(or one step's) number into a constant. Text (``print(x.data)``) is allowed and guarded as "this
exact value".

How uses are seen: for the duration of the call, `Value.data`, `._local` and `.grad` are properties
(class attributes, restored afterwards; other threads get plain values from them). The engine's
op methods read ``.data`` too; their reads are the op itself (jit's numpy rule makes the same
choice per sample), so code of the registered ops is trusted and gets the float. Everything else
in the engine (``grad``'s symbolic rules, ``repr``) is treated like user code. A Value made during
the call is noticed when its ``__init__`` sets its data; ``backward()`` and ``grad()`` show
themselves by reading the local derivatives of nodes made during the call.
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from sys import _getframe
from types import FrameType
from typing import Any

from . import engine
from .engine import Value

__all__ = ["TraceError", "TracedNumber", "Guard", "Trace", "record", "number", "numbers_of"]


class TraceError(ValueError):
    """`fn` cannot be replayed as one graph for the whole batch: its Python code used a number
    computed from a sample in a way jit cannot check per sample, or a sample took another path
    than the traced one."""


# The code of the engine functions whose reads of `.data` are the op itself (trusted), as the
# engine declares them (its jit contract, engine.PART_OF_AN_OP): each registered op's Value method
# (engine.OPS) and the comprehensions inside it, and the helpers marked @_part_of_an_op. An op
# added to the registry is trusted with no change here; a helper that reads `.data` and is not
# marked is not (its decisions would be guarded, its arithmetic refused: loud, never silent).
# grad's symbolic rules (_pow_rule, ...) are not trusted: their choices become guards.
def _code(fn: Any) -> Any:
    return getattr(fn, "__func__", fn).__code__


def _with_nested(codes: Iterable[Any]) -> frozenset:
    out, todo = set(), list(codes)
    while todo:
        code = todo.pop()
        out.add(code)
        todo.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return frozenset(out)


_TRUSTED = _with_nested(
    [_code(info.method) for info in engine.OPS.values()]
    + [_code(fn) for fn in engine.PART_OF_AN_OP]
)
_CONSTANT_MAKERS = frozenset(_code(fn) for fn in engine.MAKES_A_CONSTANT)
_INIT = _code(Value.__init__)
_ENGINE = engine.__dict__


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip
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

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(x.data, float) stays true for fn's type checks
        return float

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


for _name, _what, _op in [
    ("__float__", "float(x.data) (or math.*, numpy, struct of it)", float),
    ("__complex__", "complex(x.data)", complex),
    ("__neg__", "-x.data", operator.neg),
    ("__pos__", "+x.data", operator.pos),
    ("__abs__", "abs(x.data)", abs),
]:
    setattr(TracedNumber, _name, _number(_what, _op, binary=False))
for _name, _sym, _op in [
    ("add", "+", operator.add), ("sub", "-", operator.sub), ("mul", "*", operator.mul),
    ("truediv", "/", operator.truediv), ("floordiv", "//", operator.floordiv),
    ("mod", "%", operator.mod), ("divmod", "divmod", divmod), ("pow", "**", operator.pow),
]:  # fmt: skip
    _what = f"arithmetic on x.data ({_sym})"
    setattr(TracedNumber, f"__{_name}__", _number(_what, _op, binary=True))
    setattr(TracedNumber, f"__r{_name}__", _number(_what, _op, binary=True, reflected=True))


# ------------------------------------------------------------------------- reading .data

_RAW = Value.__dict__["data"]  # the slots' own descriptors: plain access, no questions asked
_RAW_LOCAL = Value.__dict__["_local"]
_RAW_GRAD = Value.__dict__["grad"]
_state = threading.local()  # .traces: this thread's traces in progress (a jit inside fn nests)
_lock = threading.Lock()
_installed = 0  # traces in progress in all threads; the properties are installed while > 0


def number(v: Value) -> float:
    """v's float, even while a trace is in progress in this thread (for jit's own bookkeeping)."""
    return _RAW.__get__(v, Value)


def numbers_of(vs: Sequence[Value]) -> list[float]:
    """The floats of `vs`: plain attribute reads when no trace is in progress (the fast path)."""
    if _installed == 0:
        return [v.data for v in vs]
    return [_RAW.__get__(v, Value) for v in vs]


def _tracing() -> Trace | None:
    traces = getattr(_state, "traces", None)
    return traces[-1] if traces else None


def _get(v: Value) -> Any:
    raw = _RAW.__get__(v, Value)
    tr = _tracing()
    if tr is None or _getframe(1).f_code in _TRUSTED:
        return raw
    return TracedNumber(raw, v, tr)


def _set(v: Value, x: Any) -> None:
    tr = _tracing()
    if tr is not None:
        frame = _getframe(1)
        if frame.f_code is _INIT:
            tr.created.add(v)  # every Value made during the call sets its data first
        elif type(x) is TracedNumber and x.trace.active:
            tr.refuse("a number read from a Value stored as another's .data", frame)
    _RAW.__set__(v, x)


def _get_local(v: Value) -> Any:
    # Local derivatives are numbers computed from the sample: read during the call only by
    # backward() or grad() (not create_graph, which builds Value ops), whose results jit cannot
    # replay per sample.
    tr = _tracing()
    if tr is not None and v in tr.created:
        frame = _getframe(1)
        tr.refuse(f"the local derivatives of a traced node ({frame.f_code.co_name})", frame)
    return _RAW_LOCAL.__get__(v, Value)


def _get_grad(v: Value) -> Any:
    # A gradient read by fn (p.grad) is a number from outside the graph -- the last backward's --
    # that a replay would keep constant: refused. The engine's own reads (repr) pass.
    tr = _tracing()
    if tr is not None:
        frame = _getframe(1)
        if frame.f_globals is not _ENGINE:
            tr.refuse("a gradient (.grad) read inside fn", frame)
    return _RAW_GRAD.__get__(v, Value)


_PROPERTIES = {
    "data": (_RAW, property(_get, _set, doc="The node's number (a TracedNumber for fn, when "
                                             "jit traces).")),
    "_local": (_RAW_LOCAL, property(_get_local, _RAW_LOCAL.__set__)),
    "grad": (_RAW_GRAD, property(_get_grad, _RAW_GRAD.__set__)),
}  # fmt: skip


@contextmanager
def _reading(trace: Trace) -> Iterator[None]:
    """For the duration of the block, reads of `.data` and `._local` in this thread report to
    `trace` (other threads see plain values; the class attributes are restored afterwards)."""
    global _installed
    with _lock:
        if _installed == 0:
            for name, (_, prop) in _PROPERTIES.items():
                setattr(Value, name, prop)
        _installed += 1
    traces = _state.__dict__.setdefault("traces", [])
    traces.append(trace)
    try:
        yield
    finally:
        traces.pop()
        with _lock:
            _installed -= 1
            if _installed == 0:
                for name, (raw, _) in _PROPERTIES.items():
                    setattr(Value, name, raw)


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
            with _reading(self):
                self.out = fn(*placed)
        except Exception as e:
            if self.refused and not isinstance(e, TraceError):
                raise TraceError(self.refused[0]) from e  # what made fn fail, likely
            raise
        finally:
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
        self.guards.append(Guard(kind, a, b, result, _where(frame), text))

    def refuse(self, what: str, frame: FrameType) -> None:
        where = _where(frame)
        if frame.f_code in _CONSTANT_MAKERS:
            what = "a number taken from x.data used as a constant (Value(x.data), x * x.data)"
            where = _where(_user_frame(frame))
        elif frame.f_globals is _ENGINE:
            what = f"{what} inside micrograd's {frame.f_code.co_name}()"
            where = _where(_user_frame(frame))
        message = (
            f"jit: fn uses the number of a traced Value in a way jit cannot check per sample: "
            f"{what}, at {where}. jit replays Value ops and checks comparisons, bool(), int() "
            f"and rounding of .data; compute with Value ops instead, or run fn eagerly."
        )
        self.refused.append(message)
        raise TraceError(message)


def _user_frame(frame: FrameType | None) -> FrameType | None:
    while frame is not None and frame.f_globals is _ENGINE:
        frame = frame.f_back
    return frame


def record(fn: Callable[..., Value], args: Sequence[Any]) -> Trace:
    """Run ``fn(*args)`` once, `args` being floats or nested lists of floats, on placeholders."""
    return Trace(fn, args)
