"""The compiled core (micrograd/core/cvalue.c) against the pure engine, the reference: the same
bits on the moons demo, on microgpt's first steps and on every op's edge cases, run in two fresh
interpreters (one with ``MICROGRAD_PURE_PYTHON=1``); a 1e6-deep graph backpropagated on both;
nodes the cyclic collector does not track, until a Value gets attributes of its own (then its
cycles are freed)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import sysconfig
import weakref
from fractions import Fraction
from pathlib import Path

import pytest

from micrograd.core import compiled
from micrograd.engine import Value

ROOT = Path(__file__).resolve().parents[1]
needs_compiled = pytest.mark.skipif(
    not compiled.COMPILED, reason="the compiled core is not built here (or MICROGRAD_PURE_PYTHON=1)"
)


def run(code: str, pure: bool) -> str:
    """`code`'s stdout in a fresh interpreter on this worktree's micrograd, compiled or pure."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MICROGRAD_PURE_PYTHON", None)
    if pure:
        env["MICROGRAD_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def both(code: str) -> str:
    """`code` run on both engines: their outputs must be the same text (reprs: the same bits)."""
    head = "from micrograd.core import compiled\nprint('compiled:', compiled.COMPILED)\n"
    fast, pure = run(head + code, pure=False), run(head + code, pure=True)
    assert pure.startswith("compiled: False\n")
    assert fast.startswith("compiled: True\n")
    assert fast.split("\n", 1)[1] == pure.split("\n", 1)[1]
    return pure.split("\n", 1)[1]


MOONS = """
import random
from micrograd import MLP, Value, data
random.seed(1337)
X, y = data.moons(60, noise=0.1)
model = MLP(2, [16, 16, 1])
for k in range(4):
    scores = [model([Value(a), Value(b)]) for a, b in X]
    losses = [(1 + -(2 * yi - 1) * s).relu() for yi, s in zip(y, scores)]
    loss = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in model.parameters())
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= (1.0 - 0.9 * k / 100) * p.grad
    print(repr(loss.data), [repr(p.grad) for p in model.parameters()[:40]])
print([repr(p.data) for p in model.parameters()])
"""


@needs_compiled
def test_the_moons_demo_gives_the_same_bits_on_both_engines() -> None:
    out = both(MOONS)
    assert out.count("\n") == 5  # four steps' losses and grads, then the parameters


GPT = """
from micrograd import gpt
docs = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn"]
docs, tok, model = gpt.prepare(docs, seed=42)
losses = gpt.train(model, tok, docs, 3)
print([repr(x) for x in losses])
print([repr(p.data) for p in model.parameters()])
"""


@needs_compiled
def test_microgpts_first_steps_give_the_same_bits_on_both_engines() -> None:
    losses = both(GPT).splitlines()[0]
    assert losses.count("'") == 6  # three losses


OPS = """
import copy, pickle
from fractions import Fraction
from micrograd import Value
a, b, c = Value(2.0, label="a"), Value(-3.0), Value(0.5)
xs = [a + b, a * b, a - b, -a, 3 - a, a - 3, 2 + a, a + 2, 2 * a, a * 2, 5 * c - a * b + 7,
      a / b, 2 / a, a ** 2, a ** b.relu(), (a * b).relu(), c.exp().log(), a.tanh(),
      a + 2 ** 60, Value(1) + 1, a * 0.1 + 0.2, Value.dot([a, b], (c, a), 2), Value.dot((a,), [b]),
      Value.dot([a, b], [c, a], c), Value.dot([a], [1.5]), Value(-0.0).relu(), b.relu()]
for x in xs:
    print(repr(x), x._op, x._prev, x._local, x.label, type(x).__name__)
y = sum((x * (k + 1) for k, x in enumerate(xs)), Value(0.0)) * xs[0]
y.backward()
print([repr(v.grad) for v in (a, b, c, *xs)])
y.backward()  # again: the nodes' grads start again, the leaves accumulate
print([repr(v.grad) for v in (a, b, c, *xs)])
big = Value(1e308)
for make in (lambda: big + big, lambda: big * 10, lambda: 1e308 - Value(-1e308),
             lambda: -big - 1e308, lambda: a + "x", lambda: "x" * a, lambda: a - None,
             lambda: True * a, lambda: Value(float("nan")) + 1, lambda: Value.dot([a], [b, c]),
             lambda: Value(float("inf")).relu(), lambda: Value.dot([big], [big]),
             lambda: Value.dot([a], [b], "x")):
    try:
        print(repr(make()))
    except Exception as e:
        print(type(e).__name__, e)
d = Value(3)  # an int, a Fraction: kept as they are
d.data = Fraction(1, 3)
print(repr(d.data), repr((d * a).data), repr(d.grad))
d.grad = 2
print(repr(d.grad))
e = a * b
e._prev = (a, b, c)  # fields set by hand, as learners do
e._local = [1.0, 2.0, 3.0]
e._op = "mine"
print(e._prev, e._local, e._op)
e.backward()
print(repr(a.grad), repr(b.grad), repr(c.grad))
f = a + b
def mine():
    a.grad += 100.0 * f.grad
f._backward = mine  # a learner's own _backward
f.backward()
print(repr(a.grad), repr(b.grad))
g = copy.deepcopy(xs[10])
h = pickle.loads(pickle.dumps(xs[10]))
for v in (g, h):
    print(repr(v), v._op, v._prev, v._local, v.label)
z = Value(1.0)
for _ in range(3000):
    z = z * 1.001 + c
print(repr(copy.deepcopy(z).data), repr(pickle.loads(pickle.dumps(z)).data))
p = Value(1.0)
p.m, p.label = 0.5, "p"
print(vars(p), p.label, isinstance(p * 2, Value))
"""


@needs_compiled
def test_every_op_field_and_error_is_the_same_on_both_engines() -> None:
    out = both(OPS)
    assert "OverflowError" in out and "TypeError" in out


DEEP = """
from micrograd import Value
x = Value(1.5)
y = x
for _ in range(1_000_000):
    y = y + x
y.backward()
print(repr(x.grad), repr(y.data))
del y  # freed without a recursion as deep as the graph
print("freed")
"""


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_a_graph_a_million_nodes_deep_backpropagates(pure: bool) -> None:
    if not pure and not compiled.COMPILED:
        pytest.skip("the compiled core is not built here")
    assert run(DEEP, pure).split() == ["1000001.0", "1500001.5", "freed"]  # d/dx, (1e6 + 1) x


@needs_compiled
def test_nodes_are_not_tracked_by_the_cyclic_collector_until_they_have_attributes() -> None:
    a, b = Value(2.0), Value(3.0)
    nodes = [a, b, a + b, a * b, a - b, -a, 2 * a, a + 1, Value.dot([a], [b]), a.relu()]
    assert not any(gc.is_tracked(v) for v in nodes)
    a.m = 0.0
    assert gc.is_tracked(a)  # its attributes may make a cycle: the collector must see it
    assert vars(b) == {} and gc.is_tracked(b)  # (asking for its __dict__ makes one)


@needs_compiled
def test_a_dot_nodes_own_tuples_are_untracked_with_it_and_tracked_with_it() -> None:
    # the moons demo made 2 tracked tuples a neuron a sample: the young collections they started
    # were why the compiled core needed the gc policy (benchmarks/bench_engine.py's "gc:" rows)
    w, x = [Value(1.0), Value(2.0)], [Value(3.0), Value(4.0)]
    d = Value.dot(w, x, 0.5)
    assert d.data == 11.5
    assert not any(gc.is_tracked(o) for o in (d, d._prev, d._local))
    d.m = 0.0  # attributes of its own: the collector must see through it, tuples included
    assert all(gc.is_tracked(o) for o in (d, d._prev, d._local))


class Box:
    """Something a weak reference can watch (a Value takes no weak references)."""


@pytest.mark.parametrize("how", ["attribute", "__dict__"])
def test_a_value_in_a_cycle_of_its_own_attributes_is_freed(how: str) -> None:
    p = Value(1.0) * 2
    if how == "attribute":
        p.m = p
    else:
        p.__dict__["m"] = p
    p.box = Box()
    watch = weakref.ref(p.box)
    was = gc.isenabled()
    gc.disable()
    try:
        del p
        assert watch() is not None  # a cycle: reference counting alone keeps it
        gc.collect()
        assert watch() is None
    finally:
        if was:
            gc.enable()


def chain(links: int) -> Value:
    """y = y * w + c, `links` times: 2 * `links` nodes made by the compiled ops."""
    w, c, y = Value(0.9), Value(0.1), Value(0.5)
    for _ in range(links):
        y = y * w + c
    return y


@needs_compiled
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="minor page faults: Linux's count")
def test_a_graph_as_large_as_one_freed_is_built_and_backpropagated_in_the_same_memory() -> None:
    # A big graph freed gave its memory back to the system (pymalloc returns emptied arenas) and
    # the next one faulted every page in again: 1 fault per 32 nodes, the kernel's time more than
    # the build's own at a million nodes. Now freed nodes are kept for the next graph.
    import resource

    links = 100_000  # 200,000 nodes, 25 MB: far more pages than anything else here touches
    first = chain(links)
    first.backward()
    del first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    y = chain(links)
    y.backward()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert y.grad == 1.0 and abs(y.data - 1.0) < 1e-12  # (0.5 * 0.9 + 0.1 ...: 1.0 in the limit)
    del y
    assert faults < 2 * links / 320, f"{faults} page faults for {2 * links:,} nodes made again"


