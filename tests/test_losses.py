"""Every loss against PyTorch (float64): values and gradients to 1e-9, stability at ±1000."""

from __future__ import annotations

import math
import random

import pytest
import torch
import torch.nn.functional as F

from micrograd import losses
from micrograd.engine import Value

TOL = dict(rel=1e-9, abs=1e-12)


def leaves(xs: list[float]) -> list[Value]:
    return [Value(x) for x in xs]


def torch_leaf(xs: list[float]) -> torch.Tensor:
    return torch.tensor(xs, dtype=torch.float64, requires_grad=True)


def check(ours: Value, vs: list[Value], theirs: torch.Tensor, t: torch.Tensor) -> None:
    ours.backward()
    theirs.backward()
    assert ours.data == pytest.approx(theirs.item(), **TOL)
    assert [v.grad for v in vs] == pytest.approx(t.grad.flatten().tolist(), **TOL)


RNG = random.Random(0)
PREDS = [RNG.uniform(-3, 3) for _ in range(7)]
PM1 = [RNG.choice([-1, 1]) for _ in range(7)]
BITS = [float(RNG.random() < 0.5) for _ in range(7)]


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse(reduction: str) -> None:
    targets = [RNG.uniform(-2, 2) for _ in PREDS]
    vs, t = leaves(PREDS), torch_leaf(PREDS)
    ours = losses.mse(vs, targets, reduction=reduction)
    theirs = F.mse_loss(t, torch.tensor(targets, dtype=torch.float64), reduction=reduction)
    check(ours, vs, theirs, t)


def test_mse_sum_is_the_lectures_loss() -> None:
    ys = [1.0, -1.0, -1.0, 1.0]
    preds = [Value(0.5), Value(-0.2), Value(0.1), Value(0.9)]
    lecture = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, preds))
    assert losses.mse(preds, ys, reduction="sum").data == pytest.approx(lecture.data, rel=1e-15)


def test_hinge() -> None:
    vs, t = leaves(PREDS), torch_leaf(PREDS)
    ours = losses.hinge(vs, PM1)
    y = torch.tensor(PM1, dtype=torch.float64)
    theirs = torch.relu(1 - y * t).mean()
    check(ours, vs, theirs, t)


def test_hinge_is_karpathys_expression_bit_for_bit() -> None:
    scores = leaves(PREDS)
    karpathy = [(1 + -yi * si).relu() for yi, si in zip(PM1, scores)]
    expected = (sum(karpathy) * (1.0 / len(karpathy))).data
    assert losses.hinge(scores, PM1).data == expected


@pytest.mark.parametrize("targets", [BITS, [0.3, 0.9, 0.0, 1.0, 0.5, 0.25, 0.75]])
def test_bce_with_logits(targets: list[float]) -> None:
    vs, t = leaves(PREDS), torch_leaf(PREDS)
    ours = losses.binary_cross_entropy_with_logits(vs, targets)
    theirs = F.binary_cross_entropy_with_logits(t, torch.tensor(targets, dtype=torch.float64))
    check(ours, vs, theirs, t)


def test_bce_gradient_at_exactly_zero_logit() -> None:
    # A zero-initialised model outputs exactly 0: the slope there must be sigmoid(0) - t = ±0.5.
    for target in (0.0, 1.0):
        z = Value(0.0)
        losses.binary_cross_entropy_with_logits([z], [target]).backward()
        assert z.grad == 0.5 - target


@pytest.mark.parametrize("z", [-1000.0, -40.0, 0.0, 40.0, 1000.0, 1e300, -1e300])
@pytest.mark.parametrize("target", [0.0, 1.0])
def test_bce_stable_for_huge_logits(z: float, target: float) -> None:
    v, t = Value(z), torch_leaf([z])
    ours = losses.binary_cross_entropy_with_logits([v], [target])
    theirs = F.binary_cross_entropy_with_logits(t, torch.tensor([target], dtype=torch.float64))
    ours.backward()
    theirs.backward()
    assert math.isfinite(ours.data) and math.isfinite(v.grad)
    assert ours.data == pytest.approx(theirs.item(), rel=1e-9, abs=1e-15)
    assert v.grad == pytest.approx(t.grad.item(), rel=1e-9, abs=1e-15)


