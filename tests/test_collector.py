"""The engine's garbage-collector policy (micrograd/core/collector.py): set at import, undone
exactly by `restore_gc()`, and never at the price of memory: cycles through Values are still
freed by the collector's own runs, and memory stays flat over a long run."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

from micrograd.core import collector
from micrograd.engine import Value, restore_gc

ROOT = Path(__file__).resolve().parents[1]


def fresh_python(code: str) -> str:
    """Run `code` in a fresh interpreter that imports this worktree's micrograd; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_engine_raises_the_young_threshold_and_restore_gc_undoes_it_exactly() -> None:
    out = fresh_python(
        "import gc; before = gc.get_threshold()\n"
        "import micrograd.engine as e\n"
        "during = gc.get_threshold()\n"
        "back = e.restore_gc()\n"
        "print(before, during, back, gc.get_threshold(), e.restore_gc())"
    )
    before, during, back, after, again = (eval(t + ")") for t in out[:-1].split(") "))
    assert during == (collector.YOUNG, *before[1:])  # the older generations keep theirs
    assert back == after == again == before  # exactly; a second call changes nothing


def test_thresholds_of_your_own_are_restored_exactly() -> None:
    out = fresh_python(
        "import gc; gc.set_threshold(123, 4, 5)\n"
        "import micrograd\n"
        "during = gc.get_threshold()\n"
        "micrograd.engine.restore_gc()\n"
        "print(during, gc.get_threshold())"
    )
    assert out == f"({collector.YOUNG}, 4, 5) (123, 4, 5)"


def test_a_threshold_already_as_high_is_left_alone() -> None:
    code = "import gc; gc.set_threshold(5_000_000, 3, 2)\nimport micrograd\n"
    code += "print(gc.get_threshold())"
    assert fresh_python(code) == "(5000000, 3, 2)"


def test_restore_gc_when_nothing_was_changed_returns_the_thresholds_untouched() -> None:
    saved = collector._before
    collector._before = None  # as if the policy had been undone already
    try:
        assert restore_gc() == gc.get_threshold()
    finally:
        collector._before = saved


class Box:
    """Something a weak reference can watch (a Value takes no weak references)."""


def test_a_value_in_a_cycle_is_freed_by_the_collectors_own_runs() -> None:
    # p.m = p, and a box of your own pointing back at it, dropped at once: no gc.collect() here,
    # the young collection the policy still lets come must free it
    assert gc.isenabled() and gc.get_threshold()[0] <= collector.YOUNG
    p = Value(1.0)
    p.m = p
    p.box = Box()
    p.box.back = p
    watch = weakref.ref(p.box)
    del p
    made = 0
    while watch() is not None:
        q = Value(2.0)  # an optimiser's state pointing back at its parameter: a cycle too
        q.state = {"param": q, "m": Value(0.0)}
        made += 1
        assert made < 3 * collector.YOUNG, "no collection came: cycles of Values are never freed"


def chain_step(w: Value, c: Value, links: int) -> float:
    """A small model's step: a chain of 2 * `links` nodes, backward, and the loss kept by a
    cycle (``loss.history = [loss]``): the step's whole graph is garbage only gc frees."""
    y = Value(0.5)
    for _ in range(links):
        y = y * w + c
    y.backward()
    y.history = [y]
    return y.data


def test_memory_stays_flat_over_a_long_run_of_steps_freed_only_by_the_collector() -> None:
    # Each step's graph is cyclic garbage; after each automatic collection the process holds as
    # many memory blocks as after the first one (the collector's runs, not a timer, set the pace).
    assert gc.get_threshold()[0] == collector.YOUNG, "the engine's policy is in force"
    w, c = Value(0.9), Value(0.1)
    blocks: list[int] = []
    runs = [0]

    def count(phase: str, info: dict) -> None:
        if phase == "stop":
            runs[0] += 1

    gc.collect()
    gc.callbacks.append(count)
    try:
        seen, steps = 0, 0
        while len(blocks) < 4:
            chain_step(w, c, 10_000)
            steps += 1
            assert steps < 2_000, f"{len(blocks)} collections in {steps} steps: memory grows"
            if runs[0] != seen:  # a collection ran during this step
                seen = runs[0]
                blocks.append(sys.getallocatedblocks())
    finally:
        gc.callbacks.remove(count)
    assert max(blocks[1:]) <= 1.25 * blocks[0], blocks