@needs_compiled
def test_a_node_made_from_a_freed_one_is_a_new_node() -> None:
    # freed nodes of every kind (attributes of their own, tracked; labels, _op and _local by
    # hand, odd numbers, walked), then nodes made again: nothing of the old ones left
    old = [Value(float(k)) * 2 for k in range(2_000)]
    for k, v in enumerate(old):
        v.label, v._op, v.grad = f"v{k}", "mine", 3
        if k % 2:
            v.m = v  # a cycle: the collector frees it
        if k % 3 == 0:
            v.data = Fraction(k, 7)
            v._local = lambda: None
    old[0].backward()
    del old, v
    gc.collect()
    a, b = Value(2.0), Value(3.0)
    for v in [a * b for _ in range(2_000)] + [Value(1.5) for _ in range(2_000)]:
        assert not gc.is_tracked(v) and v.label == "" and v._visit is None
        assert v.grad == 0.0 and type(v.grad) is float and type(v.data) is float
        assert (v._op, v._local) in {("*", (3.0, 2.0)), ("", ())}
        assert v._prev in {(a, b), ()} and vars(v) == {}


@needs_compiled
def test_a_backward_run_inside_a_learners_backward_has_a_walk_of_its_own() -> None:
    # backward() keeps its arrays for the next call: one run from inside another must not use them
    x, w = Value(3.0), Value(2.0)
    out = x * w
    inner_grads = []

    def mine() -> None:  # the lecture's closure, with a graph of its own backpropagated inside
        p, q = Value(5.0), Value(7.0)
        (p * q + p).backward()
        inner_grads.append((p.grad, q.grad))
        x.grad += w.data * out.grad
        w.grad += x.data * out.grad

    out._backward = mine
    y = chain(3) + out * out  # d y / d out = 2 out = 12
    y.backward()
    assert inner_grads == [(8.0, 5.0)]
    assert (x.grad, w.grad) == (24.0, 36.0)


