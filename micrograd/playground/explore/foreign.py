"""The explorer on a learner's own engine: a graph of *their* Value class, stepped by *their* code.

`ForeignExplorer(root)` takes the output of a graph built with any Value class that has the
lecture's shape: `data`, `grad`, `_prev` (a tuple, list or set of children), `_op`, `label`, and a
`_backward()` per node. It reads the graph, draws it as the explorer draws micrograd's (a copy of
its shape made of micrograd Values, only for the picture), and at each Backward step runs the
learner's own `_backward` of that node, in reverse topological order, writing out what it did:
``a.grad = -6.0000 + 3.0000 × 1.0000 = -3.0000``.

Each node is also checked, before any step: the local derivative the learner's `_backward`
applies (run on its own, with the node's grad 1 and its children's 0) against the one it should
be: the slope of what the node's op computes (micrograd's op of that name: `+`, `*`, `**2`,
`tanh`, `exp`, `relu`, ..., or the lecture's `-` and `/`), by central differences at the node's
inputs. A node whose rule differs, whose data is not what its op gives, or that names an op but
forgot its inputs is marked on the picture, with the numbers, and said again at its step.

Judged by what the code computes, never by how it is built: children in any order (a set's),
a child used twice (`a*a`: both places move together), ops of its own beyond the lecture (their
rule is then not checked, and the picture says so).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ...check.mistakes import Question, mistake
from ...check.timeout import DEFAULT_TIME_LIMIT, Failed, Runner, StopChecking
from ...engine import OPS, Value
from ...viz.formatting import format_number as fmt
from .explorer import Explorer
from .predict import Part
from .walkthrough import Walkthrough, factor, in_formula

REL_TOL = 1e-4  # a learner's local derivative within this (relative) of the numerical one is right
ATTRIBUTES = ("data", "grad", "_prev")  # what a node must have to be read at all
SEED, PRESET = 3.0, 10.0  # a node's grad and its children's when its rule is tried on its own


def looks_like_a_value(node: object) -> bool:
    """Does `node` have the lecture's shape (data, grad, _prev)?"""
    return all(hasattr(node, a) for a in ATTRIBUTES)


def _children(node: Any) -> list[Any]:
    prev = node._prev
    if prev is None:
        return []
    try:
        return list(prev)
    except TypeError:
        raise TypeError(
            f"explore: a node's _prev must be a tuple, list or set of children, got "
            f"{type(prev).__name__}"
        ) from None


def _number(x: object, what: str) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(
            f"explore: {what} must be a number, got {type(x).__name__} {str(x)[:40]!r}"
        ) from None


def op_function(op: str, arity: int) -> Callable[..., float] | None:
    """What an op named `op` with `arity` inputs computes, by micrograd's own ops (None when it
    is not one micrograd knows): the truth a learner's node is checked against."""
    name = {"relu": "ReLU", "pow": "**"}.get(op, op)
    info = OPS.get(name)
    if info is not None and info.arity == arity and not info.param:
        return lambda *xs: info.apply(*(Value(x) for x in xs)).data
    if op.startswith("**") and arity == 1:
        try:
            p = float(op[2:])
        except ValueError:
            return None
        return lambda x: (Value(x) ** p).data
    derived: dict[tuple[str, int], Callable[..., float]] = {  # the lecture's derived ops
        ("-", 2): lambda a, b: (Value(a) - Value(b)).data,
        ("-", 1): lambda a: (-Value(a)).data,
        ("neg", 1): lambda a: (-Value(a)).data,
        ("/", 2): lambda a, b: (Value(a) / Value(b)).data,
    }
    return derived.get((op, arity))


def _gives(f: Callable[..., float], kids: Sequence[Value], data: float) -> bool:
    try:
        return _close(f(*(k.data for k in kids)), data)
    except (ArithmeticError, ValueError):
        return False


