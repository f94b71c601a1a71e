"""The engine's garbage-collector policy: `adopt()` (engine.py calls it once, at import) and
`restore_gc()`, which puts Python's thresholds back exactly as they were.

Why. A graph of Values holds no reference cycles, so reference counting frees it the moment its
last name goes; but each node is an object the cyclic collector tracks, and CPython starts a
young collection every 700 (2,000 from 3.13) tracked objects made and not yet freed. A training
step's graph is that many objects long before it is freed, so each step's nodes were walked by
young collections, survived them, and filled the oldest generation until a full collection walked
everything alive: 60% of a microgpt step, and a cost per node growing with the graph.

The policy. The young generation's threshold becomes `YOUNG` (one million objects made and not
yet freed: CPython counts a freed object off again); the older generations' thresholds are kept.
A step's graph, freed at the end of the step, then never reaches it, and the collector stays out
of the way. Garbage that is a cycle (``p.m = p``, an optimiser's state pointing back at its
parameter) still counts: a collection comes after at most `YOUNG` such objects, so memory stays
bounded (tests/test_collector.py). A threshold already at `YOUNG` or above is left as it is.
"""

from __future__ import annotations

import gc

YOUNG = 1_000_000  # objects made and not yet freed before a young collection (CPython: 700/2,000)

_before: tuple[int, ...] | None = None  # the thresholds adopt() replaced; None: nothing to undo


def adopt() -> None:
    """Raise the young generation's threshold to `YOUNG`, remembering the thresholds before."""
    global _before
    now = gc.get_threshold()
    if _before is None and now[0] < YOUNG:
        _before = now
        gc.set_threshold(YOUNG, *now[1:])


def restore_gc() -> tuple[int, ...]:
    """Undo the engine's garbage-collector policy: Python's thresholds as they were before
    `micrograd.engine` was imported (``gc.get_threshold()`` then). Returns them."""
    global _before
    if _before is not None:
        gc.set_threshold(*_before)
        _before = None
    return gc.get_threshold()