def test_the_compiled_core_is_built_where_a_c_compiler_is() -> None:
    if os.environ.get("MICROGRAD_PURE_PYTHON") == "1":
        pytest.skip("MICROGRAD_PURE_PYTHON=1: the pure engine, by request")
    cc = (sysconfig.get_config_var("CC") or "").split()
    if not cc or shutil.which(cc[0]) is None:
        pytest.skip("no C compiler here: the pure engine is the install's")
    assert compiled.COMPILED, (
        "micrograd/core/cvalue.c is not built for this interpreter: `make .venv/.test` "
        "(pip install -e .) or `python setup.py build_ext --inplace` builds it"
    )


FALLBACK = """
import sys
class NoCompiledCore:  # as where the extension did not build
    def find_spec(self, name, path=None, target=None):
        if name == "micrograd.core.cvalue":
            raise ImportError("not built")
sys.meta_path.insert(0, NoCompiledCore())
from micrograd import Value
from micrograd.core import compiled
a = Value(2.0)
b = a * a - a
b.backward()
print(compiled.COMPILED, compiled.Node.__module__, repr(b.data), repr(a.grad))
"""


def test_without_the_compiled_core_the_pure_engine_runs() -> None:
    assert run(FALLBACK, pure=False).split() == ["False", "micrograd.core.compiled", "2.0", "3.0"]
