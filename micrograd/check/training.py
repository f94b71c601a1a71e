"""A learner's training step, judged by what it does to a network: `check(train_step=fn)`.

`fn(model, xs, ys, lr)` is one step as the lecture writes it: forward every sample, a loss, zero
the grads, backward, then ``p.data += -lr * p.grad`` for every parameter; it returns the loss. The
checker runs it on a micrograd `MLP` (the lecture's 3-4-4-1 tanh network and its four points),
so whatever loss the learner chose, its true gradient is known: `micrograd.grad` of the returned
loss, computed aside. Two steps in a row then tell each classic mistake apart by its numbers:

- the update climbs instead of descends (``+= lr * p.grad``);
- the grads are zeroed between backward() and the update (nothing moves);
- the grads are never zeroed (the second step uses the sum of both steps' gradients);
- `lr` is ignored, or the step changes the inputs or targets, or returns no loss.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from ..engine import Value, grad
from ..nn import MLP
from .report import CheckReport
from .sandbox import Failed, fmt, run

LR = 0.05  # the lecture's learning rate
XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]
REL = 1e-6  # how close a parameter's move must be to a rule to be called by it


def check_train_step(fn: Callable[..., Any], limit: float, report: CheckReport) -> None:
    """Run the learner's step twice on a fresh network and report what it did, by cause."""
    if not callable(fn):
        raise TypeError(f"check: train_step must be a function, got {type(fn).__name__}")
    state = random.getstate()
    random.seed(1337)
    model = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
    random.setstate(state)
    params = model.parameters()
    xs = [[Value(x) for x in row] for row in XS]  # Values, so a step that moves them shows
    ys = list(YS)
    previous: list[float] | None = None  # the first step's true gradient
    for step in (1, 2):
        before = [p.data for p in params]
        out = run(limit, fn, model, xs, ys, LR)
        where = f"train_step, step {step}"
        if isinstance(out, Failed):
            report.problems.append(f"{where}: it crashed: {out.text}")
            return
        if not isinstance(out, Value):
            report.problems.append(
                f"{where}: it returned {type(out).__name__} {str(out)[:40]!r}; return the loss "
                f"(the Value you called backward() on), so its gradient can be checked"
            )
            return
        true = list(grad(out, params))  # d loss / d p at the weights the loss was computed with
        moved = [p.data - b for p, b in zip(params, before)]
        cause = _cause(moved, true, previous, [p.grad for p in params])
        if cause:
            report.problems.append(f"{where}: {cause}")
            return
        previous = true
    if any(v.data != x for row, vrow in zip(XS, xs) for x, v in zip(row, vrow)) or ys != YS:
        report.problems.append(
            "train_step: it changed the inputs or the targets: update only model.parameters()"
        )
        return
    report.passed.append(
        "train_step: two steps, each p.data += -lr * p.grad with the grads of that step's loss"
    )


def _cause(moved: list[float], true: list[float], previous: list[float] | None,
           grads: list[float]) -> str:
    """Why the parameters moved by `moved`, when each should have moved by -LR * true; '' if
    they did."""
    if _all_close(moved, [-LR * g for g in true]):
        return ""
    if not any(moved):
        if all(g == 0 for g in grads):
            return ("no parameter moved, and every p.grad is 0 — are the grads zeroed between "
                    "backward() and the update? zero them before backward()")
        return "no parameter moved: update each p.data by -lr * p.grad"
    if _all_close(moved, [LR * g for g in true]):
        return ("every parameter moved up its gradient (p.data += lr * p.grad): that climbs the "
                "loss; step against it, p.data += -lr * p.grad")
    if previous is not None and _all_close(moved, [-LR * (g + h) for g, h in zip(true, previous)]):
        return ("the update used this step's gradient plus the last one's: the grads were never "
                "zeroed — set p.grad = 0.0 for every parameter before backward()")
    if _all_close(moved, [-g for g in true]):
        return "each parameter moved by -p.grad, not -lr * p.grad: the learning rate is ignored"
    worst = max(range(len(moved)), key=lambda i: abs(moved[i] + LR * true[i]))
    return (f"parameter {worst} moved by {fmt(moved[worst])}, expected {fmt(-LR * true[worst])} "
            f"(-lr × its gradient, {fmt(true[worst])})")


def _all_close(got: list[float], want: list[float]) -> bool:
    return all(math.isclose(g, w, rel_tol=REL, abs_tol=1e-12) for g, w in zip(got, want))

