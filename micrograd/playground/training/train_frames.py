"""The training view's pictures, computed by the model itself: what a frame and its meta hold.

A frame is built at the size the page draws it, and a reader is sent only what changed since
the frame it had (`FrameCursor` in train_publish.py):

* ``grid``: the decision regions (or a regression's output) over the plot, one byte per cell;
* ``heat``: one heat map per hidden neuron, each as many cells a side as the page's neuron
  square has pixels (``meta["heat"]``), one byte per cell scaled to the map's largest |h|
  (``heat_scale``, for the legend); ``shown``: the neuron the page shows on the big plot, at the
  plot's resolution;
* ``links``: every parameter (the weights and biases, in ``model.parameters()`` order) as one
  byte, the look of its link (``LINK_SCALE``); ``grads``, when the page draws gradients, each
  parameter's ∂L/∂p the same way, on a log scale of ``GRAD_DECADES`` below the largest
  (``grad_max``); ``read``: the exact numbers of the one link or bias the page reads (hovered,
  focused or being edited);
* ``graph``: the chosen point's graph numbers, when the page shows it.

`Shown` is what the page shows, so that a frame holds that and no more.
`numpy_views` runs the network over a grid of points with the activations' own array forms
(a matrix product per layer: `layer_outputs`), `eager_views` one eager forward pass per cell
(the JavaScript engine computes the same in the browser: train_step.js); the chosen
point's graph comes from train_graph.py. `frame` and `meta` gather an MLP run's state
(`train_kinds.MLPRun`) into the JSON the page draws.
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Sequence
from typing import Any

from ...losses import predict, predict_rows
from ...nn import ACTIVATIONS, MLP
from ...viz.formatting import json_float
from .train_graph import point_graph, zero_loss_note
from .train_kinds import MLPRun
from .train_settings import FEATURES, OUTPUT_RULES, TARGET_RANGE

Frame = dict[str, Any]
KEEP: Any = object()  # an argument of `view` left out


# ------------------------------------------------------------------ the model's views


class LossCurve:
    """The loss and accuracy curve at any length, looking the same: buckets of `width` steps (a
    power of two), each ``(first step, lowest loss, highest loss, accuracy at its last step)``.
    Past `cap` buckets, neighbours merge and the width doubles; a lowest and a highest merge
    exactly, so the band the page draws never loses a spike, at step 100 or at step 10 million.
    (Thinning by dropping every second entry made the early curve ever sparser.)"""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.width = 1
        self.buckets: list[tuple[int, float | None, float | None, float | None]] = []
        self.merges = 0  # how often the buckets were merged: a reader starts over after one

    def add(self, step: int, loss: float | None, acc: float | None) -> None:
        if self.buckets and step // self.width == self.buckets[-1][0] // self.width:
            first, lo, hi, _ = self.buckets[-1]
            self.buckets[-1] = (first, _min(lo, loss), _max(hi, loss), acc)
            return
        self.buckets.append((step, loss, loss, acc))
        if len(self.buckets) > self.cap:
            b = self.buckets
            self.buckets = [
                b[i]
                if i + 1 == len(b)
                else (b[i][0], _min(b[i][1], b[i + 1][1]), _max(b[i][2], b[i + 1][2]), b[i + 1][3])
                for i in range(0, len(b), 2)
            ]
            self.width *= 2
            self.merges += 1


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)  # None: a step that diverged


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


# How a frame's numbers become bytes: each value in [-1, 1] one byte, 0 for -1 and 255 for +1,
# base64 (a picture needs no more; the page reads exact numbers through `read`).


def _b64(values: Any) -> str:
    """Numbers in [-1, 1] as one byte each, base64 (numpy arrays)."""
    import numpy as np

    q = np.clip(np.rint((np.asarray(values, dtype=float) + 1.0) * 127.5), 0, 255)
    return base64.b64encode(np.nan_to_num(q).astype(np.uint8).tobytes()).decode("ascii")


def _b64_list(values: Sequence[float]) -> str:
    """The same without numpy (NaN as 0)."""
    out = bytearray()
    for v in values:
        v = 0.0 if math.isnan(v) else max(-1.0, min(1.0, v))
        out.append(int(round((v + 1.0) * 127.5)))
    return base64.b64encode(bytes(out)).decode("ascii")


LINK_SCALE = 3.0  # a link is drawn the same for every |w| past 3: its widest, darkest line
GRAD_DECADES = 3  # a gradient's link: its width spans 3 decades below the largest |∂L/∂w|


def link_bytes(ws: Sequence[float], np: Any = None) -> str:
    """Each parameter's link look: w / LINK_SCALE as one byte (clipped)."""
    if np is not None:
        return _b64(np.asarray(ws, dtype=float) / LINK_SCALE)
    return _b64_list([w / LINK_SCALE for w in ws])


