"""The training view's pictures, computed by the model itself: what a frame and its meta hold.

`grid_views` runs the network over the plotted grid (one `micrograd.jit` replay per neuron, or
one eager forward pass per cell without numpy) for the decision regions and a heat map per
hidden neuron, sent as one byte per cell. `point_graph` builds one point's loss graph without
the weights (inputs, each neuron's w·x+b and activation, the outputs, the loss's own nodes) and
`layout` places it once, in columns by depth. `frame` and `meta` gather a trainer's state into
the JSON the page draws.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

from ..engine import Value, topological_order
from ..nn import ACTIVATIONS, MLP
from ..viz import caption
from .train_settings import FEATURES, LOSSES, OUTPUT_RULES, PER_SAMPLE, predict

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
        self.buckets: list[tuple[int, float | None, float | None, float]] = []
        self.merges = 0  # how often the buckets were merged: a reader starts over after one

    def add(self, step: int, loss: float | None, acc: float) -> None:
        if self.buckets and step // self.width == self.buckets[-1][0] // self.width:
            first, lo, hi, _ = self.buckets[-1]
            self.buckets[-1] = (first, _min(lo, loss), _max(hi, loss), acc)
            return
        self.buckets.append((step, loss, loss, acc))
        if len(self.buckets) > self.cap:
            b = self.buckets
            self.buckets = [
                b[i] if i + 1 == len(b) else (b[i][0], _min(b[i][1], b[i + 1][1]),
                                              _max(b[i][2], b[i + 1][2]), b[i + 1][3])
                for i in range(0, len(b), 2)
            ]  # fmt: skip
            self.width *= 2
            self.merges += 1


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)  # None: a step that diverged


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _b64(values: Any) -> str:
    """Numbers in [-1, 1] as one byte each, base64: 0 is -1, 255 is +1."""
    import numpy as np

    q = np.clip(np.rint((np.asarray(values, dtype=float) + 1.0) * 127.5), 0, 255)
    return base64.b64encode(np.nan_to_num(q).astype(np.uint8).tobytes()).decode("ascii")


def _b64_list(values: Sequence[float]) -> str:
    """The same without numpy."""
    out = bytearray()
    for v in values:
        v = 0.0 if math.isnan(v) else max(-1.0, min(1.0, v))
        out.append(int(round((v + 1.0) * 127.5)))
    return base64.b64encode(bytes(out)).decode("ascii")


class JitLayers:
    """Every neuron's output over a batch of points, by the model itself: one `jit` replay per
    neuron, reading the previous layer's outputs (so a 2-8-8-1 net is 17 small programs)."""

    def __init__(self, model: MLP) -> None:
        from ..jit import jit

        self.fns = [
            [jit(lambda h, n=n: n(h)) for n in layer.neurons] for layer in model.layers
        ]

    def __call__(self, X: Any) -> list[Any]:
        """[(B, n_1), (B, n_2), ..., (B, n_out)] arrays for X (B, nin)."""
        import numpy as np

        outs, h = [], np.ascontiguousarray(X, dtype=float)
        for fns in self.fns:
            h = np.stack([f.outputs(h) for f in fns], axis=1)
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


# ------------------------------------------------------------------ the chosen point's graph


