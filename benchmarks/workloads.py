"""The measured workloads, each run by `_worker.py` in a fresh process.

Every function here imports `micrograd` (or `torch`) inside its body, so the same code measures our
engine and karpathy's micrograd 0.1.0: which one `import micrograd` finds is decided by the worker's
`sys.path`, set from the row's `path` (see run.py). Each returns a dict for run.py:

    {"value": <a cost: lower is better>, "unit": "ms/step", "detail": "one line of context"}
    {"fails": "what went wrong, e.g. RecursionError at 1,002 nodes deep"}

The workloads (all timings include Python's garbage collector as it runs by default):

* `moons`: karpathy's demo training loop, his code verbatim (the `loss()` function and SGD loop of
  his demo.ipynb) on `micrograd.nn.MLP(2, [16, 16, 1])`: 100 make_moons samples, hinge loss + 1e-4
  L2, full batch. Seconds per step = wall time of all timed steps / steps (a mean, so the gc pauses
  a real training run pays are in it).
* `chain`: ``y = y * w + c`` repeated, with the leaves w, c shared by every step: 2 new nodes per
  step, each op a distinct node of the graph, so the graph is as deep as it is big. Nodes are
  counted by walking the graph (leaves included). Cost = build + ``backward()``, per node.
* `wide_sum`: 200,000 leaf Values added up, by Python's ``sum`` (a 200,000-deep chain of ``+``) or
  by ``Value.sum`` (one node); cost = sum + ``backward()``, per term. The leaves are made untimed.
* `chain_phases`: the chain's cost split: user and system time and page faults, build and backward.
* `chain_memory`: tracemalloc's peak while building the chain and running ``backward()``, divided
  by the node count: everything the graph costs (nodes, child tuples, floats, the walk's stack).
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from typing import Any

HIS_STEP99_LOSS = 0.010978370135492717  # karpathy's demo.ipynb, last line of the training loop

# CPU time of this process, not wall time: other work on the machine then barely moves the figures,
# while everything this process does (its garbage collections included) is still counted.
clock = time.process_time


class GcMeter:
    """CPU time spent in the cyclic garbage collector while installed, and full collections."""

    def __init__(self) -> None:
        self.seconds, self.full, self._t0 = 0.0, 0, 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = clock()
        else:
            self.seconds += clock() - self._t0
            self.full += info["generation"] == 2

    def report(self, total: float) -> str:
        gc.callbacks.remove(self._callback)
        share = self.seconds / total if total else 0.0
        return f"gc {share:.0%} of the time, full collections: {self.full}"


def _count_nodes(root: Any) -> int:
    """Distinct nodes reachable from `root` through `_prev` (a tuple for us, a set for karpathy)."""
    seen = {id(root)}
    stack = [root]
    while stack:
        for child in stack.pop()._prev:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


def _repeats(nodes: int) -> int:
    # Small graphs are over in microseconds: repeat them for a stable median; big ones 3 times.
    return max(3, min(200, 400_000 // max(nodes, 1)))


def _gc_mode(mode: str) -> None:
    """default: the collector as Python and the engine left it at import; python: Python's own
    thresholds (the engine's restore_gc(), where it has one); young1m: the young generation's
    threshold at one million (the pure engine's policy, core/collector.py), set by hand."""
    if mode == "freeze":  # what a user can do after imports: old objects leave the gc's sight
        gc.collect()
        gc.freeze()
    elif mode == "disable":
        gc.disable()
    elif mode == "python":
        import micrograd.engine

        getattr(micrograd.engine, "restore_gc", lambda: None)()
    elif mode == "young1m":
        gc.set_threshold(1_000_000, *gc.get_threshold()[1:])
    elif mode != "default":
        raise ValueError(
            f"gc mode must be default, freeze, disable, python or young1m, got {mode!r}"
        )


def which_micrograd() -> str:
    import micrograd

    return micrograd.__file__


# ---------------------------------------------------------------------------------- moons


def moons(steps: int = 100, gc_mode: str = "default") -> dict:
    """karpathy's demo loop, verbatim apart from the timing and the loss record."""
    import numpy as np
    from sklearn.datasets import make_moons

    from micrograd.engine import Value
    from micrograd.nn import MLP

    _gc_mode(gc_mode)
    np.random.seed(1337)
    random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1
    model = MLP(2, [16, 16, 1])  # 2-layer neural network

    # ---- his code, verbatim, from here ...
    def loss(batch_size=None):
        # inline DataLoader :)
        if batch_size is None:
            Xb, yb = X, y
        else:
            ri = np.random.permutation(X.shape[0])[:batch_size]
            Xb, yb = X[ri], y[ri]
        inputs = [list(map(Value, xrow)) for xrow in Xb]

        # forward the model to get scores
        scores = list(map(model, inputs))

        # svm "max-margin" loss
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        # L2 regularization
        alpha = 1e-4
        reg_loss = alpha * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss

        # also get accuracy
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    losses, times = [], []
    meter = GcMeter()
    for k in range(steps):
        t0 = clock()
        # forward
        total_loss, acc = loss()

        # backward
        model.zero_grad()
        total_loss.backward()

        # update (sgd)
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        # ---- ... to here.
        times.append(clock() - t0)
        losses.append(float(total_loss.data))

    detail = f"{steps} steps, median {statistics.median(times) * 1e3:.1f} ms, "
    detail += meter.report(sum(times))
    k = min(2, steps - 1)  # the loss of an early step, for comparing implementations
    detail += f"; loss after step {k}: {losses[k]!r}"
    if steps == 100:
        ok = abs(losses[99] - HIS_STEP99_LOSS) <= 1e-9
        detail += f"; step 99: {losses[99]!r} ({'=' if ok else 'NOT ='} his demo's to 1e-9)"
    return {"value": sum(times) / steps * 1e3, "unit": "ms/step", "detail": detail}


def moons_torch(steps: int = 100, threads: int = 1) -> dict:
    """The same model, data, init, loss and SGD in PyTorch CPU float64 tensors, full batch."""
    import numpy as np
    import torch
    from sklearn.datasets import make_moons

    torch.set_num_threads(threads)
    np.random.seed(1337)
    random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    X = torch.tensor(X, dtype=torch.float64)
    y = torch.tensor(y * 2 - 1, dtype=torch.float64)
    params = []
    for nin, nout in [(2, 16), (16, 16), (16, 1)]:  # karpathy's init: row by row, bias 0
        w = [[random.uniform(-1, 1) for _ in range(nin)] for _ in range(nout)]
        params += [torch.tensor(w, dtype=torch.float64, requires_grad=True)]
        params += [torch.zeros(nout, dtype=torch.float64, requires_grad=True)]

    def loss():
        h = X
        for i in range(0, len(params), 2):
            h = h @ params[i].T + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        data_loss = (1 - y * h[:, 0]).relu().mean()
        reg_loss = 1e-4 * sum((p * p).sum() for p in params)
        return data_loss + reg_loss

    losses, times = [], []
    for k in range(steps):
        t0 = clock()
        total_loss = loss()
        for p in params:
            p.grad = None
        total_loss.backward()
        with torch.no_grad():
            for p in params:
                p -= (1.0 - 0.9 * k / 100) * p.grad
        times.append(clock() - t0)
        losses.append(total_loss.item())
    detail = f"{steps} steps, {threads} thread(s), median {statistics.median(times) * 1e3:.2f} ms"
    detail += f"; step 99 loss {losses[-1]!r}" if steps == 100 else ""
    return {"value": sum(times) / steps * 1e3, "unit": "ms/step", "detail": detail}


# ---------------------------------------------------------------------------------- chain


def _build_chain(Value: type, nodes: int) -> Any:
    w, c, y = Value(0.9), Value(0.1), Value(0.5)  # |w| < 1: y stays bounded at any depth
    for _ in range((nodes - 3) // 2):
        y = y * w + c
    return y


def chain(nodes: int, gc_mode: str = "default") -> dict:
    """µs per node to build the chain and backpropagate through it (median of repeats)."""
    from micrograd.engine import Value

    _gc_mode(gc_mode)
    build, back = [], []
    meter = GcMeter()
    for _ in range(_repeats(nodes)):
        t0 = clock()
        y = _build_chain(Value, nodes)
        t1 = clock()
        try:
            y.backward()
        except RecursionError:
            return {"fails": f"RecursionError in backward(), {_count_nodes(y):,}-node chain"}
        t2 = clock()
        build.append(t1 - t0)
        back.append(t2 - t1)
        n = _count_nodes(y)
        del y  # free this graph before building the next
    b, k = statistics.median(build) / n * 1e6, statistics.median(back) / n * 1e6
    detail = f"{n:,} nodes: build {b:.2f} + backward {k:.2f} µs/node, "
    detail += meter.report(sum(build) + sum(back))
    return {"value": b + k, "unit": "µs/node", "detail": detail}


def chain_phases(nodes: int) -> dict:
    """Where `chain`'s time goes (Linux, Unix): per node, the build's and backward()'s user and
    system (kernel) CPU time and their minor page faults, and the collector's runs in the build;
    medians of the same repeats as `chain`. A freed graph whose memory went back to the system
    shows here as the next build's system time and page faults (one per 4 KiB page)."""
    import resource

    from micrograd.engine import Value

    def now() -> tuple[float, float, int]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime, r.ru_stime, r.ru_minflt

    runs: list[int] = []
    gc.callbacks.append(lambda phase, info: runs.append(1) if phase == "start" else None)
    rows = []
    for _ in range(_repeats(nodes)):
        runs.clear()
        t0 = now()
        y = _build_chain(Value, nodes)
        t1, collections = now(), len(runs)
        y.backward()
        t2 = now()
        build, back = [b - a for a, b in zip(t0, t1)], [b - a for a, b in zip(t1, t2)]
        rows.append([*build, *back, collections])
        del y
    m = [statistics.median(column) for column in zip(*rows)]
    us = [x / nodes * 1e6 for x in m[:6]]
    detail = f"{nodes:,} nodes, µs/node: build user {us[0]:.3f} system {us[1]:.3f}, "
    detail += f"backward user {us[3]:.3f} system {us[4]:.3f}; page faults per node: build "
    detail += f"{m[2] / nodes:.4f}, backward {m[5] / nodes:.4f}; collections in a build {m[6]:g}"
    return {"value": us[0] + us[1] + us[3] + us[4], "unit": "µs/node", "detail": detail}


def deepest_chain(limit: int = 100_000) -> dict:
    """The deepest chain whose backward() works, found by bisection (as-is, recursion limit and
    all); reported as a failure at the first depth that does not."""
    from micrograd.engine import Value

    def works(nodes: int) -> bool:
        try:
            _build_chain(Value, nodes).backward()
            return True
        except RecursionError:
            return False

    lo, hi = 3, limit  # works(lo); find the first failing depth below `limit`
    if works(hi):
        return {"value": float(hi), "unit": "nodes", "detail": f"no failure up to {hi:,}"}
    while hi - lo > 2:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if works(mid) else (lo, mid)
    return {
        "fails": f"backward() fails at depth {hi:,} (RecursionError; works at {lo:,}; "
        f"sys.getrecursionlimit() = {sys.getrecursionlimit()})"
    }


def chain_torch(nodes: int, threads: int = 1) -> dict:
    import torch

    torch.set_num_threads(threads)
    build, back = [], []
    for _ in range(_repeats(nodes)):
        t0 = clock()
        w = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
        c = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
        y = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        for _ in range((nodes - 3) // 2):
            y = y * w + c
        t1 = clock()
        y.backward()
        t2 = clock()
        build.append(t1 - t0)
        back.append(t2 - t1)
        del y
    n = 3 + 2 * ((nodes - 3) // 2)  # same count as ours: 2 ops a step + 3 leaves
    b, k = statistics.median(build) / n * 1e6, statistics.median(back) / n * 1e6
    detail = f"{n:,} nodes (0-dim tensors): build {b:.2f} + backward {k:.2f} µs/node"
    return {"value": b + k, "unit": "µs/node", "detail": detail}


def chain_memory(nodes: int) -> dict:
    """tracemalloc peak over build + backward, per node."""
    import tracemalloc

    from micrograd.engine import Value

    gc.collect()
    tracemalloc.start()
    y = _build_chain(Value, nodes)
    try:
        y.backward()
    except RecursionError:
        tracemalloc.stop()
        return {"fails": f"RecursionError in backward(), {_count_nodes(y):,}-node chain"}
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    n = _count_nodes(y)
    detail = f"{n:,} nodes, tracemalloc peak {peak / 2**20:.1f} MiB (build + backward)"
    return {"value": peak / n, "unit": "bytes/node", "detail": detail}


# ---------------------------------------------------------------------------------- wide sum


def wide_sum(terms: int, how: str = "sum") -> dict:
    """µs per term for `sum(xs)` or `Value.sum(xs)` and backward(), leaves made untimed."""
    from micrograd.engine import Value

    rng = random.Random(0)
    xs = [Value(rng.uniform(-1, 1)) for _ in range(terms)]
    times = []
    meter = GcMeter()
    for _ in range(_repeats(terms)):
        t0 = clock()
        s = Value.sum(xs) if how == "Value.sum" else sum(xs)
        try:
            s.backward()
        except RecursionError:
            return {"fails": f"RecursionError in backward(), {terms:,} deep"}
        times.append(clock() - t0)
        del s
    per = statistics.median(times) / terms * 1e6
    detail = f"{terms:,} terms: {statistics.median(times) * 1e3:.1f} ms in all, "
    detail += meter.report(sum(times))
    return {"value": per, "unit": "µs/term", "detail": detail}


def wide_sum_torch(terms: int, how: str = "sum", threads: int = 1) -> dict:
    import torch

    torch.set_num_threads(threads)
    rng = random.Random(0)
    xs = [torch.tensor(rng.uniform(-1, 1), dtype=torch.float64, requires_grad=True)]
    xs += [
        torch.tensor(rng.uniform(-1, 1), dtype=torch.float64, requires_grad=True)
        for _ in range(terms - 1)
    ]
    times = []
    for _ in range(_repeats(terms)):
        t0 = clock()
        s = torch.stack(xs).sum() if how == "stack" else sum(xs)
        s.backward()
        times.append(clock() - t0)
        del s
    per = statistics.median(times) / terms * 1e6
    detail = f"{terms:,} 0-dim tensors: {statistics.median(times) * 1e3:.1f} ms in all"
    return {"value": per, "unit": "µs/term", "detail": detail}
