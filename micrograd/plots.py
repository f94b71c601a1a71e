"""Pictures of training: a 2-D classifier's decision boundary, and loss/accuracy curves.

    plots.decision_boundary(model, X, y, "boundary.png")
    plots.training_curves(history, "training.png")

Both write PNG files with matplotlib's Agg renderer through a private `Figure` (pyplot's global
state and backend are left alone, so this is safe inside notebooks and on machines without a
display). The boundary is drawn from a numpy copy of the network's forward pass: a 200x200 grid
would be 40,000 scalar graphs otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .nn import ACTIVATIONS, MLP


def _matplotlib() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install micrograd-plus[plot]") from None
    return Figure, FigureCanvasAgg


def _save(fig: Any, canvas_cls: Any, path: str | os.PathLike) -> None:
    canvas_cls(fig)
    fig.savefig(os.fspath(path), format="png", dpi=100)


def forward_numpy(model: MLP, points: Any) -> Any:
    """The MLP's outputs for an (n, nin) array of points, as an (n, nout) float64 array."""
    import numpy as np

    from .io import architecture

    arch = architecture(model)
    h = np.asarray(points, dtype=np.float64)
    for i, layer in enumerate(model.layers):
        W = np.array([[w.data for w in n.w] for n in layer.neurons])
        b = np.array([n.b.data for n in layer.neurons])
        last = i == len(model.layers) - 1
        act = ACTIVATIONS[arch["out_activation"] if last else arch["activation"]]
        h = act.numpy(np, h @ W.T + b)
    return h


def decision_boundary(
    model: MLP,
    X: Sequence[Sequence[float]],
    y: Sequence[float],
    path: str | os.PathLike,
    title: str = "decision boundary",
    resolution: int = 200,
) -> None:
    """Colour the plane by the model's predicted class and scatter the data on top.

    One output: the class is the sign of the score (labels ±1); several: the argmax.
    """
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
    zz = (out[:, 0] > 0) if out.shape[1] == 1 else out.argmax(axis=1)
    zz = zz.reshape(xx.shape).astype(float)

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
    ax1.plot(steps, history.loss, color="tab:blue")
    if history.loss and min(history.loss) > 0:
        ax1.set_yscale("log")
    ax1.set_xlabel("step")
    ax1.set_ylabel("loss")
    ax1.set_title(f"{title}: loss")
    ax1.grid(True, alpha=0.3)
    ax2.plot(steps, [100 * a for a in history.accuracy], color="tab:green", label="batch")
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


def digit_predictions(
    model: MLP,
    X: Sequence[Sequence[float]],
    y: Sequence[int],
    path: str | os.PathLike,
    n: int = 32,
) -> None:
    """The first `n` 8x8 digits of (X, y) with the model's guess above each (red when wrong)."""
    import numpy as np

    Figure, Canvas = _matplotlib()
    Xa = np.asarray(X[:n], dtype=np.float64)
    if Xa.ndim != 2 or Xa.shape[1] != 64:
        raise ValueError(f"digit_predictions: needs 8x8 images as rows of 64, got {Xa.shape}")
    guesses = forward_numpy(model, Xa).argmax(axis=1)
    cols = 8
    rows = -(-len(Xa) // cols)
    fig = Figure(figsize=(cols * 1.1, rows * 1.3))
    for i, (img, guess, truth) in enumerate(zip(Xa, guesses, y)):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.imshow(img.reshape(8, 8), cmap="gray_r", interpolation="nearest")
        ax.set_title(str(guess), color="black" if guess == truth else "red", fontsize=10)
        ax.set_axis_off()
    fig.suptitle("test digits: the model's guesses (red: wrong)")
    _save(fig, Canvas, path)
