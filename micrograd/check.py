"""Check a learner's own micrograd: what is wrong with *your* Value class, op by op, and why.

    from micrograd import check
    report = check(Value)              # your Value class, the lecture's duck type
    report.ok, report.problems         # True/False; one line per problem
    print(report)                      # or leave it last in a notebook cell
    check(NeuronClass=Neuron, LayerClass=Layer, MLPClass=MLP)   # your nn, against micrograd.nn

`check` builds small expressions with your class and with micrograd's `Value` and compares them:
forward values and gradients of each op at several points, the op's `_backward` on its own (with
an upstream gradient that is not 1), reused nodes (``a + a``, ``a * a``), graphs where the visiting
order matters, deep and heavily shared graphs, and calling ``backward()`` twice. A problem names
the op, the expression, what it expected and what it got, and the most likely cause. Ops your class
does not define yet are listed as "not implemented yet", not as failures.

Your code never hangs the caller: each check runs under a time limit (`time_limit` seconds) and the
graphs the checker builds are small and bounded (a few thousand nodes at most); a crash inside
your class is reported with its traceback's last line.

Also here, for the notebooks' exercises: `@exercise` marks a template cell, and `@solution` on the
collapsed solution keeps the learner's own definition once it is written.
"""

from __future__ import annotations

import html
import math
import numbers
import random
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from .engine import OPS, Value

DEFAULT_TIME_LIMIT = 2.0  # seconds per check; every check here takes milliseconds when correct
REL_TOL, ABS_TOL = 1e-9, 1e-12  # a tanh built from exp differs from math.tanh in the last digits
UPSTREAM = 2.5  # the out.grad each op's _backward is tried with: 1 would hide a missing × out.grad
MAX_PREV = 64  # the most children read from a node's _prev (a size limit on the learner's graph)
MAX_TEXT = 100  # the longest repr of a learner's object shown in a problem

__all__ = ["CheckReport", "check", "exercise", "solution"]


# ----------------------------------------------------------------------------- the report


@dataclass
class CheckReport:
    """What `check` found. `ok` is True when nothing is wrong (ops not implemented yet are fine)."""

    subject: str
    problems: list[str] = field(default_factory=list)  # one line each: op, expression, got, why
    missing: list[str] = field(default_factory=list)  # "not implemented yet", with what to define
    notes: list[str] = field(default_factory=list)  # worth knowing, not wrong
    passed: list[str] = field(default_factory=list)  # what was checked and found right

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        parts = [f"{len(self.problems)} problem{'s' * (len(self.problems) != 1)}"]
        parts.append(f"{len(self.passed)} passed")
        if self.missing:
            parts.append(f"{len(self.missing)} not implemented yet")
        verdict = "all good" if self.ok else "not yet"
        return f"{self.subject}: {verdict} ({', '.join(parts)})"

    def __str__(self) -> str:
        lines = [self.summary()]
        lines += [f"  ✗ {p}" for p in self.problems]
        lines += [f"  … {m}" for m in self.missing]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  ✓ {p}" for p in self.passed]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        def items(marks: str, entries: list[str]) -> str:
            return "".join(f"<li>{marks} {html.escape(e)}</li>" for e in entries)

        colour = "#1a7f37" if self.ok else "#cf222e"
        out = [f'<div><b style="color:{colour}">{html.escape(self.summary())}</b><ul>']
        out.append(items("✗", self.problems) + items("…", self.missing))
        out.append(items("note:", self.notes))
        out.append("</ul>")
        if self.passed:
            out.append(f"<details><summary>{len(self.passed)} checks passed</summary><ul>")
            out.append(items("✓", self.passed) + "</ul></details>")
        return "".join(out) + "</div>"


# -------------------------------------------------------------- running a learner's code


class _Timeout(BaseException):
    # BaseException, so a learner's `except Exception:` cannot swallow it.
    pass


@dataclass
class _Failed:
    """A learner's code crashed or ran out of time; `text` says how, in one line."""

    text: str
    exc: BaseException | None = None
    timeout: bool = False


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _Timeout in the running code after `seconds`.

    In the main thread (a notebook, a script, pytest) a SIGALRM timer interrupts anything, even
    ``while True: pass``; it fires again every 50 ms, so a bare ``except:`` that swallows it once
    does not hang the caller. Elsewhere, or when someone else's timer is running, a trace function
    checks the clock on every line instead.
    """
    use_alarm = (
        threading.current_thread() is threading.main_thread()
        and hasattr(signal, "setitimer")
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )
    if use_alarm:
        armed = [True]

        def on_alarm(signum: int, frame: object) -> None:
            if armed[0]:
                raise _Timeout

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        try:
            yield
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return

    deadline = time.monotonic() + seconds

    def tracer(frame: object, event: str, arg: object) -> Any:
        if time.monotonic() > deadline:
            raise _Timeout
        return tracer

    previous_trace = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(previous_trace)


def _last_line(exc: BaseException) -> str:
    """The traceback's last line, and where in the learner's code it happened."""
    text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    if frames and frames[-1].line:
        text += f" (in {frames[-1].name}: {frames[-1].line.strip()})"
    return text


def _run(limit: float, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), or a _Failed saying how it crashed or that it ran out of time."""
    try:
        with _time_limit(limit):
            return fn(*args)
    except _Timeout:
        return _Failed(f"did not finish within {limit:g} s (stopped)", timeout=True)
    except RecursionError as exc:
        return _Failed("RecursionError: maximum recursion depth exceeded", exc)
    except Exception as exc:  # the learner's code may raise anything: report it, never crash
        return _Failed(_last_line(exc), exc)


