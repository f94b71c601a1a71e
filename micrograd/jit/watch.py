"""The tracer's window into the engine: `watch_reads` tells who reads a Value's number.

micrograd.jit traces per-sample code by watching how it reads Values' numbers (micrograd/
jit/tracing.py). While a thread is inside ``watch_reads(watcher)``, its reads of a Value's `.data`,
`._local` and `.grad` are told to `watcher` (a `ReadWatcher`), except the reads an op makes of
its own inputs' `.data`: jit replays an op as a whole. Which code is an op's is decided here
(`code_roles`): every registered op's method, read afresh each time watching starts, and every
function of engine.py, where the ops and the helpers they call live (but `Value.__repr__`), and
the fast paths core/fast.py puts on Value.

How: while any thread watches, the three fields of `Value` (its base Node's) become properties of
the class (nothing else can see a read; the compiled core's ops defer to Python's); other threads
read the plain values through them, untold, and the fields come back when the last watcher
leaves. `raw_data` reads a number past any watcher.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from sys import _getframe
from types import FrameType, FunctionType
from typing import Any

from .. import engine
from ..core import compiled, fast, floats, gradients, names, registry, walk
from ..engine import Value

__all__ = ["ReadWatcher", "watch_reads", "code_role", "code_roles", "raw_data"]


class ReadWatcher:
    """What `watch_reads` tells, in the watching thread; `frame` is the reading code's frame.
    Override what you need; the defaults change nothing."""

    def data(self, v: Value, x: float, frame: FrameType) -> Any:
        """`v.data` was read (its number is `x`) by code that is not an op's: what it gets."""
        return x

    def made(self, v: Value) -> None:
        """A Value was made (its __init__ set its number)."""

    def stored(self, v: Value, x: Any, frame: FrameType) -> None:
        """``v.data = x`` was run, outside __init__."""

    def local(self, v: Value, frame: FrameType) -> None:
        """`v._local` was read (by backward(), grad(), or other code)."""

    def grad(self, v: Value, frame: FrameType) -> None:
        """`v.grad` was read by code outside the engine."""


def _code_objects(fns: Iterable[Callable[..., Any]]) -> frozenset:
    # each function's code and the code nested in it (the comprehensions of an op's method)
    todo = [getattr(fn, "__func__", fn).__code__ for fn in fns]
    out = set()
    while todo:
        code = todo.pop()
        out.add(code)
        todo.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return frozenset(out)


def _in_engine_py() -> list[Callable[..., Any]]:
    """The functions of engine.py, the file that defines Value and its ops, at its top level and
    in Value (or replaced there by the compiled core: compiled.PYTHON), but `Value.__repr__`: an
    op's method and the helpers it calls (`_node` runs an op's rules on its children's numbers,
    `/` looks at its divisor before it builds a * b**-1)."""
    found = []
    for obj in [*vars(engine).values(), *vars(Value).values(), *compiled.PYTHON.values()]:
        fn = getattr(obj, "__func__", obj)  # (a staticmethod's function)
        if isinstance(fn, FunctionType) and fn.__module__ in (engine.__name__, fast.__name__):
            found.append(fn)
    return [fn for fn in found if fn is not Value.__repr__]  # it shows your program a number


def code_roles() -> dict[str, list[Callable[..., Any]]]:
    """The engine's code by its role for the tracer: 'op' (it reads numbers as part of an op:
    every registered op's method, read live, as an op added from another module may read its
    numbers itself, and the functions of engine.py) and 'constant' (it turns a number into a
    constant Value: a traced number reaching it is refused, it would freeze one sample's value)."""
    ops = [info.method for info in registry.OPS.values()]
    return {"op": ops + _in_engine_py(), "constant": [floats.as_float]}


_ENGINE = tuple(
    map(vars, (engine, fast, gradients, registry, floats, names, walk))
)  # the engine's modules
_SLOTS = {name: compiled.Node.__dict__[name] for name in ("data", "_local", "grad")}  # Value's
_RAW_DATA, _RAW_LOCAL, _RAW_GRAD = _SLOTS.values()
_INIT_CODE = Value.__init__.__code__
_roles: dict[str, frozenset] = {"op": frozenset(), "constant": frozenset()}


def code_role(frame: FrameType) -> str:
    """What the code running in `frame` is, as the engine declares it: 'op' (an op's own code),
    'constant' (it turns a number into a constant Value), 'engine' (other code of the engine's
    modules), or '' (not the engine's: the user's program, or another module)."""
    code = frame.f_code
    if code in _roles["op"]:
        return "op"
    if code in _roles["constant"]:
        return "constant"
    return "engine" if any(frame.f_globals is g for g in _ENGINE) else ""


def raw_data(v: Value) -> float:
    """v's number, read past any watcher (for the tracer's own bookkeeping)."""
    return _RAW_DATA.__get__(v, Value)


class _Watchers(threading.local):
    def __init__(self) -> None:
        self.stack: list[ReadWatcher] = []  # this thread's watchers; the last one is told


_watchers = _Watchers()
_watch_lock = threading.Lock()
_watching = 0  # watchers in all threads: the properties are installed while > 0


def _get_data(v: Value) -> Any:
    x = _RAW_DATA.__get__(v, Value)
    stack = _watchers.stack
    if not stack:
        return x
    frame = _getframe(1)
    return x if frame.f_code in _roles["op"] else stack[-1].data(v, x, frame)


def _set_data(v: Value, x: Any) -> None:
    stack = _watchers.stack
    if stack:
        frame = _getframe(1)
        if frame.f_code is _INIT_CODE:
            stack[-1].made(v)
        else:
            stack[-1].stored(v, x, frame)
    _RAW_DATA.__set__(v, x)


def _get_local(v: Value) -> Any:
    stack = _watchers.stack
    if stack:
        stack[-1].local(v, _getframe(1))
    return _RAW_LOCAL.__get__(v, Value)


def _get_grad(v: Value) -> Any:
    stack = _watchers.stack
    if stack:
        frame = _getframe(1)
        if not any(frame.f_globals is g for g in _ENGINE):  # the engine's reads (repr) pass
            stack[-1].grad(v, frame)
    return _RAW_GRAD.__get__(v, Value)


_WATCHED = {
    "data": property(_get_data, _set_data, doc="The node's number (watched: see watch_reads)."),
    "_local": property(_get_local, _RAW_LOCAL.__set__),
    "grad": property(_get_grad, _RAW_GRAD.__set__),
}


@contextmanager
def watch_reads(watcher: ReadWatcher) -> Iterator[None]:
    """For the duration of the block, this thread's reads of Values' `.data`, `._local` and
    `.grad` are told to `watcher` (see `ReadWatcher`); other threads are not affected. Nests: the
    innermost watcher of a thread is told."""
    global _watching
    with _watch_lock:
        if _watching == 0:
            roles = code_roles()  # live: an op registered since is known too
            _roles.update({role: _code_objects(fns) for role, fns in roles.items()})
            for name, prop in _WATCHED.items():
                setattr(Value, name, prop)
            compiled.set_watched(True)  # the compiled ops and backward() defer to Python's
        _watching += 1
    stack = _watchers.stack
    stack.append(watcher)
    try:
        yield
    finally:
        stack.pop()
        with _watch_lock:
            _watching -= 1
            if _watching == 0:
                for name in _SLOTS:
                    delattr(Value, name)  # Node's field again
                compiled.set_watched(False)
