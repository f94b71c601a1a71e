"""Each op of a learner's Value on its own: forward value, `_backward` alone, then `backward()`."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import islice
from typing import Any

from ..engine import Value, grad
from .report import CheckReport
from .sandbox import (
    MAX_PREV,
    MAX_TIMEOUTS,
    Failed,
    attr,
    close,
    describe,
    fmt,
    number,
    repr_text,
    run,
)
from .table import (
    NAMES,
    UPSTREAM,
    Row,
    fallback_cause,
    is_unwrapped_number,
    local_causes,
    operand_hint,
)


class StopChecking(Exception):
    """Raised by `OpChecks.run` once MAX_TIMEOUTS checks ran out of time; `all()` ends there."""


class OpChecks:
    """Runs the rows and graphs against one learner class, filling a report (with `ValueChecker`,
    which adds the graph checks).

    Order matters for the hints: each op on its own first, then reused nodes (the += bug), then
    graphs where the visiting order and count matter, and only then gradients through backward()
    of ops built from others, which any earlier problem would also spoil.
    """

    def __init__(self, V: type, limit: float, report: CheckReport) -> None:
        self.V = V
        self.limit = limit
        self.report = report
        self.has_backward = True  # False when missing, or once it ran out of time
        self.wrong_ops: set[str] = set()  # ops whose own checks failed: later hints point back
        self.walk_wrong = False  # backward() visits nodes wrongly: skip what that would spoil
        self.good_rows: list[Row] = []  # ops right on their own, one node each
        self.assign_bug = False
        self.pending: list[tuple[Row, list[tuple[float, ...]]]] = []  # rows awaiting backward()
        self.downstream: list[str] = []  # ops built from wrong ones, wrong too
        self.unchecked: list[str] = []  # ops built from others, not checked: backward() is wrong
        self.shared_wrong: str = ""  # the shared-graph problem, reported if order() finds none
        self.missing_at: dict[str, tuple[int, list[str]]] = {}  # method -> its "missing" line
        self.timeouts = 0

    # small helpers ---------------------------------------------------------------------

    def defines(self, names: Sequence[str]) -> bool:
        return all(callable(getattr(self.V, n, None)) for n in names)

    def problem(self, text: str, detail: str = "") -> None:
        self.report.problems.append(text)
        if detail:
            self.report.details[text] = detail

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) under the time limit; after MAX_TIMEOUTS timeouts, nothing more is run, so a
        whole check(...) takes at most a few time limits however many ops hang."""
        if self.timeouts >= MAX_TIMEOUTS:
            raise StopChecking
        result = run(self.limit, fn, *args)
        if isinstance(result, Failed) and result.timeout:
            self.timeouts += 1
        return result

    def leaves(self, xs: Sequence[float]) -> list[Any] | Failed:
        made = []
        for x in xs:
            v = self.run(self.V, x)
            if isinstance(v, Failed):
                return v
            made.append(v)
        return made

    def data(self, node: Any) -> float | None:
        return number(attr(node, "data"))

    def grad(self, node: Any) -> float | None:
        return number(attr(node, "grad"))

    @staticmethod
    def where(xs: Sequence[float], names: str = NAMES) -> str:
        return ", ".join(f"{names[i]} = {fmt(x)}" for i, x in enumerate(xs))

    def backward(self, node: Any, label: str) -> bool:
        """node.backward(); False (reported) if it crashed. Stops all backward checks on a hang."""
        done = self.run(lambda: node.backward())
        if not isinstance(done, Failed):
            return True
        if done.timeout:
            self.has_backward = False
            self.problem(f"backward(): for {label}, backward() {done.text} — does its loop end? "
                         f"(no more gradients are checked)")
        else:
            self.problem(f"backward(): for {label}, backward() crashed: {done.text}")
        return False

    # the basics -------------------------------------------------------------------------

    def basics(self) -> bool:
        V, r = self.V, self.report
        a = self.run(V, 2.0)
        if isinstance(a, Failed):
            self.problem(f"Value(2.0) crashed: {a.text}")
            return False
        missing = [n for n in ("data", "grad", "_prev", "_op") if isinstance(attr(a, n), Failed)]
        if missing:
            self.problem(
                f"Value(2.0) has no {', '.join(missing)}: __init__ should set data, grad "
                f"(0.0), _prev (the children, empty for a leaf) and _op"
            )
            return False
        if self.data(a) != 2.0:
            self.problem(f"Value(2.0).data is {repr_text(a.data)}, expected 2.0")
            return False
        if self.grad(a) != 0.0:
            # Every _backward adds to grad: one cause, one line, and no gradient check after it
            # (each would crash or be off by the start value, the same cause a dozen times).
            self.problem(f"Value(2.0).grad is {repr_text(a.grad)}, expected 0.0: grads start at 0, "
                         f"since each _backward adds to them (gradients are checked once this "
                         f"is fixed)")
            self.has_backward = False
        prev = self.run(lambda: list(islice(a._prev, MAX_PREV)))
        if isinstance(prev, Failed) or prev:
            self.problem(f"Value(2.0)._prev is {repr_text(a._prev)}, expected empty: a leaf has no "
                         "children")
        if not callable(getattr(V, "backward", None)):
            self.has_backward = False
            r.missing.append("backward(): not implemented yet — only forward values are checked")
        r.passed.append("Value(2.0): data 2.0, grad 0.0, no children")
        return True

    def missing_line(self, key: str, item: str, text: Callable[[list[str]], str]) -> None:
        """One "not implemented yet" line per key (a ** 2, a ** 3, ... all need __pow__)."""
        if key in self.missing_at:
            i, items = self.missing_at[key]
            items.append(item)
            self.report.missing[i] = text(items)
            return
        self.missing_at[key] = (len(self.report.missing), [item])
        self.report.missing.append(text([item]))

    # each op on its own -------------------------------------------------------------------

    def row(self, row: Row) -> None:
        r = self.report
        if not self.defines(row.needs):
            method = row.needs[0]
            hint = ""
            if row.reflected:
                hint = (f" (Python calls a.{method}({row.expr.split()[0]}) when the number is on "
                        f"the left)")
            if row.extra:  # all on one line: they are not part of the lecture's path
                self.missing_line("beyond the lecture", method, lambda names: (
                    f"beyond the lecture, not implemented yet: {', '.join(names)} (define them "
                    f"to have them checked too)"))
                return
            self.missing_line(method, row.expr, lambda exprs: (
                f"{row.op}: {', '.join(exprs)} not implemented yet — define {method}{hint}"))
            return
        if row.op in self.wrong_ops:
            return  # one problem per op: its first row already said what is wrong
        derived = []
        for xs in row.points:
            outcome = self.point(row, xs)
            if outcome == "missing":
                return
            if outcome == "wrong":
                self.wrong_ops.add(row.op)
                return
            if outcome == "derived":
                derived.append(xs)
        if derived and self.has_backward:
            self.pending.append((row, derived))  # its gradients: after the graph checks
        elif self.has_backward:
            self.good_rows.append(row)  # one node, right on its own: tried with reuse later
            r.passed.append(f"{row.op}: {row.expr}, value and gradient at {len(row.points)} "
                            f"points")
        else:
            r.passed.append(f"{row.op}: {row.expr}, value at {len(row.points)} points")

    def point(self, row: Row, xs: tuple[float, ...]) -> str:
        """One point: 'ok', 'derived' (gradients checked later), 'wrong' (reported), 'missing'."""
        label = f"{row.op}: for out = {row.expr} with {self.where(xs)}"
        ref_in = [Value(x) for x in xs]
        ref = row.fn(*ref_in)
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            self.problem(f"{label}, Value() crashed: {ins.text}")
            return "wrong"
        out = self.run(row.fn, *ins)
        if isinstance(out, Failed):
            if row.number and out.exc is not None and is_unwrapped_number(out.exc):
                self.missing_line("numbers", row.expr, lambda exprs: (
                    f"{', '.join(exprs)}: not implemented yet — a plain number has no .data: "
                    f"wrap it first, other = other if isinstance(other, Value) else Value(other)"))
                return "missing"
            return self.wrong(row, f"{label}, it crashed: {out.text}{operand_hint(out.exc)}",
                              f"crashed: {out.text}")
        if isinstance(attr(out, "data"), Failed) or isinstance(attr(out, "_prev"), Failed):
            return self.wrong(row, f"{label}, it returned {repr_text(out)} ({type(out).__name__}), "
                              f"not a Value with data and _prev: each op returns a new Value(...)",
                              f"returned a {type(out).__name__}")
        got = self.data(out)
        if not close(got, ref.data):
            why = ""
            if row.reflected:
                why = (f" — Python calls a.{row.reflected}({row.expr.split()[0]}) for "
                       f"{row.expr}: it must compute {row.expr}, not the other way round")
            value = f"out.data is {describe(attr(out, 'data'))}, expected {fmt(ref.data)}"
            return self.wrong(row, f"{label}, {value}{why}", value)
        prev = self.run(lambda: list(islice(out._prev, MAX_PREV)))
        direct = not isinstance(prev, Failed) and all(any(p is v for p in prev) for v in ins)
        if row.primitive and not direct:
            self.problem(f"{label}, out._prev is {repr_text(attr(out, '_prev'))}: it should "
                         f"hold the inputs ({', '.join(NAMES[: len(xs)])}); backward() and "
                         f"draw_dot walk _prev")
            return "wrong"
        if not self.has_backward:
            return "ok"
        # An op whose node holds the inputs directly is checked on its own: out._backward(), then
        # backward() on that one node. A tanh built from exp, or a - b as a + (-b), is a graph:
        # it is checked through backward() after the graph checks.
        if not direct or not callable(attr(out, "_backward")):
            return "derived"
        if not self.local(row, xs, label, ref_in, ref):
            return "wrong"
        return "ok" if self.through_backward(row, xs, label, local_ok=True) else "wrong"

    def wrong(self, row: Row, problem: str, short: str) -> str:
        """Report a wrong forward value; for ops usually built from + * ** (-a, a - b, a / b, the
        reflected ones) while one of those is wrong, only as a consequence, on one line."""
        builds_on = row.op in ("neg", "-", "/") or bool(row.reflected)
        if builds_on and self.wrong_ops & {"+", "*", "**"}:
            self.downstream.append(f"{row.expr} ({short})")
        else:
            self.problem(problem)
        return "wrong"

    def local(self, row: Row, xs: tuple[float, ...], label: str, ref_in: list[Value],
              ref: Value) -> bool:
        """out._backward() alone, with out.grad = UPSTREAM: is the local derivative right?"""
        tried = self.one_backward(row, xs)
        if tried is None:
            return True  # reported by the forward check
        if isinstance(tried, Failed):
            self.problem(f"{label}, out._backward() crashed: {tried.text}")
            return False
        ins, got, want, out_data = tried
        for i, (g, w) in enumerate(zip(got, want)):
            if close(g, w):
                continue
            evidence: list[str] = []
            self.problem(f"{label} and out.grad = {fmt(UPSTREAM)}, out._backward() gives "
                         f"{NAMES[i]}.grad = {describe(attr(ins[i], 'grad'))}, expected "
                         f"{fmt(w)} — {self.cause(row, xs, out_data, got, want, evidence)}",
                         "\n".join(evidence))
            return False
        return True

    def one_backward(self, row: Row, xs: tuple[float, ...]) -> Any:
        """The learner's op at `xs` and its out._backward() with out.grad = UPSTREAM: (inputs,
        their grads, the grads it should give, out.data); None if the op itself failed, a Failed
        if _backward crashed."""
        ins = self.leaves(xs)
        out = self.run(row.fn, *ins)
        if isinstance(ins, Failed) or isinstance(out, Failed):
            return None
        # What out._backward() must give each input: the op's true derivative (micrograd's whole
        # graph differentiated), not what our own node's _backward gives. A learner's a - b may
        # be one node where ours is a + (-b): judged by what it computes, never by its shape.
        ref_in = [Value(x) for x in xs]
        ref = row.fn(*ref_in)
        want = [UPSTREAM * g for g in grad(ref, ref_in)]

        def step() -> None:
            out.grad = UPSTREAM
            out._backward()

        done = self.run(step)
        if isinstance(done, Failed):
            return done
        return ins, [self.grad(v) for v in ins], want, ref.data

    def cause(self, row: Row, xs: tuple[float, ...], out_data: float, got: list[float | None],
              want: list[float], evidence: list[str] | None = None) -> str:
        """The known mistake that fits this point and every other point of the row where the
        op is wrong too (tried again there): a cause is named only when the evidence singles
        it out, else what the derivative should be. `evidence` gets one line per point tried:
        the inputs, each grad out._backward() gave and the one it should give."""
        def seen(at: tuple[float, ...], g: list[float | None], w: list[float], note: str) -> None:
            if evidence is not None:
                grads = ", ".join(f"{NAMES[i]}.grad {describe(a)} (expected {fmt(b)})"
                                  for i, (a, b) in enumerate(zip(g, w)))
                evidence.append(f"{self.where(at)}, out.grad = {fmt(UPSTREAM)}: {grads}{note}")

        causes = local_causes(row, xs, out_data, got, want)
        seen(xs, got, want, "")
        for other in (*row.points, *_more_points(row)):
            if other == xs:
                continue
            tried = self.one_backward(row, other)
            if tried is None or isinstance(tried, Failed):
                continue
            _, g2, w2, o2 = tried
            if all(close(a, b) for a, b in zip(g2, w2)):
                seen(other, g2, w2, " — right here")
                continue  # right here (relu where a < 0): no evidence either way
            seen(other, g2, w2, "")
            if causes:
                fits = local_causes(row, other, o2, g2, w2)
                causes = [c for c in causes if c in fits]
        return causes[0] if causes else fallback_cause(row)

    def through_backward(self, row: Row, xs: tuple[float, ...], label: str,
                         local_ok: bool = False) -> bool:
        """out.backward() from fresh leaves; reports and returns False if a grad is wrong.

        `local_ok`: the op's _backward alone was right, so a wrong grad here is backward()'s.
        """
        ref_in = [Value(x) for x in xs]
        row.fn(*ref_in).backward()
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            return True
        out = self.run(row.fn, *ins)
        if isinstance(out, Failed) or not self.backward(out, f"out = {row.expr}"):
            return isinstance(out, Failed)
        for i, (v, w) in enumerate(zip(ins, ref_in)):
            g = self.grad(v)
            if close(g, w.grad):
                continue
            got = f"{NAMES[i]}.grad is {describe(attr(v, 'grad'))}, expected {fmt(w.grad)}"
            if local_ok:
                self.has_backward = False  # every later check would say the same
                self.problem(f"{label}, after out.backward() {got} — out._backward() alone is "
                             f"right, so look at backward(): does it set self.grad = 1.0 first, "
                             f"then call every node's _backward, output first? (no more "
                             f"gradients are checked)")
            elif row.primitive or row.rule and not self.wrong_ops:
                self.problem(f"{label}, after out.backward() {got} — expected {row.rule}")
            elif self.wrong_ops:
                self.downstream.append(f"{row.expr} ({got} at {self.where(xs)})")
            else:
                self.problem(f"{label}, after out.backward() {got} — its _backward, or the ops "
                             f"it is built from")
            return False
        return True

    def derived(self) -> None:
        """Gradients of the ops built from others, once the graph checks have run."""
        for row, points in self.pending:
            if not self.has_backward:
                break
            if self.walk_wrong or self.assign_bug:
                self.unchecked.append(row.expr)
                continue
            for xs in points:
                label = f"{row.op}: for out = {row.expr} with {self.where(xs)}"
                if not self.through_backward(row, xs, label):
                    self.wrong_ops.add(row.op)
                    break
            else:
                self.report.passed.append(f"{row.op}: {row.expr}, value and gradient at "
                                          f"{len(row.points)} points")
        if self.downstream:
            self.problem(f"ops built from the ones above are wrong too: "
                         f"{'; '.join(self.downstream)} — fix the problems above first")
        if self.unchecked:
            self.report.notes.append(f"gradients of {', '.join(self.unchecked)} (built from "
                                     f"other ops) are checked once the problems above are fixed")


def _more_points(row: Row) -> list[tuple[float, ...]]:
    """A few more points near the row's own (seeded: the same every run), where micrograd's op
    is defined, so one lucky point cannot single out the wrong cause."""
    rng = random.Random(row.expr)
    points = []
    for _ in range(4):
        xs = tuple(x * rng.uniform(0.6, 1.4) + rng.uniform(-0.2, 0.2) for x in row.points[0])
        try:
            row.fn(*(Value(x) for x in xs))
        except (ArithmeticError, ValueError):
            continue
        points.append(xs)
    return points