def test_cross_entropy() -> None:
    rng = random.Random(1)
    logits = [[rng.uniform(-4, 4) for _ in range(5)] for _ in range(6)]
    targets = [rng.randrange(5) for _ in range(6)]
    vs = [leaves(row) for row in logits]
    t = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    ours = losses.cross_entropy(vs, targets)
    theirs = F.cross_entropy(t, torch.tensor(targets))
    check(ours, [v for row in vs for v in row], theirs, t)


@pytest.mark.parametrize(
    "row", [[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0], [1000.0, 1000.0, 1000.0]]
)
def test_cross_entropy_stable_for_logits_of_1000(row: list[float]) -> None:
    vs = leaves(row)
    t = torch.tensor([row], dtype=torch.float64, requires_grad=True)
    for target in range(3):
        for v in vs:
            v.grad = 0.0
        t.grad = None
        ours = losses.cross_entropy([vs], [target])
        theirs = F.cross_entropy(t, torch.tensor([target]))
        check(ours, vs, theirs, t)


def test_logsumexp_softmax_log_softmax() -> None:
    row = [2.0, -1.0, 0.5, 3.0]
    t = torch.tensor(row, dtype=torch.float64)
    assert losses.logsumexp(row).data == pytest.approx(torch.logsumexp(t, 0).item(), **TOL)
    assert [p.data for p in losses.softmax(row)] == pytest.approx(
        torch.softmax(t, 0).tolist(), **TOL
    )
    assert [p.data for p in losses.log_softmax(row)] == pytest.approx(
        torch.log_softmax(t, 0).tolist(), **TOL
    )
    big = [p.data for p in losses.softmax([1000.0, -1000.0, 999.0])]
    assert big == pytest.approx(torch.softmax(torch.tensor([1000.0, -1000.0, 999.0]), 0).tolist())


def test_l2_matches_torch_and_karpathy() -> None:
    ps = leaves(PREDS)
    t = torch_leaf(PREDS)
    check(losses.l2(ps, alpha=1e-4), ps, 1e-4 * (t * t).sum(), t)
    ps2 = leaves(PREDS)
    assert losses.l2(ps2, 1e-4).data == (1e-4 * sum(p * p for p in ps2)).data


def test_l1_matches_torch() -> None:
    ps = leaves(PREDS)
    t = torch_leaf(PREDS)
    check(losses.l1(ps, alpha=0.01), ps, 0.01 * t.abs().sum(), t)
    for bad in (-0.1, True, "0.1"):
        with pytest.raises(ValueError, match="l1: alpha"):
            losses.l1(leaves(PREDS), bad)


def test_losses_compose_with_backward_through_a_model() -> None:
    from micrograd.nn import MLP

    random.seed(3)
    model = MLP(3, [4, 2])
    xs = [[0.5, -1.0, 2.0], [1.0, 0.2, -0.3]]
    loss = losses.cross_entropy([model(x) for x in xs], [1, 0]) + losses.l2(model.parameters())
    loss.backward()
    assert any(p.grad != 0 for p in model.parameters())


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="2 predictions but 3 targets"):
        losses.mse([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="empty"):
        losses.hinge([], [])
    with pytest.raises(ValueError, match="-1 or \\+1"):
        losses.hinge([Value(0.3)], [0])
    with pytest.raises(ValueError, match="reduction"):
        losses.mse([1.0], [1.0], reduction="max")
    with pytest.raises(ValueError, match="class index"):
        losses.cross_entropy([[1.0, 2.0]], [2])
    with pytest.raises(TypeError, match="list of class logits"):
        losses.cross_entropy([Value(1.0)], [0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        losses.binary_cross_entropy_with_logits([0.0], [2.0])
    with pytest.raises(TypeError, match="str"):
        losses.mse(["a"], [1.0])
    with pytest.raises(ValueError, match="alpha"):
        losses.l2([Value(1.0)], alpha=-1)
    with pytest.raises(ValueError, match="at least one"):
        losses.logsumexp([])
