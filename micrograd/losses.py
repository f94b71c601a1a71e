"""Loss functions built from `Value` ops, so their gradients come from backprop for free.

Each batch loss takes lists (predictions as Values or numbers, targets as numbers) and returns one
`Value`, the mean over the batch unless ``reduction='sum'``:

    mse(preds, targets)                        mean of (p - t)**2 (the lecture uses the sum)
    hinge(scores, ys)                          karpathy's SVM max-margin loss, ys in {-1, +1}
    binary_cross_entropy_with_logits(z, t)     t in {0, 1} (or a probability); stable
    cross_entropy(logits, targets)             softmax cross-entropy; targets are class indices
    l2(parameters, alpha)                      alpha * sum(p*p), karpathy's regularisation

Each is the mean of a *per-sample term* (`hinge_term`, `mse_term`, ...), plain Value code for one
sample that never branches on data, so `micrograd.jit` can trace it once and replay it over a
batch; `check_targets` is the one check of the labels. Also `logsumexp`, `softmax` and
`log_softmax` (exact stable rewrites, no ``log(x + eps)``) and `softplus` (the engine's op).

Each loss is declared once, in `LOSSES` (a `Loss`: its term, its batch function, its outputs,
how a class becomes a target, its title and formula), and `micrograd.train`, `train.jit_step`, the
demo and the playground's Train view read it there; `predict` is how a sample's outputs give its
class, for every loss and every caller.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .core.floats import FLOAT_MAX_TEXT
from .engine import Operand, Value

REDUCTIONS = ("mean", "sum")


def _value(x: Operand, what: str) -> Value:
    if isinstance(x, Value):
        return x
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{what}: expected a Value or a real number, got {type(x).__name__} {x!r}")
    return Value(x)  # the engine says what is wrong with, e.g., a 400-digit int


def _target(t: object, what: str) -> float | Value:
    """A target as a float (checked), or a Value as it is (e.g. a placeholder being traced)."""
    if isinstance(t, Value):
        return t
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{what}: targets must be real numbers, got {type(t).__name__} {t!r}")
    try:
        return float(t)
    except OverflowError:
        raise OverflowError(
            f"{what}: a target is too large for a float ({FLOAT_MAX_TEXT})"
        ) from None


def _pairs(preds: Sequence, targets: Sequence, what: str) -> list[tuple]:
    preds, targets = list(preds), list(targets)
    if len(preds) != len(targets):
        raise ValueError(
            f"{what}: got {len(preds)} predictions but {len(targets)} targets (need one each)"
        )
    if not preds:
        raise ValueError(f"{what}: the batch is empty")
    return list(zip(preds, targets))


def _reduce(terms: list[Value], reduction: str, what: str) -> Value:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{what}: reduction must be 'mean' or 'sum', got {reduction!r}")
    total = Value.sum(terms)
    # Multiply by 1/n rather than divide: karpathy's `sum(losses) * (1.0 / len(losses))`, so the
    # demo reproduces his numbers bit for bit.
    return total if reduction == "sum" else total * (1.0 / len(terms))


def check_target(loss: str, t: object, n_classes: int | None = None) -> float | Value:
    """One target for `loss` as the loss uses it (a float, or an int class index), else the
    error every path raises; a Value (e.g. a placeholder being traced) is used as it is."""
    if loss == "cross_entropy":
        if (
            isinstance(t, bool)
            or not isinstance(t, numbers.Integral)
            or not (n_classes is None or 0 <= t < n_classes)
        ):
            raise ValueError(
                f"cross_entropy: target must be a class index in [0, {n_classes}), got {t!r}"
            )
        return int(t)  # type: ignore[return-value]
    what = "binary_cross_entropy_with_logits" if loss == "bce" else loss
    tv = _target(t, what)
    if isinstance(tv, Value):
        return tv
    if loss == "hinge" and tv not in (-1.0, 1.0):
        raise ValueError(f"hinge: labels must be -1 or +1, got {t!r}")
    if loss == "bce" and not 0.0 <= tv <= 1.0:
        raise ValueError(f"binary_cross_entropy_with_logits: targets must be in [0, 1], got {t!r}")
    return tv


def check_targets(loss: str, targets: Sequence, n_classes: int | None = None) -> list:
    """`check_target` over a batch (for code that computes the loss another way, e.g. jit)."""
    return [check_target(loss, t, n_classes) for t in targets]


# ---------------------------------------------------------------- per-sample terms


def mse_term(pred: Operand, t: Operand) -> Value:
    """(pred - t)**2 for one sample."""
    return (_value(pred, "mse") - _target(t, "mse")) ** 2


def hinge_term(score: Operand, y: Operand) -> Value:
    """``(1 + -y*score).relu()`` for one sample, y = ±1: zero once the score is on y's side of 0
    by a margin of 1."""
    return (1 + -y * _value(score, "hinge")).relu()  # type: ignore[operator]


def bce_term(z: Operand, t: Operand) -> Value:
    """-[t log σ(z) + (1-t) log(1 - σ(z))] for one logit z, as softplus(z) - t*z (never log 0)."""
    z = _value(z, "binary_cross_entropy_with_logits")
    return softplus(z) - t * z  # type: ignore[operator]


def cross_entropy_term(logits: Sequence[Operand], target: int | Sequence[Operand]) -> Value:
    """logsumexp(z) - z[target] for one sample's class scores. `target` is a class index, or a
    one-hot row (then z[target] is a dot with it: the same graph whatever the class, for jit)."""
    if isinstance(logits, (Value, numbers.Number)):
        raise TypeError(
            f"cross_entropy: each sample needs a list of class logits, got {logits!r} "
            f"(for one output per sample use binary_cross_entropy_with_logits)"
        )
    zs = [_value(z, "cross_entropy") for z in logits]
    if isinstance(target, Sequence):
        return logsumexp(zs) - Value.dot(zs, target)
    return logsumexp(zs) - zs[target]


# ---------------------------------------------------------------- batch losses


def mse(preds: Sequence[Operand], targets: Sequence[Operand], reduction: str = "mean") -> Value:
    """Mean squared error: mean of (pred - target)**2 (``reduction='sum'``: the lecture's sum)."""
    terms = [mse_term(p, t) for p, t in _pairs(preds, targets, "mse")]
    return _reduce(terms, reduction, "mse")


def hinge(scores: Sequence[Operand], ys: Sequence[Operand], reduction: str = "mean") -> Value:
    """The SVM max-margin loss of karpathy's demo: mean of `hinge_term`, labels y = ±1."""
    terms = [hinge_term(s, check_target("hinge", y)) for s, y in _pairs(scores, ys, "hinge")]
    return _reduce(terms, reduction, "hinge")


def softplus(x: Operand) -> Value:
    """log(1 + e^x), without overflow: the engine's `Value.softplus` op (one node), for numbers
    too."""
    return _value(x, "softplus").softplus()


def binary_cross_entropy_with_logits(
    logits: Sequence[Operand], targets: Sequence[Operand], reduction: str = "mean"
) -> Value:
    """Mean of `bce_term`: targets are 0/1 labels (or probabilities in [0, 1]); PyTorch's
    `BCEWithLogitsLoss`."""
    pairs = _pairs(logits, targets, "binary_cross_entropy_with_logits")
    terms = [bce_term(z, check_target("bce", t)) for z, t in pairs]
    return _reduce(terms, reduction, "binary_cross_entropy_with_logits")


def _running_max(zs: list[Value]) -> Value:
    # max(a, b) = a + relu(b - a), as a graph: the same ops whatever the values. Its exact value
    # does not matter (the identity below holds for any m); it only keeps exp() from overflowing.
    m = zs[0]
    for z in zs[1:]:
        m = m + (z - m).relu()
    return m


def logsumexp(logits: Sequence[Operand]) -> Value:
    """log(sum(exp(z_i))), computed as m + log(sum(exp(z_i - m))) with m = max z_i.

    The identity holds for any m, so the gradient is softmax(z) (up to rounding); choosing the max
    makes every exp() at most 1, so logits of ±1000 are fine.
    """
    zs = [_value(z, "logsumexp") for z in logits]
    if not zs:
        raise ValueError("logsumexp: needs at least one logit, got none")
    m = _running_max(zs)
    return Value.sum([(z - m).exp() for z in zs]).log() + m


def log_softmax(logits: Sequence[Operand]) -> list[Value]:
    """z_i - logsumexp(z), for each i (stable)."""
    zs = [_value(z, "log_softmax") for z in logits]
    lse = logsumexp(zs)
    return [z - lse for z in zs]


def softmax(logits: Sequence[Operand]) -> list[Value]:
    """exp(z_i) / sum(exp(z_j)): probabilities that sum to 1 (stable: the max is subtracted)."""
    zs = [_value(z, "softmax") for z in logits]
    if not zs:
        raise ValueError("softmax: needs at least one logit, got none")
    m = _running_max(zs)
    es = [(z - m).exp() for z in zs]
    total = Value.sum(es)
    return [e / total for e in es]


def cross_entropy(
    logits: Sequence[Sequence[Operand]], targets: Sequence[int], reduction: str = "mean"
) -> Value:
    """Softmax cross-entropy: mean over samples of `cross_entropy_term`.

    `logits` holds one list of class scores per sample (e.g. ``model.outputs(x)``), `targets`
    the index of the right class; PyTorch's `F.cross_entropy`.
    """
    terms = []
    for z, t in _pairs(logits, targets, "cross_entropy"):
        n = len(z) if not isinstance(z, (Value, numbers.Number)) else None
        terms.append(cross_entropy_term(z, check_target("cross_entropy", t, n) if n else 0))
    return _reduce(terms, reduction, "cross_entropy")


def l1(parameters: Iterable[Value], alpha: float = 1e-4) -> Value:
    """L1 regularisation, ``alpha * sum(|p|)``: it pulls every weight toward 0 by the same amount
    (alpha per unit of loss), so small weights end at exactly 0, unlike L2's pull in proportion."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or alpha < 0:
        raise ValueError(f"l1: alpha must be a non-negative number, got {alpha!r}")
    return alpha * Value.sum(p.abs() for p in parameters)


def l2(parameters: Iterable[Value], alpha: float = 1e-4) -> Value:
    """L2 regularisation, ``alpha * sum(p*p)`` (karpathy's demo uses alpha = 1e-4)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or alpha < 0:
        raise ValueError(f"l2: alpha must be a non-negative number, got {alpha!r}")
    ps = list(parameters)
    # One fused node, not 2n (n products and their sum): dot adds p*p in the same order as
    # karpathy's sum(p*p for p in ps) and hands each p the same two p.data * grad terms as
    # p*p does, so value and gradients are the same bit for bit.
    return alpha * Value.dot(ps, ps)


# ---------------------------------------------------------------- the classes a model predicts


def argmax(outputs: Sequence) -> int:
    """Index of the largest output (the first one on ties); Values or numbers."""
    vals = [o.data if isinstance(o, Value) else float(o) for o in outputs]
    return max(range(len(vals)), key=vals.__getitem__)


def predict(outputs: Any) -> int:
    """The class a sample's outputs give: one output s (a Value, a number, or a list of one)
    gives 1 where s > 0, else 0 (labels ±1 or 0/1); several give the largest's index."""
    if isinstance(outputs, Sequence) and len(outputs) > 1:
        return argmax(outputs)
    s = outputs[0] if isinstance(outputs, Sequence) else outputs
    return 1 if (s.data if isinstance(s, Value) else s) > 0 else 0


def predict_rows(outputs: Any) -> Any:
    """`predict` for a batch at once: the class of each row of an (n, k) array of outputs (a
    numpy array: its own methods, so this module imports no numpy)."""
    return (outputs[:, 0] > 0).astype(int) if outputs.shape[1] == 1 else outputs.argmax(axis=1)


# ---------------------------------------------------------------- the losses, declared once


@dataclass(frozen=True)
class Loss:
    """A loss, declared once: what training, the demo, jit and the Train view know of it."""

    name: str  # its key, as fit(loss=...) takes it
    title: str  # how a menu names it
    formula: str  # the batch loss, as a page writes it
    targets: str  # what a target is, as a page writes it
    outputs: str  # 'one' (one output s per sample) or 'per class' (one per class): see predict
    term: Callable[..., Value]  # the per-sample term: term(model(x), target)
    batch: Callable[..., Value]  # the batch loss: batch(outputs, targets, reduction='mean')
    target_of: Callable[[int, int], Any]  # (class, number of classes) -> its target
    class_of: Callable[[Any], int]  # a target -> its class

    def sample(self, zs: Sequence[Value], target: Any) -> Value:
        """The per-sample term on a list of outputs (``model.outputs(x)``, one per output)."""
        return self.term(zs[0] if self.outputs == "one" else list(zs), target)

    def accuracy(self, outputs: Sequence, targets: Sequence) -> float:
        """The share of samples whose `predict`ed class is their target's."""
        hits = [predict(o) == self.class_of(t) for o, t in zip(outputs, targets)]
        return sum(hits) / len(hits)


def _plus_minus(t: Any) -> int:
    return 1 if float(t) > 0 else 0


LOSSES: dict[str, Loss] = {
    "hinge": Loss(
        "hinge",
        "Hinge (SVM)",
        "L = 1/N Σᵢ max(0, 1 − yᵢ·sᵢ)",
        "yᵢ = ±1",
        "one",
        hinge_term,
        hinge,
        lambda c, k: 2.0 * c - 1.0,
        _plus_minus,
    ),
    "bce": Loss(
        "bce",
        "Binary cross-entropy",
        "L = 1/N Σᵢ −[tᵢ·log σ(sᵢ) + (1 − tᵢ)·log(1 − σ(sᵢ))]",
        "tᵢ ∈ {0, 1}",
        "one",
        bce_term,
        binary_cross_entropy_with_logits,
        lambda c, k: float(c),
        lambda t: 1 if float(t) > 0.5 else 0,
    ),
    "mse": Loss(
        "mse",
        "Mean squared error",
        "L = 1/N Σᵢ (sᵢ − yᵢ)²",
        "yᵢ = ±1",
        "one",
        mse_term,
        mse,
        lambda c, k: 2.0 * c - 1.0,
        _plus_minus,
    ),
    "cross_entropy": Loss(
        "cross_entropy",
        "Cross-entropy (softmax)",
        "L = 1/N Σᵢ −log softmax(zᵢ)[cᵢ] = 1/N Σᵢ (log Σₖ e^zᵢₖ − zᵢ,cᵢ)",
        "cᵢ: the class",
        "per class",
        cross_entropy_term,
        cross_entropy,
        lambda c, k: c,
        lambda t: t if isinstance(t, numbers.Integral) else argmax(t),
    ),
}

TERMS = {name: loss.term for name, loss in LOSSES.items()}  # each loss's per-sample term
