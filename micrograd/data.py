"""Small data sets to train on, each declared once, and the plumbing to split and batch them.

Every loader returns ``(X, y)`` as plain Python lists: X a list of samples (each a list of floats),
y a list of labels. Two-class sets use karpathy's labels -1 and +1 (ready for `hinge`); sets of
more classes use class indices 0..k-1 (ready for `cross_entropy`); a regression set's labels are
real-valued targets (for `mse`).

    lecture()       the lecture's four samples in 3-D, ys = [1, -1, -1, 1]
    double()        the Go article's double(x): x = 2, y = 4
    moons()         scikit-learn's make_moons, bit for bit: moons(seed=1337) is karpathy's data
    circles()       scikit-learn's make_circles, bit for bit
    xor()           four blobs, the label is the sign of x*y
    gauss()         two Gaussian clusters (TensorFlow Playground's)
    spiral()        two interleaved spiral arms (the hard one)
    spiral3()       three spiral arms, classes 0, 1, 2 (cs231n's)
    plane(), bumps()   regression: a real-valued target over the square [-1, 1]²
    digits()        scikit-learn's bundled 8x8 handwritten digits (1,797 images; needs it)
    names()         makemore's 32,033 names, one document each: what micrograd.gpt trains on
    train_test_split, minibatches, batches     deterministic given a seed

`DATASETS` declares each data set once (a `DataSet`: name, title, generator, classes, dimensions,
where it is offered, `micrograd demo`'s recipe): the Train view, its page's Dataset menu and the
demo read it, so a new data set is its generator and one entry (CONTRIBUTING.md says how).

moons and circles do not import scikit-learn (seconds of start-up): they repeat its few lines
with numpy's legacy `RandomState`, or, without numpy, with `_LegacyRandomState`, the same
Mersenne Twister stream in pure Python (tests/test_data.py compares all three).
"""

from __future__ import annotations

import math
import os
import pathlib
import random
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .losses import LOSSES

Dataset = tuple[list[list[float]], list]


def _positive_int(name: str, n: object, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what}: {name} must be a positive int, got {n!r}")
    return n


