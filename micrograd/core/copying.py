"""`copy.deepcopy` and `pickle` of a Value graph of any depth (the engine's `Value.__reduce_ex__`).

By default both walk a Value's `_prev` by recursion, one level of Python's stack per node: a
graph 1,000 nodes deep (an RNN unrolled, a long sum built one term at a time) raises
RecursionError, though `backward()`, which is iterative, handles it. Here the node handed to
copy or pickle lists its whole graph first, children before parents: each node is then copied
(or written) when every one of its children already has been, so its `_prev` only refers to
copies made before, at any depth. Nodes shared with other objects copied at the same time stay
shared (copy's memo and pickle's memo see each node once).
"""

from __future__ import annotations

import threading
from typing import Any

_listing = threading.local()  # ids of the nodes being listed by a root's copy, on this thread


def _slots(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__", "_visit") and name not in names:
                names.append(name)
    return names


def _below(root: Any) -> list[Any]:
    """Every node under `root` (not root itself), children before parents, iteratively."""
    order: list[Any] = []
    seen = {id(root)}
    stack: list[tuple[Any, bool]] = [(child, False) for child in reversed(root._prev)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node._prev) if id(child) not in seen)
    return order


class _Done:
    """Written after a root's list of nodes: ends that listing on this thread."""

    def __init__(self, ids: frozenset[int]) -> None:
        self.ids = ids

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        _active().discard(self.ids)
        return (_nothing, ())

    def __deepcopy__(self, memo: dict[int, Any]) -> None:
        _active().discard(self.ids)
        return None


def _active() -> set[frozenset[int]]:
    if not hasattr(_listing, "active"):
        _listing.active = set()
    return _listing.active


def _nothing() -> None:
    return None


def _rebuild(cls: type, earlier: object = None, done: object = None) -> Any:
    """A node without its fields (they come as its state); `earlier`, the nodes below it, have
    been rebuilt already by the time this runs."""
    return cls.__new__(cls)


def reduce_value(v: Any) -> tuple[Any, ...]:
    """`Value.__reduce_ex__`: rebuild with `_rebuild`, then set the fields (``(__dict__, slots)``,
    as copy and pickle set any object's). A root (a node not already listed by the root being
    copied) lists every node below it first."""
    slots = {name: getattr(v, name) for name in _slots(type(v)) if hasattr(v, name)}
    slots["_visit"] = None
    state = (v.__dict__ or None, slots)
    if any(id(v) in ids for ids in _active()):
        return (_rebuild, (type(v),), state)
    earlier = _below(v)
    if not earlier:
        return (_rebuild, (type(v),), state)
    ids = frozenset(id(n) for n in earlier)
    active = _active()
    active.clear()  # a listing a shallow copy.copy began is never ended: forget it (and any)
    active.add(ids)
    return (_rebuild, (type(v), earlier, _Done(ids)), state)
