"""Each op of a learner's Value on its own: forward value, `_backward` alone, then `backward()`
(`compose.py` then tries each one inside bigger graphs)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

from ..engine import Value, grad
from .by_hand import BACKWARD_MISSING
from .report import CheckReport
from .table import (
    NAMES,
    UPSTREAM,
    Row,
    crash_hint,
    fallback_cause,
    forgets_cause,
    is_unwrapped_number,
    local_causes,
    more_points,
    operand_hint,
    walk_cause,
)
from .timeout import MAX_PREV, Failed, Runner, attr, crash_frame
from .values import close, describe, fmt, number, repr_text

WRAP = "other = other if isinstance(other, Value) else Value(other)"
MAX_WALK = 5000  # nodes read when asking whether an input is reachable from an op's result


class OpChecks:
    """Runs the rows and graphs against one learner class, filling a report (with `ValueChecker`,
    which adds the graph checks).

    Order matters for the hints: each op on its own first, then reused nodes (the += bug), then
    graphs where the visiting order and count matter, then gradients through backward() of ops
    built from others, and last every op composed and reused; any earlier problem would spoil
    the later checks, so they are skipped (and listed as skipped) after one.
    """

    def __init__(self, V: type, run: Runner, report: CheckReport) -> None:
        self.V = V
        self.run = run
        self.report = report
        self.has_backward = True  # False when missing, or once it hung or crashed by itself
        self.wrong_ops: set[str] = set()  # ops whose own checks failed: later hints point back
        self.walk_wrong = False  # backward() visits nodes wrongly: skip what that would spoil
        self.checked_rows: list[Row] = []  # rows whose values and gradients are right
        self.assign_bug = False
        self.pending: list[tuple[Row, list[tuple[float, ...]]]] = []  # rows awaiting backward()
        self.downstream: list[str] = []  # ops built from wrong ones, wrong too
        self.unchecked: list[str] = []  # ops built from others, not checked: backward() is wrong
        self.shared_wrong: str = ""  # the shared-graph problem, reported if order() finds none
        self.missing_methods: dict[str, list[str]] = {}  # method -> the expressions needing it
        self.missing_reflected: set[str] = set()
        self.number_ok: list[str] = []  # expressions with a plain number that work
        self.number_crashes: list[tuple[str, str]] = []  # (expression, crash) for a bare number

    # small helpers ---------------------------------------------------------------------

    def defines(self, names: Sequence[str]) -> bool:
        return all(callable(getattr(self.V, n, None)) for n in names)

    def problem(self, text: str, detail: str = "", same: str = "", where: str = "") -> None:
        self.report.add(text, detail, same, where)

    def leaves(self, xs: Sequence[float]) -> list[Any] | Failed:
        made = []
        for x in xs:
            v = self.run(self.V, x)
            if isinstance(v, Failed):
                return v
            made.append(v)
        return made

    def applied(self, row: Row, xs: Sequence[float]) -> tuple[list[Any], Any] | None:
        """The learner's leaves at `xs` and `row`'s op on them; None if either crashed."""
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            return None
        out = self.run(row.fn, *ins)
        return None if isinstance(out, Failed) else (ins, out)

    def data(self, node: Any) -> float | None:
        return number(attr(node, "data"))

    def grad(self, node: Any) -> float | None:
        return number(attr(node, "grad"))

    @staticmethod
    def where(xs: Sequence[float], names: str = NAMES) -> str:
        return ", ".join(f"{names[i]} = {fmt(x)}" for i, x in enumerate(xs))

    def children(self, node: Any) -> list[Any] | Failed:
        return self.run(lambda: list(islice(node._prev, MAX_PREV)))

    def reaches(self, out: Any, target: Any) -> bool | None:
        """Whether `target` is in the graph behind `out`, walking `_prev` (None: cannot tell)."""

        def walk() -> bool:
            seen, stack = {id(out)}, [out]
            while stack and len(seen) < MAX_WALK:
                v = stack.pop()
                if v is target:
                    return True
                for c in islice(getattr(v, "_prev", ()), MAX_PREV):
                    if id(c) not in seen:
                        seen.add(id(c))
                        stack.append(c)
            return False

        found = self.run(walk)
        return None if isinstance(found, Failed) else found

    def backward(self, node: Any, label: str) -> bool:
        """node.backward(); False (reported) if it crashed. A hang, or a crash in backward()
        itself (not in an op's _backward), is one line and stops every gradient check: each
        would say the same."""
        done = self.run(lambda: node.backward())
        if not isinstance(done, Failed):
            return True
        if done.timeout:
            self.has_backward = False
            self.problem(
                f"backward(): for {label}, backward() {done.text} — does its loop end? "
                f"(no more gradients are checked)"
            )
            return False
        frame = crash_frame(done.exc) if done.exc is not None else None
        if frame is not None and frame.name == "_backward":
            self.problem(
                f"backward(): for {label}, backward() crashed: {done.text}",
                same=f"crash {done.text}",
                where=label,
            )
        else:
            self.has_backward = False
            hint = crash_hint(done, self.V)
            self.problem(
                f"backward() crashed: {done.text}{hint} (for {label}; no more "
                f"gradients are checked)"
            )
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
            self.problem(
                f"Value(2.0).grad is {repr_text(a.grad)}, expected 0.0: grads start at 0, "
                f"since each _backward adds to them (gradients are checked once this "
                f"is fixed)"
            )
            self.has_backward = False
        prev = self.children(a)
        if isinstance(prev, Failed) or prev:
            self.problem(
                f"Value(2.0)._prev is {repr_text(a._prev)}, expected empty: a leaf has no children"
            )
        if not callable(getattr(V, "backward", None)):
            self.has_backward = False
            r.not_yet(BACKWARD_MISSING, "backward()", "backward")
        r.passed.append("Value(2.0): data 2.0, grad 0.0, no children")
        return True

    # each op on its own -------------------------------------------------------------------

    def row(self, row: Row) -> None:
        r = self.report
        if not self.defines(row.needs):
            method = row.needs[0]
            if not r.is_asked(row.op, method) or (row.number and not r.is_asked("numbers")):
                r.not_yet("", row.expr, key=(row.op, row.number))  # the op's first expression
            elif row.extra:  # all on one line: they are not part of the lecture's path
                self.missing_methods.setdefault("beyond the lecture", []).append(method)
            else:
                self.missing_methods.setdefault(method, []).append(row.expr)
                if row.reflected:
                    self.missing_reflected.add(method)
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
        if row.number:
            self.number_ok.append(row.expr)
        if derived and self.has_backward:
            self.pending.append((row, derived))  # its gradients: after the graph checks
        elif self.has_backward:
            self.checked_rows.append(row)
            r.passed.append(f"{row.op}: {row.expr}, value and gradient at {len(row.points)} points")
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
            if out.exc is not None and is_unwrapped_number(out.exc):  # -a as self * -1 too
                self.number_crashes.append((row.expr, out.text))
                return "missing"
            return self.wrong(
                row,
                f"{label}, it crashed: {out.text}{operand_hint(out.exc)}{crash_hint(out, self.V)}",
                f"crashed: {out.text}",
            )
        if isinstance(attr(out, "data"), Failed) or isinstance(attr(out, "_prev"), Failed):
            return self.wrong(
                row,
                f"{label}, it returned {repr_text(out)} ({type(out).__name__}), "
                f"not a Value with data and _prev: each op returns a new Value(...)",
                f"returned a {type(out).__name__}",
            )
        got = self.data(out)
        if not close(got, ref.data):
            why = ""
            if row.reflected:
                why = (
                    f" — Python calls a.{row.reflected}({row.expr.split()[0]}) for "
                    f"{row.expr}: it must compute {row.expr}, not the other way round"
                )
            value = f"out.data is {describe(attr(out, 'data'))}, expected {fmt(ref.data)}"
            return self.wrong(row, f"{label}, {value}{why}", value)
        prev = self.children(out)
        direct = not isinstance(prev, Failed) and all(any(p is v for p in prev) for v in ins)
        if row.primitive and not direct:
            self.problem(
                f"{label}, out._prev is {repr_text(attr(out, '_prev'))}: it should "
                f"hold the inputs ({', '.join(NAMES[: len(xs)])}); backward() and "
                f"draw_dot walk _prev"
            )
            return "wrong"
        if not self.has_backward:
            return "ok"
        # An op whose node holds the inputs directly is checked on its own: out._backward(), then
        # backward() on that one node. A tanh built from exp, or a - b as a + (-b), is a graph:
        # it is checked through backward() after the graph checks.
        if not direct or not callable(attr(out, "_backward")):
            return "derived"
        if not self.local(row, xs, label):
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

    def numbers(self) -> None:
        """Plain numbers (``a + 2.0``): not implemented yet while no op takes one; once some do,
        an op that still reads .data of a bare number is a problem (``Value(1.0) / 2.0``)."""
        if not self.number_crashes:
            return
        exprs = [e for e, _ in self.number_crashes]
        if not self.number_ok and not self.report.is_asked("numbers"):
            return self.report.not_yet("", "plain numbers (a + 2.0)")
        if not self.number_ok:
            self.report.missing.append(
                f"{', '.join(exprs)}: not implemented yet — a plain number has no .data: wrap it "
                f"first, {WRAP}"
            )
            return
        works = ", ".join(self.number_ok[:3])
        crash = self.number_crashes[0][1]
        verb = "works" if len(self.number_ok) == 1 else "work"
        self.problem(
            f"{', '.join(exprs)}: crashed with a plain number ({crash}) — {works} "
            f"{verb} with numbers, so wrap the number in these too: {WRAP}, or build "
            f"them from ops that do"
        )

    def missing_lines(self) -> None:
        """What the class does not define yet, on as few lines as say it: one per method when
        there are a couple, else one line for all (beyond-the-lecture ops on their own line)."""
        extra = self.missing_methods.pop("beyond the lecture", [])
        methods = self.missing_methods
        if len(methods) <= 2:
            for method, exprs in methods.items():
                op = next((r.op for r in _all_rows() if r.needs[0] == method), method)
                hint = ""
                if method in self.missing_reflected:
                    hint = (
                        f" (Python calls a.{method}({exprs[0].split()[0]}) when the number "
                        f"is on the left)"
                    )
                self.report.missing.append(
                    f"{op}: {', '.join(exprs)} not implemented yet — define {method}{hint}"
                )
        elif methods:
            listed = "; ".join(
                f"{m} ({', '.join(e[:2])}{', …' * (len(e) > 2)})" for m, e in methods.items()
            )
            self.report.missing.append(
                f"not implemented yet: {listed} — define them to have "
                f"them checked (reflected ones, __radd__ …, are what "
                f"Python calls when the number is on the left)"
            )
        if extra:
            self.report.missing.append(
                f"beyond the lecture, not implemented yet: "
                f"{', '.join(extra)} (define them to have them checked too)"
            )

    def local(self, row: Row, xs: tuple[float, ...], label: str) -> bool:
        """out._backward() alone, with out.grad = UPSTREAM: is the local derivative right?"""
        tried = self.one_backward(row, xs)
        if tried is None:
            return True  # reported by the forward check
        if isinstance(tried, Failed):
            self.problem(
                f"{label}, out._backward() crashed: {tried.text}{crash_hint(tried, self.V)}"
            )
            return False
        ins, got, want, out_data = tried
        for i, (g, w) in enumerate(zip(got, want)):
            if close(g, w):
                continue
            evidence: list[str] = []
            self.problem(
                f"{label} and out.grad = {fmt(UPSTREAM)}, out._backward() gives "
                f"{NAMES[i]}.grad = {describe(attr(ins[i], 'grad'))}, expected "
                f"{fmt(w)} — {self.cause(row, xs, out_data, got, want, evidence)}",
                "\n".join(evidence),
            )
            return False
        return True

    def one_backward(self, row: Row, xs: tuple[float, ...]) -> Any:
        """The learner's op at `xs` and its out._backward() with out.grad = UPSTREAM: (inputs,
        their grads, the grads it should give, out.data); None if the op itself failed, a Failed
        if _backward crashed."""
        applied = self.applied(row, xs)
        if applied is None:
            return None
        ins, out = applied
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

    def cause(
        self,
        row: Row,
        xs: tuple[float, ...],
        out_data: float,
        got: list[float | None],
        want: list[float],
        evidence: list[str] | None = None,
    ) -> str:
        """The known mistake that fits this point and every other point of the row where the
        op is wrong too (tried again there): a cause is named only when the evidence singles
        it out, else what the derivative should be. `evidence` gets one line per point tried:
        the inputs, each grad out._backward() gave and the one it should give."""

        def seen(at: tuple[float, ...], g: list[float | None], w: list[float], note: str) -> None:
            if evidence is not None:
                grads = ", ".join(
                    f"{NAMES[i]}.grad {describe(a)} (expected {fmt(b)})"
                    for i, (a, b) in enumerate(zip(g, w))
                )
                evidence.append(f"{self.where(at)}, out.grad = {fmt(UPSTREAM)}: {grads}{note}")

        causes = local_causes(row, xs, out_data, got, want)
        seen(xs, got, want, "")
        for other in (*row.points, *more_points(row)):
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

    def through_backward(
        self, row: Row, xs: tuple[float, ...], label: str, local_ok: bool = False
    ) -> bool:
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
            lost = [] if local_ok or self.wrong_ops else self.forgotten(out, ins)
            if lost:
                self.problem(
                    f"{label}, after out.backward() {got} — {forgets_cause(row, lost)}",
                    same=f"forgets {row.op}",
                    where=row.expr,
                )
            elif local_ok:
                self.has_backward = False  # every later check would say the same
                self.problem(
                    f"{label}, after out.backward() {got} — "
                    f"{walk_cause(self.grad(out), lambda: self.kept_seed(row, xs))} "
                    f"(no more gradients are checked)"
                )
            elif row.primitive or row.rule and not self.wrong_ops:
                self.problem(f"{label}, after out.backward() {got} — expected {row.rule}")
            elif self.wrong_ops:
                self.downstream.append(f"{row.expr} ({got} at {self.where(xs)})")
            else:
                self.problem(
                    f"{label}, after out.backward() {got} — it is built from other ops "
                    f"here (out is not one node over the inputs): each of them checks "
                    f"out on its own, so look at how this op puts them together"
                )
            return False
        return True

    def forgotten(self, out: Any, ins: Sequence[Any]) -> list[int]:
        """The inputs the graph behind `out` does not lead back to (a result that forgets its
        child); [] when each is reachable, or when that cannot be told."""
        return [i for i, v in enumerate(ins) if self.reaches(out, v) is False]

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
                self.checked_rows.append(row)
                self.report.passed.append(
                    f"{row.op}: {row.expr}, value and gradient at {len(row.points)} points"
                )
        if self.downstream:
            self.problem(
                f"ops built from the ones above are wrong too: "
                f"{'; '.join(self.downstream)} — fix the problems above first"
            )
        if self.unchecked:
            self.report.notes.append(
                f"gradients of {', '.join(self.unchecked)} (built from "
                f"other ops) are checked once the problems above are fixed"
            )


def _all_rows() -> tuple[Row, ...]:
    from .table import ROWS, registry_rows

    return ROWS + registry_rows()