def _nonneg(name: str, x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x < math.inf:
        raise ValueError(f"{what}: {name} must be a finite number >= 0, got {x!r:.40}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{what}: {name} is too large for a float, got {x!r:.40}") from None


def _sklearn(what: str, required: bool = False) -> Any:  # sklearn.datasets, or None
    try:
        import sklearn.datasets
    except ImportError:
        if required:
            raise ImportError(f'{what} needs sklearn: pip install "micrograd-plus[data]"') from None
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
    """Two interleaving half circles, labels -1/+1: scikit-learn's ``make_moons`` with
    ``random_state=np.random.RandomState(seed)``, so ``moons(100, 0.1, 1337)`` is karpathy's
    ``np.random.seed(1337); X, y = make_moons(n_samples=100, noise=0.1); y = y*2 - 1``
    (numpy's global random state is left alone)."""
    _positive_int("n_samples", n_samples, "moons")
    noise = _nonneg("noise", noise, "moons")
    n_out = n_samples // 2
    n_in = n_samples - n_out

    def shape(lin: Callable, cos: Callable, sin: Callable) -> tuple[list, list]:
        a, b = lin(0.0, math.pi, n_out, True), lin(0.0, math.pi, n_in, True)
        return cos(a) + [1 - c for c in cos(b)], sin(a) + [1 - s - 0.5 for s in sin(b)]

    return _generate(shape, n_out, n_in, noise, seed)


def circles(
    n_samples: int = 100, noise: float = 0.1, factor: float = 0.5, seed: int | None = 1337
) -> Dataset:
    """A small circle (label +1) inside a big one (label -1); `factor` is the radius ratio.
    scikit-learn's ``make_circles`` with ``random_state=np.random.RandomState(seed)``."""
    _positive_int("n_samples", n_samples, "circles")
    noise = _nonneg("noise", noise, "circles")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor < 1:
        raise ValueError(f"circles: factor must be in [0, 1), got {factor!r}")
    n_out = n_samples // 2
    n_in = n_samples - n_out

    def shape(lin: Callable, cos: Callable, sin: Callable) -> tuple[list, list]:
        a, b = lin(0.0, 2 * math.pi, n_out, False), lin(0.0, 2 * math.pi, n_in, False)
        return cos(a) + [c * factor for c in cos(b)], sin(a) + [s * factor for s in sin(b)]

    return _generate(shape, n_out, n_in, noise, seed)


def _generate(shape: Callable, n_out: int, n_in: int, noise: float, seed: int | None) -> Dataset:
    """scikit-learn's recipe: points from `shape`, labels 0 then 1, shuffled, plus Gaussian noise
    drawn row by row, all from one legacy RandomState(seed); labels mapped to -1/+1."""
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32
    ):
        raise ValueError(f"seed must be an integer in [0, 2**32 - 1] or None, got {seed!r}")
    n = n_out + n_in
    try:
        import numpy as np
    except ImportError:
        rs = _LegacyRandomState(seed)
        xs, ys = shape(
            _linspace, lambda a: [math.cos(v) for v in a], lambda a: [math.sin(v) for v in a]
        )
        order = list(range(n))
        rs.shuffle(order)
        return (
            # numpy's normal(loc=0, scale) is 0.0 + scale * gauss: kept, for -0.0's sake
            [
                [xs[i] + (0.0 + noise * rs.gauss()), ys[i] + (0.0 + noise * rs.gauss())]
                for i in order
            ],
            [-1 if i < n_out else 1 for i in order],
        )
    rng = np.random.RandomState(seed)
    xs, ys = shape(
        lambda a, b, k, end: np.linspace(a, b, k, endpoint=end),
        lambda a: list(np.cos(a)),
        lambda a: list(np.sin(a)),
    )
    X = np.vstack([np.array(xs, dtype=float), np.array(ys, dtype=float)]).T
    y = np.hstack([np.zeros(n_out, dtype=np.intp), np.ones(n_in, dtype=np.intp)])
    indices = np.arange(n)
    rng.shuffle(indices)  # sklearn.utils.shuffle, i.e. resample(replace=False)
    X, y = X[indices], y[indices]
    X += rng.normal(scale=noise, size=X.shape)
    return _lists(X, y * 2 - 1)


def _linspace(start: float, stop: float, num: int, endpoint: bool) -> list[float]:
    """numpy.linspace's values, float for float: i * step + start, the last one exactly stop."""
    div = num - 1 if endpoint else num
    if div <= 0:
        return [start] * num
    step = (stop - start) / div
    ys = [i * step + start for i in range(num)]
    if endpoint and num > 1:
        ys[-1] = stop
    return ys


class _LegacyRandomState:
    """numpy's legacy ``RandomState(seed)`` (what scikit-learn uses), for `shuffle` and standard
    normal draws, in pure Python. Python's `random` is the same MT19937 generator; only the
    seeding differs, so the state is seeded as numpy does (init_genrand) and handed over."""

    def __init__(self, seed: int | None) -> None:
        if seed is None:
            seed = random.SystemRandom().getrandbits(32)
        mt = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
        self._r = random.Random()
        self._r.setstate((3, (*mt, 624), None))
        self._gauss: float | None = None

    def _interval(self, top: int) -> int:
        """A uniform integer in [0, top] by masked rejection, numpy's `random_interval`."""
        mask = (1 << top.bit_length()) - 1
        while True:
            v = self._r.getrandbits(32) & mask
            if v <= top:
                return v

    def shuffle(self, a: list) -> None:
        for i in reversed(range(1, len(a))):
            j = self._interval(i)
            a[i], a[j] = a[j], a[i]

    def gauss(self) -> float:
        """numpy's legacy_gauss: the polar method, two draws per pair, the second one kept."""
        if self._gauss is not None:
            g, self._gauss = self._gauss, None
            return g
        while True:
            x1 = 2.0 * self._r.random() - 1.0  # random() is numpy's 53-bit legacy_double
            x2 = 2.0 * self._r.random() - 1.0
            r2 = x1 * x1 + x2 * x2
            if 0.0 < r2 < 1.0:
                break
        f = math.sqrt(-2.0 * math.log(r2) / r2)
        self._gauss = f * x1
        return f * x2


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
            X.append(
                [
                    r * math.cos(theta) + rng.gauss(0.0, noise * r),
                    r * math.sin(theta) + rng.gauss(0.0, noise * r),
                ]
            )
            y.append(1 if arm else -1)
    return _shuffle_noise(X, y, 0.0, rng)


