"""Benchmark: karpathy's moons demo trained with `micrograd.jit`, PyTorch and eager micrograd.

Two ways to run it. `python benchmarks/run.py` picks up `rows()` below and puts the jit rows in its
moons table beside karpathy's micrograd 0.1.0 and PyTorch. Run directly, this file prints its own
side-by-side table (jit, PyTorch, eager micrograd; no karpathy: run.py installs and runs him).

The same model (MLP(2, [16, 16, 1]), karpathy's seed and init), the same loss (mean SVM hinge
``relu(1 - y * score)`` + 1e-4 * L2) and the same SGD schedule (lr = 1 - 0.9 k / 100, 100 steps)
three ways: the per-sample loss under `jit` (with karpathy's eager L2 term, and with the fused
``Value.dot(params, params)``), PyTorch CPU float64 tensors, and plain eager micrograd (a few
steps only: it is slow). Prints time per step, final loss and accuracy for each; jit and PyTorch
must both reach karpathy's final loss 0.010978370135492717 and 100% accuracy.

    python3 benchmarks/bench_jit.py [--eager-steps 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

# CPU time of this process, as every row of run.py (workloads.clock); so other work on a shared
# machine barely moves the figures.
clock = time.process_time

KARPATHY_FINAL_LOSS = 0.010978370135492717  # step 99 of karpathy's demo.ipynb
STEPS = 100


def rows(quick: bool = False) -> list:
    """run.py's rows: the moons training step with jit, with the fused and the eager L2 term."""
    from run import MOONS, Row

    steps = 10 if quick else STEPS
    data = ("numpy", "sklearn")
    return [
        Row(
            MOONS,
            "ours: micrograd.jit per-sample loss + fused L2 (Value.dot)",
            "bench_jit:moons_jit",
            {"steps": steps, "reg": "dot"},
            needs=data,
        ),
        Row(
            MOONS,
            "ours: micrograd.jit per-sample loss + karpathy's eager L2",
            "bench_jit:moons_jit",
            {"steps": steps, "reg": "eager"},
            needs=data,
        ),
        Row(
            MOONS,
            "ours: micrograd.jit of karpathy's whole loss, his L2 sum() inside fn",
            "bench_jit:moons_jit",
            {"steps": steps, "reg": "inside"},
            needs=data,
        ),
        Row(
            MOONS,
            "ours: micrograd.jit + fused L2, fn with a Python NaN check (3 guards)",
            "bench_jit:moons_jit",
            {"steps": steps, "reg": "dot", "guarded": True},
            needs=data,
        ),
    ]


def moons_jit(steps: int = STEPS, reg: str = "dot", guarded: bool = False) -> dict:
    """run.py's measurement: mean ms/step over all steps (the first one traces)."""
    r = train_jit(reg, guarded, steps)
    times = r["times"]
    detail = f"{steps} steps, median {sorted(times)[len(times) // 2] * 1e3:.3f} ms"
    detail += f", first (traces) {times[0] * 1e3:.1f} ms"
    if steps == STEPS:
        ok = abs(r["loss"] - KARPATHY_FINAL_LOSS) <= 1e-9 and r["acc"] == 1.0
        detail += f"; step 99: {r['loss']!r}, accuracy {r['acc']:.0%}"
        detail += f" ({'=' if ok else 'NOT ='} his demo's to 1e-9)"
    return {"value": sum(times) / steps * 1e3, "unit": "ms/step", "detail": detail}


def moons() -> tuple:
    import numpy as np
    from sklearn.datasets import make_moons

    np.random.seed(1337)  # karpathy's demo seeds numpy's global state, then draws the data
    X, y = make_moons(n_samples=100, noise=0.1)
    return X, (y * 2 - 1).astype(float)


def model_and_params() -> tuple:
    from micrograd import MLP

    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    return model, model.parameters()


def sgd_step(total: Any, params: list, k: int) -> None:  # total: a micrograd Value
    """karpathy's update: zero the grads, backward, SGD with lr = 1.0 - 0.9 * k / STEPS."""
    for p in params:
        p.grad = 0.0
    total.backward()
    lr = 1.0 - 0.9 * k / STEPS
    for p in params:
        p.data -= lr * p.grad


def train_jit(reg: str, guarded: bool = False, steps: int = STEPS) -> dict:
    """100 SGD steps with the per-sample loss under jit; reg 'eager' (karpathy's 674-node
    ``sum(p*p for p in params)``), 'dot' (one fused ``Value.dot(params, params)`` node), or
    'inside' (karpathy's sum() written inside the jitted function, added to every sample's loss:
    the mean over the batch is his data loss + L2).
    `guarded`: the loss first checks its inputs and score for NaN in Python (``v.data != v.data``):
    three decisions on the data, which jit records as guards and checks on every sample."""
    from micrograd import Value
    from micrograd.jit import jit

    X, y = moons()
    model, params = model_and_params()

    def loss(x: list, yi: Any) -> Any:
        if guarded and any(v.data != v.data for v in x):
            raise ValueError("NaN input")
        score = model(x)
        if guarded and score.data != score.data:
            raise ValueError("NaN score")
        if reg == "inside":
            return (1 + -yi * score).relu() + 1e-4 * sum(p * p for p in params)
        return (1 + -yi * score).relu()

    f = jit(loss)
    scores = jit(lambda x: model(x))
    times = []
    for k in range(steps):
        t0 = clock()
        if reg == "inside":
            total = f(X, y)
        else:
            l2 = Value.dot(params, params) if reg == "dot" else sum(p * p for p in params)
            total = f(X, y) + 1e-4 * l2
        sgd_step(total, params, k)
        times.append(clock() - t0)
        loss = total.data
    acc = float(((scores.outputs(X) > 0) == (y > 0)).mean())
    return {"times": times, "loss": loss, "acc": acc, "traces": f.traces}


