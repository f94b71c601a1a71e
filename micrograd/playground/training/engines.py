"""The engines a `Trainer` trains and draws with, one interface: eager, numpy (jit), JavaScript.

    engine = ENGINES["numpy"](mlp)            # or "eager", "javascript"; mlp: a train_kinds.MLPRun
    loss, acc = engine.step(idx)              # one whole step: forward, loss, backward, update
    results = engine.train(seconds, batches, playing)   # steps for a while: [(loss, acc), ...]
    engine.pictures()                         # the frame's grid, heat maps and shown neuron

Each engine is built for one MLP run's model, data and settings (`train_mlp.MLPKind` makes one)
and answers the same methods; the run never asks which it holds.

* `EagerEngine`: micrograd itself, one scalar graph per point (`train.Step`), and the
  optimizer of `micrograd.optim`: for a Python without numpy.
* `NumpyEngine`: the same step on `micrograd.jit` (`train.jit_step.JitStep`), pictures by matrix
  products (`train_frames.layer_outputs`): the server and the notebook widget.
* `JavaScriptEngine`: the traced step written as JavaScript by jit's JavaScript target
  (`micrograd.jit.js_target`), with the step and pictures around it (train_js.py,
  train_step.js), and run by the browser (the static site's worker) or Node.js: steps,
  the optimizer's update and the pictures run there, many steps per call, no Python per step;
  Python reads the weights back when it draws a frame (`sync`). A step the Health panel reads
  is the engine's own step too, handing back health.py's statistics of it, computed there
  (jit/health.js) from its own arrays: no second pass in Python.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from ...losses import LOSSES, predict, predict_rows
from . import train_frames
from .train_frames import TARGET_RANGE, layer_outputs
from .train_health import EVERY_STEP, recording
from .train_kinds import MLPRun
from .train_settings import EAGER_FRAME_SECONDS, EAGER_GRID, GRID, numpy_available

Results = list[tuple[float, "float | None"]]


class Engine:
    """What every engine answers; see the module docstring. `title` is what the page shows."""

    name = ""
    title = ""
    batched = False
    step_fn: Any = None  # does `train` run many steps in one call (no Python per step)?

    def __init__(self, mlp: MLPRun) -> None:
        self.mlp = mlp
        self.grid_side = GRID
        self.heat_side = min(mlp.box, GRID // 2)

    def frame_seconds(self, fps: float) -> float:
        return 1.0 / fps

    def step(self, idx: Sequence[int] | None) -> tuple[float, float | None]:
        raise NotImplementedError

    def train(
        self, seconds: float, batches: Callable[[], Any], playing: Callable[[], bool]
    ) -> Results:
        """Steps, each on the batch `batches()` gives, for about `seconds` (at least one) while
        `playing()`: the (loss, accuracy) of each. Here one step: the pacer's loop, by its own
        clock, asks again (an engine that runs elsewhere takes many steps per call)."""
        return [self.step(batches())]

    def live(self) -> None:
        """The settings that apply to a running model changed (rate, momentum, L2, ...)."""
        s, opt = self.mlp.settings, self.mlp.opt
        opt.lr = s.lr
        if hasattr(opt, "momentum"):
            opt.momentum = s.momentum
        step = self.step_fn  # (train.Step, or jit_step.JitStep)
        step.alpha, step.l1, step.zero_grad = s.l2, s.l1, s.zero_grad

    def data_changed(self) -> None:
        """The run's points, targets or split changed."""

    def params_changed(self) -> None:
        """The run changed a weight itself (the learner edited one)."""

    def sync(self) -> None:
        """Make the model's Values hold the engine's weights and grads (before a frame)."""

    def weights_finite(self) -> bool:
        """Are the weights all finite (after the last step)? A sum is finite exactly when each
        term is (or past 1e308: diverged anyway)."""
        return math.isfinite(sum([p.data for p in self.mlp.params]))

    def test_metrics(self, idx: Sequence[int]) -> tuple[float, float | None]:
        raise NotImplementedError

    def pictures(self) -> dict[str, Any]:
        raise NotImplementedError

    def grid(self, side: int) -> list[list[float]]:
        return self.mlp.grid_of(side)

    def weight_views(self, grads: bool) -> tuple[str, str | None, float | None]:
        """Each parameter's link as a byte (`train_frames.link_bytes`), and with `grads` each
        ∂L/∂p's and the largest |∂L/∂p| (`grad_bytes`); else None, None."""
        self.sync()
        np = train_frames.numpy_if_there()
        links = train_frames.link_bytes([p.data for p in self.mlp.params], np)
        if not grads:
            return links, None, None
        return (links, *train_frames.grad_bytes([p.grad for p in self.mlp.params], np))