def spiral3(n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337) -> Dataset:
    """Three spiral arms (cs231n's spiral), labels 0, 1, 2; `noise` jitters the angle."""
    _positive_int("n_samples", n_samples, "spiral3")
    noise = _nonneg("noise", noise, "spiral3")
    rng = random.Random(seed)
    X, y = [], []
    for k in range(3):
        n = n_samples // 3 + (1 if k < n_samples % 3 else 0)
        for i in range(n):
            r = (i + 1) / n
            t = 4.0 * k + 4.0 * r + rng.gauss(0.0, 2.0 * noise)
            X.append([r * math.sin(t), r * math.cos(t)])
            y.append(k)
    return _shuffle_noise(X, y, 0.0, rng)


def gauss(n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337) -> Dataset:
    """Two Gaussian clusters, labels -1/+1, around (-1, -1) and (1, 1); the standard deviation
    grows with `noise` (0.3 at 0, 1.5 at 1: they overlap), as TensorFlow Playground's."""
    _positive_int("n_samples", n_samples, "gauss")
    noise = _nonneg("noise", noise, "gauss")
    rng = random.Random(seed)
    sd = 0.3 + 1.2 * noise
    X, y = [], []
    for i in range(n_samples):
        label = 1 if i % 2 else -1
        X.append([label + rng.gauss(0.0, sd), label + rng.gauss(0.0, sd)])
        y.append(label)
    return _shuffle_noise(X, y, 0.0, rng)


# A regression problem's target over the plane: the function, before noise. Its values lie
# within TARGET_RANGE on the square [-1, 1]² its points are drawn from.
TARGET_RANGE = 1.0  # a regression target (and a point a learner adds) lies in [-1, 1]
BUMPS = ((-0.5, -0.5, 1.0), (0.5, 0.5, 1.0), (-0.5, 0.5, -1.0), (0.5, -0.5, -1.0))  # x, y, sign
BUMP_WIDTH = 0.35  # each bump's standard deviation
TARGETS: dict[str, Callable[[float, float], float]] = {
    "plane": lambda a, b: (a + b) / 2,
    "bumps": lambda a, b: sum(
        h * math.exp(-((a - x) ** 2 + (b - y) ** 2) / (2 * BUMP_WIDTH**2)) for x, y, h in BUMPS
    ),
}


def regression(
    name: str, n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337
) -> Dataset:
    """Points uniform on [-1, 1]², each labelled with its target `TARGETS[name](x₁, x₂)` plus
    Gaussian noise of standard deviation noise/2, kept within TARGET_RANGE."""
    if name not in TARGETS:
        raise ValueError(f"regression: unknown target {name!r}; choose one of {', '.join(TARGETS)}")
    _positive_int("n_samples", n_samples, name)
    noise = _nonneg("noise", noise, name)
    rng = random.Random(seed)
    f = TARGETS[name]
    X, y = [], []
    for _ in range(n_samples):
        a, b = rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)
        t = f(a, b) + rng.gauss(0.0, noise / 2)
        X.append([a, b])
        y.append(max(-TARGET_RANGE, min(TARGET_RANGE, t)))
    return X, y


