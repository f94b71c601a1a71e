"""The explorer's graph layout, checked geometrically: boxes never overlap, every box lies inside
the drawing, edges run left to right; for random graphs, the lecture's examples, with and without
Graphviz."""

from __future__ import annotations

import random
import shutil

import pytest

from micrograd.playground.explore.explorer import EXAMPLES, Explorer
from micrograd.viz import layout as lay
from micrograd.viz.layout import Box, layered, layout

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")


def random_graph(rng: random.Random, n: int) -> tuple[list[Box], list[tuple[str, str]]]:
    """A computation-graph-like DAG: value boxes of random widths, op ellipses with 1-3 inputs
    drawn from any earlier value (so long edges and shared inputs are common)."""
    boxes = [Box(f"v{i}", rng.uniform(60, 180), rng.choice([28.0, 54.0])) for i in range(3)]
    edges: list[tuple[str, str]] = []
    values = [b.id for b in boxes]
    for i in range(n):
        op = Box(f"op{i}", rng.uniform(24, 60), 24.0, "ellipse")
        out = Box(f"w{i}", rng.uniform(60, 180), 54.0)
        boxes += [op, out]
        for src in rng.sample(values, k=min(len(values), rng.randint(1, 3))):
            edges.append((src, op.id))
        edges.append((op.id, out.id))
        values.append(out.id)
    return boxes, edges


def overlaps(boxes: list[Box], centers: dict[str, tuple[float, float]]) -> list[tuple]:
    """Pairs of boxes whose rectangles overlap: [] when none."""
    rects = []
    for b in boxes:
        cx, cy = centers[b.id]
        rects.append(
            (b.id, cx - b.width / 2, cy - b.height / 2, cx + b.width / 2, cy + b.height / 2)
        )
    rects.sort(key=lambda r: r[1])
    found = []
    for i, (a, _ax0, ay0, ax1, ay1) in enumerate(rects):
        for b, bx0, by0, _bx1, by1 in rects[i + 1 :]:
            if bx0 >= ax1 - 1e-6:
                break
            if ay0 < by1 - 1e-6 and by0 < ay1 - 1e-6:
                found.append((a, b))
    return found


def check_geometry(boxes: list[Box], edges: list[tuple[str, str]], result: lay.Layout) -> None:
    assert overlaps(boxes, result.centers) == []
    for b in boxes:
        x, y = result.centers[b.id]
        assert b.width / 2 - 1e-6 <= x <= result.width - b.width / 2 + 1e-6, b
        assert b.height / 2 - 1e-6 <= y <= result.height - b.height / 2 + 1e-6, b
    assert len(result.paths) == len(edges)
    for (s, t), d in zip(edges, result.paths):
        assert d.startswith("M")
        assert result.centers[s][0] < result.centers[t][0], (s, t)  # left to right


@pytest.mark.parametrize("seed", range(12))
def test_layered_boxes_never_overlap_on_random_graphs(seed: int) -> None:
    rng = random.Random(seed)
    boxes, edges = random_graph(rng, rng.randint(1, 60))
    check_geometry(boxes, edges, layered(boxes, edges))


@needs_dot
@pytest.mark.parametrize("seed", range(3))
def test_dot_boxes_never_overlap_on_random_graphs(seed: int) -> None:
    rng = random.Random(100 + seed)
    boxes, edges = random_graph(rng, rng.randint(5, 40))
    check_geometry(boxes, edges, layout(boxes, edges, "dot"))


@pytest.mark.parametrize("engine", ["layered", "dot"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["title"][:20])
def test_the_examples_are_laid_out_without_overlap(engine: str, example: dict) -> None:
    if engine == "dot" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is missing")
    drawing = Explorer(example["program"], engine).drawing
    assert drawing["engine"] == engine
    boxes = [Box(n["id"], n["w"], n["h"]) for n in drawing["nodes"]]
    centers = {n["id"]: (n["x"], n["y"]) for n in drawing["nodes"]}
    assert overlaps(boxes, centers) == []


def test_crossing_reduction_untangles_a_twisted_pair() -> None:
    # Inputs listed a, b but used crosswise: a -> second op, b -> first op. Left in the given
    # order the two edges would cross; the barycentre sweeps must remove that crossing.
    boxes = [Box(i, 80, 30) for i in ("a", "b", "p", "q")]
    edges = [("a", "q"), ("b", "p")]
    result = layered(boxes, edges)
    ya, yb = result.centers["a"][1], result.centers["b"][1]
    yp, yq = result.centers["p"][1], result.centers["q"][1]
    assert (ya < yb) == (yq < yp)


def test_inputs_sit_just_before_their_first_use() -> None:
    # x feeds only the last op: it belongs in the column before that op, not the first column.
    boxes = [Box(i, 50, 20) for i in ("a", "op1", "b", "x", "op2", "c")]
    edges = [("a", "op1"), ("op1", "b"), ("b", "op2"), ("x", "op2"), ("op2", "c")]
    result = layered(boxes, edges)
    assert result.centers["x"][0] == result.centers["b"][0]


def test_auto_without_graphviz_uses_the_builtin_layout(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere
    boxes = [Box("a", 50, 20), Box("b", 50, 20)]
    result = layout(boxes, [("a", "b")])
    assert result.engine == "layered" and "Graphviz is not installed" in result.notes[0]
    with pytest.raises(RuntimeError, match="not installed"):
        layout(boxes, [("a", "b")], "dot")
    drawing = Explorer(EXAMPLES[0]["program"], "auto").drawing
    assert drawing["engine"] == "layered"


def test_bad_layouts_are_refused() -> None:
    boxes = [Box("a", 50, 20), Box("b", 50, 20)]
    with pytest.raises(ValueError, match="engine"):
        layout(boxes, [], "neato")
    with pytest.raises(ValueError, match="not given"):
        layout(boxes, [("a", "zzz")])
    with pytest.raises(ValueError, match="cycle"):
        layout(boxes, [("a", "b"), ("b", "a")], "layered")


def test_a_large_graph_is_laid_out() -> None:
    # The explorer's limit is 500 Values: a chain reusing one input everywhere gives long edges
    # through many columns, the layered layout's worst case.
    n = 240
    boxes, edges, prev = [Box("x", 100, 54)], [], "x"
    for i in range(n):
        boxes += [Box(f"o{i}", 30, 24, "ellipse"), Box(f"v{i}", 100, 54)]
        edges += [(prev, f"o{i}"), ("x", f"o{i}"), (f"o{i}", f"v{i}")]
        prev = f"v{i}"
    check_geometry(boxes, edges, layered(boxes, edges))
