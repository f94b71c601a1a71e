"""Each op whose value and gradient are right on its own, tried inside bigger graphs: its inputs
computed by a `*` first (``op(a * 2)``: a result that forgets its child leaves a.grad at 0, which
a one-node graph hides) and its first input used again (``op(a) + a``: a _backward that assigns
(=) where it must accumulate (+=) overwrites the share the + gave)."""

from __future__ import annotations

import re
from typing import Any

from ..engine import Value, grad
from .ops import OpChecks
from .table import NAMES, UPSTREAM, Row, crash_hint, forgets_cause
from .timeout import Failed, attr
from .values import close, describe, fmt


class ComposeChecks(OpChecks):
    def kept_seed(self, row: Row, xs: tuple[float, ...]) -> float | None:
        """out.grad after backward() on a fresh `row` whose out.grad was set to UPSTREAM first:
        1 if backward() seeds it, UPSTREAM if it never does, 0 if the walk wipes it (None:
        cannot tell)."""
        applied = self.applied(row, xs)
        if applied is None:
            return None
        out = applied[1]

        def probe() -> float | None:
            out.grad = UPSTREAM
            out.backward()
            return self.grad(out)

        got = self.run(probe)
        return None if isinstance(got, Failed) else got

    def compose(self) -> None:
        """Each op whose value and gradient are right, tried inside a bigger graph: its inputs
        computed by a `*` first (``op(a * 2)``: a result that forgets its child leaves a.grad at
        0), and its first input used again after it (``op(a) + a``: a _backward that assigns
        (=) overwrites the share the + gave)."""
        if not self.has_backward or not self.defines(["__add__", "__mul__"]):
            return
        if self.assign_bug or self.walk_wrong or self.wrong_ops & {"+", "*"}:
            if self.checked_rows:
                self.report.skipped.append(
                    "every op composed, op(a * 2), and with its input used again, op(a) + a"
                )
            return
        reused_wrong: list[str] = []
        for row in list(self.checked_rows):
            if row.op in self.wrong_ops:
                continue
            if not self.composed(row):
                self.wrong_ops.add(row.op)
                continue
            if not self.reused(row, reused_wrong):
                self.wrong_ops.add(row.op)
        if reused_wrong:  # ops built from a wrong one (a / b from **) fail the same way
            also = ", ".join(dict.fromkeys(p.split(":")[0] for p in reused_wrong[1:]))
            self.problem(
                reused_wrong[0]
                + (
                    f" (the same with a reused input in {also}, likely built from it)"
                    if also
                    else ""
                )
            )

    def composed(self, row: Row) -> bool:
        xs = row.points[0]
        expr = re.sub(r"\b([ab])\b", r"(\1*2)", row.expr)
        label = f"{row.op}: for out = {expr} with {self.where(xs)}"

        def build(V: type, *leaves: Any) -> tuple[list[Any], Any]:
            mids = [leaf * V(2.0) for leaf in leaves]
            return mids, row.fn(*mids)

        ref_in = [Value(x / 2) for x in xs]
        build(Value, *ref_in)[1].backward()
        ins = self.leaves([x / 2 for x in xs])
        if isinstance(ins, Failed):
            return True
        built = self.run(build, self.V, *ins)
        if isinstance(built, Failed):
            self.problem(f"{label}, it crashed: {built.text}{crash_hint(built)}")
            return False
        mids, out = built
        if not self.backward(out, expr):
            return False
        got = self.wrong_grad(ins, ref_in)
        if got is not None:
            lost = self.forgotten(out, mids)
            why = (
                forgets_cause(row, lost)
                if lost
                else "alone it is right, but its gradient does not flow on to what its input was "
                "computed from: does its _backward add to the input's own grad?"
            )
            self.problem(
                f"{label}, {got} — {why}", same=f"forgets {row.op}" if lost else "", where=row.expr
            )
            return False
        self.report.passed.append(f"{row.op}: {expr}, its input computed by another op")
        return True

    def reused(self, row: Row, wrong: list[str]) -> bool:
        xs = row.points[0]
        expr = f"b = {row.expr} + a"
        label = f"{row.op}: for {expr} with {self.where(xs)}"
        ref_in = [Value(x) for x in xs]
        (row.fn(*ref_in) + ref_in[0]).backward()
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            return True
        out = self.run(lambda: row.fn(*ins) + ins[0])
        if isinstance(out, Failed):
            self.problem(f"{label}, it crashed: {out.text}{crash_hint(out)}")
            return False
        if not self.backward(out, expr):
            return False
        got = self.wrong_grad(ins, ref_in)
        if got is not None:
            if self.assigns(row, xs):
                why = (
                    f"{row.op}'s _backward assigns (=) where it must accumulate (+=): a.grad "
                    f"gets a share from each use of a"
                )
            else:
                why = (
                    "a.grad should be the sum of a share from each use of a: one share is "
                    "lost (does something reset a.grad, or skip a node used twice?)"
                )
            wrong.append(f"{label}, {got} — {why}")
            return False
        self.report.passed.append(f"{row.op}: {expr}")
        return True

    def wrong_grad(self, ins: list[Any], ref_in: list[Value]) -> str | None:
        """The first learner's leaf whose grad is not micrograd's, said; None if all agree."""
        for i, (v, w) in enumerate(zip(ins, ref_in)):
            if not close(self.grad(v), w.grad):
                return f"{NAMES[i]}.grad is {describe(attr(v, 'grad'))}, expected {fmt(w.grad)}"
        return None

    def assigns(self, row: Row, xs: tuple[float, ...]) -> bool:
        """Whether the op's _backward overwrites a grad that already holds something: with
        a.grad set to 10 first, it leaves exactly its own share (the evidence for "= where +=
        belongs", never guessed from a wrong sum alone)."""
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            return False
        out = self.run(row.fn, *ins)
        if isinstance(out, Failed) or not callable(attr(out, "_backward")):
            return False
        ref_in = [Value(x) for x in xs]
        share = grad(row.fn(*ref_in), ref_in)

        def step() -> None:
            for v in ins:
                v.grad = 10.0
            out.grad = 1.0
            out._backward()

        done = self.run(step)
        if isinstance(done, Failed):
            return False
        got = [self.grad(v) for v in ins]
        return any(close(g, s) and not close(g, 10.0 + s) for g, s in zip(got, share))