def _short(obj: object) -> str:
    try:
        text = repr(obj)
    except Exception:
        text = f"<{type(obj).__name__} whose __repr__ crashed>"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _fmt(x: float) -> str:
    text = repr(x)
    return text if len(text) <= 12 else f"{x:.10g}"


def _number(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    try:
        return float(x)
    except (OverflowError, ValueError):
        return None


def _close(got: float | None, want: float) -> bool:
    if got is None:
        return False
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _attr(obj: object, name: str) -> Any:
    """obj.name, or a _Failed (a property of the learner's may raise anything)."""
    try:
        return getattr(obj, name)
    except Exception as exc:
        return _Failed(_last_line(exc), exc)


# ------------------------------------------------------------------------- the op table

# Leaf names, in order, for the expressions below.
NAMES = "abcd"


@dataclass(frozen=True)
class Row:
    """One op to check: the expression, which methods it needs, and how it usually goes wrong."""

    op: str  # how problems name it
    expr: str  # the expression, over inputs a, b, ...
    fn: Callable[..., Any]  # builds it from Values of either class
    needs: tuple[str, ...]  # methods the class must define
    points: tuple[tuple[float, ...], ...]  # where to evaluate it
    rule: str = ""  # the local derivative, as a hint
    # Classic wrong local derivatives, each with its hint: fn(*xs, out) -> one per input.
    mistakes: tuple[tuple[Callable[..., tuple[float, ...]], str], ...] = ()
    reflected: str = ""  # for `2.0 - a`: the method Python calls, __rsub__
    number: bool = False  # mixes a plain number in: needs numbers wrapped into Values
    primitive: bool = False  # out._prev must hold the inputs (+ and *: nothing to build them from)
    extra: bool = False  # beyond the lecture: missing is mentioned, never expected


def _row(op: str, expr: str, fn: Callable[..., Any], needs: str, points: Any, **kw: Any) -> Row:
    pts = tuple(p if isinstance(p, tuple) else (p,) for p in points)
    return Row(op, expr, fn, tuple(needs.split()), pts, **kw)


BIN = ((2.0, -3.0), (-0.5, 1.5), (1.25, 0.75))
POS = ((2.0, 0.5), (0.75, 1.5), (3.0, 2.5))
UN = (-1.5, 0.4, 2.0)
UNPOS = (0.5, 1.3, 2.0)

_ASSIGN = "does _backward assign (=) instead of accumulating (+=)?"

ROWS: tuple[Row, ...] = (
    _row("+", "a + b", lambda a, b: a + b, "__add__", BIN, primitive=True,
         rule="a.grad += out.grad; b.grad += out.grad"),
    _row("*", "a * b", lambda a, b: a * b, "__mul__", BIN, primitive=True,
         rule="a.grad += b.data * out.grad; b.grad += a.data * out.grad",
         mistakes=((lambda a, b, o: (a, b),
                    "each input's local derivative is the *other* input: a.grad += b.data * "
                    "out.grad"),
                   (lambda a, b, o: (1.0, 1.0), "that is +'s rule; for * it is the other input"))),
    _row("+", "a + 2.0", lambda a: a + 2.0, "__add__", UN, number=True),
    _row("*", "a * 3.0", lambda a: a * 3.0, "__mul__", UN, number=True),
    _row("+", "2.0 + a", lambda a: 2.0 + a, "__radd__", UN, number=True, reflected="__radd__"),
    _row("*", "3.0 * a", lambda a: 3.0 * a, "__rmul__", UN, number=True, reflected="__rmul__"),
    _row("neg", "-a", lambda a: -a, "__neg__", UN),
    _row("-", "a - b", lambda a, b: a - b, "__sub__", BIN),
    _row("-", "2.0 - a", lambda a: 2.0 - a, "__rsub__", UN, number=True, reflected="__rsub__"),
    _row("**", "a ** 2", lambda a: a**2, "__pow__", UN, number=True,
         rule="a.grad += p * a.data**(p - 1) * out.grad",
         mistakes=((lambda a, o: (a,), "forgot the factor p: p * a.data**(p - 1)"),
                   (lambda a, o: (2 * a**2,), "the exponent drops by one: p * a.data**(p - 1)"))),
    _row("**", "a ** 3", lambda a: a**3, "__pow__", UN, number=True,
         rule="a.grad += p * a.data**(p - 1) * out.grad",
         mistakes=((lambda a, o: (a**2,), "forgot the factor p: p * a.data**(p - 1)"),
                   (lambda a, o: (3 * a**3,), "the exponent drops by one: p * a.data**(p - 1)"),
                   (lambda a, o: (3 * o,), "p * out.data is p * a**p; it is p * a.data**(p - 1)"),
                   )),
    _row("**", "a ** -1", lambda a: a**-1, "__pow__", UNPOS, number=True,
         rule="a.grad += p * a.data**(p - 1) * out.grad",
         mistakes=((lambda a, o: (a**-2,), "forgot the factor p: p * a.data**(p - 1)"),
                   (lambda a, o: (-(a**-1),), "the exponent drops by one: p * a.data**(p - 1)"))),
    _row("**", "a ** 0.5", lambda a: a**0.5, "__pow__", UNPOS, number=True,
         rule="a.grad += p * a.data**(p - 1) * out.grad"),
    _row("/", "a / b", lambda a, b: a / b, "__truediv__", POS),
    _row("/", "2.0 / a", lambda a: 2.0 / a, "__rtruediv__", UNPOS, number=True,
         reflected="__rtruediv__"),
    _row("exp", "a.exp()", lambda a: a.exp(), "exp", UN,
         rule="a.grad += out.data * out.grad  (d/dx e^x = e^x)",
         mistakes=((lambda a, o: (a,), "d/dx e^x is e^x, the output (out.data), not x"),
                   (lambda a, o: (1.0,), "d/dx e^x is e^x, the output (out.data)"))),
    _row("tanh", "a.tanh()", lambda a: a.tanh(), "tanh", UN,
         rule="a.grad += (1 - t**2) * out.grad, with t = tanh(a), the output",
         mistakes=((lambda a, o: (1 - a**2,),
                    "1 - x² uses the input; the derivative is 1 - t² with t = tanh(x), the "
                    "output"),
                   (lambda a, o: (1 - o,), "forgot the square: 1 - t**2"),
                   (lambda a, o: (o**2,), "it is 1 - t**2, not t**2"),
                   (lambda a, o: (1 + o**2,), "it is 1 - t**2, not 1 + t**2"))),
    _row("relu", "a.relu()", lambda a: a.relu(), "relu", UN,
         rule="a.grad += (out.data > 0) * out.grad",
         mistakes=((lambda a, o: (o,), "the slope is 1 where a > 0 (not the output's value), "
                    "0 elsewhere"),
                   (lambda a, o: (1.0,), "the slope is 0 where a <= 0"))),
    _row("log", "a.log()", lambda a: a.log(), "log", UNPOS, extra=True,
         rule="a.grad += (1 / a.data) * out.grad",
         mistakes=((lambda a, o: (o,), "d/dx ln x is 1/x"),)),
    _row("sigmoid", "a.sigmoid()", lambda a: a.sigmoid(), "sigmoid", UN, extra=True,
         rule="a.grad += s * (1 - s) * out.grad, with s the output"),
)




def registry_rows(covered: set[str] | None = None) -> tuple[Row, ...]:
    """Rows for the engine's registered one-input ops (engine.OPS) that ROWS does not spell out.

    So an op added to the engine is checked on learners' classes too, with no second table: the
    method the class must define is the registered method's name, the points are drawn from a
    few candidates where micrograd's own op is defined, and the hint is the registry's formula.
    """
    covered = {n for row in ROWS for n in row.needs} if covered is None else covered
    rows = []
    for info in OPS.values():
        method = getattr(info.method, "__name__", "")
        if info.arity != 1 or method in covered or not method.isidentifier():
            continue
        if method.startswith("__"):
            continue  # operators (** with a number) are spelled out in ROWS
        points = []
        for x in (-1.5, 0.4, 2.0, 0.7, 1.3, 2.5):
            try:
                info.apply(Value(x))
            except (ArithmeticError, ValueError):
                continue
            points.append((x,))
        if not points:
            continue
        rows.append(Row(info.name, f"a.{method}()", _method_call(method), (method,),
                        tuple(points[:3]), rule=f"micrograd's rule: {info.formula}", extra=True))
    return tuple(rows)


def _method_call(name: str) -> Callable[[Any], Any]:
    return lambda a: getattr(a, name)()


# ------------------------------------------------------------------------------ checking


class _Checker:
    """Runs the rows and graphs against one learner class, filling a report.

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
        self.assign_bug = False
        self.pending: list[tuple[Row, list[tuple[float, ...]]]] = []  # rows awaiting backward()
        self.downstream: list[str] = []  # ops built from wrong ones, wrong too
        self.unchecked: list[str] = []  # ops built from others, not checked: backward() is wrong
        self.shared_wrong: str = ""  # the shared-graph problem, reported if order() finds none
        self.missing_at: dict[str, tuple[int, list[str]]] = {}  # method -> its "missing" line

    # small helpers ---------------------------------------------------------------------

    def defines(self, names: Sequence[str]) -> bool:
        return all(callable(getattr(self.V, n, None)) for n in names)

    def problem(self, text: str) -> None:
        self.report.problems.append(text)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return _run(self.limit, fn, *args)

    def leaves(self, xs: Sequence[float]) -> list[Any] | _Failed:
        made = []
        for x in xs:
            v = self.run(self.V, x)
            if isinstance(v, _Failed):
                return v
            made.append(v)
        return made

    def data(self, node: Any) -> float | None:
        return _number(_attr(node, "data"))

    def grad(self, node: Any) -> float | None:
        return _number(_attr(node, "grad"))

    @staticmethod
    def where(xs: Sequence[float], names: str = NAMES) -> str:
        return ", ".join(f"{names[i]} = {_fmt(x)}" for i, x in enumerate(xs))

    def backward(self, node: Any, label: str) -> bool:
        """node.backward(); False (reported) if it crashed. Stops all backward checks on a hang."""
        done = self.run(lambda: node.backward())
        if not isinstance(done, _Failed):
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
        if isinstance(a, _Failed):
            self.problem(f"Value(2.0) crashed: {a.text}")
            return False
        missing = [n for n in ("data", "grad", "_prev", "_op") if isinstance(_attr(a, n), _Failed)]
        if missing:
            self.problem(
                f"Value(2.0) has no {', '.join(missing)}: __init__ should set data, grad "
                f"(0.0), _prev (the children, empty for a leaf) and _op"
            )
            return False
        if self.data(a) != 2.0:
            self.problem(f"Value(2.0).data is {_short(a.data)}, expected 2.0")
            return False
        if self.grad(a) != 0.0:
            self.problem(f"Value(2.0).grad is {_short(a.grad)}, expected 0.0: grads start at 0")
        prev = self.run(lambda: list(islice(a._prev, MAX_PREV)))
        if isinstance(prev, _Failed) or prev:
            self.problem(f"Value(2.0)._prev is {_short(a._prev)}, expected empty: a leaf has no "
                         "children")
        if not callable(getattr(V, "backward", None)):
            self.has_backward = False
            r.missing.append("backward(): not implemented yet — only forward values are checked")
        r.passed.append("Value(2.0): data 2.0, grad 0.0, no children")
        return True

    # each op on its own -------------------------------------------------------------------

    def row(self, row: Row) -> None:
        r = self.report
        if not self.defines(row.needs):
            method = row.needs[0]
            hint = ""
            if row.reflected:
                hint = (f" (Python calls a.{method}({row.expr.split()[0]}) when the number is on "
                        f"the left)")
            extra = " (beyond the lecture)" if row.extra else ""
            if method in self.missing_at:  # one line per method: a ** 2, a ** 3, ...
                i, exprs = self.missing_at[method]
                exprs.append(row.expr)
                r.missing[i] = (f"{row.op}: {', '.join(exprs)} not implemented yet{extra} — "
                                f"define {method}{hint}")
                return
            self.missing_at[method] = (len(r.missing), [row.expr])
            r.missing.append(f"{row.op}: {row.expr} not implemented yet{extra} — define "
                             f"{method}{hint}")
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
        if isinstance(ins, _Failed):
            self.problem(f"{label}, Value() crashed: {ins.text}")
            return "wrong"
        out = self.run(row.fn, *ins)
        if isinstance(out, _Failed):
            if row.number and out.exc is not None and _is_unwrapped_number(out.exc):
                self.report.missing.append(
                    f"{row.op}: {row.expr} not implemented yet — a plain number has no .data: "
                    f"wrap it first, other = other if isinstance(other, Value) else Value(other)"
                )
                return "missing"
            self.problem(f"{label}, it crashed: {out.text}{_operand_hint(out.exc)}")
            return "wrong"
        got = self.data(out)
        if not _close(got, ref.data):
            why = ""
            if row.reflected:
                why = (f" — Python calls a.{row.reflected}({row.expr.split()[0]}) for "
                       f"{row.expr}: it must compute {row.expr}, not the other way round")
            self.problem(f"{label}, out.data is {_describe(_attr(out, 'data'))}, expected "
                         f"{_fmt(ref.data)}{why}")
            return "wrong"
        prev = self.run(lambda: list(islice(out._prev, MAX_PREV)))
        direct = not isinstance(prev, _Failed) and all(any(p is v for p in prev) for v in ins)
        if row.primitive and not direct:
            self.problem(f"{label}, out._prev is {_short(_attr(out, '_prev'))}: it should "
                         f"hold the inputs ({', '.join(NAMES[: len(xs)])}); backward() and "
                         f"draw_dot walk _prev")
            return "wrong"
        if not self.has_backward:
            return "ok"
        # An op whose node holds the inputs directly is checked on its own: out._backward(), then
        # backward() on that one node. A tanh built from exp, or a - b as a + (-b), is a graph:
        # it is checked through backward() after the graph checks.
        if not direct or not callable(_attr(out, "_backward")):
            return "derived"
        if not self.local(row, xs, label, ref_in, ref):
            return "wrong"
        return "ok" if self.through_backward(row, xs, label) else "wrong"

    def local(self, row: Row, xs: tuple[float, ...], label: str, ref_in: list[Value],
              ref: Value) -> bool:
        """out._backward() alone, with out.grad = UPSTREAM: is the local derivative right?"""
        ins = self.leaves(xs)
        out = self.run(row.fn, *ins)
        if isinstance(ins, _Failed) or isinstance(out, _Failed):
            return True  # reported by the forward check
        ref.grad = UPSTREAM
        ref._backward()
        want = [v.grad for v in ref_in]

        def step() -> None:
            out.grad = UPSTREAM
            out._backward()

        done = self.run(step)
        if isinstance(done, _Failed):
            self.problem(f"{label}, out._backward() crashed: {done.text}")
            return False
        got = [self.grad(v) for v in ins]
        for i, (g, w) in enumerate(zip(got, want)):
            if _close(g, w):
                continue
            why = _local_cause(row, xs, ref.data, got, want)
            self.problem(f"{label} and out.grad = {_fmt(UPSTREAM)}, out._backward() gives "
                         f"{NAMES[i]}.grad = {_describe(_attr(ins[i], 'grad'))}, expected "
                         f"{_fmt(w)} — {why}")
            return False
        return True

    def through_backward(self, row: Row, xs: tuple[float, ...], label: str) -> bool:
        """out.backward() from fresh leaves; reports and returns False if a grad is wrong."""
        ref_in = [Value(x) for x in xs]
        row.fn(*ref_in).backward()
        ins = self.leaves(xs)
        if isinstance(ins, _Failed):
            return True
        out = self.run(row.fn, *ins)
        if isinstance(out, _Failed) or not self.backward(out, f"out = {row.expr}"):
            return isinstance(out, _Failed)
        for i, (v, w) in enumerate(zip(ins, ref_in)):
            g = self.grad(v)
            if _close(g, w.grad):
                continue
            got = f"{NAMES[i]}.grad is {_describe(_attr(v, 'grad'))}, expected {_fmt(w.grad)}"
            if row.primitive or row.rule and not self.wrong_ops:
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
                return
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
            self.problem(f"gradients of ops built from the ones above are wrong too: "
                         f"{'; '.join(self.downstream)} — fix the problems above first")
        if self.unchecked:
            self.report.notes.append(f"gradients of {', '.join(self.unchecked)} (built from "
                                     f"other ops) are checked once the problems above are fixed")

    # graphs where nodes are reused or the order matters --------------------------------

    def graph(self, op: str, expr: str, build: Callable[..., Any], xs: tuple[float, ...],
              needs: str, hint: Callable[[float | None, float], str],
              names: str = NAMES) -> bool | None:
        """Build `expr` with both classes, backward() both, compare every leaf's grad.

        Returns None when the class cannot run it, else whether it passed (problems reported).
        """
        if not self.has_backward or not self.defines(needs.split()):
            return None
        ref_in = [Value(x) for x in xs]
        build(Value, *ref_in)[-1].backward()
        ins = self.leaves(xs)
        if isinstance(ins, _Failed):
            return None
        label = f"{op}: for {expr} with {self.where(xs, names)}"
        nodes = self.run(build, self.V, *ins)
        if isinstance(nodes, _Failed):
            self.problem(f"{label}, it crashed: {nodes.text}")
            return False
        if not self.backward(nodes[-1], f"{expr} with {self.where(xs, names)}"):
            return False
        for i, (v, w) in enumerate(zip(ins, ref_in)):
            g = self.grad(v)
            if not _close(g, w.grad):
                self.problem(f"{label}, {names[i]}.grad is {_describe(_attr(v, 'grad'))}, "
                             f"expected {_fmt(w.grad)} — {hint(g, w.grad)}")
                return False
        self.report.passed.append(f"{op}: {expr}")
        return True

    def reuse(self) -> None:
        for op, expr, build, needs in (
            ("+", "b = a + a", lambda V, a: (a + a,), "__add__"),
            ("*", "b = a * a", lambda V, a: (a * a,), "__mul__"),
        ):
            if op in self.wrong_ops:
                continue  # its own checks already failed: one problem per cause
            if self.graph(op, expr, build, (3.0,), needs, lambda g, w: _ASSIGN) is False:
                self.assign_bug = True

    def shared(self) -> None:
        """A graph with 2^200 paths: built in milliseconds, walked forever unless nodes are
        visited once. (Two *different* nodes use y, so a set of children cannot hide it.)"""
        if not self.has_backward or not self.defines(["__add__", "__mul__"]):
            return
        if self.wrong_ops & {"+", "*"}:
            return
        V = self.V
        levels = 200

        def build() -> tuple[Any, Any]:
            x = V(1.5)
            h1, h2 = V(0.25), V(0.75)
            y = x
            for _ in range(levels):
                y = y * h1 + y * h2  # y is used twice: the number of paths to x doubles
            return x, y

        built = self.run(build)
        expr = f"y = y*0.25 + y*0.75, {levels} times from x = 1.5"
        if isinstance(built, _Failed):
            self.problem(f"backward(): building {expr} crashed: {built.text}")
            return
        x, y = built
        done = self.run(lambda: y.backward())
        if isinstance(done, _Failed) and done.timeout:
            self.walk_wrong = True
            self.problem(f"backward(): for {expr} (2^{levels} paths to x, {4 * levels + 3} "
                         f"nodes), backward() {done.text} — does build_topo skip nodes it has "
                         f"already visited (a visited set), so each node is visited once?")
        elif isinstance(done, _Failed):
            self.problem(f"backward(): for {expr}, backward() crashed: {done.text}")
        elif not _close(self.grad(x), 1.0) and not self.assign_bug:
            # Reported after order(), whose smaller graphs say more, if those find nothing.
            self.shared_wrong = (f"backward(): for {expr}, x.grad is "
                                 f"{_describe(_attr(x, 'grad'))}, expected 1.0 — is each node "
                                 f"visited once, in topological order?")
        elif not self.assign_bug:
            self.report.passed.append(f"backward(): {expr} (each node visited once)")

    def order(self) -> None:
        """Graphs whose grads come out wrong when backward() visits nodes in the wrong order."""
        if self.assign_bug or self.walk_wrong or self.wrong_ops & {"+", "*"}:
            return  # those problems spoil these graphs too: one cause, one problem

        def hint(g: float | None, w: float) -> str:
            if g == 0.0:
                return ("the output's gradient never reached it: does backward() call _backward "
                        "on reversed(topo), the output first?")
            return ("grads depend on the order nodes were visited — is the graph walked in "
                    "topological order (a node's _backward only after every node that uses it)?")

        def lecture(V: type, a: Any, b: Any, c: Any, f: Any) -> tuple:
            e = a * b
            d = e + c
            return (e, d, d * f)

        def diamond_short_first(V: type, a: Any) -> tuple:
            b = a * V(2.0)
            c = b * V(3.0)
            return (b, c, b + c)

        def diamond_long_first(V: type, a: Any) -> tuple:
            b = a * V(2.0)
            c = b * V(3.0)
            return (b, c, c + b)

        def two_paths(V: type, a: Any, b: Any) -> tuple:
            d = a * b
            e = a + b
            return (d, e, d * e)

        checks = (
            ("L = (a*b + c) * f", lecture, (2.0, -3.0, 10.0, -2.0), "abcf"),
            ("b = a*2; c = b*3; out = b + c", diamond_short_first, (1.5,), "a"),
            ("b = a*2; c = b*3; out = c + b", diamond_long_first, (1.5,), "a"),
            ("f = (a*b) * (a+b)", two_paths, (-2.0, 3.0), "ab"),
        )
        for expr, build, xs, names in checks:
            passed = self.graph("backward()", expr, build, xs, "__add__ __mul__", hint, names)
            if passed is False:
                self.walk_wrong = True
                return  # one problem is enough: they share a cause
        if self.shared_wrong:
            self.walk_wrong = True
            self.problem(self.shared_wrong)

    def twice(self) -> None:
        if not self.has_backward or not self.defines(["__mul__"]) or "*" in self.wrong_ops:
            return
        if self.walk_wrong or self.assign_bug:
            return
        ins = self.leaves((3.0,))
        if isinstance(ins, _Failed):
            return
        (x,) = ins
        y = self.run(lambda: x * x * x)
        if isinstance(y, _Failed) or not self.backward(y, "y = x * x * x"):
            return
        g1 = self.grad(x)
        done = self.run(lambda: y.backward())
        if isinstance(done, _Failed):
            self.problem(f"backward() twice: for y = x * x * x with x = 3.0, the second "
                         f"y.backward() {'crashed: ' * (not done.timeout)}{done.text}")
            return
        g2 = self.grad(x)
        if g1 != 27.0:
            return  # wrong already; reported by the * checks
        if g2 == 54.0:
            self.report.passed.append("backward() twice: x.grad 27 → 54, leaves accumulate "
                                      "(as in PyTorch and micrograd)")
        elif g2 == 72.0:
            self.report.notes.append(
                "backward() twice on y = x * x * x (x = 3.0) gives x.grad 27 → 72, as the "
                "lecture's engine does: the intermediate x*x keeps its old grad and is counted "
                "again. PyTorch and micrograd give 54 (they reset intermediate grads). Either "
                "way, zero the grads before each backward()."
            )
        elif g2 == 27.0:
            self.report.notes.append(
                "backward() twice on y = x * x * x (x = 3.0) leaves x.grad at 27: your "
                "backward() resets the grads. PyTorch and micrograd accumulate into leaves (54), "
                "which is why training loops call zero_grad()."
            )
        else:
            self.problem(f"backward() twice: for y = x * x * x with x = 3.0, x.grad goes 27 → "
                         f"{_describe(_attr(x, 'grad'))}; expected 54 (leaves accumulate, as in "
                         f"PyTorch) or 72 (the lecture's engine)")

    def deep(self) -> None:
        """A chain 3,000 nodes deep: a recursive build_topo runs out of stack (a note, not a
        problem: the lecture's does too)."""
        if not self.has_backward or not self.defines(["__add__"]) or "+" in self.wrong_ops:
            return
        if self.walk_wrong or self.assign_bug:
            return
        n = 3000
        V = self.V

        def chain() -> Any:
            x = V(0.0)
            step = V(0.001)
            y = x
            for _ in range(n):
                y = y + step
            y.backward()
            return x

        x = self.run(chain)
        if isinstance(x, _Failed):
            if isinstance(x.exc, RecursionError):
                self.report.notes.append(
                    f"backward() on a chain of {n:,} additions hits Python's recursion limit: a "
                    f"recursive build_topo (the lecture's) stops near 1,000 nodes deep. "
                    f"micrograd's backward() walks the graph with an explicit stack instead."
                )
            else:
                self.problem(f"backward(): for a chain of {n:,} additions, {x.text}")
        elif _close(self.grad(x), 1.0):
            self.report.passed.append(f"backward(): a chain of {n:,} additions")
        else:
            self.problem(f"backward(): for a chain of {n:,} additions y = x + 0.001 + ..., x.grad "
                         f"is {_describe(_attr(x, 'grad'))}, expected 1.0")

    def all(self) -> None:
        if not self.basics():
            return
        for row in ROWS + registry_rows():
            self.row(row)
        self.reuse()
        self.shared()
        self.order()
        self.derived()
        self.twice()
        self.deep()


_REFLECTED = {"+": "__radd__", "-": "__rsub__", "*": "__rmul__", "/": "__rtruediv__",
              "** or pow()": "__rpow__"}


def _operand_hint(exc: BaseException | None) -> str:
    # `2.0 * a` inside a learner's derived op (other * self**-1) needs the reflected method.
    text = str(exc)
    if not isinstance(exc, TypeError) or "unsupported operand type(s) for " not in text:
        return ""
    op = text.split("unsupported operand type(s) for ", 1)[1].split(":", 1)[0]
    first = text.split("'")[1] if text.count("'") >= 4 else ""
    if op in _REFLECTED and first in ("float", "int"):
        return f" — a number on the left of {op} needs {_REFLECTED[op]}"
    return ""


def _is_unwrapped_number(exc: BaseException) -> bool:
    # The lecture's first __add__ reads other.data: with a plain number that is an AttributeError.
    text = str(exc)
    return isinstance(exc, AttributeError) and any(
        f"'{t}' object has no attribute" in text for t in ("float", "int")
    )


def _describe(x: object) -> str:
    n = _number(x)
    return _fmt(n) if n is not None else f"{_short(x)} (not a number)"


def _local_cause(row: Row, xs: tuple[float, ...], out: float, got: list[float | None],
                 want: list[float]) -> str:
    """The likeliest reason `got` (after _backward with out.grad = UPSTREAM) is not `want`."""
    if all(g is not None for g in got):
        if all(_close(g, w / UPSTREAM) for g, w in zip(got, want)):
            return ("it is the local derivative without × out.grad: multiply by out.grad (the "
                    "chain rule)")
        for mistake, hint in row.mistakes:
            try:
                wrong = mistake(*xs, out)
            except (ArithmeticError, ValueError):
                continue
            if all(_close(g, UPSTREAM * m) for g, m in zip(got, wrong)):
                return hint
            if all(_close(g, m) for g, m in zip(got, wrong)):
                return hint + ", and multiply by out.grad"
        if all(g == 0 for g in got):
            return "did _backward run at all? each op sets out._backward = _backward"
    return f"expected {row.rule}" if row.rule else "check its _backward"


# ----------------------------------------------------------------------------------- nn


class _NNChecker:
    def __init__(self, limit: float, report: CheckReport) -> None:
        self.limit = limit
        self.report = report
        self.x = [2.0, 3.0, -1.0]

    def problem(self, text: str) -> None:
        self.report.problems.append(text)

    def params(self, what: str, module: Any, count: int, shape: str) -> list[Any] | None:
        ps = _run(self.limit, lambda: list(islice(module.parameters(), count + 1)))
        if isinstance(ps, _Failed):
            self.problem(f"{what}.parameters() crashed: {ps.text}")
            return None
        if len(ps) != count:
            more = "more than " if len(ps) > count else ""
            self.problem(f"{what}.parameters() has {more}{len(ps)} entries, expected {count} "
                         f"({shape})")
            return None
        datas = [_number(_attr(p, "data")) for p in ps]
        if any(d is None for d in datas):
            self.problem(f"{what}.parameters() holds something without a numeric .data: "
                         f"{_short(ps[datas.index(None)])}")
            return None
        return ps

    def compare(self, what: str, module: Any, ps: list[Any],
                models: dict[str, Any], outputs: Callable[[Any], list[Any]]) -> str | None:
        """Run the learner's module and each candidate micrograd model (same weights) on self.x.

        Returns the name of the candidate that matches, after checking its gradients too.
        """
        got = _run(self.limit, lambda: _as_list(module(list(self.x))))
        if isinstance(got, _Failed):
            self.problem(f"{what}({self.x}) crashed: {got.text}")
            return None
        values = [_number(_attr(o, "data")) for o in got]
        matched = None
        expected: dict[str, list[float]] = {}
        for name, model in models.items():
            for p, q in zip(model.parameters(), ps):
                p.data = _number(q.data)
                p.grad = 0.0
            outs = outputs(model)
            expected[name] = [o.data for o in outs]
            if len(outs) == len(values) and all(_close(v, o.data) for v, o in zip(values, outs)):
                matched = name
                break
        if matched is None:
            shown = "; ".join(f"{k}: {[_fmt(v) for v in e]}" for k, e in expected.items())
            self.problem(f"{what}({self.x}) gives {[_describe(v) for v in values]}; micrograd.nn "
                         f"with the same parameters() (in order: each neuron's w, then its b) "
                         f"gives {shown}")
            return None

        model = models[matched]
        ref_out = outputs(model)
        Value.sum(ref_out).backward()

        def back() -> None:
            total = got[0]
            for o in got[1:]:
                total = total + o
            total.backward()

        done = _run(self.limit, back)
        if isinstance(done, _Failed):
            self.problem(f"{what}: backward() from its outputs crashed: {done.text}")
            return None
        for i, (p, q) in enumerate(zip(model.parameters(), ps)):
            if not _close(self.grad(q), p.grad):
                self.problem(f"{what}: after backward() of the sum of its outputs, parameter {i} "
                             f"has grad {_describe(_attr(q, 'grad'))}, expected {_fmt(p.grad)} "
                             f"(micrograd.nn, same weights)")
                return None
        return matched

    @staticmethod
    def grad(p: Any) -> float | None:
        return _number(_attr(p, "grad"))

    def zero_grad(self, what: str, module: Any, ps: list[Any]) -> None:
        if not callable(getattr(module, "zero_grad", None)):
            self.report.missing.append(
                f"{what}.zero_grad() not implemented yet (or zero the grads in the training loop: "
                f"for p in model.parameters(): p.grad = 0.0)"
            )
            return
        done = _run(self.limit, module.zero_grad)
        if isinstance(done, _Failed):
            self.problem(f"{what}.zero_grad() crashed: {done.text}")
            return
        left = [i for i, p in enumerate(ps) if self.grad(p) != 0.0]
        if left:
            self.problem(f"{what}.zero_grad() left parameter {left[0]} with grad "
                         f"{_describe(_attr(ps[left[0]], 'grad'))}; it should set every "
                         f"parameter's grad to 0")
        else:
            self.report.passed.append(f"{what}.zero_grad() zeroes every parameter's grad")

    def neuron(self, cls: type) -> None:
        from .nn import Neuron

        what = f"{cls.__name__}(3)"
        n = _run(self.limit, cls, 3)
        if isinstance(n, _Failed):
            self.problem(f"{what} crashed: {n.text}")
            return
        ps = self.params(what, n, 4, "3 weights and a bias")
        if ps is None:
            return
        models = {a: Neuron(3, activation=a) for a in ("tanh", "relu", "linear")}
        act = self.compare(what, n, ps, models, lambda m: [m(list(self.x))])
        if act is None:
            return
        self.report.passed.append(f"{what}: 4 parameters; output {act}(w·x + b) and its "
                                  f"gradients match micrograd.nn.Neuron(3, activation='{act}')")
        other = _run(self.limit, cls, 3)
        if not isinstance(other, _Failed):
            theirs = _run(self.limit, lambda: [_number(p.data) for p in other.parameters()])
            if theirs == [_number(p.data) for p in ps]:
                self.report.notes.append(
                    f"two {what}s start with the same parameters: draw them at random "
                    f"(random.uniform(-1, 1)), or every neuron of a layer learns the same thing"
                )
        self.zero_grad(what, n, ps)

    def layer(self, cls: type) -> None:
        from .nn import Layer

        what = f"{cls.__name__}(3, 2)"
        layer = _run(self.limit, cls, 3, 2)
        if isinstance(layer, _Failed):
            self.problem(f"{what} crashed: {layer.text}")
            return
        ps = self.params(what, layer, 8, "2 neurons × (3 weights + a bias)")
        if ps is None:
            return
        models = {a: Layer(3, 2, activation=a) for a in ("tanh", "relu", "linear")}
        act = self.compare(what, layer, ps, models, lambda m: m.outputs(list(self.x)))
        if act is None:
            return
        self.report.passed.append(f"{what}: 8 parameters, neuron by neuron; outputs and "
                                  f"gradients match micrograd.nn.Layer(3, 2, activation='{act}')")
        self.zero_grad(what, layer, ps)

    def mlp(self, cls: type) -> None:
        from .nn import MLP

        what = f"{cls.__name__}(3, [4, 4, 1])"
        model = _run(self.limit, cls, 3, [4, 4, 1])
        if isinstance(model, _Failed):
            self.problem(f"{what} crashed: {model.text}")
            return
        ps = self.params(what, model, 41, "3·4+4 + 4·4+4 + 4+1")
        if ps is None:
            return
        combos = {
            "tanh throughout (the lecture's)": ("tanh", "tanh"),
            "ReLU hidden, linear output (karpathy's micrograd)": ("relu", "linear"),
            "tanh hidden, linear output": ("tanh", "linear"),
        }
        models = {k: MLP(3, [4, 4, 1], activation=h, out_activation=o)
                  for k, (h, o) in combos.items()}
        kind = self.compare(what, model, ps, models, lambda m: m.outputs(list(self.x)))
        if kind is None:
            return
        self.report.passed.append(f"{what}: 41 parameters, layer by layer; output and gradients "
                                  f"match micrograd.nn.MLP, {kind}")
        self.zero_grad(what, model, ps)


def _as_list(out: Any) -> list[Any]:
    # karpathy's Layer returns a lone Value for one neuron and a list otherwise: accept both.
    if isinstance(out, (list, tuple)):
        return list(islice(out, MAX_PREV))
    return [out]


# ----------------------------------------------------------------------------- the entry


def check(
    ValueClass: type | None = None,
    *,
    NeuronClass: type | None = None,
    LayerClass: type | None = None,
    MLPClass: type | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> CheckReport:
    """Check your own Value class (and/or Neuron, Layer, MLP classes) against micrograd's.

    `ValueClass` is the lecture's duck type: ``ValueClass(2.0)`` has `data`, `grad`, `_prev`,
    `_op`, and (once you get there) `_backward` and `backward()`, plus whichever of ``+ - * / **``,
    `exp`, `tanh`, `relu`, `log`, `sigmoid` it defines. The nn classes are called as in the
    lecture: ``NeuronClass(3)``, ``LayerClass(3, 2)``, ``MLPClass(3, [4, 4, 1])``, each with
    `parameters()` (each neuron's weights, then its bias) and, if you wrote it, `zero_grad()`.

    Returns a `CheckReport`; nothing is raised for a problem in your code. `time_limit` bounds
    each check in seconds. The random module's state is restored afterwards, so a seeded notebook
    gives the same numbers whether or not it calls `check`.
    """
    given = {"ValueClass": ValueClass, "NeuronClass": NeuronClass, "LayerClass": LayerClass,
             "MLPClass": MLPClass}
    for name, cls in given.items():
        if cls is not None and not isinstance(cls, type):
            raise TypeError(f"check: {name} must be a class, got {type(cls).__name__} {cls!r}")
    if all(cls is None for cls in given.values()):
        raise TypeError("check: pass your Value class, or NeuronClass=, LayerClass=, MLPClass=")
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or not (
        0 < time_limit <= 600
    ):
        raise ValueError(f"check: time_limit must be a number of seconds in (0, 600], got "
                         f"{time_limit!r}")

    args = [f"{k}={c.__name__}" if k != "ValueClass" else c.__name__
            for k, c in given.items() if c is not None]
    report = CheckReport(f"check({', '.join(args)})")
    state = random.getstate()
    try:
        if ValueClass is not None:
            _Checker(ValueClass, float(time_limit), report).all()
        nn = _NNChecker(float(time_limit), report)
        if NeuronClass is not None:
            nn.neuron(NeuronClass)
        if LayerClass is not None:
            nn.layer(LayerClass)
        if MLPClass is not None:
            nn.mlp(MLPClass)
    finally:
        random.setstate(state)
    return report


# ---------------------------------------------------------------- exercises in notebooks

T = TypeVar("T")


def exercise(obj: T) -> T:
    """Mark a class or function as an exercise template (delete the mark once you've written it).

    While the mark is there, the `@solution` of the same name below takes over.
    """
    obj.__exercise__ = True  # type: ignore[attr-defined]
    return obj


def solution(obj: T) -> T:
    """Use this solution only if the learner has not written their own of the same name.

    The learner's own is the object of that name in the calling module's globals, unless it is
    still marked `@exercise` (a template) or is itself an earlier solution. Prints which it uses.
    """
    name = obj.__name__  # type: ignore[attr-defined]
    yours = sys._getframe(1).f_globals.get(name)
    if yours is not None and not _marked(yours, "__exercise__") and not _marked(
        yours, "__solution__"
    ):
        print(f"Keeping your {name} (the solution is not used).")
        return yours
    obj.__solution__ = True  # type: ignore[attr-defined]
    print(f"Using the solution's {name} (the exercise above is still the template).")
    return obj


def _marked(obj: object, mark: str) -> bool:
    # Only the object's own mark: a learner's class may subclass a template.
    try:
        return bool(vars(obj).get(mark, False))
    except TypeError:  # no __dict__
        return False