class EagerEngine(Engine):
    """micrograd's own engine: a scalar graph per point; a grid cell is a forward pass, so the
    pictures are coarse (EAGER_GRID) and come twice a second."""

    name = "eager"
    title = "eager micrograd"

    def __init__(self, mlp: MLPRun) -> None:
        from ...train import Step

        super().__init__(mlp)
        s = mlp.settings
        self.grid_side = self.heat_side = EAGER_GRID
        self.points = self.grid(EAGER_GRID)
        self.step_fn = Step(mlp.model, s.loss, s.l2, l1=s.l1, zero_grad=s.zero_grad, score=False)

    def frame_seconds(self, fps: float) -> float:
        return max(1.0 / fps, EAGER_FRAME_SECONDS)

    def step(self, idx: Sequence[int] | None) -> tuple[float, float | None]:
        mlp = self.mlp
        Xb = mlp.inputs if idx is None else [mlp.inputs[i] for i in idx]
        T = mlp.T if idx is None else [mlp.T[i] for i in idx]
        mon = mlp.health.begin()  # the Health panel reads this step (train_health.py), or not
        with recording(mon):
            total, _ = self.step_fn(Xb, T)
        acc = None if mlp.settings.regression else self._accuracy(mlp.train_idx)
        if mon is not None:
            mon.read_grads()
        mlp.opt.step()
        mlp.health.end(mon)
        return total, acc

    def _accuracy(self, idx: Sequence[int]) -> float:
        mlp = self.mlp
        hits = sum(
            predict([z.data for z in mlp.model.outputs(mlp.inputs[i])]) == mlp.labels[i]
            for i in idx
        )
        return hits / len(idx)

    def test_metrics(self, idx: Sequence[int]) -> tuple[float, float | None]:
        mlp = self.mlp
        s, hits, total = mlp.settings, 0, 0.0
        loss = LOSSES[s.loss]
        for i in idx:
            zs = mlp.model.outputs(mlp.inputs[i])
            total += loss.sample(zs, mlp.T[i]).data
            hits += not s.regression and predict([z.data for z in zs]) == mlp.labels[i]
        return total / len(idx), None if s.regression else hits / len(idx)

    def pictures(self) -> dict[str, Any]:
        return train_frames.eager_views(self.mlp, self.points)


class NumpyEngine(Engine):
    """micrograd.jit: the traced step replayed over the batch with numpy; pictures by matrix
    products."""

    name = "jit"
    title = "micrograd.jit (numpy)"

    def __init__(self, mlp: MLPRun) -> None:
        import numpy as np

        from ...train.jit_step import JitStep

        super().__init__(mlp)
        s = mlp.settings
        self.np = np
        self.step_fn = JitStep(mlp.model, s.loss, s.l2, l1=s.l1, zero_grad=s.zero_grad, score=False)
        self.data_changed()
        # only as arrays: thousands of small lists kept per tab fragment the memory a server
        # hands back when tabs close (10 MB of 64 tabs' worth)
        self.grid_points = np.array(self.grid(self.grid_side), dtype=float)
        self.heat_points = np.array(self.grid(self.heat_side), dtype=float)

    def data_changed(self) -> None:
        self.X = self.np.array(self.mlp.inputs, dtype=float)

    def step(self, idx: Sequence[int] | None) -> tuple[float, float | None]:
        mlp, np = self.mlp, self.np
        Xb = self.X if idx is None else self.X[idx]
        T = mlp.T if idx is None else [mlp.T[i] for i in idx]
        mon = mlp.health.begin()  # the Health panel reads this step (train_health.py), or not
        with np.errstate(all="ignore"), recording(mon):  # a diverging run is caught by value
            total, _ = self.step_fn(Xb, T)
            acc = self._accuracy(mlp.train_idx)
        if mon is not None:
            with np.errstate(all="ignore"):
                mon.read_grads()
        mlp.opt.step()
        mlp.health.end(mon)
        return total, acc

    def _accuracy(self, idx: Sequence[int]) -> float | None:
        """Accuracy on the points `idx`; None on a regression. The outputs by the pictures'
        forward pass (matrix products): a second jit replay of the whole network cost 14% of a
        step of the largest one, for the same classes."""
        mlp, np = self.mlp, self.np
        if mlp.settings.regression:
            return None
        outs = layer_outputs(mlp.model, self.X[idx])[-1]
        return float((predict_rows(outs) == np.array(mlp.labels)[idx]).mean())

    def test_metrics(self, idx: Sequence[int]) -> tuple[float, float | None]:
        mlp, np, step = self.mlp, self.np, self.step_fn
        X = self.X[idx]
        with np.errstate(all="ignore"):  # each point's term, by the step's own jit
            terms = step.loss_fn.outputs(X, step.target_array([mlp.T[i] for i in idx], X))
            return float(terms.mean()), self._accuracy(idx)

    def pictures(self) -> dict[str, Any]:
        return train_frames.numpy_views(self.mlp, self.grid_points, self.heat_points)


