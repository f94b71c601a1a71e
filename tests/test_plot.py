"""micrograd.viz.plot: the SVG pictures that stand in for matplotlib in the browser. Each mark is
checked against the numbers it draws: a line's vertices map the data linearly onto the frame,
each point is drawn in its class's colour where it lies, and each grid square of a decision
region has the colour of the sign of the score at its centre."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from micrograd.viz import plot

NS = "{http://www.w3.org/2000/svg}"
LEFT, RIGHT, TOP, BOTTOM = plot.M, plot.W - plot.M / 2, plot.M / 2, plot.H - plot.M


def test_a_line_maps_its_data_linearly_onto_the_frame() -> None:
    ys = [0.0, 1.0, 4.0, 9.0, 16.0]
    root = ET.fromstring(plot.line(ys, title="squares").svg)
    (poly,) = root.iter(NS + "polyline")
    pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
    for i, (x, y) in enumerate(pts):
        assert math.isclose(x, LEFT + i / 4 * (RIGHT - LEFT), abs_tol=0.05)
        assert math.isclose(y, BOTTOM - ys[i] / 16 * (BOTTOM - TOP), abs_tol=0.05)
    texts = [t.text for t in root.iter(NS + "text")]
    assert "squares" in texts and "16" in texts and "0" in texts


def test_several_curves_share_one_scale_and_a_legend() -> None:
    root = ET.fromstring(plot.line([1, 2], [3, 4], xs=[10, 20], labels=["a", "b"]).svg)
    polys = list(root.iter(NS + "polyline"))
    first = [float(p.split(",")[1]) for p in polys[0].get("points").split()]
    second = [float(p.split(",")[1]) for p in polys[1].get("points").split()]
    assert math.isclose(first[0], BOTTOM, abs_tol=0.05) and math.isclose(
        second[1], TOP, abs_tol=0.05
    )
    assert polys[0].get("stroke") != polys[1].get("stroke")
    assert {"a", "b", "10", "20"} <= {t.text for t in root.iter(NS + "text")}


def test_points_and_the_decision_region_are_where_the_numbers_say() -> None:
    X = [[0.0, 0.0], [1.0, 2.0], [2.0, -1.0]]
    y = [1, -1, 1]
    root = ET.fromstring(plot.points(X, y, score=lambda a, b: a - b - 0.1, step=0.5).svg)
    x0, x1, y0, y1 = -1.0, 3.0, -2.0, 3.0  # a margin of 1 around the points
    circles = list(root.iter(NS + "circle"))
    assert len(circles) == 3
    for c, (a, b), k in zip(circles, X, y):
        assert math.isclose(
            float(c.get("cx")), LEFT + (a - x0) / (x1 - x0) * (RIGHT - LEFT), abs_tol=0.05
        )
        assert math.isclose(
            float(c.get("cy")), BOTTOM - (b - y0) / (y1 - y0) * (BOTTOM - TOP), abs_tol=0.05
        )
        assert c.get("fill") == plot.CLASSES[k][0]
    squares = [r for r in root.iter(NS + "rect") if r.get("fill") != "none"]
    assert len(squares) == 8 * 10
    for r in squares:
        cx = float(r.get("x")) + float(r.get("width")) / 2
        cy = float(r.get("y")) + float(r.get("height")) / 2
        a = x0 + (cx - LEFT) / (RIGHT - LEFT) * (x1 - x0)
        b = y0 + (BOTTOM - cy) / (BOTTOM - TOP) * (y1 - y0)
        assert r.get("fill") == plot.CLASSES[1 if a - b - 0.1 > 0 else -1][1], (a, b)


def test_bad_input_names_the_picture_and_the_value() -> None:
    with pytest.raises(ValueError, match=r"line: needs finite numbers, got \[1.0, nan\]"):
        plot.line([1.0, math.nan])
    with pytest.raises(ValueError, match="line: each curve needs 2 numbers"):
        plot.line([1, 2], [1, 2, 3], xs=[0, 1])
    with pytest.raises(ValueError, match="points: y needs one class, -1 or 1"):
        plot.points([[0, 0]], [0])


def test_a_picture_fits_its_output() -> None:
    html = plot.line([1, 2])._repr_html_()
    assert 'style="max-width:100%;height:auto"' in html and html.startswith("<div><svg ")
