"""The Train view's data: the points of each data set and their labels, and what the network
is given of them.

`make_data` builds a run's points (a `micrograd.data` set, the three-class spiral, two Gaussian
clusters, or a regression problem: a real-valued target over the plane, a plane or a sum of
Gaussian bumps; then the learner's own points), `featurize` the network's inputs from them,
`split` the training and test points, `extent` the square the page plots.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from .. import data
from .train_settings import DATA_SEED, FEATURES, TARGET_RANGE, Settings


def spiral3(n_samples: int = 100, noise: float = 0.1, seed: int | None = DATA_SEED) -> tuple:
    """Three spiral arms (cs231n's spiral), labels 0, 1, 2; `noise` jitters the angle."""
    rng = random.Random(seed)
    X, y = [], []
    for k in range(3):
        n = n_samples // 3 + (1 if k < n_samples % 3 else 0)
        for i in range(n):
            r = (i + 1) / n
            t = 4.0 * k + 4.0 * r + rng.gauss(0.0, 2.0 * noise)
            X.append([r * math.sin(t), r * math.cos(t)])
            y.append(k)
    order = list(range(len(X)))
    rng.shuffle(order)
    return [X[i] for i in order], [y[i] for i in order]


def gauss(n_samples: int = 100, noise: float = 0.1, seed: int | None = DATA_SEED) -> tuple:
    """Two Gaussian clusters, labels -1/+1, around (-1, -1) and (1, 1); the standard deviation
    grows with `noise` (0.3 at 0, 1.5 at 1: they overlap), as TensorFlow Playground's."""
    rng = random.Random(seed)
    sd = 0.3 + 1.2 * noise
    X, y = [], []
    for i in range(n_samples):
        label = 1 if i % 2 else -1
        X.append([label + rng.gauss(0.0, sd), label + rng.gauss(0.0, sd)])
        y.append(label)
    order = list(range(n_samples))
    rng.shuffle(order)
    return [X[i] for i in order], [y[i] for i in order]


# A regression problem's target over the plane: the function, before noise. Its values lie
# within TARGET_RANGE on the square [-1, 1]² its points are drawn from.
BUMPS = ((-0.5, -0.5, 1.0), (0.5, 0.5, 1.0), (-0.5, 0.5, -1.0), (0.5, -0.5, -1.0))  # x, y, sign
BUMP_WIDTH = 0.35  # each bump's standard deviation
TARGETS: dict[str, Callable[[float, float], float]] = {
    "plane": lambda a, b: (a + b) / 2,
    "bumps": lambda a, b: sum(
        h * math.exp(-((a - x) ** 2 + (b - y) ** 2) / (2 * BUMP_WIDTH**2)) for x, y, h in BUMPS
    ),
}


def regression(name: str, n_samples: int = 100, noise: float = 0.1,
               seed: int | None = DATA_SEED) -> tuple:  # fmt: skip
    """Points uniform on [-1, 1]², each labelled with its target `TARGETS[name](x₁, x₂)` plus
    Gaussian noise of standard deviation noise/2, kept within TARGET_RANGE."""
    rng = random.Random(seed)
    f = TARGETS[name]
    X, y = [], []
    for _ in range(n_samples):
        a, b = rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)
        t = f(a, b) + rng.gauss(0.0, noise / 2)
        X.append([a, b])
        y.append(max(-TARGET_RANGE, min(TARGET_RANGE, t)))
    return X, y


def make_data(s: Settings) -> tuple[list[list[float]], list[Any]]:
    """The settings' points and their labels: classes (0, 1 (, 2)), or target values on a
    regression problem; the learner's points come last."""
    if s.dataset == "lecture":
        X, ys = data.lecture()
    elif s.dataset == "spiral3":
        X, ys = spiral3(s.points, s.noise, seed=s.data_seed)
    elif s.dataset == "gauss":
        X, ys = gauss(s.points, s.noise, seed=s.data_seed)
    elif s.regression:
        X, ys = regression(s.dataset, s.points, s.noise, seed=s.data_seed)
    else:
        X, ys = getattr(data, s.dataset)(s.points, s.noise, seed=s.data_seed)
    labels: list[Any]
    if s.regression:
        labels = [float(t) for t in ys]
    elif s.dataset == "spiral3":
        labels = [int(c) for c in ys]
    else:  # ±1 labels: class 1 is +1
        labels = [1 if c > 0 else 0 for c in ys]
    X = [list(map(float, x)) for x in X]
    for x, y, c in s.added:
        X.append([x, y])
        labels.append(c)
    return X, labels


def featurize(s: Settings, points: Sequence[Sequence[float]]) -> list[list[float]]:
    """The network's inputs for each point: the chosen features of (x1, x2), or a 3-D point."""
    if s.dims != 2:
        return [list(p) for p in points]
    fs = [FEATURES[k][1] for k in s.features]
    return [[f(p[0], p[1]) for f in fs] for p in points]


def split(s: Settings, n_points: int) -> tuple[list[int], list[int]]:
    """(training, test) indices of `make_data`'s points: a share `s.test` of the generated points,
    drawn with the data's own seed, is held out; the learner's added points always train."""
    generated = n_points - len(s.added)
    k = round(s.test * generated)
    held = set(random.Random(s.data_seed + 1).sample(range(generated), k))
    return [i for i in range(n_points) if i not in held], sorted(held)


def extent(X: Sequence[Sequence[float]]) -> tuple[float, float, float, float]:
    """The plotted square (xmin, xmax, ymin, ymax): the points' box plus a margin."""
    xs, ys = [p[0] for p in X], [p[1] for p in X]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = max(max(xs) - min(xs), max(ys) - min(ys), 1.0) / 2 * 1.2 + 0.1
    return (round(cx - half, 3), round(cx + half, 3), round(cy - half, 3), round(cy + half, 3))