def _exponent(op: str, x: float, out: float) -> float | None:
    """The p of a node `x ** p` that keeps p neither as a child nor in its name ('**'), read off
    its numbers when they tell it (x > 0, x != 1, a p that gives `out` back); else None."""
    if op not in ("**", "pow") or not (x > 0 and x != 1 and out > 0):
        return None
    p = round(math.log(out) / math.log(x), 9)
    try:
        return p if _close(x**p, out) else None
    except OverflowError:
        return None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def _slope(f: Callable[..., float], xs: list[float], moved: list[int]) -> float | None:
    """d f / d x at `xs`, moving the positions `moved` together (a child used twice), by central
    differences; None where f cannot be evaluated there."""
    x = xs[moved[0]]
    h = 1e-6 * max(1.0, abs(x))
    try:
        up = f(*[xs[i] + h if i in moved else xs[i] for i in range(len(xs))])
        down = f(*[xs[i] - h if i in moved else xs[i] for i in range(len(xs))])
    except (ArithmeticError, ValueError):
        return None
    return (up - down) / (2 * h)


class LearnerStepper:
    """A graph of a learner's own Value class, stepped by their code: the walkthrough's picture
    is a copy of its shape made of micrograd Values (`root`), each of whose nodes stands for
    one of theirs (`foreign`)."""

    own_value = True
    fixed = (
        "this graph is made of your own Value class: change its numbers in the notebook and "
        "explore() it again"
    )
    time_limit = DEFAULT_TIME_LIMIT  # seconds for one call of the learner's code: the checker's

    def __init__(self, root: Any) -> None:
        if not looks_like_a_value(root):
            raise TypeError(
                f"explore: expected a Value (with data, grad and _prev), got {type(root).__name__}"
            )
        self.runner = Runner(self.time_limit)  # the checker's run loop: time limit, crash as a line
        self.hung: dict[Value, Failed] = {}  # a node whose _backward ran out of time: not run again
        self.foreign: dict[Value, Any] = {}  # the picture's node -> the learner's node
        self.root = self._mirror(root)
        self.checks: dict[Value, list[str]] | None = None  # node -> what is wrong with it
        self.said: str | None = None  # the verdict, once found

    # -- reading the learner's graph

    def _mirror(self, root: Any) -> Value:
        """The graph's shape as micrograd Values (for the picture only), children first."""
        order: list[Any] = []
        seen: set[int] = set()
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:  # iterative: a deep graph is fine
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if not looks_like_a_value(node):
                raise TypeError(
                    f"explore: a child in the graph is a {type(node).__name__}, not a Value"
                )
            stack.append((node, True))
            for child in reversed(_children(node)):
                if id(child) not in seen:
                    stack.append((child, False))
        made: dict[int, Value] = {}
        for node in order:
            kids = [made[id(c)] for c in _children(node)]
            label = getattr(node, "label", "") or ""
            v = Value(
                _number(node.data, f"{label or 'a node'}.data"),
                tuple(kids),
                str(getattr(node, "_op", "") or ""),
                label=str(label),
                _local=(0.0,) * len(kids),
            )
            made[id(node)] = v
            self.foreign[v] = node
        return made[id(root)]

    # -- what the learner's rules do, checked

    def _run_theirs(self, v: Value, backward: Callable[[], object]) -> str | None:
        """Run the learner's `_backward` of `v` under the checker's time limit: None when it
        returned, else what went wrong, in one line. One that ran out of time is not run again
        (each run would cost a time limit), and once MAX_TIMEOUTS ran out, none is."""
        if v in self.hung:
            return self.hung[v].text
        try:
            result = self.runner(backward)
        except StopChecking:
            return "was not run: your code ran out of time too often already"
        if not isinstance(result, Failed):
            return None
        if result.timeout:
            self.hung[v] = result
            return result.text
        return f"raised {result.text}"

    def _probe(self, v: Value) -> list[float] | str:
        """The local derivatives the learner's `_backward` of `v` applies, per distinct child:
        run on its own, with v.grad 3 and each child's grad 10 to begin with, so that a rule
        without `× out.grad`, or one that assigns (=) where it should add (+=), shows; every
        grad is put back after."""
        node = self.foreign[v]
        backward = getattr(node, "_backward", None)
        if not callable(backward):
            return "has no _backward() to run"
        kids = list(dict.fromkeys(self.foreign[c] for c in v._prev))
        saved = [(n, n.grad) for n in self.foreign.values()]
        try:
            for k in kids:
                k.grad = PRESET
            node.grad = SEED
            failed = self._run_theirs(v, backward)
            if failed is not None:
                return f"its _backward() {failed}"
            return [(_number(k.grad, "a grad") - PRESET) / SEED for k in kids]
        except Exception as exc:  # the learner's code: say what it raised, in one line
            return f"its _backward() raised {type(exc).__name__}: {exc}"
        finally:
            for n, g in saved:
                n.grad = g

    @staticmethod
    def _op_of(v: Value) -> tuple[Callable[..., float] | None, list[Value]]:
        """What `v`'s op computes, and its inputs in that op's order; (None, ...) when that is
        not certain (an op of the learner's own), so that correct code is never called wrong.
        Children in any order (a set's): the order that gives `v.data`. A set holds a child used
        twice once (a + a): then the op of two inputs, that child in both places, if it gives
        v.data. `x ** p` whose p is not a child nor in the name: p read off the numbers."""
        kids = list(v._prev)
        f = op_function(v._op, len(kids))
        if f is None and len(kids) == 1:
            both = op_function(v._op, 2)
            if both is not None and _gives(both, [kids[0]] * 2, v.data):
                return both, kids * 2
            p = _exponent(v._op, kids[0].data, v.data)
            if p is not None:
                return (lambda x: (Value(x) ** p).data), kids
            return None, kids
        if f is not None and len(kids) == 2 and not _gives(f, kids, v.data):
            if _gives(f, kids[::-1], v.data):
                return f, kids[::-1]
        return f, kids

    def _check(self, walk: Walkthrough, v: Value) -> list[str]:
        """What is wrong with node `v`'s forward value or its local derivatives ([] if nothing)."""
        op = v._op
        name = walk.names[v]
        if not v._prev:
            if op:
                return [
                    f"{name} says it was made by {op!r} but has no children: the op forgot "
                    f"its input (pass it to Value(..., (self,), '{op}'))"
                ]
            return []
        f, kids = self._op_of(v)
        if f is None:
            return []  # an op of the learner's own: not checked (the verdict says so)
        xs = [c.data for c in kids]
        try:
            value = f(*xs)
        except (ArithmeticError, ValueError):
            return []
        if not _close(value, v.data):
            return [
                f"{name}.data is {fmt(v.data)}, but {op} of its children gives "
                f"{fmt(value)}: the forward pass of {op!r} is wrong"
            ]
        theirs = self._probe(v)
        if isinstance(theirs, str):
            return [f"{name}'s {op}: {theirs}"]
        problems = []
        unique = list(dict.fromkeys(kids))
        for k, got in zip(unique, theirs):
            want = _slope(f, xs, [i for i, c in enumerate(kids) if c is k])
            if want is not None and not _close(got, want):
                uses = sum(c is k for c in kids)
                problems.append(self._in_their_terms(walk, v, k, got, want, uses))
        return problems

    def _in_their_terms(
        self, walk: Walkthrough, v: Value, k: Value, got: float, want: float, uses: int
    ) -> str:
        """A wrong rule, said as the probe ran it (out.grad 3, the child's grad 10 before):
        what their `_backward` left the child's grad at, what it should be, and the mistake
        those numbers show, from the one list the checker and Predict use (check/mistakes.py)."""
        out, kid, op = in_formula(walk.names[v]), in_formula(walk.names[k]), v._op
        left, should = PRESET + got * SEED, PRESET + want * SEED
        text = (
            f"with {out}.grad = {SEED:g} and {kid}.grad already {PRESET:g}, your {op} rule "
            f"left {kid}.grad at {fmt(left)}: it should be {fmt(should)} ({PRESET:g} + "
            f"∂{out}/∂{kid} × {SEED:g}, ∂{out}/∂{kid} = {fmt(want)}: the slope of {op} at "
            f"{walk.names[k]} = {fmt(k.data)}, by central differences)"
        )
        others = [c for c in v._prev if c is not k]
        product = op == "*" and len(others) == 1
        mate = in_formula(walk.names[others[0]]) if product else None
        question = Question(
            child=k,
            name=kid,
            parent=v,
            out=out,
            op=op,
            want=should,
            had=PRESET,
            local=want / uses,
            formula=None,
            out_grad=SEED,
            paths=uses,
            other=mate,
            own=k.data if product else None,
            product=f"{kid}·{mate}" if product else "",  # (a set's _prev has no order)
        )
        cause = mistake(question, left)
        return text if cause is None else f"{text}: {cause}"

    # -- what Walkthrough asks of a stepper

    def verdict(self, walk: Walkthrough) -> str:
        if self.said is None:
            self.said = self._verdict(walk)
        return self.said

    def _verdict(self, walk: Walkthrough) -> str:
        if not walk.root._prev:
            return (
                f"Your Value: {walk.names[walk.root]} has no children, so there is nothing "
                f"to step back through. If an op made it, that op did not keep its inputs: "
                f"pass them to Value(data, (self, other), op)."
            )
        checks = self.checks or {}
        wrong = [v for v in walk.topo if checks.get(v)]
        unknown = sorted({v._op for v in walk.topo if v._prev and self._op_of(v)[0] is None})
        tail = f" (ops of your own, not checked: {', '.join(unknown)})" if unknown else ""
        if not wrong:
            return (
                "Your Value: every node's local derivative is what its op's slope is "
                "(central differences). Step backward: each step runs your _backward." + tail
            )
        which = ", ".join(f"{walk.names[v]} ({v._op or 'a leaf'})" for v in wrong)
        return (
            f"Your Value: {len(wrong)} node{'s' if len(wrong) > 1 else ''} marked red: "
            f"{which}. Step backward to see each rule at work." + tail
        )

    def mark(self, walk: Walkthrough, drawing: dict[str, Any]) -> None:
        if self.checks is None:  # each node checked once, before any step
            self.checks = {}
            for v in walk.topo:
                found = self._check(walk, v)
                if found:
                    self.checks[v] = found
        for item in drawing["nodes"]:
            v = walk.by_id[item.get("of", item["id"])]
            problems = self.checks.get(v)
            if problems and (item["kind"] == "op" or not v._prev):
                item["problem"] = " ".join(problems)

    def record_grads(self, walk: Walkthrough) -> dict[Value, float]:
        return {v: 0.0 for v in walk.nodes}  # the learner's grads are not known before the steps

    def reset(self, walk: Walkthrough) -> None:
        for node in self.foreign.values():
            node.grad = 0.0

    def compute_data(self, walk: Walkthrough) -> None:
        # Their ops are their code, run when they built the graph: the data is read as it is now.
        changed = 0
        for v, node in self.foreign.items():
            data = _number(node.data, f"{walk.names[v]}.data")
            changed += data != v.data
            v.data = data
        if changed:
            walk.drawing = walk.draw()
            walk.note = (
                f"Forward pass: {changed} node(s) hold new data since explore(), read "
                f"from your Values as they are now."
            )

    def seed(self, walk: Walkthrough) -> list[str]:
        for node in self.foreign.values():
            node.grad = 0.0
        out = in_formula(walk.names[walk.root])
        self.foreign[walk.root].grad = 1.0
        self._sync(walk)
        return [f"{out}.grad = 1.0000  (∂{out}/∂{out} = 1, as the lecture sets it by hand)"]

    def apply(self, walk: Walkthrough, v: Value) -> dict[str, Any]:
        """The learner's `_backward` of `v`, run, and what it did, a line per child."""
        lines = self._run_backward(walk, v)
        self._sync(walk)
        return {"lines": lines}

    def _sync(self, walk: Walkthrough) -> None:
        for v, node in self.foreign.items():
            v.grad = _number(node.grad, f"{walk.names[v]}.grad")

    def parts(self, walk: Walkthrough, v: Value) -> list[Part]:
        """What the learner's `_backward` of `v` would write, run and undone: each child's grad
        before and after (their code decides what is right). [] if it cannot run: the step is
        then applied at once, and its line says what their code raised."""
        node = self.foreign[v]
        backward = getattr(node, "_backward", None)
        if not callable(backward):
            return []
        unique = list(dict.fromkeys(v._prev))
        g = _number(node.grad, f"{walk.names[v]}.grad")
        before = [_number(self.foreign[k].grad, "a grad") for k in unique]
        saved = [(n, n.grad) for n in self.foreign.values()]
        try:
            if self._run_theirs(v, backward) is not None:
                return []  # their code: the step that runs it next says what went wrong
            after = [_number(self.foreign[k].grad, "a grad") for k in unique]
        except TypeError:  # a grad that is not a number: the step says so
            return []
        finally:
            for n, grad in saved:
                n.grad = grad
        probe = self._probe(v) if g == 0 else None
        parts = []
        for i, (k, b, a) in enumerate(zip(unique, before, after)):
            local = (a - b) / g if g != 0 else probe[i] if isinstance(probe, list) else 0.0
            uses = sum(c is k for c in v._prev)
            kid = in_formula(walk.names[k])
            for u in range(uses):  # a child used twice: one share a use, as the lecture's +=
                end = a if u == uses - 1 else b + (a - b) * (u + 1) / uses
                parts.append(Part(k, kid, None, local / uses, g, b + (a - b) * u / uses, end))
        return parts

    def _run_backward(self, walk: Walkthrough, v: Value) -> list[str]:
        node = self.foreign[v]
        name = in_formula(walk.names[v])
        unique = list(dict.fromkeys(v._prev))
        before = [_number(self.foreign[k].grad, "a grad") for k in unique]
        g = _number(node.grad, f"{walk.names[v]}.grad")
        backward = getattr(node, "_backward", None)
        if not callable(backward):
            return [f"{name} has no _backward() to run"]
        failed = self._run_theirs(v, backward)
        if failed is not None:  # the learner's code: what went wrong, in one line
            return [f"{name}._backward() {failed}"]
        lines = [f"{name}._backward()  (your code, for {name} = {v._op} of its children)"]
        probe = self._probe(v) if g == 0 else None
        for i, (k, b) in enumerate(zip(unique, before)):
            after = _number(self.foreign[k].grad, "a grad")
            kid = in_formula(walk.names[k])
            if g != 0:
                local = (after - b) / g
            elif isinstance(probe, list):
                local = probe[i]
            else:
                local = math.nan
            lines.append(
                f"{kid}.grad = {fmt(b)} + {factor(local)} × {factor(g)} = "
                f"{fmt(after)}   (∂{name}/∂{kid} = {fmt(local)}, {name}.grad = "
                f"{fmt(g)})"
            )
        lines += [f"✗ {p}" for p in (self.checks or {}).get(v, [])]
        return lines


class ForeignExplorer(Walkthrough):
    """The explorer on a graph of a learner's own Value class (see the module docstring): a
    walkthrough stepped by their code. Its leaves are theirs: changed in their notebook, not
    here (it has no leaf editing, nudge or gradient step; the view says so)."""

    def __init__(self, root: Any, engine: str, title: str = "") -> None:
        stepper = LearnerStepper(root)
        super().__init__(stepper.root, engine, stepper, title)


def explorer_for(
    root: Any, engine: str, title: str = "", params: Sequence[Value] | None = None
) -> Walkthrough:
    """The explorer for `root`: micrograd's own Value, or a learner's class of the same shape."""
    if isinstance(root, Value):
        return Explorer(None, engine, root=root, title=title, tunable=params)
    return ForeignExplorer(root, engine, title=title)