def plane(n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337) -> Dataset:
    """Regression: the target (x₁ + x₂)/2 over [-1, 1]², plus noise (see `regression`)."""
    return regression("plane", n_samples, noise, seed)


def bumps(n_samples: int = 100, noise: float = 0.1, seed: int | None = 1337) -> Dataset:
    """Regression: two positive and two negative Gaussian bumps over [-1, 1]² (see `regression`)."""
    return regression("bumps", n_samples, noise, seed)


def digits() -> Dataset:
    """scikit-learn's 8x8 handwritten digits: 1,797 samples of 64 pixels scaled to [0, 1]
    (the raw values are 0..16), labels 0..9. Bundled with scikit-learn: no download."""
    sk = _sklearn("digits", required=True)
    bunch = sk.load_digits()
    X, y = _lists(bunch.data, bunch.target)
    return [[v / 16.0 for v in row] for row in X], y


# makemore's names.txt (karpathy/makemore at commit 988aa59, MIT): never shipped in the wheel.
# It is text, not (X, y) points, so it is no entry of DATASETS.
NAMES_ENV = "MICROGRAD_NAMES_FILE"  # a copy of names.txt the user keeps (read first)
NAMES_URL_ENV = "MICROGRAD_NAMES_URL"  # another address to download it from (a mirror, tests)
NAMES_URL = (
    "https://raw.githubusercontent.com/karpathy/makemore/"
    "988aa59e4d8fefa526d06f3b453ad116258398d4/names.txt"
)
NAMES_SHA256 = "0a30b5557f192f32ab962680889aac5f6fda0f4cecf40a6d0b5694f58ea8cc4d"
# a build that carries the file (`micrograd site` puts it into the browser's wheel)
NAMES_FILE = pathlib.Path(__file__).resolve().parent / "datasets" / "names.txt"


def names_file() -> pathlib.Path:
    """Where makemore's names.txt is, downloading it the first time. In order: the file
    MICROGRAD_NAMES_FILE names; the copy a build carries (the site's, in a browser); the user's
    data folder (`micrograd.core.download.data_dir()`: MICROGRAD_DATA, else the cache folder,
    e.g. ~/.cache/micrograd/names.txt); else it is
    downloaded once from makemore's repository at commit 988aa59 (MICROGRAD_NAMES_URL: another
    address), its sha256 checked, and written atomically into that folder. Where none of that
    works, a FileNotFoundError whose one line names the address, the cache and
    MICROGRAD_NAMES_FILE."""
    from .core import download

    if os.environ.get(NAMES_ENV):
        file = pathlib.Path(os.environ[NAMES_ENV])
        if not file.is_file():
            raise FileNotFoundError(
                f"names: {NAMES_ENV} is {str(file)!r}, which is not a file; point it at a copy "
                "of makemore's names.txt, or unset it to download the file once"
            )
        return file
    if NAMES_FILE.is_file():
        return NAMES_FILE
    if sys.platform == "emscripten":  # Pyodide: no sockets, and no cache kept across visits
        raise FileNotFoundError(
            "names: makemore's names.txt is not in this build, and Python in a browser cannot "
            "download it: upload a copy and pass its path, names('names.txt')"
        )
    cached = download.data_dir() / "names.txt"
    if cached.is_file() and download.sha256_of(cached) == NAMES_SHA256:
        return cached
    url = os.environ.get(NAMES_URL_ENV) or NAMES_URL
    try:
        return download.download(url, NAMES_SHA256, cached, "makemore's names.txt")
    except download.DownloadError as e:
        raise FileNotFoundError(
            f"names: {e}; nothing was cached in {cached}. Download names.txt yourself "
            f"and set {NAMES_ENV} to its path"
        ) from None


