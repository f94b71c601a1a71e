"""Optimizers and schedules against torch.optim (float64) on the same function, several steps."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from micrograd import optim
from micrograd.engine import Value

START = [1.5, -0.7, 0.3]


def f_ours(p: list[Value]) -> Value:
    # A bumpy function of three parameters: products, exp, tanh, a square.
    x, y, z = p
    return (x * y - 1) ** 2 + (z * x).tanh() + (0.3 * y).exp() + z * z * 0.5


def f_torch(p: torch.Tensor) -> torch.Tensor:
    x, y, z = p
    return (x * y - 1) ** 2 + torch.tanh(z * x) + torch.exp(0.3 * y) + z * z * 0.5


def trajectories(
    make_ours: Callable, make_theirs: Callable, steps: int = 8, sched: tuple | None = None
) -> tuple[list[list[float]], list[list[float]]]:
    ps = [Value(v) for v in START]
    tp = torch.tensor(START, dtype=torch.float64, requires_grad=True)
    ours, theirs = make_ours(ps), make_theirs([tp])
    s_ours = sched[0](ours) if sched else None
    s_theirs = sched[1](theirs) if sched else None
    a, b = [], []
    for _ in range(steps):
        ours.zero_grad()
        f_ours(ps).backward()
        ours.step()
        theirs.zero_grad()
        f_torch(tp).backward()
        theirs.step()
        if sched:
            s_ours.step()
            s_theirs.step()
        a.append([p.data for p in ps])
        b.append(tp.detach().tolist())
    return a, b


def assert_same(a: list[list[float]], b: list[list[float]]) -> None:
    for ra, rb in zip(a, b):
        assert ra == pytest.approx(rb, rel=1e-9, abs=1e-12)
    assert a[0] != a[-1]  # it moved


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, weight_decay=0.1),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
]


@pytest.mark.parametrize("kw", SGD_CASES, ids=str)
def test_sgd_matches_torch(kw: dict) -> None:
    assert_same(*trajectories(lambda p: optim.SGD(p, **kw), lambda p: torch.optim.SGD(p, **kw)))


ADAM_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, betas=(0.8, 0.99)),
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.2, eps=1e-3, betas=(0.5, 0.9)),
]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
def test_adam_matches_torch(kw: dict) -> None:
    assert_same(
        *trajectories(lambda p: optim.Adam(p, **kw), lambda p: torch.optim.Adam(p, **kw), 12)
    )


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, weight_decay=0.3)], ids=str)
def test_adamw_matches_torch(kw: dict) -> None:
    assert_same(
        *trajectories(lambda p: optim.AdamW(p, **kw), lambda p: torch.optim.AdamW(p, **kw), 12)
    )


def test_lambda_lr_matches_torch() -> None:
    fn = lambda k: 0.9**k
    assert_same(
        *trajectories(
            lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
            lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
            sched=(
                lambda o: optim.LambdaLR(o, fn),
                lambda o: torch.optim.lr_scheduler.LambdaLR(o, fn),
            ),
        )
    )


def test_linear_decay_is_karpathys_schedule_exactly() -> None:
    opt = optim.SGD([Value(0.0)], lr=1.0)
    sched = optim.LinearDecay(opt, 1.0, 0.1, 100)
    for k in range(100):
        assert opt.lr == 1.0 - 0.9 * k / 100
        sched.step()
    assert opt.lr == pytest.approx(0.1)
    sched.step()
    assert opt.lr == pytest.approx(0.1)  # held at the end


def test_sgd_default_is_the_lectures_update() -> None:
    p = Value(2.0)
    p.grad = 0.5
    optim.SGD([p], lr=0.1).step()
    assert p.data == 2.0 - 0.1 * 0.5


def test_zero_grad() -> None:
    ps = [Value(1.0), Value(2.0)]
    for p in ps:
        p.grad = 3.0
    optim.Adam(ps).zero_grad()
    assert [p.grad for p in ps] == [0.0, 0.0]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda ps: optim.SGD(ps, lr=-0.1), "lr"),
        (lambda ps: optim.SGD(ps, lr=math.nan), "lr"),
        (lambda ps: optim.SGD(ps, lr=0.1, momentum=-1), "momentum"),
        (lambda ps: optim.SGD(ps, lr=0.1, nesterov=True), "nesterov"),
        (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=-1), "weight_decay"),
        (lambda ps: optim.SGD([], lr=0.1), "empty"),
        (lambda ps: optim.Adam(ps, lr=-1), "lr"),
        (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), r"betas\[0\]"),
        (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), r"betas\[1\]"),
        (lambda ps: optim.Adam(ps, betas=(0.9,)), "pair"),
        (lambda ps: optim.Adam(ps, eps=-1e-8), "eps"),
        (lambda ps: optim.Adam([]), "empty"),
        (lambda ps: optim.LinearDecay(optim.SGD(ps), 1.0, 0.1, 0), "total_steps"),
    ],
)
def test_bad_hyperparameters(make: Callable, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make([Value(1.0)])


def test_params_must_be_values() -> None:
    with pytest.raises(TypeError, match="Values"):
        optim.SGD([1.0, 2.0], lr=0.1)
    with pytest.raises(TypeError, match="one Value"):
        optim.SGD(Value(1.0), lr=0.1)
