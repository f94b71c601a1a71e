"""Data sets: karpathy's moons exactly, shapes and labels, deterministic splits and batches."""

from __future__ import annotations

import builtins
import random

import numpy as np
import pytest

from micrograd import data


def test_lecture_samples() -> None:
    xs, ys = data.lecture()
    assert xs == [[2, 3, -1], [3, -1, 0.5], [0.5, 1, 1], [1, 1, -1]]
    assert ys == [1, -1, -1, 1]


def test_double() -> None:
    assert data.double() == ([[2.0]], [4.0])
    assert data.double([1, 3]) == ([[1.0], [3.0]], [2.0, 6.0])


@pytest.mark.slow
def test_moons_is_karpathys_data_exactly() -> None:
    from sklearn.datasets import make_moons

    state = np.random.get_state()
    np.random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1
    np.random.set_state(state)
    ours_X, ours_y = data.moons(100, 0.1, seed=1337)
    assert ours_X == X.tolist()
    assert ours_y == y.tolist()
    assert all(type(v) is float for row in ours_X for v in row)


@pytest.mark.parametrize("loader", [data.moons, data.circles, data.xor, data.spiral])
def test_two_d_sets(loader) -> None:
    X, y = loader(n_samples=60, seed=5)
    assert len(X) == len(y) == 60 and all(len(row) == 2 for row in X)
    assert set(y) == {-1, 1}
    assert loader(n_samples=60, seed=5) == (X, y)  # deterministic
    assert loader(n_samples=60, seed=6) != (X, y)


def _without(monkeypatch, *packages: str) -> None:
    real_import = builtins.__import__

    def guarded(name, *args, **kwargs):
        if name.split(".")[0] in packages:
            raise ImportError(f"no {name} here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)


def _sklearn(name: str, n: int, noise: float, seed: int) -> tuple[list, list]:
    import sklearn.datasets as sk

    kw = {"factor": 0.5} if name == "circles" else {}
    make = sk.make_circles if name == "circles" else sk.make_moons
    X, y = make(n_samples=n, noise=noise, random_state=np.random.RandomState(seed), **kw)
    return X.tolist(), (y * 2 - 1).tolist()


CASES = [
    (n, noise, seed)
    for n in (1, 2, 7, 100, 301)
    for noise in (0.0, 0.1, 0.35)
    for seed in (0, 1337, 2**32 - 1)
]


@pytest.mark.parametrize("name", ["moons", "circles"])
@pytest.mark.parametrize("numpy_too", [False, True], ids=["no sklearn", "no sklearn, no numpy"])
def test_moons_and_circles_are_sklearns_bit_for_bit_without_it(name, numpy_too, monkeypatch):
    want = {case: _sklearn(name, *case) for case in CASES}
    _without(monkeypatch, "sklearn", *(["numpy"] if numpy_too else []))
    loader = getattr(data, name)
    for (n, noise, seed), (X, y) in want.items():
        assert loader(n, noise, seed=seed) == (X, y), (n, noise, seed)
    with pytest.raises(ImportError, match=r'pip install "micrograd-plus\[data\]"'):
        data.digits()


def test_generating_moons_imports_no_sklearn() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from micrograd import data; data.moons(); data.circles(); "
        "assert 'sklearn' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_xor_labels_follow_the_quadrant() -> None:
    X, y = data.xor(n_samples=200, noise=0.05, seed=0)
    assert all((a * b > 0) == (label == 1) for (a, b), label in zip(X, y))


def test_digits() -> None:
    X, y = data.digits()
    assert len(X) == len(y) == 1797
    assert all(len(row) == 64 for row in X)
    assert set(y) == set(range(10))
    assert min(min(r) for r in X) == 0.0 and max(max(r) for r in X) == 1.0


def test_train_test_split() -> None:
    X = [[float(i)] for i in range(10)]
    y = list(range(10))
    Xtr, Xte, ytr, yte = data.train_test_split(X, y, test_size=0.3, seed=1)
    assert len(Xte) == 3 and len(Xtr) == 7
    assert sorted(ytr + yte) == y
    assert [[float(v)] for v in ytr] == Xtr and [[float(v)] for v in yte] == Xte
    assert data.train_test_split(X, y, test_size=0.3, seed=1) == (Xtr, Xte, ytr, yte)
    assert data.train_test_split(X, y, test_size=4, seed=1)[1].__len__() == 4


def test_minibatches_cover_every_sample_once() -> None:
    X = [[float(i)] for i in range(10)]
    y = list(range(10))
    batches = list(data.minibatches(X, y, 4, seed=0))
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert sorted(v for _, yb in batches for v in yb) == y
    assert batches == list(data.minibatches(X, y, 4, seed=0))
    assert [yb for _, yb in data.minibatches(X, y, 5, shuffle=False)] == [y[:5], y[5:]]


def test_batches_full_and_cycling() -> None:
    X = [[float(i)] for i in range(6)]
    y = list(range(6))
    full = data.batches(X, y, None)
    assert next(full) == (X, y) and next(full) == (X, y)
    feed = data.batches(X, y, 3, seed=0)
    first_epoch = [next(feed)[1] for _ in range(2)]
    assert sorted(first_epoch[0] + first_epoch[1]) == y
    more = [next(feed)[1] for _ in range(4)]
    assert all(len(b) == 3 for b in more)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: data.moons(n_samples=0), "n_samples"),
        (lambda: data.moons(noise=-1), "noise"),
        (lambda: data.circles(factor=1.5), "factor"),
        (lambda: data.moons(seed=-1), r"seed must be an integer in \[0, 2\*\*32 - 1\]"),
        (lambda: data.circles(seed=2**32), "seed must be"),
        (lambda: data.train_test_split([[1.0]] * 4, [1] * 3), "4 samples but y has 3"),
        (lambda: data.train_test_split([[1.0]] * 4, [1] * 4, test_size=1.5), "test_size"),
        (lambda: list(data.minibatches([[1.0]], [1], 0)), "batch_size"),
        (lambda: list(data.minibatches([], [], 2)), "empty"),
    ],
)
def test_bad_arguments(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_loaders_leave_global_random_state_alone() -> None:
    random.seed(7)
    np.random.seed(7)
    expect_py, expect_np = random.random(), np.random.rand()
    random.seed(7)
    np.random.seed(7)
    data.moons()
    data.xor()
    data.spiral()
    assert random.random() == expect_py and np.random.rand() == expect_np
