"""makemore part 3's four pictures of a network's health, from `train.health`'s numbers:

    history = fit(model, X, y, ..., health=True)
    health_plots(history)                       # a matplotlib Figure (shows inline in Jupyter)
    health_plots(history, "health.png")         # or written to a PNG (atomically)

1. the activations' histogram of each hidden layer at the last step (saturated/dead share in
   the legend), 2. their gradients' histogram, 3. each weight matrix's gradient histogram
   (grad:data in the legend), 4. each matrix's update:data (log10) over the steps, with
   makemore's guide line at -3 (a guide for his nets; docs/health.md says what ours measure).
matplotlib is imported when a picture is drawn, never at import.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from typing import Any


def _steps(history: Any) -> list:
    steps = list(getattr(history, "health", history))
    if not steps:
        raise ValueError(
            "health_plots: no health to draw; train with fit(..., health=True) "
            "(or pass a list of train.health.StepHealth)"
        )
    return steps


def _curve(ax: Any, hist: Any, label: str) -> None:
    centres = [(a + b) / 2 for a, b in zip(hist.edges, hist.edges[1:])]
    width = hist.edges[1] - hist.edges[0]
    total = sum(hist.counts) or 1
    ax.plot(centres, [c / total / width for c in hist.counts], label=label)  # a density


def health_plots(history: Any, path: str | os.PathLike | None = None) -> Any:
    """Draw the four plots of `history` (a `train.History` with ``health``, or a list of
    `StepHealth`); write them to `path` as a PNG if given. Returns the Figure."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            'health_plots needs matplotlib: pip install "micrograd-plus[plot]"'
        ) from None
    steps = _steps(history)
    last = steps[-1]
    fig = Figure(figsize=(12, 8), layout="constrained")
    ax1, ax2, ax3, ax4 = fig.subplots(2, 2).flat
    hidden = [lay for lay in last.layers if lay.recorded and lay.activation != "linear"]
    for lay in hidden:
        share = (
            f", saturated {lay.saturated:.0%}"
            if lay.saturated is not None
            else f", dead {lay.dead:.0%}"
            if lay.dead is not None
            else ""
        )
        _curve(ax1, lay.act_hist, f"{lay.name} ({lay.activation}): std {lay.act_std:.2f}{share}")
        _curve(ax2, lay.grad_hist, f"{lay.name}: std {lay.grad_std:.2e}")
    if not hidden:
        for ax in (ax1, ax2):
            ax.text(0.5, 0.5, "no activations recorded\n(a jit step)", ha="center", va="center")
    ax1.set_title(f"activation distribution (step {last.step + 1})")
    ax2.set_title("activation gradient distribution")
    for w in last.weights:
        _curve(ax3, w.grad_hist, f"{w.name} {w.shape}: grad:data {w.grad_data:.2e}")
    ax3.set_title("weights gradient distribution")
    xs = [s.step + 1 for s in steps]
    for i, w in enumerate(last.weights):
        ys = [s.weights[i].update_data for s in steps]
        ax4.plot(xs, [y if math.isfinite(y) else math.nan for y in ys], label=w.name)
    ax4.axhline(-3, color="k", linestyle="--", linewidth=1, label="makemore's guide, 10^-3")
    ax4.set_title("update:data (log10)")
    ax4.set_xlabel("step")
    for ax in (ax1, ax2, ax3, ax4):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    if path is not None:
        from ..core.atomic import atomic_write

        FigureCanvasAgg(fig)
        buffer = io.BytesIO()  # rendered in memory, then written whole: never a half PNG
        fig.savefig(buffer, format="png", dpi=80)
        atomic_write(path, buffer.getvalue())
    return fig


__all__: Sequence[str] = ["health_plots"]
