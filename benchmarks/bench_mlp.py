"""Benchmark: one training step of an MLP on a batch, four ways, and the numpy floor.

run.py picks up `rows()` below. Two kinds of section:

* karpathy's moons step (MOONS in run.py): the numpy floor and JAX join the rows already there.
* MLP 2-256-256-1 (ReLU, hinge loss, plain SGD, no L2) at 1,000 and 10,000 samples, full batch:
  `micrograd.jit` (per-sample code, the README's idiom: jit, backward(), the lecture's SGD loop),
  PyTorch CPU float64 on 1 thread, JAX on CPU (`jax.jit` of the whole step, float64) and the
  numpy floor: the same forward and backward written by hand as matrix products, the least
  numpy work one step needs (3 products forward, 5 back, no copies beyond them).

Every row starts from the same weights (``random.uniform(-1, 1) / sqrt(fan-in)``, row by row, bias
0, seed 0) and data (`make_moons`, seed 0), so the loss after the timed steps must agree across
the rows to rounding (the detail column says it). The figure is the median CPU time per step
(`workloads.clock`) over the timed steps, after one untimed warm-up step (jit traces, JAX
compiles, in it); the detail gives the warm-up step's time too.

JAX is a peer like karpathy's micrograd: run.py installs ``jax`` and ``jaxlib`` from PyPI into
benchmarks/.peers/jax (git-ignored) on first use; where that fails its rows are skipped with a line
saying why.
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

SIZES = (2, 256, 256, 1)
LR = 0.1
FLOOR = "numpy floor: hand-written forward + backward (3 products forward, 5 back)"


def mlp_section(samples: int) -> str:
    return f"MLP 2-256-256-1, {samples:,} samples, full batch (one SGD step)"


def rows(quick: bool = False) -> list:
    from run import MOONS, Row

    data = ("numpy", "sklearn")
    out = [
        Row(
            MOONS,
            "numpy floor: the same step as hand-written matrix products",
            "bench_mlp:moons_floor",
            {"steps": 10 if quick else 100},
            impl="numpy",
            needs=data,
        ),
        Row(
            MOONS,
            "JAX on CPU: jax.jit of the whole step, float64",
            "bench_mlp:moons_jax",
            {"steps": 10 if quick else 100},
            impl="jax",
            needs=data,
        ),
    ]
    for samples in (1_000,) if quick else (1_000, 10_000):
        group = mlp_section(samples)
        steps = 3 if quick else (20 if samples <= 1_000 else 8)
        kw = {"samples": samples, "steps": steps}
        out += [
            Row(group, FLOOR, "bench_mlp:mlp_floor", kw, impl="numpy", needs=data),
            Row(
                group,
                "ours: micrograd.jit, per-sample loss, SGD on the Values",
                "bench_mlp:mlp_jit",
                kw,
                needs=data,
            ),
            Row(
                group,
                "PyTorch CPU, float64 tensors, 1 thread",
                "bench_mlp:mlp_torch",
                kw,
                impl="torch",
                needs=(*data, "torch"),
            ),
            Row(
                group,
                "JAX on CPU: jax.jit of the whole step, float64",
                "bench_mlp:mlp_jax",
                kw,
                impl="jax",
                needs=data,
            ),
        ]
    return out


# ----------------------------------------------------------------------------- shared set-up


def mlp_data(samples: int) -> tuple[Any, Any]:
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=samples, noise=0.1, random_state=0)
    return X.astype(float), (y * 2 - 1).astype(float)


def mlp_init(sizes: tuple[int, ...] = SIZES) -> list[tuple[list[list[float]], list[float]]]:
    """(W, b) per layer: W row by row from random.uniform(-1, 1) / sqrt(fan-in), b zeros."""
    rng = random.Random(0)
    layers = []
    for nin, nout in zip(sizes, sizes[1:]):
        s = 1.0 / math.sqrt(nin)
        layers.append(
            ([[rng.uniform(-1, 1) * s for _ in range(nin)] for _ in range(nout)], [0.0] * nout)
        )
    return layers


def _result(times: list[float], first: float, loss: float, extra: str = "") -> dict:
    med = statistics.median(times)
    detail = f"{len(times)} timed steps, warm-up step {first * 1e3:.1f} ms{extra}; "
    detail += f"loss at the last step {loss!r}"
    return {"value": med * 1e3, "unit": "ms/step", "detail": detail}


def _timed(step: Any, steps: int) -> tuple[list[float], float, float]:
    """Run step(k) -> loss once untimed (warm-up), then `steps` times timed."""
    from workloads import clock

    t0 = clock()
    loss = step(0)
    first = clock() - t0
    times = []
    for k in range(1, steps + 1):
        t0 = clock()
        loss = step(k)
        times.append(clock() - t0)
    return times, first, float(loss)


# ----------------------------------------------------------------------------- the numpy floor


def floor_step(np: Any, X: Any, y: Any, Ws: list, bs: list, lr: float, alpha: float = 0.0) -> float:
    """One SGD step of the ReLU MLP with mean hinge loss relu(1 - y * score) (+ alpha * the sum
    of every parameter squared), by hand: the least numpy work it takes. X is (n, B) (samples as
    columns, as jit lays them out)."""
    B = X.shape[1]
    hs = [X]
    for i, (W, b) in enumerate(zip(Ws, bs)):
        z = W @ hs[-1]
        z += b[:, None]
        if i < len(Ws) - 1:
            np.maximum(z, 0.0, out=z)
        hs.append(z)
    margin = 1.0 - y * hs[-1][0]
    loss = float(np.maximum(margin, 0.0).sum() / B)
    if alpha:
        loss += alpha * sum(float(np.vdot(p, p)) for p in (*Ws, *bs))
    g = np.where(margin > 0, -y / B, 0.0)[None, :]  # d loss / d score
    for i in range(len(Ws) - 1, -1, -1):
        h = hs[i]
        dW = g @ h.T
        db = g.sum(1)
        if i:
            g = Ws[i].T @ g
            g *= h > 0  # through the ReLU of layer i-1 (h is its output)
        if alpha:  # d/dp alpha * p² = 2 alpha p, before the update
            dW += 2 * alpha * Ws[i]
            db += 2 * alpha * bs[i]
        Ws[i] -= lr * dW
        bs[i] -= lr * db
    return loss


def _floor(X: Any, y: Any, layers: list, lr: Any, steps: int, alpha: float = 0.0) -> tuple:
    import numpy as np

    Xt = np.ascontiguousarray(X.T)
    Ws = [np.array(W) for W, _ in layers]
    bs = [np.array(b) for _, b in layers]
    return _timed(lambda k: floor_step(np, Xt, y, Ws, bs, lr(k), alpha), steps)


def mlp_floor(samples: int, steps: int) -> dict:
    X, y = mlp_data(samples)
    return _result(*_floor(X, y, mlp_init(), lambda k: LR, steps))


def _moons_data() -> tuple:
    import numpy as np
    from sklearn.datasets import make_moons

    np.random.seed(1337)  # karpathy's demo: seed, then draw the data and the weights
    random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    layers = []
    for nin, nout in ((2, 16), (16, 16), (16, 1)):  # karpathy's init: row by row, bias 0
        layers.append(
            ([[random.uniform(-1, 1) for _ in range(nin)] for _ in range(nout)], [0.0] * nout)
        )
    return X, (y * 2 - 1).astype(float), layers


def moons_floor(steps: int = 100) -> dict:
    """karpathy's moons step (hinge loss + 1e-4 L2, his SGD schedule) by hand in numpy."""
    X, y, layers = _moons_data()
    return _result(*_floor(X, y, layers, lambda k: 1.0 - 0.9 * k / 100, steps - 1, 1e-4))


