"""Small data sets to train on, and the plumbing to split and batch them.

Every loader returns ``(X, y)`` as plain Python lists: X a list of samples (each a list of floats),
y a list of labels. Two-class 2-D sets use karpathy's labels -1 and +1 (ready for `hinge`);
`digits` uses class indices 0..9 (ready for `cross_entropy`).

    lecture()       the lecture's four samples in 3-D, ys = [1, -1, -1, 1]
    double()        the Go article's double(x): x = 2, y = 4
    moons()         scikit-learn's make_moons; moons(seed=1337) is karpathy's demo data exactly
    circles()       two concentric circles
    xor()           four blobs, the label is the sign of x*y
    spiral()        two interleaved spiral arms (the hard one)
    digits()        scikit-learn's bundled 8x8 handwritten digits (1,797 images, offline)
    train_test_split, minibatches, batches     deterministic given a seed

moons and circles use scikit-learn when it is installed (so the numbers are the published ones)
and a pure-Python generator of the same shapes otherwise; digits needs scikit-learn.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

Dataset = tuple[list[list[float]], list]


def _positive_int(name: str, n: object, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what}: {name} must be a positive int, got {n!r}")
    return n


def _nonneg(name: str, x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not x >= 0:
        raise ValueError(f"{what}: {name} must be a number >= 0, got {x!r}")
    return float(x)


def _sklearn(what: str, required: bool = False) -> Any:  # sklearn.datasets, or None
    try:
        import sklearn.datasets
    except ImportError:
        if required:
            raise ImportError(
                f"{what} needs scikit-learn: pip install micrograd-plus[data]"
            ) from None
        return None
    return sklearn.datasets


def _lists(X: Any, y: Any, label: Callable = int) -> Dataset:  # X, y: numpy arrays
    return [[float(v) for v in row] for row in X], [label(v) for v in y]


def lecture() -> Dataset:
    """The lecture's four samples: ``xs = [[2, 3, -1], [3, -1, 0.5], [0.5, 1, 1], [1, 1, -1]]``,
    ``ys = [1, -1, -1, 1]`` (floats)."""
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    return xs, ys


def double(xs: Sequence[float] = (2.0,)) -> Dataset:
    """Samples of f(x) = 2x: the Go article's one example (x = 2, y = 4) by default."""
    return [[float(x)] for x in xs], [2.0 * float(x) for x in xs]


def moons(n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337) -> Dataset:
    """Two interleaving half circles, labels -1/+1.

    With scikit-learn, ``moons(100, 0.1, 1337)`` equals karpathy's
    ``np.random.seed(1337); X, y = make_moons(n_samples=100, noise=0.1); y = y*2 - 1``
    (a private RandomState seeded the same way: numpy's global state is left alone).
    """
    _positive_int("n_samples", n_samples, "moons")
    noise = _nonneg("noise", noise, "moons")
    sk = _sklearn("moons")
    if sk is not None:
        import numpy as np

        X, y = sk.make_moons(
            n_samples=n_samples, noise=noise, random_state=np.random.RandomState(seed)
        )
        return _lists(X, y * 2 - 1)
    rng = random.Random(seed)
    n_out = n_samples // 2
    n_in = n_samples - n_out
    X = [[math.cos(math.pi * i / max(n_out - 1, 1)), math.sin(math.pi * i / max(n_out - 1, 1))]
         for i in range(n_out)]
    X += [[1 - math.cos(math.pi * i / max(n_in - 1, 1)),
           0.5 - math.sin(math.pi * i / max(n_in - 1, 1))] for i in range(n_in)]
    y = [-1] * n_out + [1] * n_in
    return _shuffle_noise(X, y, noise, rng)


def circles(
    n_samples: int = 100, noise: float = 0.1, factor: float = 0.5, seed: int | None = 1337
) -> Dataset:
    """A small circle (label +1) inside a big one (label -1); `factor` is the radius ratio."""
    _positive_int("n_samples", n_samples, "circles")
    noise = _nonneg("noise", noise, "circles")
    if not 0 <= factor < 1:
        raise ValueError(f"circles: factor must be in [0, 1), got {factor!r}")
    sk = _sklearn("circles")
    if sk is not None:
        import numpy as np

        X, y = sk.make_circles(
            n_samples=n_samples, noise=noise, factor=factor,
            random_state=np.random.RandomState(seed),
        )
        return _lists(X, y * 2 - 1)
    rng = random.Random(seed)
    n_out = n_samples // 2
    n_in = n_samples - n_out
    X = [[math.cos(2 * math.pi * i / n_out), math.sin(2 * math.pi * i / n_out)]
         for i in range(n_out)]
    X += [[factor * math.cos(2 * math.pi * i / n_in), factor * math.sin(2 * math.pi * i / n_in)]
          for i in range(n_in)]
    y = [-1] * n_out + [1] * n_in
    return _shuffle_noise(X, y, noise, rng)


