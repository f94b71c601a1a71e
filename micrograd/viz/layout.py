"""Where each box of a computation graph goes, left to right: Graphviz's `dot` when it is
installed, else a layered layout in pure Python, so a learner without Graphviz still gets a
readable picture. Below both of its users: the playground's explorer and `viz.draw_dot`'s
picture without Graphviz.

Both take boxes of given sizes (`Box`: id, width, height, in pixels) and edges between them, and
return a `Layout`: the centre of every box and an SVG path per edge. The page draws the boxes
itself, so the picture is laid out once and only its numbers change as the passes run.

The built-in layout is the classic layered (Sugiyama) recipe, kept small:

1. layers: each box one layer right of its furthest input; inputs (leaves) are then pulled right
   to sit just before the first box that uses them;
2. an edge spanning several layers gets a point in each layer it crosses;
3. crossings: a few sweeps ordering each layer by the mean position of its neighbours (the
   barycentre heuristic), keeping the order with the fewest crossings;
4. heights: each box as close as possible to the mean height of its neighbours, with the order
   kept and boxes at least `GAP_Y` apart (an isotonic regression, solved exactly by pooling
   adjacent violators), a few rounds; so boxes in one layer never overlap, and layers never
   overlap because each gets its own column as wide as its widest box.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

GAP_X = 34.0  # between the columns of two layers
GAP_Y = 12.0  # between two boxes in one column
DUMMY_HEIGHT = 6.0  # the room an edge passing through a column takes
MARGIN = 12.0
DOT_TIMEOUT = 20.0  # seconds; past this (a huge graph) the built-in layout is used
DUMMY_BUDGET = 4000  # points on long edges; past this the longest edges are drawn directly
DOT_MAX_BOXES = 300  # "auto" uses dot up to here: past it dot takes seconds, the built-in less


@dataclass(frozen=True)
class Box:
    id: str
    width: float
    height: float
    shape: str = "box"  # or "ellipse" (op nodes): only for Graphviz, which routes edges to it


@dataclass
class Layout:
    width: float
    height: float
    centers: dict[str, tuple[float, float]]
    paths: list[str]  # SVG path data per edge, in the order of the edges given
    engine: str  # "dot" or "layered"
    notes: list[str] = field(default_factory=list)


def layout(boxes: Sequence[Box], edges: Sequence[tuple[str, str]], engine: str = "auto") -> Layout:
    """Lay out `boxes` with `edges` (source id, target id), left to right.

    `engine`: "dot" (Graphviz; a RuntimeError if it is missing or fails), "layered" (pure
    Python), or "auto" (dot when installed, else layered; a note says which and why).
    """
    if engine not in ("auto", "dot", "layered"):
        raise ValueError(f"layout: engine must be 'auto', 'dot' or 'layered', got {engine!r}")
    ids = {b.id for b in boxes}
    for s, t in edges:
        if s not in ids or t not in ids:
            raise ValueError(f"layout: the edge {s!r} -> {t!r} names a box that is not given")
    if engine == "layered":
        return layered(boxes, edges)
    if engine == "dot":
        return dot_layout(boxes, edges)
    if sys.platform == "emscripten":  # the static site, in a browser: no programs to run
        return layered(boxes, edges)
    if shutil.which("dot") is None:
        result = layered(boxes, edges)
        result.notes.append("Graphviz is not installed: built-in layout")
        return result
    if len(boxes) > DOT_MAX_BOXES:
        result = layered(boxes, edges)
        result.notes.append(f"more than {DOT_MAX_BOXES} boxes: built-in layout (faster)")
        return result
    try:
        return dot_layout(boxes, edges)
    except RuntimeError as exc:
        result = layered(boxes, edges)
        result.notes.append(f"{exc}: built-in layout")
        return result


# ------------------------------------------------------------------------------------ Graphviz


def _dot_source(boxes: Sequence[Box], edges: Sequence[tuple[str, str]]) -> str:
    lines = [
        "digraph G {",
        f"  graph [rankdir=LR, nodesep={GAP_Y / 72:.3f}, ranksep={GAP_X / 72:.3f}];",
        '  node [fixedsize=true, label=""];',
    ]
    for b in boxes:
        lines.append(
            f'  "{b.id}" [shape={"ellipse" if b.shape == "ellipse" else "box"}, '
            f"width={b.width / 72:.4f}, height={b.height / 72:.4f}];"
        )
    for s, t in edges:
        lines.append(f'  "{s}" -> "{t}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _points(text: str) -> list[tuple[float, float]]:
    out = []
    for pair in text.split():
        x, y = pair.split(",")
        out.append((float(x), float(y)))
    return out


def dot_layout(boxes: Sequence[Box], edges: Sequence[tuple[str, str]]) -> Layout:
    """Graphviz's layout (`dot -Tjson0`), in pixels with y pointing down as SVG has it."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz's dot is not installed")
    try:
        proc = subprocess.run(
            [exe, "-Tjson0"],
            input=_dot_source(boxes, edges),
            capture_output=True,
            text=True,
            timeout=DOT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"Graphviz took longer than {DOT_TIMEOUT:g} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"Graphviz failed: {proc.stderr.strip()[:200]}")
    graph = json.loads(proc.stdout)
    x0, y0, x1, y1 = (float(v) for v in graph["bb"].split(","))
    height = y1 - y0

    def flip(p: tuple[float, float]) -> tuple[float, float]:
        return (p[0] - x0 + MARGIN, height - (p[1] - y0) + MARGIN)

    centers: dict[str, tuple[float, float]] = {}
    gvid: dict[int, str] = {}
    for obj in graph.get("objects", []):
        gvid[obj["_gvid"]] = obj["name"]
        centers[obj["name"]] = flip(_points(obj["pos"])[0])
    by_pair: dict[tuple[str, str], list[str]] = {}
    for e in graph.get("edges", []):
        spec = e["pos"].split()
        end = None
        if spec and spec[0].startswith("e,"):
            end = flip(_points(spec.pop(0)[2:])[0])
        if spec and spec[0].startswith("s,"):
            spec.pop(0)
        pts = [flip(p) for p in _points(" ".join(spec))]
        d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
        for i in range(1, len(pts) - 2, 3):
            (ax, ay), (bx, by), (cx, cy) = pts[i], pts[i + 1], pts[i + 2]
            d += f" C{ax:.1f},{ay:.1f} {bx:.1f},{by:.1f} {cx:.1f},{cy:.1f}"
        if end is not None:
            d += f" L{end[0]:.1f},{end[1]:.1f}"
        by_pair.setdefault((gvid[e["tail"]], gvid[e["head"]]), []).append(d)
    paths = [by_pair[(s, t)].pop(0) for s, t in edges]
    return Layout(x1 - x0 + 2 * MARGIN, height + 2 * MARGIN, centers, paths, "dot")


# ------------------------------------------------------------------------------- built-in layout


def _layers(ids: list[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    preds: dict[str, list[str]] = {i: [] for i in ids}
    succs: dict[str, list[str]] = {i: [] for i in ids}
    for s, t in edges:
        preds[t].append(s)
        succs[s].append(t)
    # Kahn's algorithm: a topological order without recursion (and a clear error on a cycle).
    indegree = {i: len(preds[i]) for i in ids}
    order = [i for i in ids if indegree[i] == 0]
    k = 0
    while k < len(order):
        for t in succs[order[k]]:
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
        k += 1
    if len(order) != len(ids):
        raise ValueError("layout: the edges form a cycle; a computation graph has none")
    layer: dict[str, int] = {}
    for v in order:
        layer[v] = max((layer[p] + 1 for p in preds[v]), default=0)
    for v in ids:  # inputs sit just before their first use, not all in the first column
        if not preds[v] and succs[v]:
            layer[v] = min(layer[t] for t in succs[v]) - 1
    return layer


def _crossings(upper: list[str], lower: list[str], down: dict[str, list[str]]) -> int:
    pos = {v: i for i, v in enumerate(lower)}
    # (an edge drawn straight across many layers has no end in `lower`: it is not counted)
    ends = [pos[t] for v in upper for t in sorted((t for t in down[v] if t in pos), key=pos.get)]
    # Pairs out of order are crossings: count inversions with a Fenwick tree, O(E log E).
    tree = [0] * (len(lower) + 1)
    count = 0
    for seen, e in enumerate(ends):
        i, le = e + 1, 0  # how many earlier ends are <= e
        while i > 0:
            le += tree[i]
            i -= i & -i
        count += seen - le
        i = e + 1
        while i <= len(lower):
            tree[i] += 1
            i += i & -i
    return count


def _isotonic_place(want: list[float], sizes: list[float]) -> list[float]:
    """Positions as close as possible (least squares) to `want`, in order, with neighbours at
    least (size_k + size_k+1) / 2 + GAP_Y apart: pool adjacent violators on the shifted targets."""
    offsets = [0.0]
    for k in range(1, len(want)):
        offsets.append(offsets[-1] + (sizes[k - 1] + sizes[k]) / 2 + GAP_Y)
    targets = [w - o for w, o in zip(want, offsets)]
    blocks: list[list[float]] = []  # [mean, count]
    for t in targets:
        blocks.append([t, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    z: list[float] = []
    for mean, count in blocks:
        z.extend([mean] * int(count))
    return [zi + o for zi, o in zip(z, offsets)]


def layered(boxes: Sequence[Box], edges: Sequence[tuple[str, str]]) -> Layout:
    """The built-in layered layout (see the module docstring); deterministic."""
    size = {b.id: (b.width, b.height) for b in boxes}
    ids = [b.id for b in boxes]
    layer = _layers(ids, edges)

    # Long edges get a point per crossed layer, so they take room and can be untangled. An input
    # used all along a long chain would need thousands: within a budget, shortest edges first; the
    # longest beyond it are drawn straight across (the boxes still never overlap).
    down: dict[str, list[str]] = {i: [] for i in ids}
    up: dict[str, list[str]] = {i: [] for i in ids}
    chains: list[list[str]] = []
    budget = DUMMY_BUDGET
    routed = set()
    for n in sorted(range(len(edges)), key=lambda n: layer[edges[n][1]] - layer[edges[n][0]]):
        span = layer[edges[n][1]] - layer[edges[n][0]] - 1
        if span <= budget:
            routed.add(n)
            budget -= span
    for n, (s, t) in enumerate(edges):
        chain = [s]
        for k in range(layer[s] + 1, layer[t]) if n in routed else ():
            d = f"\0{n}:{k}"
            layer[d] = k
            size[d] = (0.0, DUMMY_HEIGHT)
            down[d], up[d] = [], []
            chain.append(d)
        chain.append(t)
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
        chains.append(chain)

    depth = max(layer.values()) + 1 if layer else 0
    columns: list[list[str]] = [[] for _ in range(depth)]
    for v in layer:  # boxes in the order given (the page gives breadth-first from the output)
        columns[layer[v]].append(v)

    def total_crossings(cols: list[list[str]]) -> int:
        return sum(_crossings(cols[i], cols[i + 1], down) for i in range(len(cols) - 1))

    def order_by(cols: list[list[str]], k: int, nbrs: dict[str, list[str]], ref: int) -> None:
        pos = {v: i for i, v in enumerate(cols[ref])}
        current = {v: i for i, v in enumerate(cols[k])}

        def key(v: str) -> tuple[float, int]:
            ns = [pos[u] for u in nbrs[v] if u in pos]
            return (sum(ns) / len(ns) if ns else current[v], current[v])

        cols[k].sort(key=key)

    best = [c[:] for c in columns]
    best_count = total_crossings(best)
    cols = [c[:] for c in columns]
    sweeps = 6 if len(layer) <= 20_000 else 1  # a huge graph gets one sweep, not a long wait
    for _ in range(sweeps):
        if best_count == 0:
            break
        for k in range(1, depth):
            order_by(cols, k, up, k - 1)
        for k in range(depth - 2, -1, -1):
            order_by(cols, k, down, k + 1)
        count = total_crossings(cols)
        if count < best_count:
            best, best_count = [c[:] for c in cols], count
    columns = best

    # Columns left to right, each as wide as its widest box.
    col_x: list[float] = []
    col_w: list[float] = []
    x = MARGIN
    for col in columns:
        w = max((size[v][0] for v in col), default=0.0)
        col_x.append(x + w / 2)
        col_w.append(w)
        x += w + GAP_X
    width = x - GAP_X + MARGIN

    y: dict[str, float] = {}
    for col in columns:  # start stacked
        placed = _isotonic_place([0.0] * len(col), [size[v][1] for v in col])
        y.update(zip(col, placed))
    for round_ in range(8):
        sweep = range(depth) if round_ % 2 == 0 else range(depth - 1, -1, -1)
        for k in sweep:
            col = columns[k]
            want = []
            for v in col:
                ns = up[v] + down[v]
                want.append(sum(y[u] for u in ns) / len(ns) if ns else y[v])
            y.update(zip(col, _isotonic_place(want, [size[v][1] for v in col])))

    top = min((y[v] - size[v][1] / 2 for v in y), default=0.0)
    bottom = max((y[v] + size[v][1] / 2 for v in y), default=0.0)
    shift = MARGIN - top
    centers = {v: (col_x[layer[v]], y[v] + shift) for v in ids}
    for v in y:
        if v not in centers:
            centers[v] = (col_x[layer[v]], y[v] + shift)

    paths = []
    for chain in chains:
        pts = []
        for i, v in enumerate(chain):
            cx, cy = centers[v]
            w = size[v][0]
            if i == 0:
                pts.append((cx + w / 2, cy))
            elif i == len(chain) - 1:
                pts.append((cx - w / 2, cy))
            else:  # an edge passing a column runs straight through the band kept for it
                half = col_w[layer[v]] / 2
                pts.extend([(cx - half, cy), (cx + half, cy)])
        d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            if ay == by:
                d += f" L{bx:.1f},{by:.1f}"
            else:
                mid = (ax + bx) / 2
                d += f" C{mid:.1f},{ay:.1f} {mid:.1f},{by:.1f} {bx:.1f},{by:.1f}"
        paths.append(d)

    real = {v: centers[v] for v in ids}
    height = bottom - top + 2 * MARGIN if ids else 2 * MARGIN
    return Layout(max(width, 2 * MARGIN), height, real, paths, "layered")