def train_torch() -> dict:
    """The same training in PyTorch float64, from the same initial weights."""
    import torch

    X, y = moons()
    model, _ = model_and_params()
    Ws = [
        torch.tensor([[w.data for w in n.w] for n in layer.neurons], dtype=torch.float64)
        for layer in model.layers
    ]
    bs = [
        torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64)
        for layer in model.layers
    ]
    params = [t.requires_grad_() for pair in zip(Ws, bs) for t in pair]
    Xt = torch.tensor(X, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.float64)

    def forward(x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(x @ Ws[0].T + bs[0])
        h = torch.relu(h @ Ws[1].T + bs[1])
        return (h @ Ws[2].T + bs[2]).squeeze(1)

    times = []
    for k in range(STEPS):
        t0 = clock()
        for p in params:
            p.grad = None
        scores = forward(Xt)
        total = torch.relu(1 - yt * scores).mean() + 1e-4 * sum((p * p).sum() for p in params)
        total.backward()
        lr = 1.0 - 0.9 * k / STEPS
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        times.append(clock() - t0)
        loss = total.item()
    with torch.no_grad():
        acc = float(((forward(Xt) > 0) == (yt > 0)).double().mean())
    return {"times": times, "loss": loss, "acc": acc}


def train_eager(steps: int) -> dict:
    """karpathy's loss() in eager micrograd (this package's engine), for `steps` steps."""
    from micrograd import Value

    X, y = moons()
    model, params = model_and_params()
    times = []
    for k in range(steps):
        t0 = clock()
        scores = [model(list(map(Value, row))) for row in X.tolist()]
        losses = [(1 + -yi * si).relu() for yi, si in zip(y.tolist(), scores)]
        total = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in params)
        sgd_step(total, params, k)
        times.append(clock() - t0)
    return {"times": times, "loss": total.data, "acc": None}


def best_median(run: Callable[[], dict], repeat: int) -> dict:
    """Run `repeat` times; per-step time is the median step of the fastest run (skipping step 0,
    which traces)."""
    results = [run() for _ in range(repeat)]
    for r in results:
        steps = sorted(r["times"][1:] or r["times"])
        r["step"] = steps[len(steps) // 2]
    return min(results, key=lambda r: r["step"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eager-steps", type=int, default=3, help="eager steps to time")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    args = parser.parse_args(argv)
    try:
        import numpy  # noqa: F401
        import sklearn  # noqa: F401
        import torch
    except ImportError as e:
        print(f"bench_jit: needs numpy, scikit-learn and torch ({e})", file=sys.stderr)
        return 1
    torch.set_num_threads(1)  # a fair fight: numpy's small ops are single-threaded too

    rows = [
        ("jit + fused L2 (Value.dot)", best_median(lambda: train_jit("dot"), args.repeat)),
        ("jit + eager L2 (karpathy)", best_median(lambda: train_jit("eager"), args.repeat)),
        ("jit + fused L2, 3 guards", best_median(lambda: train_jit("dot", True), args.repeat)),
        ("PyTorch float64 CPU", best_median(train_torch, args.repeat)),
        ("eager micrograd", best_median(lambda: train_eager(args.eager_steps), 1)),
    ]
    torch_step = rows[3][1]["step"]
    eager_step = rows[4][1]["step"]
    print(f"moons demo, MLP(2, [16, 16, 1]), batch 100, {STEPS} SGD steps")
    print(f"{'':28} {'ms/step':>9} {'x PyTorch':>10} {'eager/x':>9} {'final loss':>22} {'acc':>6}")
    ok = True
    for name, r in rows:
        final = f"{r['loss']:.18f}" if r["acc"] is not None else "(not run to the end)"
        acc = f"{r['acc']:.0%}" if r["acc"] is not None else ""
        print(
            f"{name:28} {r['step'] * 1e3:9.3f} {r['step'] / torch_step:10.2f} "
            f"{eager_step / r['step']:9.0f} {final:>22} {acc:>6}"
        )
        if r["acc"] is not None:
            ok &= abs(r["loss"] - KARPATHY_FINAL_LOSS) < 1e-6 and r["acc"] == 1.0
    print(f"karpathy's final loss {KARPATHY_FINAL_LOSS}: {'reached' if ok else 'NOT reached'}")
    return 0 if ok else 1


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_jit", main))