def _shuffle_noise(X: list[list[float]], y: list[int], noise: float, rng: random.Random) -> Dataset:
    order = list(range(len(X)))
    rng.shuffle(order)
    X = [[v + rng.gauss(0.0, noise) for v in X[i]] for i in order]
    return X, [y[i] for i in order]


def xor(n_samples: int = 100, noise: float = 0.2, seed: int | None = 1337) -> Dataset:
    """Points around (±1, ±1); label +1 where x*y > 0 (same-sign corners), -1 otherwise.

    No straight line separates the classes: the classic reason for a hidden layer.
    """
    _positive_int("n_samples", n_samples, "xor")
    noise = _nonneg("noise", noise, "xor")
    rng = random.Random(seed)
    corners = [(1.0, 1.0), (-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)]
    X, y = [], []
    for i in range(n_samples):
        cx, cy = corners[i % 4]
        X.append([cx + rng.gauss(0.0, noise), cy + rng.gauss(0.0, noise)])
        y.append(1 if cx * cy > 0 else -1)
    return _shuffle_noise(X, y, 0.0, rng)


def spiral(
    n_samples: int = 100, noise: float = 0.1, turns: float = 1.25, seed: int | None = 1337
) -> Dataset:
    """Two spiral arms winding around the origin, labels -1/+1 (cs231n's spiral, two classes)."""
    _positive_int("n_samples", n_samples, "spiral")
    noise = _nonneg("noise", noise, "spiral")
    rng = random.Random(seed)
    X, y = [], []
    per_arm = [n_samples // 2, n_samples - n_samples // 2]
    for arm, n in enumerate(per_arm):
        for i in range(n):
            r = (i + 1) / n  # radius grows from near 0 to 1 along the arm
            theta = 2 * math.pi * turns * r + math.pi * arm
            X.append([r * math.cos(theta) + rng.gauss(0.0, noise * r),
                      r * math.sin(theta) + rng.gauss(0.0, noise * r)])
            y.append(1 if arm else -1)
    return _shuffle_noise(X, y, 0.0, rng)


def digits() -> Dataset:
    """scikit-learn's 8x8 handwritten digits: 1,797 samples of 64 pixels scaled to [0, 1]
    (the raw values are 0..16), labels 0..9. Bundled with scikit-learn: no download."""
    sk = _sklearn("digits", required=True)
    bunch = sk.load_digits()
    X, y = _lists(bunch.data, bunch.target)
    return [[v / 16.0 for v in row] for row in X], y


def _check_xy(X: Sequence, y: Sequence, what: str) -> None:
    if len(X) != len(y):
        raise ValueError(f"{what}: X has {len(X)} samples but y has {len(y)}")
    if not len(X):
        raise ValueError(f"{what}: the data set is empty")


def train_test_split(
    X: Sequence, y: Sequence, test_size: float = 0.2, seed: int | None = 0
) -> tuple[list, list, list, list]:
    """Shuffle (deterministically, given `seed`) and split: ``X_train, X_test, y_train, y_test``
    (scikit-learn's order). `test_size` is a fraction in (0, 1) or a number of samples."""
    _check_xy(X, y, "train_test_split")
    n = len(X)
    if isinstance(test_size, float) and 0 < test_size < 1:
        n_test = max(1, round(n * test_size))
    elif isinstance(test_size, int) and not isinstance(test_size, bool) and 0 < test_size < n:
        n_test = test_size
    else:
        raise ValueError(
            f"train_test_split: test_size must be a fraction in (0, 1) or a count in [1, {n}), "
            f"got {test_size!r}"
        )
    if n_test >= n:
        raise ValueError(f"train_test_split: {n} samples leave none for training")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    test, train = order[:n_test], order[n_test:]
    return [X[i] for i in train], [X[i] for i in test], [y[i] for i in train], [y[i] for i in test]


def minibatches(
    X: Sequence, y: Sequence, batch_size: int, seed: int | None = 0, shuffle: bool = True
) -> Iterator[tuple[list, list]]:
    """One pass over the data in batches of `batch_size` (the last one may be smaller)."""
    _check_xy(X, y, "minibatches")
    _positive_int("batch_size", batch_size, "minibatches")
    order = list(range(len(X)))
    if shuffle:
        random.Random(seed).shuffle(order)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        yield [X[i] for i in idx], [y[i] for i in idx]


def batches(
    X: Sequence, y: Sequence, batch_size: int | None = None, seed: int | None = 0
) -> Iterator[tuple[list, list]]:
    """Batches forever: epoch after epoch of `minibatches`, reshuffled each epoch (the order is
    fixed by `seed`). ``batch_size=None`` (or >= the data size) yields the full batch each time."""
    _check_xy(X, y, "batches")
    if batch_size is None or batch_size >= len(X):
        Xl, yl = list(X), list(y)
        while True:
            yield Xl, yl
    _positive_int("batch_size", batch_size, "batches")
    rng = random.Random(seed)
    while True:
        yield from minibatches(X, y, batch_size, seed=rng.random(), shuffle=True)