# ----------------------------------------------------------------------------- micrograd.jit


def mlp_jit(samples: int, steps: int) -> dict:
    from micrograd import MLP
    from micrograd.jit import jit

    X, y = mlp_data(samples)
    model = MLP(*SIZES[:1], list(SIZES[1:]))
    params = model.parameters()
    flat = [v for W, b in mlp_init() for row, bias in zip(W, b) for v in (*row, bias)]
    for p, v in zip(params, flat):  # the shared init, in MLP's order: each neuron's w, then b
        p.data = v
    f = jit(lambda x, yi: (1 + -yi * model(x)).relu())

    def step(k: int) -> float:
        loss = f(X, y)
        for p in params:
            p.grad = 0.0
        loss.backward()
        for p in params:
            p.data -= LR * p.grad
        return loss.data

    times, first, loss = _timed(step, steps)
    return _result(times, first, loss, f", {len(params):,} parameter Values")


# ----------------------------------------------------------------------------- PyTorch


def mlp_torch(samples: int, steps: int) -> dict:
    import torch

    torch.set_num_threads(1)
    X, y = mlp_data(samples)
    Xt = torch.tensor(X, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.float64)
    params = []
    for W, b in mlp_init():
        params += [
            torch.tensor(W, dtype=torch.float64, requires_grad=True),
            torch.tensor(b, dtype=torch.float64, requires_grad=True),
        ]

    def step(k: int) -> float:
        h = Xt
        for i in range(0, len(params), 2):
            h = torch.addmm(params[i + 1], h, params[i].T)
            if i < len(params) - 2:
                h = h.relu()
        loss = (1 - yt * h[:, 0]).relu().mean()
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
        return loss.item()

    return _result(*_timed(step, steps), ", 1 thread")


