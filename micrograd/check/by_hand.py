"""Each op's `_backward` run by hand, for a Value that has no `backward()` yet.

That is where notebook 2's learner stands after the ops exercise, and where the lecture stands
before it writes `backward()`: it sets ``out.grad`` and calls ``out._backward()`` itself. So
does this check, for every op whose result is one node over its inputs:

- with the inputs' grads at 0 and ``out.grad = UPSTREAM``, each input's grad must be the local
  derivative times out.grad (`OpChecks.local`, which names the classic mistakes);
- with the inputs' grads already at `START`, `_backward` must add to them: a grad that comes
  out as if it had started at 0 was assigned (``=``) where the lecture accumulates (``+=``), the
  mistake that breaks ``a + a`` once `backward()` exists.

Ops built from others (a learner's ``a - b`` as ``a + (-b)``) are left to `backward()`, as
before. Called by `ValueChecker.all` after the forward checks.
"""

from __future__ import annotations

from typing import Any

from ..engine import Value, grad
from .table import NAMES, UPSTREAM
from .timeout import Failed, attr
from .values import close, describe, fmt

START = 0.75  # the grad each input already has: what `_backward` must add to, not overwrite
BACKWARD_MISSING = "backward(): not implemented yet — only forward values are checked"
BY_HAND = (
    "backward(): not implemented yet — each op's _backward is checked by hand, as the "
    "lecture does before backward() exists (out.grad = ...; out._backward())"
)


def check_by_hand(ops: Any, rows: Any) -> None:
    """Run each defined, forward-correct op's `_backward` by hand (`ops` is the `OpChecks` of
    the learner's class); nothing when the class has `backward()` or grads do not start at 0."""
    if callable(getattr(ops.V, "backward", None)) or BACKWARD_MISSING not in ops.report.missing:
        return
    leaf = ops.run(ops.V, 2.0)
    if isinstance(leaf, Failed) or ops.grad(leaf) != 0.0:
        return  # basics() said why; every grad here would be off by the start
    ops.report.missing[ops.report.missing.index(BACKWARD_MISSING)] = BY_HAND
    for row in rows:
        if row.op in ops.wrong_ops or not ops.defines(row.needs):
            continue
        judged = 0
        for xs in row.points:
            verdict = _one(ops, row, xs)
            if verdict == "wrong":
                ops.wrong_ops.add(row.op)
                break
            judged += verdict == "ok"
        else:
            if judged:
                ops.report.passed.append(
                    f"{row.op}: {row.expr}, _backward by hand at {judged} "
                    f"points (it adds to the grads)"
                )


def _one(ops: Any, row: Any, xs: tuple[float, ...]) -> str:
    """'ok', 'wrong' (reported) or 'skip' (not one node over its inputs, or the op failed)."""
    ins = ops.leaves(xs)
    if isinstance(ins, Failed):
        return "skip"
    out = ops.run(row.fn, *ins)
    if isinstance(out, Failed) or not callable(attr(out, "_backward")):
        return "skip"
    prev = ops.children(out)
    if isinstance(prev, Failed) or not all(any(p is v for p in prev) for v in ins):
        return "skip"  # built from other ops: backward() will check it
    label = f"{row.op}: for out = {row.expr} with {ops.where(xs)}"
    if not ops.local(row, xs, label):
        return "wrong"
    # again, each input's grad already START: _backward must add to it
    ref_in = [Value(x) for x in xs]
    want = [UPSTREAM * g for g in grad(row.fn(*ref_in), ref_in)]

    def step() -> None:
        for v in ins:
            v.grad = START
        out.grad = UPSTREAM
        out._backward()

    done = ops.run(step)
    if isinstance(done, Failed):
        return "skip"  # the same call crashed in `local` and was reported there
    for i, (v, w) in enumerate(zip(ins, want)):
        got = ops.grad(v)
        if close(got, START + w) or close(w, 0.0):
            continue  # right, or a zero derivative (relu below 0): = and += agree there
        name = NAMES[i]
        if close(got, w):
            cause = (
                f"does _backward assign (=) instead of accumulating (+=)? A node used twice, "
                f"as in {name} + {name}, needs both contributions added"
            )
        else:
            cause = f"_backward should add {fmt(w)} to {name}.grad"
        ops.problem(
            f"{label}, {name}.grad = {fmt(START)} and out.grad = {fmt(UPSTREAM)} before "
            f"out._backward(): {name}.grad is {describe(attr(v, 'grad'))} after it, "
            f"expected {fmt(START + w)} — {cause}"
        )
        return "wrong"
    return "ok"
