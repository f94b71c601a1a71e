"""The engine and Python's garbage collector: `adopt()` (engine.py calls it once, at import),
`restore_gc()`, which puts Python's thresholds back exactly as they were, and `release_memory()`,
which gives back the memory the engine keeps for the next graph. docs/memory.md tells the figures.

Why. A graph of Values holds no reference cycles, so reference counting frees it the moment its
last name goes. The compiled core's nodes (core/cvalue.c) are not tracked by the cyclic collector
at all, so with it importing micrograd leaves the collector exactly as it was. The pure engine's
nodes are objects the collector tracks, and CPython starts a young collection every 700 (2,000
from 3.13) tracked objects made and not yet freed: a training step's graph is that many objects
long before it is freed, so its nodes were walked by young collections, survived them, and filled
the oldest generation until a full collection walked everything alive (benchmarks/bench_engine.py,
"gc: Python's" against "gc: young 1M").

The pure engine's policy. The young generation's threshold becomes `YOUNG` (one million objects
made and not yet freed: CPython counts a freed object off again); the older generations'
thresholds are kept. A step's graph, freed at the end of the step, then never reaches it. Garbage
that is a cycle (``p.m = p``, an optimiser's state pointing back at its parameter) still counts: a
collection comes after at most `YOUNG` such objects, so memory stays bounded
(tests/test_collector.py). A threshold already at `YOUNG` or above is left as it is.
"""

from __future__ import annotations

import gc

from .compiled import COMPILED, release

YOUNG = 1_000_000  # objects made and not yet freed before a young collection (CPython: 700/2,000)

_before: tuple[int, ...] | None = None  # the thresholds adopt() replaced; None: nothing to undo


def adopt() -> None:
    """The pure engine: raise the young generation's threshold to `YOUNG`, remembering the
    thresholds before. The compiled core: nothing (its nodes are not tracked)."""
    global _before
    now = gc.get_threshold()
    if not COMPILED and _before is None and now[0] < YOUNG:
        _before = now
        gc.set_threshold(YOUNG, *now[1:])


def restore_gc() -> tuple[int, ...]:
    """Undo the engine's garbage-collector policy: Python's thresholds as they were before
    `micrograd.engine` was imported (``gc.get_threshold()`` then). Returns them. (With the
    compiled core there is nothing to undo.)"""
    global _before
    if _before is not None:
        gc.set_threshold(*_before)
        _before = None
    return gc.get_threshold()


def release_memory() -> int:
    """Give back the memory the engine keeps once your graphs are freed: the compiled core's pool
    of freed nodes (up to 2^20 of them, ~130 MiB, kept so that the next graph's build faults no
    memory in) and backward()'s arrays, after a full collection, which frees the cycles through
    Values (``p.m = p``) the pure engine's policy lets wait. Python's allocator returns its emptied
    arenas to the system. Returns how many pooled nodes were freed (0 with the pure engine).
    The next graph is built as fast as ever, only its first build faults its memory in again."""
    gc.collect()  # first: the nodes it frees go to the pool
    return release()