def grad_bytes(gs: Sequence[float], np: Any = None) -> tuple[str, float]:
    """Each ∂L/∂p as one byte on a log scale: sign(g)·(1 + log10(|g| / gmax) / GRAD_DECADES),
    0 from 3 decades below the largest |g| (gmax, returned: the legend's scale) down."""
    if np is not None:
        g = np.nan_to_num(np.asarray(gs, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
        top = float(np.abs(g).max()) if g.size else 0.0
        if top == 0.0:
            return _b64(np.zeros_like(g)), 0.0
        with np.errstate(divide="ignore"):
            t = 1.0 + np.log10(np.abs(g) / top) / GRAD_DECADES
        return _b64(np.sign(g) * np.clip(t, 0.0, 1.0)), top
    finite = [g if math.isfinite(g) else 0.0 for g in gs]
    top = max((abs(g) for g in finite), default=0.0)
    if top == 0.0:
        return _b64_list([0.0] * len(finite)), 0.0
    return _b64_list(
        [
            math.copysign(max(0.0, 1.0 + math.log10(abs(g) / top) / GRAD_DECADES), g) if g else 0.0
            for g in finite
        ]
    ), top


def neuron_box(sizes: Sequence[int]) -> int:
    """A neuron's square on the page, in pixels: smaller as layers grow, never a dot (32
    neurons a layer: 16 px). Its heat map has as many cells a side (at most `GRID // 2`)."""
    tallest = max(sizes)
    return max(16, min(36, 440 // tallest - 6))


# OpenBLAS computes a matrix product of more than 2^18 multiply-adds on several threads, and on
# a busy machine (a class's server, a laptop training) those threads wait on each other: the
# 2,500 cells of the plot through a layer of 32 took 25 ms that way and 0.5 ms in row blocks
# below the threshold, on one thread.
BLOCK_MACS = 200_000


_PICTURE_XP: list[Any] = []


def _picture_xp(np: Any) -> Any:
    """The array module a picture's activations run on: each activation's declared forward rule
    with numpy's own functions. A picture of bytes needs no correctly rounded tanh (the engine's,
    which jit trains with, took 24 of the 27 ms of the largest network's plot; numpy's is within
    an ulp)."""
    if not _PICTURE_XP:
        from ...core.registry import ArrayModule

        _PICTURE_XP.append(ArrayModule(np, {}))
    return _PICTURE_XP[0]


def layer_outputs(model: MLP, X: Any) -> list[Any]:
    """Every layer's outputs over the points X (B, nin), by matrix products: each layer's
    weights as an array, its activation's declared forward rule on numpy (`_picture_xp`).
    [(B, n_1), ..., (B, n_out)]."""
    import numpy as np

    xp = _picture_xp(np)
    outs, h = [], np.ascontiguousarray(X, dtype=float)
    for layer in model.layers:
        M = np.array([[w.data for w in n.w] + [n.b.data] for n in layer.neurons])
        W, b = np.ascontiguousarray(M[:, :-1].T), M[:, -1]
        z = np.empty((h.shape[0], W.shape[1]))
        rows = max(1, BLOCK_MACS // max(1, W.size))
        for i in range(0, h.shape[0], rows):
            np.matmul(h[i : i + rows], W, out=z[i : i + rows])
        z += b
        op = ACTIVATIONS[layer.neurons[0].activation].op
        h = z if op is None else op.forward(xp, z)
        outs.append(h)
    return outs


def _eager_layers(model: MLP, X: Sequence[Sequence[float]]) -> list[list[list[float]]]:
    """The same, one scalar forward pass per point (no numpy): [layer][point][neuron]."""
    per_layer: list[list[list[float]]] = [[] for _ in model.layers]
    for x in X:
        h: Any = list(x)
        for i, layer in enumerate(model.layers):
            h = layer.outputs(h)
            per_layer[i].append([v.data for v in h])
    return per_layer


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None  # JSON has no NaN or inf


def short(x: float) -> float | None:
    # JSON has no NaN or inf; 6 significant digits are plenty for a picture.
    return float(f"{x:.6g}") if math.isfinite(x) else None


def _b64_classes(cls: Any) -> str:
    return base64.b64encode(bytes(int(c) for c in cls)).decode("ascii")


# ------------------------------------------------------------------ frames


def meta(mlp: MLPRun) -> Frame:
    """What changes only with the settings: the data, the plot's extent, the graph layout.
    Caller holds the run's lock (the trainer keeps it until its settings change)."""
    s = mlp.settings
    sizes = [s.nin, *s.hidden, s.outputs]
    return {
        "config_id": mlp.config_id,
        "settings": s.to_dict(),
        "engine": mlp.engine.name,
        "engine_title": mlp.engine.title,  # the page says it as it is
        # exact (JSON floats); the last entry is the class, or the target value (regression)
        "points": [[*x, c] for x, c in zip(mlp.X, mlp.labels)],
        "test": mlp.test_idx,  # the points held out as test data (indices into points)
        "classes": s.classes,  # 0: a regression problem
        "target_range": TARGET_RANGE,  # a regression's colour scale: -range .. +range
        "extent": mlp.extent,
        "grid": mlp.grid_side,
        "heat": mlp.heat_side,  # cells a side of a neuron's heat map
        "box": mlp.box,  # pixels a side of a neuron's square on the page
        "link_scale": LINK_SCALE,
        "grad_decades": GRAD_DECADES,
        "slice": "x₃ = 0" if s.dims == 3 else None,
        "features": [FEATURES[k][0] for k in s.features] if s.dims == 2 else None,
        # each input's value over the plane (the input squares' pictures), as heat maps
        "inputs": _input_maps(mlp),
        "sizes": sizes,
        "loss_formula": s.loss_formula,
        "output_kind": s.output_kind,
        "output_rule": OUTPUT_RULES[s.output_kind],
        "activation_formula": (
            f"h = {s.activation}(w·x + b),  {s.activation}(x) = "
            + ACTIVATIONS[s.activation].equation
        )
        if s.hidden
        else "no hidden layer: the output is s = w·x + b, a line (no activation is used)",
        "pick": mlp.pick,
        "graph": {"nodes": mlp.graph_nodes, **mlp.graph_layout},
    }


def frame(mlp: MLPRun, playing: bool) -> Frame:
    """The model's part of the current picture (see the module docstring; the run adds its
    step, loss and accuracy). Caller holds the run's lock."""
    shown = mlp.shown
    if shown.read is not None:  # read from the model's Values
        mlp.engine.sync()  # the weights and grads, where the engine keeps them
    try:
        views = mlp.engine.pictures()
    except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights: no picture
        views = {"grid": None, "heat": [], "heat_scale": [], "shown": None}
    graph = _graph_numbers(mlp, playing) if shown.graph else None
    links, grads, top = mlp.engine.weight_views(shown.grads)
    grad_max = None if top is None else short(top)
    return {
        # on the held-out points, by the model now: [loss, accuracy], or None (none held out)
        "test": _test(mlp),
        **views,
        "links": links,
        "grads": grads,  # None: the page does not draw them
        "grad_max": grad_max,
        "read": read(mlp, mlp.shown.read),
        "graph": graph,  # None: the page does not show it
    }


# While a run plays, the chosen point's graph (a scalar forward and backward pass through the
# whole network in Python: 56 ms for 6x32 in CPython, a few times that in the browser's) is made
# again only when the last one is GRAPH_EVERY times its cost old: the graph takes a tenth of the
# frames' time at most, and the frames between carry its last numbers. A paused run's is fresh.
GRAPH_EVERY = 10


def _graph_numbers(mlp: MLPRun, playing: bool) -> Frame:
    """The chosen point's graph's numbers: each node's data and grad, and the zero-loss note."""
    kept, now = mlp.graph_kept, time.perf_counter()
    key = (mlp.config_id, mlp.pick, id(mlp.settings))
    if playing and kept is not None and kept[2] == key and now - kept[0] < GRAPH_EVERY * kept[1]:
        return kept[3]
    mlp.engine.sync()  # the weights and grads, where the engine keeps them
    try:
        order, _, _ = point_graph(
            mlp.model, mlp.inputs[mlp.pick], mlp.T[mlp.pick], mlp.settings.loss, describe=False
        )
        note = zero_loss_note(order, mlp.settings.loss)
    except (ValueError, OverflowError, ZeroDivisionError) as e:  # diverged weights
        order, note = (
            [],
            (
                f"No numbers for this point: its forward pass fails ({e}), as "
                f"the weights diverged. Lower the Learning rate and press Reset."
            ),
        )
    graph = {
        # exact (not rounded twice on the way to the page's 4 decimals); none: no numbers
        "data": [_finite(v.data) for v in order],
        "grad": [_finite(v.grad) for v in order],
        "note": note,
    }
    mlp.graph_kept = (now, time.perf_counter() - now, key, graph)
    return graph


def numpy_if_there() -> Any:
    """numpy if importable (quicker bytes), else None (the site's Python has none)."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def read(mlp: MLPRun, item: tuple[int, int, int | None] | None) -> dict[str, Any] | None:
    """The exact numbers of one parameter: weight `input` of neuron `neuron` of layer `layer`
    (or its bias, when `input` is None): its value and its ∂L/∂p of the last step."""
    if item is None:
        return None
    layer, neuron, inp = item
    try:
        n = mlp.model.layers[layer].neurons[neuron]
        p = n.b if inp is None else n.w[inp]
    except IndexError:  # the network was just rebuilt: the page asks again
        return None
    return {
        "layer": layer,
        "neuron": neuron,
        "input": inp,
        "value": json_float(p.data),
        "grad": json_float(p.grad),
    }


def _input_maps(mlp: MLPRun) -> list[str]:
    """Each network input over the plot's plane, scaled to [-1, 1], one byte per cell (a heat
    map's format): what the input squares show (x₁ left to right, x₁² a valley, ...)."""
    cols = [list(c) for c in zip(*mlp.grid_of(mlp.heat_side))]
    maps = []
    for col in cols:
        scale = max(abs(v) for v in col) or 1.0
        maps.append(_b64_list([v / scale for v in col]))
    return maps


def _test(mlp: MLPRun) -> list[float | None] | None:
    try:
        m = mlp.test_metrics()
    except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights: no figures
        return None
    return None if m is None else [short(m[0]), None if m[1] is None else _finite(m[1])]


def _heat(a: Any, np: Any) -> tuple[list[str], list[float | None]]:
    """Each column of a (cells, neurons) array as a heat map scaled to its largest |value|."""
    scale = np.abs(a).max(axis=0) if a.size else np.zeros(a.shape[1])
    scale[~(scale > 0)] = 1.0  # a map of zeros (or NaN): drawn white
    q = np.clip(np.rint((a / scale + 1.0) * 127.5), 0, 255)  # the bytes of every map at once
    rows = np.ascontiguousarray(np.nan_to_num(q).astype(np.uint8).T)
    maps = [base64.b64encode(r.tobytes()).decode("ascii") for r in rows]
    return maps, [short(float(m)) for m in scale]


def _output_view(out: Any, kind: str, np: Any) -> dict[str, Any]:
    """The big plot's picture from the output layer over the grid (cells, outputs)."""
    if kind == "value":  # a regression's prediction, on its targets' scale
        return {"kind": "value", "b64": _b64(out[:, 0] / TARGET_RANGE)}
    if kind == "one":
        return {"kind": "score", "b64": _b64(np.tanh(out[:, 0]))}
    z = out - out.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return {
        "kind": "classes",
        "cls": _b64_classes(predict_rows(out)),
        "b64": _b64(2 * p.max(axis=1) - 1),
    }


def numpy_views(mlp: MLPRun, grid: Any, heat_grid: Any) -> dict[str, Any]:
    """The big plot's picture (``grid``), a heat map per hidden neuron (``heat``, with each one's
    scale), and the neuron the page shows big (``shown``), from the model's forward pass over the
    plot's grid and over the heat maps' grid (numpy arrays of points)."""
    import numpy as np

    kind, shown = mlp.settings.output_kind, mlp.shown.neuron
    with np.errstate(all="ignore"):
        layers = layer_outputs(mlp.model, grid)
        small = layer_outputs(mlp.model, heat_grid)[:-1]
        heat, scales = _heat(np.concatenate(small, axis=1), np) if small else ([], [])
        big = None
        for a in layers[:-1] if shown is not None else ():  # the shown neuron's layer
            if shown < a.shape[1]:
                maps, m = _heat(a[:, shown : shown + 1], np)
                big = {"neuron": mlp.shown.neuron, "b64": maps[0], "scale": m[0]}
                break
            shown -= a.shape[1]
        return {
            "grid": _output_view(layers[-1], kind, np),
            "heat": heat,
            "heat_scale": scales,
            "shown": big,
        }


def eager_views(mlp: MLPRun, points: Sequence[Sequence[float]]) -> dict[str, Any]:
    """The same, one eager forward pass per cell of `points` (the heat maps' grid is the
    plot's)."""
    kind, shown = mlp.settings.output_kind, mlp.shown.neuron
    per_layer = _eager_layers(mlp.model, points)
    heat, scales = [], []
    for a in per_layer[:-1]:
        for j in range(len(a[0])):
            col = [row[j] for row in a]
            scale = max((abs(v) for v in col if math.isfinite(v)), default=0.0) or 1.0
            heat.append(_b64_list([v / scale for v in col]))
            scales.append(short(scale))
    big = None
    if shown is not None and shown < len(heat):
        big = {"neuron": shown, "b64": heat[shown], "scale": scales[shown]}
    out = per_layer[-1]
    if kind == "value":
        return {
            "grid": {"kind": "value", "b64": _b64_list([r[0] / TARGET_RANGE for r in out])},
            "heat": heat,
            "heat_scale": scales,
            "shown": big,
        }
    if kind == "one":
        grid = {"kind": "score", "b64": _b64_list([math.tanh(r[0]) for r in out])}
    else:
        cls, conf = [], []
        for r in out:
            m = max(r)
            e = [math.exp(v - m) for v in r]
            c = predict(r)
            cls.append(c)
            conf.append(2 * e[c] / sum(e) - 1)
        grid = {"kind": "classes", "cls": _b64_classes(cls), "b64": _b64_list(conf)}
    return {"grid": grid, "heat": heat, "heat_scale": scales, "shown": big}