def point_graph(
    model: MLP, x: Sequence[float], target: Any, loss: str
) -> tuple[list[Value], list[dict[str, Any]], Value]:
    """The graph of one point's loss, forward and backward done, without the weights.

    Returns the nodes to draw (inputs, each neuron's w·x+b and its activation, the outputs, the
    loss's own nodes; parameters and constants are left out: the network picture shows the
    weights), a description of each (label, op, parents among the drawn nodes), and the loss.
    """
    xs = [Value(float(v), label=f"x{_sub(i + 1)}") for i, v in enumerate(x)]
    names: dict[int, str] = {id(v): v.label for v in xs}
    h: list[Value] = xs
    last = len(model.layers) - 1
    for li, layer in enumerate(model.layers):
        h = layer.outputs(h)
        for j, v in enumerate(h):
            tag = f"{li + 1}.{j + 1}" if li < last else (str(j + 1) if len(h) > 1 else "")
            act = v._prev[0] if len(v._prev) == 1 else None  # an activation's one child: w·x+b
            if li == last:
                names[id(v)] = f"z{_sub(int(tag))}" if tag else "s"
            else:
                names[id(v)] = f"h{tag}"
                if act is not None:
                    names[id(act)] = f"a{tag}"
    out = PER_SAMPLE[loss](h, target)
    params = model.parameters()
    kept = [p.grad for p in params]
    out.backward()
    for p, g in zip(params, kept):  # the picture's backward pass leaves training's grads alone
        p.grad = g
    keep = {id(v) for v in xs}
    # children first, in tuple order (deterministic); of the leaves, only the point's inputs
    order = [v for v in topological_order(out) if v._prev or id(v) in keep]
    # Drop what does not depend on the point (e.g. a target negated by a '*' node): constants.
    live = {id(v) for v in xs}
    for v in order:
        if any(id(c) in live for c in v._prev):
            live.add(id(v))
    order = [v for v in order if id(v) in live]
    index = {id(v): i for i, v in enumerate(order)}
    nodes = []
    for v in order:
        label = names.get(id(v), "")
        if v is out:
            label = "loss"
        nodes.append(
            {
                "label": label,
                "op": caption(v),
                "children": [index[id(c)] for c in v._prev if id(c) in index],
            }
        )
    return order, nodes, out


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def layout(nodes: list[dict[str, Any]], w: int = 118, h: int = 46, gap: int = 28) -> dict:
    """Columns by depth (inputs left, loss right), rows in graph order: positions in pixels."""
    depth: list[int] = []
    for n in nodes:
        depth.append(1 + max((depth[c] for c in n["children"]), default=-1))
    cols: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        cols.setdefault(d, []).append(i)
    tallest = max((len(c) for c in cols.values()), default=0)
    pos = [(0, 0)] * len(nodes)
    for d, members in cols.items():
        top = (tallest - len(members)) * (h + 10) / 2
        for r, i in enumerate(members):
            pos[i] = (d * (w + gap), round(top + r * (h + 10)))
    return {
        "width": (max(cols, default=0) + 1) * (w + gap) - gap,
        "height": tallest * (h + 10) - 10,
        "box": [w, h],
        "pos": pos,
    }


def _b64_classes(cls: Any) -> str:
    return base64.b64encode(bytes(int(c) for c in cls)).decode("ascii")


# ------------------------------------------------------------------ frames


def meta(tr: Any) -> dict[str, Any]:
    """What changes only with the settings: the data, the plot's extent, the graph layout."""
    with tr.lock:
        s = tr.settings
        return {
            "config_id": tr.config_id,
            "settings": s.to_dict(),
            "engine": "jit" if tr.use_jit else "eager",
            "points": [[*x, c] for x, c in zip(tr.X, tr.cls)],  # exact: JSON floats
            "test": tr.test_idx,  # the points held out as test data (indices into points)
            "classes": s.classes,
            "extent": tr.extent,
            "grid": tr.grid_side,
            "heat": tr.grid_side // 2 if tr.use_jit else tr.grid_side,
            "slice": "x₃ = 0" if s.dims == 3 else None,
            "features": [FEATURES[k][0] for k in s.features] if s.dims == 2 else None,
            # each input's value over the plane (the input squares' pictures), as heat maps
            "inputs": _input_maps(tr),
            "sizes": [s.nin, *s.hidden, s.outputs],
            "loss_formula": LOSSES[s.loss][1],
            "output_rule": OUTPUT_RULES[LOSSES[s.loss][2]],
            "activation_formula": f"h = {s.activation}(w·x + b),  {s.activation}(x) = "
            + ACTIVATIONS[s.activation].equation,
            "pick": tr.pick,
            "graph": {"nodes": tr.graph_nodes, **tr.graph_layout},
            "change": tr.change,  # what the last settings change did: applied, or started over
        }

