"""The Train view's data: the points of each data set and their labels, and what the network
is given of them.

`make_data` builds a run's points (the data set's generator, as `micrograd.data.DATASETS`
declares it, then the learner's own points), `featurize` the network's inputs from them, `split`
the training and test points, `extent` the square the page plots.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ...data import DATASETS
from .train_settings import FEATURES, Settings


def make_data(s: Settings) -> tuple[list[list[float]], list[Any]]:
    """The settings' points and their labels: classes (0, 1 (, 2)), or target values on a
    regression problem; the learner's points come last."""
    X, ys = DATASETS[s.dataset].load(s.points, s.noise, seed=s.data_seed)
    labels: list[Any]
    if s.regression:
        labels = [float(t) for t in ys]
    elif s.classes > 2:  # class indices
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