# ----------------------------------------------------------------------------- JAX


def _jax_step(alpha: float = 0.0) -> Any:
    import os

    # one thread, as the PyTorch rows (CPU time would count every thread's work anyway)
    os.environ.setdefault(
        "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    )
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # float64, as every other row

    def loss_fn(params: list, X: Any, y: Any) -> Any:
        h = X
        for i, (W, b) in enumerate(params):
            h = h @ W.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        loss = jnp.maximum(1.0 - y * h[:, 0], 0.0).mean()
        if alpha:
            loss = loss + alpha * sum((W * W).sum() + (b * b).sum() for W, b in params)
        return loss

    @jax.jit
    def step(params: list, X: Any, y: Any, lr: Any) -> tuple:
        loss, grads = jax.value_and_grad(loss_fn)(params, X, y)
        return [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, grads)], loss

    return jax, jnp, step


def _jax_run(X: Any, y: Any, layers: list, lr: Any, steps: int, alpha: float = 0.0) -> dict:
    jax, jnp, step = _jax_step(alpha)
    params = [(jnp.array(W, dtype=jnp.float64), jnp.array(b, dtype=jnp.float64)) for W, b in layers]
    Xj, yj = jnp.asarray(X, dtype=jnp.float64), jnp.asarray(y, dtype=jnp.float64)
    state = {"params": params}

    def one(k: int) -> float:
        state["params"], loss = step(state["params"], Xj, yj, lr(k))
        return float(loss)  # waits for the result: the step's whole work is timed

    times, first, loss = _timed(one, steps)
    return _result(times, first, loss, f", jax {jax.__version__} on {jax.devices()[0].platform}")


def mlp_jax(samples: int, steps: int) -> dict:
    X, y = mlp_data(samples)
    return _jax_run(X, y, mlp_init(), lambda k: LR, steps)


def moons_jax(steps: int = 100) -> dict:
    """karpathy's moons step (hinge loss + 1e-4 L2, his SGD schedule) under jax.jit."""
    X, y, layers = _moons_data()
    return _jax_run(X, y, layers, lambda k: 1.0 - 0.9 * k / 100, steps - 1, 1e-4)
