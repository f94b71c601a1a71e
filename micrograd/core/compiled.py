"""The storage a `Value` is built on, `Node`: the compiled core's (micrograd/core/cvalue.c,
built at install where a C compiler is), or the pure-Python slots below, the reference (Pyodide
runs it; ``MICROGRAD_PURE_PYTHON=1`` forces it). `COMPILED` says which; `use_compiled(Value)` puts
the compiled ops and backward() on Value (engine.py calls it once, after the ops are declared).

The compiled Node keeps data, grad, up to two children and their local derivatives in the node
itself, and is not tracked by the cyclic garbage collector until it gets attributes of its own
(then cycles such as ``p.m = p`` are freed); a freed graph's nodes (up to 2^20 of them) are kept
for the next graph, whose build then faults no memory in: see the C file's first comments.
`release()` (micrograd.engine.release_memory()) gives that memory back.
"""

from __future__ import annotations

import os
from typing import Any

COMPILED = False
if os.environ.get("MICROGRAD_PURE_PYTHON", "") != "1":
    try:
        from . import cvalue
    except ImportError:  # not built here (no compiler, Pyodide): the pure engine
        cvalue = None  # type: ignore[assignment]
    COMPILED = cvalue is not None

if COMPILED:
    Node: Any = cvalue.Node
else:

    class Node:  # type: ignore[no-redef]
        """A Value's fields, as slots (and a `__dict__`: attributes of your own, p.m = 0)."""

        __slots__ = ("data", "grad", "label", "_prev", "_op", "_local", "_visit", "__dict__")


# the methods the compiled core replaces; PYTHON keeps Value's Python ones (their fallbacks)
PYTHON: dict[str, Any] = {}
_REPLACED = ("__add__", "__radd__", "__mul__", "__rmul__", "__sub__", "__rsub__", "__neg__")
_REPLACED += ("relu", "dot")


def use_compiled(Value: Any) -> None:
    """With the compiled core: Value's `+ - *`, relu, dot and backward() become the compiled ones
    (Node's); the Python methods stay as their fallbacks for what C leaves to them."""
    if not COMPILED:
        return
    slow = {name: Value.__dict__[name] for name in (*_REPLACED, "backward")}
    cvalue.setup(Value, slow)
    PYTHON.update(slow)
    for name in slow:
        delattr(Value, name)


def release() -> int:
    """The compiled core's pool of freed nodes (and backward()'s arrays) back to Python's
    allocator; how many nodes the pool held (0 for the pure engine, which keeps none)."""
    return int(cvalue.release()) if COMPILED else 0


def pool_size() -> int:
    """How many freed nodes the compiled core keeps for the next graph (0: the pure engine)."""
    return int(cvalue.pool_size()) if COMPILED else 0


def set_watched(flag: bool) -> None:
    """jit's tracer watches reads (micrograd/jit/watch.py): every op and backward() in Python."""
    if COMPILED:
        cvalue.set_watched(flag)


def value_class(node: Any) -> type:
    """The Value class of `node` (which may be of a subclass): the class built on Node."""
    mro = type(node).__mro__
    return mro[mro.index(Node) - 1] if Node in mro else mro[-2]
