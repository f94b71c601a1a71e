"""fit: the same numbers as the hand-written loop, history, batches, progress, step_fn hook."""

from __future__ import annotations

import io
import math
import random
import sys

import pytest

from micrograd import data, losses, optim, train
from micrograd.engine import Value
from micrograd.nn import MLP


def hand_written(steps: int) -> tuple[list[float], list[float]]:
    X, y = data.lecture()
    random.seed(0)
    model = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
    history = []
    for _ in range(steps):
        ypred = [model(x) for x in X]
        loss = losses.mse(ypred, y)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data += -0.05 * p.grad
        history.append(loss.data)
    return history, [p.data for p in model.parameters()]


def test_fit_equals_the_hand_written_loop() -> None:
    expected_loss, expected_params = hand_written(20)
    X, y = data.lecture()
    random.seed(0)
    model = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
    opt = optim.SGD(model.parameters(), lr=0.05)
    h = train.fit(model, X, y, loss="mse", optimizer=opt, steps=20, progress=False)
    assert h.loss == expected_loss
    assert [p.data for p in model.parameters()] == expected_params
    assert h.final_loss == expected_loss[-1] and h.final_loss < h.loss[0]
    assert len(h.accuracy) == len(h.lr) == 20 and h.seconds > 0


def test_fit_moons_follows_karpathys_schedule() -> None:
    # His final loss is checked once per engine in test_demo.py; here: the same first steps.
    X, y = data.moons(seed=1337)
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    opt = optim.SGD(model.parameters(), lr=1.0)
    sched = optim.LinearDecay(opt, 1.0, 0.1, 100)
    h = train.fit(model, X, y, "hinge", opt, steps=3, alpha=1e-4, scheduler=sched, progress=False)
    random.seed(1337)
    twin = MLP(2, [16, 16, 1])
    for k in range(3):
        total = losses.hinge([twin(x) for x in X], y) + losses.l2(twin.parameters(), 1e-4)
        twin.zero_grad()
        total.backward()
        for p in twin.parameters():
            p.data -= (1.0 - 0.9 * k / 100) * p.grad
        assert h.loss[k] == total.data
    assert [p.data for p in model.parameters()] == [p.data for p in twin.parameters()]
    assert h.lr == [1.0, 1.0 - 0.9 / 100, 1.0 - 0.9 * 2 / 100]


def _fit_with(step_fn, steps: int = 6):
    X, y = data.lecture()
    random.seed(0)
    model = MLP(3, [2, 1])
    opt = optim.SGD(model.parameters(), lr=0.01)
    return model, lambda: train.fit(
        model, X, y, optimizer=opt, steps=steps, progress=False, step_fn=step_fn
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_loss_stops_fit_at_its_step(bad) -> None:
    calls = []

    def step(Xb, yb):
        calls.append(1)
        return (bad if len(calls) == 4 else 1.0 / len(calls)), 0.5

    model, run = _fit_with(step)
    before = None
    with pytest.raises(train.Diverged, match=rf"diverged at step 4: the loss became {bad!r}") as e:
        before = [p.data for p in model.parameters()]
        run()
    assert e.value.step == 3 and e.value.history.loss == [1.0, 0.5, 1.0 / 3]
    assert len(calls) == 4  # stopped there: no step 5
    assert [p.data for p in model.parameters()] == before  # grads were 0: no update happened


def test_an_overflow_in_a_step_is_a_divergence() -> None:
    def step(Xb, yb):
        return Value(1000.0).exp().data, 0.0

    with pytest.raises(train.Diverged, match=r"diverged at step 1: exp\(1000.0\)") as e:
        _fit_with(step)[1]()
    assert isinstance(e.value.__cause__, OverflowError)


def test_a_weight_overflowing_in_the_last_update_is_a_divergence() -> None:
    def step(Xb, yb):
        for p in model.parameters():
            p.grad = -1e308
        return 1.0, 1.0

    model, run = _fit_with(step, steps=2)
    model.parameters()[0].data = 1.79e308  # + 0.01 * 1e308 overflows
    with pytest.raises(train.Diverged, match="a weight became inf"):
        run()


@pytest.mark.slow
def test_freeze_gc_is_a_named_helper(monkeypatch) -> None:
    import gc

    seen = []
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("freeze"))
    train.freeze_gc()
    assert seen == ["freeze"]
    assert "gc.freeze" in train.freeze_gc.__doc__


@pytest.mark.slow
def test_fit_minibatches_cross_entropy_learns() -> None:
    X, y = data.digits()
    X, y = X[:200], y[:200]
    random.seed(0)
    model = MLP(64, [10])
    opt = optim.Adam(model.parameters(), lr=0.05)
    h = train.fit(model, X, y, "cross_entropy", opt, steps=40, batch_size=20, progress=False)
    assert sum(h.loss[-5:]) / 5 < sum(h.loss[:5]) / 5 / 3
    assert train.evaluate(model, X, y, "cross_entropy") > 0.9


def test_custom_loss_step_fn_and_callback() -> None:
    X, y = data.lecture()
    random.seed(0)
    model = MLP(3, [4, 1])
    seen = []
    h = train.fit(
        model,
        X,
        y,
        loss=lambda out, t: losses.mse(out, t, reduction="sum"),
        optimizer=optim.SGD(model.parameters(), lr=0.01),
        steps=3,
        progress=False,
        callback=lambda k, hist: seen.append((k, len(hist.loss))),
    )
    assert seen == [(0, 1), (1, 2), (2, 3)]
    calls = []

    def step_fn(Xb: list, yb: list) -> tuple[float, float]:
        calls.append(len(Xb))
        return 0.5, 1.0

    h = train.fit(
        model,
        X,
        y,
        optimizer=optim.SGD(model.parameters(), lr=0.01),
        steps=2,
        batch_size=2,
        progress=False,
        step_fn=step_fn,
    )
    assert calls == [2, 2] and h.loss == [0.5, 0.5]


def test_progress_bar_and_plain_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = data.lecture()
    model = MLP(3, [2, 1])
    buf = io.StringIO()
    train.fit(model, X, y, optimizer=optim.SGD(model.parameters()), steps=5, file=buf)
    assert "5/5" in buf.getvalue()  # tqdm's bar
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    buf = io.StringIO()
    train.fit(model, X, y, optimizer=optim.SGD(model.parameters()), steps=5, file=buf)
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("step 1/5 loss") and lines[-1].startswith("step 5/5 loss")
    buf = io.StringIO()
    train.fit(
        model, X, y, optimizer=optim.SGD(model.parameters()), steps=5, file=buf, progress=False
    )
    assert buf.getvalue() == ""


def test_accuracy_rules() -> None:
    assert train.argmax([0.1, 3.0, -2.0]) == 1
    model = MLP(2, [3])
    assert 0.0 <= train.evaluate(model, [[1.0, 2.0]], [0], "cross_entropy") <= 1.0
    with pytest.raises(ValueError, match="unknown accuracy"):
        train.evaluate(model, [[1.0, 2.0]], [0], "top5")


def test_bad_arguments() -> None:
    X, y = data.lecture()
    model = MLP(3, [2, 1])
    with pytest.raises(ValueError, match="unknown loss 'l7'"):
        train.fit(model, X, y, loss="l7", progress=False)
    with pytest.raises(ValueError, match="steps"):
        train.fit(model, X, y, steps=-1, progress=False)
    with pytest.raises(ValueError, match="4 samples but y has 3"):
        train.fit(model, X, y[:3], steps=1, progress=False)
