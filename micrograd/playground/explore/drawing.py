"""The explorer's picture of a graph: each Value a record (label, data, grad) and each op an
ellipse, placed by the layout (viz/layout.py), with records wide enough for the numbers before and
after the backward pass, so that nothing moves while the learner steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...engine import Value, grad, topological_order
from ...viz import caption as op_caption
from ...viz.formatting import format_number as fmt
from ...viz.layout import Box, layout

# Record geometry, in pixels of the page's 12px monospace font (the page draws the same sizes):
# a record is three rows, label / data / grad, so the graph stays narrow enough for a screen.
CHAR_W = 7.3
RECORD_PAD = 14.0
ROW_H = 16.0
RECORD_H = 3 * ROW_H + 6
OP_H = 24.0


ROLE_CHARS = len(" param")  # a leaf's label row also says what it is, "param" or "data"


def record_width(nodes: Sequence[Value], names: dict[Value, str], grads: dict[Value, float]):
    chars = max(
        len("grad -0.0000"),
        max(len(names[v]) + (0 if v._prev else ROLE_CHARS) for v in nodes),
        max(len("data " + fmt(v.data)) for v in nodes),
        max(len("grad " + fmt(grads[v])) for v in nodes),
    )
    return round(chars * CHAR_W + RECORD_PAD, 1)


def drawing(
    root: Value,
    nodes: Sequence[Value],
    ids: dict[Value, str],
    names: dict[Value, str],
    engine: str,
    editable: Callable[[Value], bool],
    final: dict[Value, float] | None = None,
    switchable: Callable[[Value], bool] = lambda v: False,
) -> dict[str, Any]:
    # Field widths fit the numbers before and after the backward pass, so nothing moves later.
    record_w = record_width(nodes, names, final_grads(root) if final is None else final)
    boxes: list[Box] = []
    edges: list[tuple[str, str]] = []
    info: list[dict[str, Any]] = []
    for v in nodes:
        vid = ids[v]
        boxes.append(Box(vid, record_w, RECORD_H))
        info.append(
            {
                "id": vid,
                "kind": "value",
                "name": names[v],
                "named": bool(v.label),
                "leaf": not v._prev and editable(v),  # the page lets you click it to edit
                "switchable": switchable(v),  # ... and make it a parameter, or data
            }
        )
        if v._prev:
            caption = op_caption(v)
            w = max(30.0, len(caption) * CHAR_W + 14)
            boxes.append(Box(vid + "op", w, OP_H, "ellipse"))
            edges.append((vid + "op", vid))
            info.append({"id": vid + "op", "kind": "op", "caption": caption, "of": vid})
    for v in nodes:
        for child in v._prev:
            edges.append((ids[child], ids[v] + "op"))
    placed = layout(boxes, edges, engine)
    for item, box in zip(info, boxes):
        x, y = placed.centers[box.id]
        item.update(x=round(x, 1), y=round(y, 1), w=round(box.width, 1), h=box.height)
    return {
        "width": round(placed.width, 1),
        "height": round(placed.height, 1),
        "row": ROW_H,
        "nodes": info,
        "edges": [{"from": s, "to": t, "d": d} for (s, t), d in zip(edges, placed.paths)],
        "engine": placed.engine,
        "notes": placed.notes,
    }


def final_grads(root: Value) -> dict[Value, float]:
    """Every node's grad after a full backward pass, computed aside (no `.grad` is touched)."""
    topo = topological_order(root)
    return dict(zip(topo, grad(root, topo)))