def frame(tr: Any) -> dict[str, Any]:
    """The current picture (see the module docstring). Caller may hold the lock."""
    with tr.lock:
        s = tr.settings
        try:
            grid, heat = grid_views(tr)
            order, _, _ = point_graph(tr.model, tr.inputs[tr.pick], tr.T[tr.pick], s.loss)
        except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights: no picture
            grid, heat, order = None, [], []
        return {
            "type": "frame",
            "config_id": tr.config_id,
            "step": tr.step_no,
            "loss": short(tr.loss) if tr.step_no else None,
            "accuracy": tr.accuracy if tr.step_no else None,
            # on the held-out points, by the model now: [loss, accuracy], or None (none held out)
            "test": _test(tr),
            "playing": tr.playing,
            "error": tr.error,
            "grid": grid,
            "heat": heat,
            "weights": [
                [[short(w.data) for w in n.w] + [short(n.b.data)] for n in layer.neurons]
                for layer in tr.model.layers
            ],
            "graph": {
                # exact (not rounded twice on the way to the page's 4 decimals)
                "data": [_finite(v.data) for v in order],
                "grad": [_finite(v.grad) for v in order],
                "note": _zero_loss_note(order, s.loss),
            },
        }


def _input_maps(tr: Any) -> list[str]:
    """Each network input over the plot's plane, scaled to [-1, 1], one byte per cell (a heat
    map's format): what the input squares show (x₁ left to right, x₁² a valley, ...)."""
    side = tr.grid_side // 2 if tr.use_jit else tr.grid_side
    step = tr.grid_side // side
    rows = [tr.grid[r * tr.grid_side + c] for r in range(0, tr.grid_side, step)
            for c in range(0, tr.grid_side, step)]  # fmt: skip
    maps = []
    for j in range(len(rows[0])):
        col = [row[j] for row in rows]
        scale = max(abs(v) for v in col) or 1.0
        maps.append(_b64_list([v / scale for v in col]))
    return maps


def _test(tr: Any) -> list[float | None] | None:
    try:
        m = tr.test_metrics()
    except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights: no figures
        return None
    return None if m is None else [short(m[0]), m[1]]


def _zero_loss_note(order: list[Value], loss: str) -> str:
    """Why every grad in the point's graph is 0, when it is: its loss is exactly 0 there (the
    hinge past its margin), so the backward pass has nothing to send back."""
    if not order or order[-1].data != 0.0:
        return ""
    why = " (it is past the margin: max(0, 1 − y·s) = 0)" if loss == "hinge" else ""
    return (f"The loss of this point is 0{why}, so nothing flows back: every grad in its graph "
            f"is 0, and this point does not move the weights at this step.")

def grid_views(tr: Any) -> tuple[dict[str, Any], list[str]]:
    """The decision regions and one heat map per hidden neuron, from the model's forward
    pass over the grid."""
    k = tr.settings.outputs
    if tr.use_jit:
        import numpy as np

        with np.errstate(all="ignore"):
            layers = tr.grid_layers()
            side = tr.grid_side
            heat = []
            for a in layers[:-1]:
                sub = a.reshape(side, side, -1)[::2, ::2].reshape(-1, a.shape[1])
                scale = np.abs(sub).max(axis=0)
                scale[~(scale > 0)] = 1.0
                heat += [_b64(sub[:, j] / scale[j]) for j in range(a.shape[1])]
            out = layers[-1]
            if k == 1:
                return {"kind": "score", "b64": _b64(np.tanh(out[:, 0]))}, heat
            z = out - out.max(axis=1, keepdims=True)
            p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            return {"kind": "classes", "cls": _b64_classes(p.argmax(axis=1)),
                    "b64": _b64(2 * p.max(axis=1) - 1)}, heat
    per_layer = _eager_layers(tr.model, tr.grid)
    heat = []
    for a in per_layer[:-1]:
        for j in range(len(a[0])):
            col = [row[j] for row in a]
            scale = max((abs(v) for v in col if math.isfinite(v)), default=0.0) or 1.0
            heat.append(_b64_list([v / scale for v in col]))
    out = per_layer[-1]
    if k == 1:
        return {"kind": "score", "b64": _b64_list([math.tanh(r[0]) for r in out])}, heat
    cls, conf = [], []
    for r in out:
        m = max(r)
        e = [math.exp(v - m) for v in r]
        c = predict(r)
        cls.append(c)
        conf.append(2 * e[c] / sum(e) - 1)
    return {"kind": "classes", "cls": _b64_classes(cls), "b64": _b64_list(conf)}, heat
