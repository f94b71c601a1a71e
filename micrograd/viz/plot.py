"""Small SVG pictures that stand in for matplotlib where it is missing (the course in the browser):
`line` (a curve or a few, as ``plt.plot`` draws them) and `points` (two classes of 2-D points,
optionally over a decision region: the sign of a score on a grid). Each returns a `Picture`,
which Jupyter shows inline, zoomed to fit its output. Standard library only.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

W, H, M = 480.0, 320.0, 44.0  # the picture, and the margin its axes' numbers sit in
COLOURS = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700")
CLASSES = {-1: ("#cf222e", "#fbd7da"), 1: ("#0969da", "#d4e5fb")}  # point, region


class Picture:
    """An SVG picture: `svg` is its text; Jupyter shows it inline, zoomed to fit."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        fit = 'style="max-width:100%;height:auto" '
        return "<div>" + self.svg.replace("<svg ", "<svg " + fit, 1) + "</div>"


def _numbers(xs: Sequence[float], what: str) -> list[float]:
    out = [float(x) for x in xs]
    if not out or not all(math.isfinite(x) for x in out):
        raise ValueError(f"{what}: needs finite numbers, got {list(xs)[:5]!r}")
    return out


def _scale(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _n(v: float) -> str:
    return f"{v:.4g}"  # an axis's end: short, so that it fits beside the frame


def _frame(x0: float, x1: float, y0: float, y1: float, title: str, xlabel: str, ylabel: str) -> str:
    t = lambda s: html.escape(str(s))  # noqa: E731
    return (
        f'<rect x="{M}" y="{M / 2}" width="{W - 1.5 * M}" height="{H - 1.5 * M}" fill="none" '
        f'stroke="#59636e"/>'
        f'<text x="{W / 2}" y="14" text-anchor="middle">{t(title)}</text>'
        f'<text x="{M}" y="{H - M / 2 + 14}" text-anchor="middle">{_n(x0)}</text>'
        f'<text x="{W - M / 2}" y="{H - M / 2 + 14}" text-anchor="middle">'
        f"{_n(x1)}</text>"
        f'<text x="{M - 4}" y="{H - M + 4}" text-anchor="end">{_n(y0)}</text>'
        f'<text x="{M - 4}" y="{M / 2 + 4}" text-anchor="end">{_n(y1)}</text>'
        f'<text x="{W / 2}" y="{H - 4}" text-anchor="middle">{t(xlabel)}</text>'
        f'<text x="10" y="{H / 2}" text-anchor="middle" transform="rotate(-90 10 {H / 2})">'
        f"{t(ylabel)}</text>"
    )


def _svg(body: str) -> Picture:
    return Picture(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{H:.0f}" '
        f'viewBox="0 0 {W:.0f} {H:.0f}" font-family="sans-serif" font-size="11">{body}</svg>'
    )


def line(
    *curves: Sequence[float],
    xs: Sequence[float] | None = None,
    labels: Sequence[str] = (),
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
) -> Picture:
    """Each curve as a line over `xs` (by default 0, 1, 2, ...: a loss per step), as
    ``plt.plot`` draws it; `labels` name the curves in a legend."""
    ys = [_numbers(c, "line") for c in curves]
    if not ys:
        raise ValueError("line: give at least one curve")
    x = _numbers(xs, "line: xs") if xs is not None else [float(i) for i in range(len(ys[0]))]
    if any(len(c) != len(x) for c in ys):
        raise ValueError(f"line: each curve needs {len(x)} numbers, one per x")
    lo, hi = min(min(c) for c in ys), max(max(c) for c in ys)
    sx, sy = _scale(x[0], x[-1], M, W - M / 2), _scale(lo, hi, H - M, M / 2)
    body = _frame(x[0], x[-1], lo, hi, title, xlabel, ylabel)
    for i, c in enumerate(ys):
        pts = " ".join(f"{sx(a):.1f},{sy(b):.1f}" for a, b in zip(x, c))
        colour = COLOURS[i % len(COLOURS)]
        body += f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
        if i < len(labels):
            body += (
                f'<text x="{W - M}" y="{M / 2 + 14 * (i + 1)}" text-anchor="end" '
                f'fill="{colour}">{html.escape(labels[i])}</text>'
            )
    return _svg(body)


def points(
    X: Sequence[Sequence[float]],
    y: Sequence[int],
    score: Callable[[float, float], float] | None = None,
    step: float = 0.25,
    title: str = "",
) -> Picture:
    """2-D points `X` coloured by class `y` (-1 or 1), as ``plt.scatter``; with `score`, first
    the region each class gets: the sign of ``score(x, y)`` on a grid `step` apart (the
    decision boundary, as ``plt.contourf`` draws it), a margin of 1 around the points."""
    xs, ys = _numbers([p[0] for p in X], "points"), _numbers([p[1] for p in X], "points")
    if len(y) != len(xs) or any(c not in CLASSES for c in y):
        raise ValueError(f"points: y needs one class, -1 or 1, per point; got {list(y)[:5]!r}")
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    sx, sy = _scale(x0, x1, M, W - M / 2), _scale(y0, y1, H - M, M / 2)
    body = ""
    if score is not None:
        nx, ny = math.ceil((x1 - x0) / step), math.ceil((y1 - y0) / step)
        cw, ch = (W - 1.5 * M) / nx, (H - 1.5 * M) / ny
        for i in range(nx):
            for j in range(ny):
                s = score(x0 + (i + 0.5) * step, y0 + (j + 0.5) * step)
                fill = CLASSES[1 if s > 0 else -1][1]
                body += (
                    f'<rect x="{M + i * cw:.1f}" y="{H - M - (j + 1) * ch:.1f}" '
                    f'width="{cw + 0.3:.1f}" height="{ch + 0.3:.1f}" fill="{fill}"/>'
                )
    body += _frame(x0, x1, y0, y1, title, "", "")
    for a, b, c in zip(xs, ys, y):
        body += f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="3.5" fill="{CLASSES[c][0]}"/>'
    return _svg(body)
