"""Training on micrograd.jit (`train.jit_step`): the same losses, gradients and results as the eager
engine (`train.make_step`, itself tested against PyTorch). karpathy's final moons loss, per engine,
is checked once, in test_demo.py.
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from micrograd.nn import MLP, Layer
from micrograd.train import make_step
from micrograd.train.jit_step import JitStep, ModelOutputs, make_evaluator, make_step_fn

TOL = dict(rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_digits_with_and_without_jit_agree(tmp_path, monkeypatch) -> None:
    import io

    from micrograd.train import demo

    runs = {}
    for jit in (True, False):
        cfg = demo.config_for(
            "digits", steps=4, hidden=(8,), progress=False, jit=jit, out=str(tmp_path / str(jit))
        )
        runs[jit] = demo.run_demo(cfg, out=io.StringIO())
    assert runs[True]["loss"] == pytest.approx(runs[False]["loss"], **TOL)
    assert runs[True]["accuracy"] == runs[False]["accuracy"]
    assert runs[True]["test_accuracy"] == runs[False]["test_accuracy"]
    wj = [p.data for p in runs[True]["model"].parameters()]
    we = [p.data for p in runs[False]["model"].parameters()]
    assert wj == pytest.approx(we, **TOL)


def test_make_step_fn_picks_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    model = MLP(2, [3, 1])
    assert isinstance(make_step_fn(model), JitStep)
    eager = make_step_fn(model, jit=False)
    assert not isinstance(eager, JitStep)
    assert type(eager) is type(make_step(model))  # train.make_step's step
    # numpy missing: the eager engine, even when jit is asked for
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert not isinstance(make_step_fn(model), JitStep)


# ------------------------------------------------------------------ the jit step = the eager step

CASES = {
    # loss: (model shape, activation, labels for sample i, alpha)
    "hinge": ((3, [5, 4, 1]), "relu", lambda i: (-1.0, 1.0)[i % 2], 1e-4),
    "mse": ((3, [5, 1]), "tanh", lambda i: 0.3 * i - 1.0, 0.0),
    "bce": ((3, [4, 1]), "sigmoid", lambda i: float(i % 3 == 0), 1e-3),
    "cross_entropy": ((3, [6, 4]), "relu", lambda i: (i * 7) % 4, 1e-4),
}


def batch(loss: str, n: int, seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    X = [[rng.uniform(-2, 2) for _ in range(3)] for _ in range(n)]
    return X, [CASES[loss][2](i) for i in range(n)]


@pytest.mark.parametrize("loss", list(CASES))
def test_jit_step_matches_eager_step(loss: str) -> None:
    (nin, nouts), activation, _, alpha = CASES[loss]
    random.seed(1)
    model = MLP(nin, nouts, activation=activation)
    params = model.parameters()
    eager = make_step(model, loss, alpha)
    jitted = JitStep(model, loss, alpha)
    # several batch sizes (minibatches, a short last one); a small update between them
    for n, seed in ((9, 0), (5, 1), (1, 2)):
        X, y = batch(loss, n, seed)
        want_loss, want_acc = eager(X, y)
        want = [p.grad for p in params]
        got_loss, got_acc = jitted(X, y)
        got = [p.grad for p in params]
        assert got_loss == pytest.approx(want_loss, **TOL)
        assert got_acc == want_acc
        assert got == pytest.approx(want, **TOL)
        assert any(g != 0 for g in got)
        for p in params:
            p.data -= 0.1 * p.grad
    assert jitted.loss_fn.traces == 1  # new batch sizes replay the same trace


def test_cross_entropy_traces_one_graph_for_every_class() -> None:
    # The samples traced for the check (first, middle, last) have different targets: the one-hot
    # dot keeps the graph the same, where indexing the logits by the target would not.
    from micrograd.jit import TraceError, jit

    random.seed(3)
    model = MLP(2, [4, 3])
    X = [[2.0, 0.0], [-2.0, 1.0], [0.5, -3.0], [1.0, 1.0], [-1.0, -1.0]]
    y = [0, 1, 2, 1, 0]
    step = JitStep(model, "cross_entropy")
    step(X, y)
    assert step.loss_fn.traces == 1
    indexed = jit(lambda x, t: model(x)[int(t.data)])
    with pytest.raises(TraceError):
        indexed(np.array(X), np.array(y))


@pytest.mark.parametrize(
    "loss, y, message",
    [
        ("hinge", [1, 0], r"hinge: labels must be -1 or \+1, got 0"),
        ("bce", [0.5, 2.0], r"targets must be in \[0, 1\], got 2.0"),
        ("cross_entropy", [0, 4], r"target must be a class index in \[0, 4\), got 4"),
        ("cross_entropy", [0, 1.0], r"target must be a class index in \[0, 4\), got 1.0"),
    ],
)
def test_bad_targets_fail_as_in_the_eager_losses(loss: str, y: list, message: str) -> None:
    model = MLP(3, [2, 4 if loss == "cross_entropy" else 1])
    X = [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]
    with pytest.raises(ValueError, match=message):
        make_step(model, loss)(X, y)
    with pytest.raises(ValueError, match=message):
        JitStep(model, loss)(X, y)


def test_unknown_loss() -> None:
    with pytest.raises(ValueError, match="JitStep: unknown loss 'hinge2'"):
        JitStep(MLP(2, [1]), "hinge2")


# ------------------------------------------------------------------ outputs and evaluation


@pytest.mark.parametrize(
    "model",
    [MLP(3, [4, 1]), MLP(3, [4, 5], activation="tanh"), Layer(3, 4, activation="sigmoid")],
    ids=["one output (jit)", "MLP, several (numpy)", "Layer, several (jit each)"],
)
def test_model_outputs_are_the_models(model: object) -> None:
    X, _ = batch("mse", 6, 4)
    got = ModelOutputs(model)(np.array(X))
    want = [model(x) for x in X]
    if got.ndim == 1:
        assert got.tolist() == pytest.approx([v.data for v in want], **TOL)
    else:
        assert got.tolist() == [pytest.approx([v.data for v in row], **TOL) for row in want]


@pytest.mark.parametrize("loss", list(CASES))
def test_evaluator_with_and_without_jit(loss: str) -> None:
    (nin, nouts), activation, _, _ = CASES[loss]
    random.seed(5)
    model = MLP(nin, nouts, activation=activation)
    X, y = batch(loss, 40, 6)
    jit_acc = make_evaluator(model, loss)(X, y)
    eager_acc = make_evaluator(model, loss, jit=False)(X, y)
    assert jit_acc == eager_acc
    assert 0 < eager_acc < 1  # an untrained model: neither all right nor all wrong
