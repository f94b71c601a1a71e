"""Pictures of training, as PNG files: a 2-D decision boundary, loss/accuracy curves, digits.

    plots.decision_boundary(model, X, y, "boundary.png")
    plots.training_curves(history, "training.png")
    plots.digit_predictions(model, X_test, y_test, "predictions.png")

matplotlib draws on a private `Figure` with the Agg renderer (pyplot's global state is left
alone: safe in notebooks and without a display); the PNG is written with `atomic_write`. Model
outputs come from `forward_numpy` (a 200x200 grid would be 40,000 scalar graphs otherwise).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any

from ..core.atomic import atomic_write
from ..losses import predict
from ..nn import MLP
from .jit_step import forward_numpy

CLIP = 1e100  # the largest loss drawn as it is


def _matplotlib() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "micrograd-plus[plot]"') from None
    return Figure, FigureCanvasAgg


def _save(fig: Any, canvas_cls: Any, path: str | os.PathLike) -> None:
    canvas_cls(fig)
    buffer = io.BytesIO()  # rendered in memory, then written whole: never a half PNG
    fig.savefig(buffer, format="png", dpi=100)
    atomic_write(path, buffer.getvalue())


def decision_boundary(
    model: MLP,
    X: Sequence[Sequence[float]],
    y: Sequence[float],
    path: str | os.PathLike,
    title: str = "decision boundary",
    resolution: int = 200,
) -> None:
    """Colour the plane by the model's predicted class (`losses.predict`: one output, its sign;
    several, the largest) and scatter the data on top."""
    import numpy as np

    Figure, Canvas = _matplotlib()
    Xa = np.asarray(X, dtype=np.float64)
    if Xa.ndim != 2 or Xa.shape[1] != 2:
        raise ValueError(f"decision_boundary: needs 2-D points, got shape {Xa.shape}")
    ya = np.asarray(y, dtype=np.float64)
    pad = 0.5
    xs = np.linspace(Xa[:, 0].min() - pad, Xa[:, 0].max() + pad, resolution)
    ys = np.linspace(Xa[:, 1].min() - pad, Xa[:, 1].max() + pad, resolution)
    xx, yy = np.meshgrid(xs, ys)
    out = forward_numpy(model, np.c_[xx.ravel(), yy.ravel()])
    zz = np.array([predict(row) for row in out.tolist()], dtype=float).reshape(xx.shape)

    fig = Figure(figsize=(5, 5))
    ax = fig.add_subplot()
    ax.contourf(xx, yy, zz, cmap="Spectral", alpha=0.8)
    ax.scatter(Xa[:, 0], Xa[:, 1], c=ya, s=30, cmap="Spectral", edgecolors="k", linewidths=0.5)
    ax.set_xlim(xx.min(), xx.max())
    ax.set_ylim(yy.min(), yy.max())
    ax.set_title(title)
    _save(fig, Canvas, path)


def training_curves(history: Any, path: str | os.PathLike, title: str = "training") -> None:
    """Loss (log scale when positive) and accuracy per step, side by side."""
    Figure, Canvas = _matplotlib()
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    steps = range(len(history.loss))
    # matplotlib cannot place ticks near the float limit: a run that blew up is drawn clipped.
    shown = [max(min(v, CLIP), -CLIP) for v in history.loss]
    ax1.plot(steps, shown, color="tab:blue")
    if shown and min(shown) > 0 and max(shown) / min(shown) < 1e200:
        ax1.set_yscale("log")
    ax1.set_xlabel("step")
    ax1.set_ylabel("loss" if shown == list(history.loss) else f"loss (clipped at ±{CLIP:g})")
    ax1.set_title(f"{title}: loss")
    ax1.grid(True, alpha=0.3)
    ax2.plot(steps, [100 * a for a in history.accuracy], color="tab:green", label="training batch")
    test = getattr(history, "test_accuracy", None)
    if test:
        ax2.plot(*zip(*[(k, 100 * a) for k, a in test]), "o-", color="tab:red", label="test")
        ax2.legend()
    ax2.set_xlabel("step")
    ax2.set_ylabel("accuracy (%)")
    ax2.set_ylim(0, 101)
    ax2.set_title(f"{title}: accuracy")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    _save(fig, Canvas, path)


def pick_digits(guesses: Sequence[int], y: Sequence[int], n: int = 32) -> list[int]:
    """Indices of up to `n` samples to show: the wrong guesses first (up to half of `n`, in data
    order), then right ones, so a picture never hides the mistakes."""
    wrong = [i for i, (g, t) in enumerate(zip(guesses, y)) if g != t]
    right = [i for i, (g, t) in enumerate(zip(guesses, y)) if g == t]
    shown_wrong = wrong[: max(n // 2, n - len(right))]
    return shown_wrong + right[: n - len(shown_wrong)]


def digit_predictions(
    model: MLP,
    X: Sequence[Sequence[float]],
    y: Sequence[int],
    path: str | os.PathLike,
    n: int = 32,
    which: str = "test",
) -> list[int]:
    """Up to `n` 8x8 digits of (X, y) with the model's guess above each: its mistakes first, in
    red as ``guess≠truth``, then right guesses. Returns the indices shown."""
    import numpy as np

    Figure, Canvas = _matplotlib()
    Xa = np.asarray(X, dtype=np.float64)
    if Xa.ndim != 2 or Xa.shape[1] != 64:
        raise ValueError(f"digit_predictions: needs 8x8 images as rows of 64, got {Xa.shape}")
    guesses = [predict(row) for row in forward_numpy(model, Xa).tolist()]
    shown = pick_digits(guesses, y, n)
    n_wrong = sum(g != t for g, t in zip(guesses, y))
    cols = 8
    rows = max(1, -(-len(shown) // cols))
    fig = Figure(figsize=(cols * 1.1, rows * 1.3 + 0.4))
    for k, i in enumerate(shown):
        ax = fig.add_subplot(rows, cols, k + 1)
        ax.imshow(Xa[i].reshape(8, 8), cmap="gray_r", interpolation="nearest")
        wrong = guesses[i] != y[i]
        ax.set_title(
            f"{guesses[i]}≠{y[i]}" if wrong else str(guesses[i]),
            color="red" if wrong else "black",
            fontsize=10,
        )
        ax.set_axis_off()
    fig.suptitle(
        f"{which} digits: {len(y) - n_wrong} of {len(y)} right; the model's guess above each "
        f"(red: wrong, guess≠true label)"
    )
    _save(fig, Canvas, path)
    return shown