# ------------------------------------------------------------------ JavaScript


def javascript_host() -> Any:
    """Where generated JavaScript runs: the browser that runs this Python (Pyodide, in the
    site's worker, which offers ``micrograd_compile``), else Node.js."""
    if sys.platform == "emscripten":
        return _PyodideHost()
    global _NODE
    if _NODE is None:
        from ...jit.js_target import NodeHost

        _NODE = NodeHost()
    return _NODE


_NODE: Any = None


class _PyodideHost:
    """The site's worker's ``micrograd_compile(source)``: a JavaScript function of (method, JSON
    text) -> JSON text. Only text crosses, never proxies of data."""

    def compile(self, source: str) -> Callable[..., Any]:
        import js  # type: ignore[import-not-found]  # Pyodide's module of the worker's globals

        call = js.micrograd_compile(source)
        return lambda method, arg=None: json.loads(call(method, json.dumps(arg, allow_nan=False)))


# the compiled step of the last network shape: (host, run, source) -> the compiled object
# (Reset and New weights keep the shape: the same object, set afresh)
_COMPILED: dict[tuple[int, int, str], Callable[..., Any]] = {}


class JavaScriptEngine(Engine):
    """The step as JavaScript (`micrograd.jit.js_target`'s program in train_js.py's step),
    compiled once per network shape and loss; the weights live there while it trains, and come
    back to the model's Values on `sync`."""

    name = "javascript"
    title = "micrograd.jit (JavaScript)"
    batched = True

    def __init__(self, mlp: MLPRun, host: Any = None) -> None:
        from ...jit.js_target import program_source
        from ...train.health import Monitor
        from .train_js import mlp_source, step_source

        super().__init__(mlp)
        s = mlp.settings
        self.host = host or javascript_host()
        term = LOSSES[s.loss].term
        model = mlp.model
        outputs: list[Any] = []  # the model's outputs in the trace: the step's accuracy reads them

        def fn(x: Any, t: Any) -> Any:
            out = model(x)
            outputs[:] = out if isinstance(out, list) else [out]
            return term(out, t)

        # the program keeps the model's outputs (the step's accuracy), then each layer's (the
        # Health panel's read: health.Monitor's recording notes them as the trace makes them)
        health = Monitor(model)
        with health.recording():
            src, captured = program_source(
                fn,
                self._sample(0),
                keep=lambda: outputs + [v for lay in health.layers for v in lay.outs[-1]],
            )
        source = step_source(src, mlp_source(model))
        key = (id(self.host), id(mlp), source)  # its state is this run's own
        call = _COMPILED.get(key)
        if call is None:
            _COMPILED.clear()
            call = _COMPILED[key] = self.host.compile(source)
        self.call = call
        index = {id(p): i for i, p in enumerate(mlp.params)}
        self.rate = 100.0  # steps a second, measured: how many batches to hand over
        self.stale = False  # the Values are behind the engine's weights
        self.finite = True  # the engine's weights are all finite
        call(
            "set",
            {
                "captured": [index[id(v)] for v in captured],
                "restart": True,
                "params": [p.data for p in mlp.params],
                "optimizer": s.optimizer,
                "regression": s.regression,
                "grid": _flat(self.grid(self.grid_side)),
                "heat": _flat(self.grid(self.heat_side)),
                "health": health.layout(mlp.params),
            },
        )
        self.live()
        self.data_changed()

    def _sample(self, i: int) -> list[Any]:
        """The jit step's inputs for point i: its inputs and its target (a one-hot row for the
        cross-entropy, as `JitStep.target_array` gives)."""
        mlp = self.mlp
        t = mlp.T[i]
        if mlp.settings.loss == "cross_entropy":
            return [list(mlp.inputs[i]), [float(k == t) for k in range(mlp.settings.outputs)]]
        return [list(mlp.inputs[i]), float(t)]

    def live(self) -> None:
        s = self.mlp.settings
        self.call(
            "set",
            {
                "lr": s.lr,
                "momentum": s.momentum,
                "alpha": s.l2,
                "l1": s.l1,
                "zeroGrad": s.zero_grad,
            },
        )

    def data_changed(self) -> None:
        mlp = self.mlp
        rows = []
        for i in range(len(mlp.inputs)):
            x, t = self._sample(i)
            rows.extend(x)
            rows.extend(t if isinstance(t, list) else [t])
        self.call(
            "set",
            {
                "data": rows,
                "inputs": _flat(mlp.inputs),
                "labels": list(mlp.labels)
                if not mlp.settings.regression
                else [0] * len(mlp.inputs),
                "train": list(mlp.train_idx),
            },
        )

    def params_changed(self) -> None:
        self.call("set", {"params": [p.data for p in self.mlp.params]})

    def step(self, idx: Sequence[int] | None) -> tuple[float, float | None]:
        return self._run(1, 0.0, None if idx is None else [list(idx)])[0]

    def train(
        self, seconds: float, batches: Callable[[], Any], playing: Callable[[], bool]
    ) -> Results:
        read: Results = []
        mon = self.mlp.health.begin()  # the Health panel reads this step (then none for a while)
        if mon is not None:
            start = time.monotonic()
            read = [self._read_step(mon, batches() if not self.mlp.full_batch() else None)]
            seconds -= time.monotonic() - start
            # a run's first steps are each read, one a call; past them the slice goes on, unread
            # (it was one step: the Health panel open cost a small, fast network most of its speed)
            if self.mlp.health.steps < EVERY_STEP or seconds <= 0 or not playing():
                return read
        n = max(1, min(100_000, int(self.rate * seconds * 1.5) + 1))
        drawn = None
        if not self.mlp.full_batch():
            drawn = [list(batches()) for _ in range(n)]
        start = time.monotonic()
        out = self._run(n, seconds, drawn)
        took = time.monotonic() - start
        if took > 0.002:
            self.rate = 0.5 * self.rate + 0.5 * len(out) / took
        if drawn is not None:
            self.mlp.put_back(drawn[len(out) :])
        self.mlp.health.skipped(len(out))
        return read + out

    def _read_step(self, mon: Any, idx: Sequence[int] | None) -> tuple[float, float | None]:
        """One step the Health panel reads (train_health.py): the engine's own step, in
        JavaScript, which hands back health.py's statistics of it, computed there (health.js,
        `Monitor.given_stats`) from the step's arrays: each layer's outputs over the batch and
        their grads (rows its program keeps), the weights before and after the update and their
        grads. No second pass, and nothing per sample comes into Python."""
        got = self.call(
            "read",
            {"batch": None if idx is None else list(idx), "alpha": mon.alpha, "l1": mon.l1},
        )
        self.stale, self.finite = True, got["finite"]
        mon.given_stats(got["health"])
        mon.read_grads()
        self.mlp.health.end(mon)
        return float(got["losses"][0]), got["accs"][0]

    def _run(self, steps: int, seconds: float, batches: list | None) -> Results:
        got = self.call("train", {"steps": steps, "seconds": seconds, "batches": batches})
        self.stale, self.finite = True, got["finite"]
        return [(float(loss), acc) for loss, acc in zip(got["losses"], got["accs"])]

    def weights_finite(self) -> bool:
        return self.finite  # (the engine's answer: no need to read the weights back)

    def sync(self) -> None:
        if not self.stale:
            return
        state = self.call("state")
        for p, x, g in zip(self.mlp.params, state["params"], state["grads"]):
            p.data, p.grad = float(x), float(g)
        self.stale = False

    def test_metrics(self, idx: Sequence[int]) -> tuple[float, float | None]:
        loss, acc = self.call("metrics", {"idx": list(idx)})
        return float(loss), acc

    def pictures(self) -> dict[str, Any]:
        mlp = self.mlp
        return self.call(
            "pictures",
            {"kind": mlp.settings.output_kind, "shown": mlp.shown.neuron, "range": TARGET_RANGE},
        )

    def weight_views(self, grads: bool) -> tuple[str, str | None, float | None]:
        # made where the weights are: a frame reads none of them back (`sync`, 5,409 weights and
        # grads of 6x32 through JSON into Values, was a third of a frame's Python in the browser)
        got = self.call(
            "weights",
            {
                "scale": train_frames.LINK_SCALE,
                "decades": train_frames.GRAD_DECADES,
                "grads": grads,
            },
        )
        return got["links"], got["grads"], got["grad_max"]


def _flat(rows: Sequence[Sequence[float]]) -> list[float]:
    return [x for r in rows for x in r]


ENGINES: dict[str, type[Engine]] = {
    "eager": EagerEngine,
    "numpy": NumpyEngine,
    "javascript": JavaScriptEngine,
}


def engine_named(use_jit: bool | str | None) -> str:
    """The engine a run trains with: True or None, numpy's `micrograd.jit` when numpy is
    importable (else the eager engine); False, the eager engine; or an engine's name."""
    if isinstance(use_jit, str):
        if use_jit not in ENGINES:
            raise ValueError(f"unknown engine {use_jit!r}; the engines are {', '.join(ENGINES)}")
        return use_jit
    return "numpy" if use_jit is not False and numpy_available() else "eager"
