"""The chosen point's graph in the Train view: one point's loss through the network, without
the weights (they are the network picture's links), as micrograd computes it.

`point_graph` builds it, forward and backward done (training's gradients left alone), and
describes each node to draw; `layout` places it once, in columns by depth, so that only its
numbers change from frame to frame; `zero_loss_note` says why every grad is 0 when it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...engine import Value, topological_order
from ...losses import LOSSES
from ...nn import MLP
from ...viz import caption


def point_graph(
    model: MLP, x: Sequence[float], target: Any, loss: str, describe: bool = True
) -> tuple[list[Value], list[dict[str, Any]], Value]:
    """The graph of one point's loss, forward and backward done, without the weights.

    Returns the nodes to draw (inputs, each neuron's w·x+b and its activation, the outputs, the
    loss's own nodes; parameters and constants are left out: the network picture shows the
    weights), a description of each (label, op, parents among the drawn nodes; only if
    `describe`: the layout needs them once, a frame only the numbers), and the loss.
    """
    xs = [Value(float(v), label=f"x{_sub(i + 1)}") for i, v in enumerate(x)]
    out, names = through_network(model, xs, target, loss)
    names.update({id(v): v.label for v in xs})
    params = model.parameters()
    kept = [p.grad for p in params]
    out.backward()
    for p, g in zip(params, kept):  # the picture's backward pass leaves training's grads alone
        p.grad = g
    # The inputs, then what is computed from them, children first in tuple order (deterministic):
    # no weights, and no constants (e.g. a target negated by a '*' node), which the walk without
    # leaves skips and the check below drops.
    live = {id(v) for v in xs}
    order = list(xs)
    for v in topological_order(out, leaves=False):
        if any(id(c) in live for c in v._prev):
            live.add(id(v))
            order.append(v)
    if not describe:
        return order, [], out
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


def through_network(
    model: MLP,
    xs: list[Value],
    target: Any,
    loss: str,
) -> tuple[Value, dict[int, str]]:
    """One point's loss (`loss`, declared in micrograd.losses) through `model`, from the input
    Values `xs`, and the names the Train view gives each neuron's nodes, by id: a1.2 (layer 1,
    neuron 2: its w·x+b), h1.2 (its activation), and the output, s (one output) or z1, z2, ...
    (one per class). The Train view's point graph and the explorer's graph of a point both."""
    names: dict[int, str] = {}
    h: list[Value] = xs
    last = len(model.layers) - 1
    for li, layer in enumerate(model.layers):
        h = layer.outputs(h)
        for j, v in enumerate(h):
            if li == last:
                names[id(v)] = "s" if len(h) == 1 else f"z{j + 1}"
                continue
            names[id(v)] = f"h{li + 1}.{j + 1}"
            if len(v._prev) == 1:  # an activation's one child: w·x+b
                names[id(v._prev[0])] = f"a{li + 1}.{j + 1}"
    return LOSSES[loss].sample(h, target), names


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


def zero_loss_note(order: list[Value], loss: str) -> str:
    """Why every grad in the point's graph is 0, when it is: its loss is exactly 0 there (the
    hinge past its margin), so the backward pass has nothing to send back."""
    if not order or order[-1].data != 0.0:
        return ""
    why = " (it is past the margin: max(0, 1 − y·s) = 0)" if loss == "hinge" else ""
    return (
        f"The loss of this point is 0{why}, so nothing flows back: every grad in its graph "
        f"is 0, and this point does not move the weights at this step."
    )