def names(path: str | pathlib.Path | None = None) -> list[str]:
    """The documents of a word list, one a line, stripped, blank lines left out, in the file's
    order: `path`, or by default makemore's names.txt (32,033 names, ``emma`` to ``zzyzx``),
    which `micrograd.gpt.microgpt` and the course's chapters 7 and 8 train on, found (and the
    first time downloaded) by `names_file`."""
    file = names_file() if path is None else pathlib.Path(path)
    text = file.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


# ------------------------------------------------------------------ the data sets, declared once


@dataclass(frozen=True)
class DataSet:
    """One data set, declared once. The Train view (its settings, its points, its page's Dataset
    menu through the view's options) offers those with `train_view`; `micrograd demo` those with
    a `demo` recipe."""

    name: str  # how settings, URLs and the command line name it
    title: str  # what a menu says
    make: Callable[..., Dataset]  # the generator: make(n_samples=, noise=, seed=), or make()
    classes: int  # 2: labels -1/+1; more: class indices 0..classes-1; 0: real-valued targets
    dims: int = 2  # coordinates of a sample
    size: int | None = None  # a fixed set's samples (its make() takes no size, noise or seed)
    imports: tuple[str, ...] = ()  # modules its generator imports (an extra's: loaded early)
    train_view: bool = True  # in the Train view (2-D or 3-D samples, at most 3 classes)
    # `micrograd demo`'s recipe for it: the DemoConfig fields that differ from karpathy's moons
    # run (demo.DemoConfig's defaults); None: the demo does not offer it
    demo: Mapping[str, Any] | None = field(default=None, hash=False)

    @property
    def losses(self) -> list[str]:
        """The losses that fit it, the usual choice first: a regression takes the mean squared
        error; two classes a loss of one output (a score), more a loss of one output per class."""
        if self.classes == 0:
            return ["mse"]
        outputs = "per class" if self.classes > 2 else "one"
        return [name for name, loss in LOSSES.items() if loss.outputs == outputs]

    def load(
        self, n_samples: int | None = None, noise: float | None = None, seed: int | None = None
    ) -> Dataset:
        """Its samples and labels; a fixed set ignores the size, noise and seed, and a size or
        noise left out (None) is the generator's default."""
        if self.size is not None:
            return self.make()
        given = {"n_samples": n_samples, "noise": noise}
        return self.make(**{k: v for k, v in given.items() if v is not None}, seed=seed)


DATASETS: dict[str, DataSet] = {
    d.name: d
    for d in (
        DataSet("moons", "Moons", moons, classes=2, demo={}),
        DataSet("circles", "Circles", circles, classes=2, demo={}),
        DataSet("xor", "XOR", xor, classes=2, demo={}),
        DataSet("gauss", "Gaussian clusters", gauss, classes=2),
        DataSet(
            "spiral", "Spiral, 2 classes", spiral, classes=2, demo={"n_samples": 200, "steps": 300}
        ),
        DataSet("spiral3", "Spiral, 3 classes", spiral3, classes=3),
        DataSet("lecture", "The lecture's 4 points (3-D)", lecture, classes=2, dims=3, size=4),
        DataSet("plane", "Regression: a plane", plane, classes=0),
        DataSet("bumps", "Regression: Gaussian bumps", bumps, classes=0),
        # Sized for the jit engine: seed 1337 gives 96.9% test accuracy (seeds 1 and 2: 98.3%,
        # 97.5%); (32,) hidden units and 1000 steps gave 96.4% (96.4%, 97.2%).
        DataSet(
            "digits",
            "8x8 handwritten digits",
            digits,
            classes=10,
            dims=64,
            size=1797,
            imports=("sklearn.datasets",),
            train_view=False,
            demo={
                "hidden": (64,),
                "loss": "cross_entropy",
                "alpha": 0.0,
                "optimizer": "adam",
                "lr": 0.01,
                "steps": 2000,
                "batch_size": 32,
                "test_size": 0.2,
                "eval_every": 200,
            },
        ),
    )
}


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
