"""The engine and the garbage collector (micrograd/core/collector.py). With the compiled core,
importing micrograd leaves the collector's thresholds as they were (its nodes are not tracked);
the pure engine raises the young threshold at import, undone exactly by `restore_gc()`, and never
at the price of memory: cycles through Values are still freed by the collector's own runs, and
memory stays flat over a long run. `release_memory()` gives back what the engine keeps."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from micrograd.core import collector, compiled
from micrograd.engine import Value, release_memory, restore_gc

ROOT = Path(__file__).resolve().parents[1]
BUILT = importlib.util.find_spec("micrograd.core.cvalue") is not None  # whatever the env says
ENGINES = [
    pytest.param(
        False,
        id="compiled",
        marks=pytest.mark.skipif(not BUILT, reason="the compiled core is not built here"),
    ),
    pytest.param(True, id="pure"),
]


def fresh_python(code: str, pure: bool = True) -> str:
    """Run `code` in a fresh interpreter that imports this worktree's micrograd (the pure engine,
    or the compiled core); its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MICROGRAD_PURE_PYTHON", None)
    if pure:
        env["MICROGRAD_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


THRESHOLDS = (
    "import gc; gc.set_threshold(*{mine}); before = gc.get_threshold()\n"
    "import micrograd, micrograd.engine as e\n"
    "from micrograd.core.compiled import COMPILED\n"
    "during = gc.get_threshold()\n"
    "back = e.restore_gc()\n"
    "print(COMPILED, before, during, back, gc.get_threshold(), e.restore_gc())"
)


def thresholds(pure: bool, mine: tuple[int, ...]) -> tuple:
    out = fresh_python(THRESHOLDS.format(mine=mine), pure)
    compiled_ran, rest = out.split(" ", 1)
    assert compiled_ran == str(not pure)
    return tuple(eval(t + ")") for t in rest[:-1].split(") "))


@pytest.mark.parametrize("mine", [(700, 10, 10), (123, 4, 5), (2000, 10, 0)])
def test_with_the_compiled_core_importing_micrograd_leaves_the_thresholds_alone(mine) -> None:
    if not BUILT:
        pytest.skip("the compiled core is not built here")
    before, during, back, after, again = thresholds(False, mine)
    assert before == during == back == after == again == mine


@pytest.mark.parametrize("mine", [(700, 10, 10), (123, 4, 5)])
def test_the_pure_engine_raises_the_young_threshold_and_restore_gc_undoes_it_exactly(mine) -> None:
    before, during, back, after, again = thresholds(True, mine)
    assert before == mine
    assert during == (collector.YOUNG, *mine[1:])  # the older generations keep theirs
    assert back == after == again == mine  # exactly; a second call changes nothing


def test_a_threshold_already_as_high_is_left_alone() -> None:
    code = "import gc; gc.set_threshold(5_000_000, 3, 2)\nimport micrograd\n"
    code += "print(gc.get_threshold())"
    assert fresh_python(code, pure=True) == "(5000000, 3, 2)"


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
    assert gc.isenabled() and 0 < gc.get_threshold()[0] <= collector.YOUNG
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


def test_a_cycle_through_a_dot_nodes_children_is_freed() -> None:
    # the compiled core untracks a dot node's tuple of children with the node; once the node is
    # tracked (an attribute of its own), the tuple is too, so a cycle through it is found
    a = Value(1.0)
    d = Value.dot([a, Value(2.0)], [Value(3.0), Value(4.0)])
    d.tag = "mine"
    a.parent = d  # a -> its dict -> d -> d._prev -> a
    a.box = Box()
    watch = weakref.ref(a.box)
    del a, d
    gc.collect()
    assert watch() is None, "a cycle through a dot node's children was never freed"


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
    young = gc.get_threshold()[0]
    assert young == collector.YOUNG or compiled.COMPILED, "the pure engine's policy is in force"
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


RELEASE = """
import gc, json
from micrograd.core import compiled
from micrograd.engine import Value, release_memory

def rss():  # resident memory, MiB
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

start = rss()
w, c, y = Value(0.9), Value(0.1), Value(0.5)
for _ in range(200_000):  # a 400,001-node graph
    y = y * w + c
y.backward()
del y  # freed: the compiled core keeps its nodes for the next graph
freed = rss()
pooled = compiled.pool_size()
released = release_memory()
print(json.dumps({"compiled": compiled.COMPILED, "start": start, "freed": freed,
                  "pooled": pooled, "released": released, "after": rss(),
                  "pooled_after": compiled.pool_size()}))
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="RSS is read from /proc")
@pytest.mark.parametrize("pure", ENGINES)
def test_release_memory_gives_the_pools_memory_back(pure: bool) -> None:
    m = json.loads(fresh_python(RELEASE, pure).splitlines()[-1])
    assert m["compiled"] is (not pure)
    assert m["pooled_after"] == 0
    if pure:  # no pool: nothing kept, nothing to release
        assert m["pooled"] == m["released"] == 0
        return
    assert m["pooled"] == m["released"] == 400_001  # every node of the freed graph was kept
    node = 100 / 2**20  # MiB: a pooled node is over 100 bytes (core/cvalue.c)
    kept = m["freed"] - m["start"]
    assert kept > 0.5 * 400_001 * node, m  # kept before (about 40 MB)...
    assert m["freed"] - m["after"] > 0.5 * 400_001 * node, m  # ...and given back after


def test_release_memory_frees_cycles_the_pure_engines_policy_lets_wait() -> None:
    p = Value(1.0)
    p.m = p  # a cycle: only the collector frees it
    p.box = Box()
    watch = weakref.ref(p.box)
    del p
    before = compiled.pool_size()
    freed = release_memory()
    assert watch() is None
    assert compiled.pool_size() == 0 and freed >= 0 and (compiled.COMPILED or before == freed == 0)
