"""The Train view's chosen point, as JSON, for the explorer: `point_payload`, `point_root`,
and `zero_loss` (why a point whose loss is 0 teaches nothing, and the nearest that does).

`point_payload(trainer)` carries the point's graph (the network as it is now, the point's inputs
and target) to the explorer page; `point_root(payload)` makes the explorer's graph of it,
every weight and bias a leaf named by where it sits, after checking what the page sent.
"""

from __future__ import annotations

import math
from typing import Any

from ... import io
from ...engine import Value, topological_order
from ...losses import LOSSES
from ...viz.formatting import format_number as fmt
from .train_graph import through_network
from .train_mlp import MLPKind
from .trainer import Trainer


def point_payload(tr: Trainer) -> dict[str, Any]:
    """The Train view's chosen point as the explorer takes it: the network as it is now (the
    model file's JSON: exact, floats round-trip), the point's inputs and target, the loss and
    the inputs' names; and, when the point's loss is 0, the nearest point whose loss is not
    (`nearest`: its index, point, inputs, target and loss), for the explorer to offer. ValueError
    if the weights diverged (JSON cannot hold them)."""
    import json

    mlp = tr.kind
    with tr.lock:
        mlp.engine.sync()
        i, s = mlp.pick, mlp.settings
        names = list(s.features) if s.dims == 2 else [f"x{k}" for k in range(1, s.dims + 1)]
        return {
            "model": json.loads(io.dumps(mlp.model)),
            "index": i,
            "point": list(mlp.X[i]),
            "x": list(mlp.inputs[i]),
            "target": mlp.T[i],
            "loss": s.loss,
            "names": names,
            "nearest": _nearest_with_loss(mlp, i),
        }


# Past this many parameters a point's graph is larger than the explorer shows (500 values): no
# point of it opens there, so none is looked for.
NEAREST_MAX_PARAMS = 500


def _nearest_with_loss(tr: MLPKind, i: int) -> dict[str, Any] | None:
    """If point `i`'s loss is 0 (a hinge past its margin: every grad of its graph is 0), the
    point nearest to it whose loss is not 0, as `point_payload`'s fields; else None."""
    loss = LOSSES[tr.settings.loss]

    def loss_at(j: int) -> float:
        return loss.sample(tr.model.outputs(tr.inputs[j]), tr.T[j]).data

    if len(tr.model.parameters()) > NEAREST_MAX_PARAMS or loss_at(i) != 0.0:
        return None
    here = tr.X[i]
    order = sorted(range(len(tr.X)), key=lambda j: sum((a - b) ** 2 for a, b in zip(tr.X[j], here)))
    for j in order:
        value = loss_at(j) if j != i else 0.0
        if value != 0.0 and math.isfinite(value):
            return {
                "index": j,
                "point": list(tr.X[j]),
                "x": list(tr.inputs[j]),
                "target": tr.T[j],
                "loss": value,
            }
    return None


def point_root(payload: object) -> tuple[Value, list[Value], str]:
    """The explorer's graph of a `point_payload`: the point's loss through a copy of the network,
    every weight and bias a leaf named by where it sits (w2.3.1: layer 2, neuron 3, input 1), the
    point's inputs named as the Train view names them. Returns the loss, the parameters (what a
    gradient step moves) and a title. ValueError (or TypeError) naming what is wrong."""
    import json

    if not isinstance(payload, dict):
        raise TypeError(f"expected an object, got {type(payload).__name__}")
    loss = payload.get("loss")
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {str(loss)[:40]!r}")
    model = io.loads(json.dumps(payload.get("model")), "the network")
    x, names = payload.get("x"), payload.get("names")
    nin = len(model.layers[0].neurons[0].w)
    if (
        not isinstance(x, list)
        or len(x) != nin
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in x
        )
    ):
        raise ValueError(f"the point's inputs must be {nin} finite numbers")
    if (
        not isinstance(names, list)
        or len(names) != len(x)
        or not all(isinstance(n, str) and 0 < len(n) <= 20 for n in names)
    ):
        raise ValueError("the inputs' names must be one short text per input")
    target = payload.get("target")
    outputs = len(model.layers[-1].neurons)
    if (
        isinstance(target, bool)
        or not isinstance(target, (int, float))
        or not (
            0 <= target < outputs and float(target).is_integer()
            if outputs > 1
            else math.isfinite(target)
        )
    ):
        raise ValueError(
            f"the point's target must fit the network's {outputs} output(s): "
            f"a class index, or a number for one output"
        )
    target = int(target) if outputs > 1 else float(target)
    for li, layer in enumerate(model.layers, start=1):
        for ni, n in enumerate(layer.neurons, start=1):
            for k, w in enumerate(n.w, start=1):
                w.label = f"w{li}.{ni}.{k}"
            n.b.label = f"b{li}.{ni}"
    xs = [Value(float(v), label=name) for v, name in zip(x, names)]
    try:
        out, node_names = through_network(model, xs, target, loss)  # named as the Train view's are
    except ArithmeticError as exc:  # e.g. a target of 1e308: its loss is past what a float holds
        field = "target" if abs(target) > 1e150 else "model's weights or the point's inputs x"
        raise ValueError(f"its loss overflows a float (check its {field}): {exc}") from None
    for v in topological_order(out):
        if id(v) in node_names:
            v.label = node_names[id(v)]
    out.label = "loss"
    point = payload.get("point")
    where = ", ".join(fmt(v) for v in point) if isinstance(point, list) else ""
    title = (
        f"the Train view's point {payload.get('index', '?')} (x = {where}): its {loss} loss "
        f"through the network as it was at that moment. Build graph replaces it with an "
        f"expression."
    )
    return out, model.parameters(), title


def zero_loss(topo: list[Value], payload: dict[str, Any]) -> dict[str, Any]:
    """Why every grad of a point whose loss is 0 is 0, and the nearest point whose loss is not
    (the Train view's `nearest`), for the explorer's page to offer."""
    score = next((v for v in topo if v.label == "s"), None)
    target = payload.get("target")
    if payload.get("loss") == "hinge" and score is not None and isinstance(target, (int, float)):
        ys = target * score.data
        text = (
            f"This point's loss is 0: it is past the margin. The hinge loss is "
            f"max(0, 1 − y·s), and here y·s = {fmt(target)} × {fmt(score.data)} = {fmt(ys)}, "
            f"at least 1, so 1 − y·s ≤ 0: the loss is 0 and flat here, its slope 0, so "
            f"every grad behind it is 0. Training learns nothing from this point."
        )
    else:
        text = (
            "This point's loss is 0: the network's output is its target exactly, and the "
            "loss is flat there, so every grad behind it is 0."
        )
    offer = None
    other = payload.get("nearest")
    if isinstance(other, dict) and isinstance(other.get("point"), list):
        where = ", ".join(fmt(x) for x in other["point"] if isinstance(x, (int, float)))
        loss = other.get("loss")
        shown = f", loss {fmt(loss)}" if isinstance(loss, (int, float)) else ""
        offer = {
            "text": f"The nearest point whose loss is not 0: point {other.get('index')} "
            f"(x = {where}){shown}.",
            "button": f"Step through point {other.get('index')} instead",
        }
    else:
        text += " No point of the Train view's data has a loss that is not 0."
    return {"text": text, "offer": offer}
