"""Graphs where a learner's backward() goes wrong even when every op is right: reused nodes
(the += bug), the visiting order, a graph with 2^200 paths (a missing visited set), a deep chain,
and calling backward() twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine import Value
from .by_hand import check_by_hand
from .compose import ComposeChecks
from .table import ASSIGN_HINT, NAMES, ROWS, registry_rows
from .timeout import Failed, StopChecking, attr
from .values import close, describe, fmt


def _diamond(V: type, a: Any) -> tuple:
    b = a * V(2.0)
    c = b * V(3.0)
    return (b, c, b + c)


_PATHS = "backward() on a graph with 2^200 paths (is each node visited once?)"


class ValueChecker(ComposeChecks):
    """All of `check`'s checks of one Value class; `all()` runs them in order."""

    def skip(self, what: str) -> None:
        """A check not run because a problem found earlier would spoil it: say so, never hide it."""
        self.report.skipped.append(what)

    # graphs where nodes are reused or the order matters --------------------------------

    def graph(
        self,
        op: str,
        expr: str,
        build: Callable[..., Any],
        xs: tuple[float, ...],
        needs: str,
        hint: Callable[[float | None, float], str],
        names: str = NAMES,
    ) -> bool | None:
        """Build `expr` with both classes, backward() both, compare every leaf's grad.

        Returns None when the class cannot run it, else whether it passed (problems reported).
        """
        if not self.has_backward or not self.defines(needs.split()):
            return None
        ref_in = [Value(x) for x in xs]
        build(Value, *ref_in)[-1].backward()
        ins = self.leaves(xs)
        if isinstance(ins, Failed):
            return None
        label = f"{op}: for {expr} with {self.where(xs, names)}"
        nodes = self.run(build, self.V, *ins)
        if isinstance(nodes, Failed):
            self.problem(f"{label}, it crashed: {nodes.text}")
            return False
        if not self.backward(nodes[-1], f"{expr} with {self.where(xs, names)}"):
            return False
        for i, (v, w) in enumerate(zip(ins, ref_in)):
            g = self.grad(v)
            if not close(g, w.grad):
                self.problem(
                    f"{label}, {names[i]}.grad is {describe(attr(v, 'grad'))}, "
                    f"expected {fmt(w.grad)} — {hint(g, w.grad)}"
                )
                return False
        self.report.passed.append(f"{op}: {expr}")
        return True

    def reuse(self) -> None:
        for op, expr, build, needs, share in (
            ("+", "b = a + a", lambda V, a: (a + a,), "__add__", 1.0),
            ("*", "b = a * a", lambda V, a: (a * a,), "__mul__", 3.0),
        ):
            if op in self.wrong_ops:
                continue  # its own checks already failed: one problem per cause
            hint = lambda g, w, build=build, share=share: self.reuse_cause(build, share)
            if self.graph(op, expr, build, (3.0,), needs, hint) is False:
                self.assign_bug = True

    def reuse_cause(self, build: Callable[..., Any], share: float) -> str:
        """Why b = a + a (or a * a) lost a share, from what its _backward does to an a.grad
        that already holds 10: overwritten is `=` for `+=`; 10 plus one share, with a once in
        out._prev, is a set of children walked to hand out the shares."""

        def probe() -> tuple[float | None, int]:
            a = self.V(3.0)
            out = build(self.V, a)[-1]
            a.grad = 10.0
            out.grad = 1.0
            out._backward()
            return self.grad(a), sum(c is a for c in out._prev)

        got = self.run(probe)
        if isinstance(got, Failed):
            return ASSIGN_HINT
        g, count = got
        if g is not None and g < 10.0:
            return ASSIGN_HINT
        if close(g, 10.0 + share) and count == 1:
            return (
                "a is both inputs, but out._prev holds it once (a set keeps one copy), and "
                "the shares are handed out per entry of _prev: keep _prev a tuple of both "
                "inputs, (self, other), or give each input its share by name"
            )
        return (
            "a.grad should get a share from each use of a: one is lost (does backward() "
            "reset a grad, or skip a node used twice?)"
        )

    def merges_equal_data(self) -> bool:
        """Whether two different nodes with equal data count as one in a set (an __eq__ and
        __hash__ that compare data, as a float subclass has)."""
        both = self.leaves((1.5, 1.5))
        if isinstance(both, Failed):
            return False
        merged = self.run(lambda: len({both[0], both[1]}) == 1)
        return merged is True

    EQUAL_DATA = (
        "two different nodes with equal data count as one: your Value's __eq__ and "
        "__hash__ compare data (a float subclass's do), so the visited set skips a "
        "node whose value merely equals another's; nodes must compare by identity: "
        "no __eq__/__hash__ of your own (or __hash__ = object.__hash__ and __eq__ = "
        "object.__eq__), or keep id(v) in the visited set"
    )

    def shared(self) -> None:
        """A graph with 2^200 paths: built in milliseconds, walked forever unless nodes are
        visited once. (Two *different* nodes use y, so a set of children cannot hide it.)"""
        if not self.has_backward or not self.defines(["__add__", "__mul__"]):
            return
        if self.wrong_ops & {"+", "*"}:
            return self.skip(_PATHS)
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
        if isinstance(built, Failed):
            self.problem(f"backward(): building {expr} crashed: {built.text}")
            return
        x, y = built
        done = self.run(lambda: y.backward())
        if isinstance(done, Failed) and done.timeout:
            self.walk_wrong = True
            self.problem(
                f"backward(): for {expr} (2^{levels} paths to x, {4 * levels + 3} "
                f"nodes), backward() {done.text} — does it visit each node once (a "
                f"visited set)? without one, a node used twice is walked once per path "
                f"to it: here 2^{levels} times"
            )
        elif isinstance(done, Failed):
            self.problem(f"backward(): for {expr}, backward() crashed: {done.text}")
        elif not close(self.grad(x), 1.0) and not self.assign_bug:
            # Reported after order(), whose smaller graphs say more, if those find nothing.
            why = (
                self.EQUAL_DATA
                if self.merges_equal_data()
                else "is each node visited once, in topological order?"
            )
            self.shared_wrong = (
                f"backward(): for {expr}, x.grad is "
                f"{describe(attr(x, 'grad'))}, expected 1.0 — {why}"
            )
        elif not self.assign_bug:
            self.report.passed.append(f"backward(): {expr} (each node visited once)")
        else:  # it finished, but the = bug spoils its grads: no verdict either way
            self.skip(_PATHS)

    def visit_order_cause(self) -> str:
        """Why the output's gradient never reached the inputs, read from which nodes backward()
        calls _backward on, how often and in which order, watched on b = a*2; c = b*3;
        out = b + c. A cause is named only when that record shows it: a node never called, one
        called twice, children first every time (topo walked without reversing it), or c
        before b (a topological order that puts a node before its children; which one comes
        first can depend on the order a set of children iterates in, so a few fresh graphs are
        watched)."""
        never = "the output's gradient never reached it: "
        unknown = never + "does backward() call _backward on reversed(topo), the output first?"
        kept = []  # every graph stays alive: fresh addresses, so a set of children may reorder
        for _ in range(12):
            order = self.call_order()
            if order is None:
                return unknown
            kept.append(order)
            b, c, out, calls = order
            named = {"b": b, "c": c, "out": out}
            counts = {k: sum(v is n for v in calls) for k, n in named.items()}
            if counts["out"] and not counts["b"] and not counts["c"]:
                return (
                    never + "backward() calls only the output's own _backward: it must call "
                    "_backward on every node the output depends on, the output first "
                    "(each node of reversed(topo), with topo the topological order)"
                )
            uncalled = [k for k, n in counts.items() if not n]
            if uncalled:
                return (
                    never + f"backward() never calls _backward on {', '.join(uncalled)} (of "
                    f"b = a*2; c = b*3; out = b + c): it must call it on every node of "
                    f"the graph, output first"
                )
            twice = [f"{k} {n} times" for k, n in counts.items() if n > 1]
            if twice:
                return (
                    never + f"backward() calls _backward on {', '.join(twice)}: each node "
                    f"once (a visited set)"
                )
            seen = [k for v in calls for k, n in named.items() if v is n]
            if seen == ["out", "c", "b"]:  # the right order: the cause is elsewhere
                return (
                    never + "backward() visits the nodes in the right order: does it set "
                    "self.grad = 1.0 on the output before calling any _backward?"
                )
            if seen == ["c", "b", "out"]:
                return (
                    never + "the topological order puts a node before its children (c "
                    "before b, which c uses): append a node after visiting its children, "
                    "then walk reversed(topo)"
                )
            if seen != ["b", "c", "out"]:
                return unknown
        return (
            never + "backward() calls the nodes' _backward children first: walk "
            "reversed(topo), the output first"
        )

    def lost_on_the_way(self) -> str:
        """A grad that came out short: the visiting order if the record shows it wrong; grads
        wiped during the walk if backward() called every _backward once, in the right order."""
        order = self.call_order()
        if order is not None:
            b, c, out, calls = order
            if [n for n in calls] == [out, c, b]:
                return (
                    "backward() calls each node's _backward once, in the right order (out, "
                    "c, b, on b = a*2; c = b*3; out = b + c), yet a share of the grad is "
                    "lost: the grads are wiped during the walk — is a grad set to 0 between "
                    "one _backward and the next (a child's, before its parent's "
                    "_backward)? each grad keeps what every earlier _backward added"
                )
        return (
            "grads depend on the order nodes were visited — is the graph walked in "
            "topological order (a node's _backward only after every node that uses it)?"
        )

    def call_order(self) -> tuple | None:
        """A fresh diamond of the learner's class and the nodes in the order its backward()
        called their _backward; None if that cannot be watched (no per-node _backward)."""
        calls: list[Any] = []
        a = self.leaves((1.5,))
        if isinstance(a, Failed):
            return None
        nodes = self.run(_diamond, self.V, a[0])
        if isinstance(nodes, Failed):
            return None
        b, c, out = nodes
        for v in (b, c, out):
            fn = attr(v, "_backward")
            if isinstance(fn, Failed) or not callable(fn):
                return None
            try:
                v._backward = lambda v=v, fn=fn: (calls.append(v), fn())
            except (AttributeError, TypeError):  # _backward is not the learner's to replace
                return None
        if isinstance(self.run(out.backward), Failed):
            return None
        return b, c, out, calls

    def order(self) -> None:
        """Graphs whose grads come out wrong when backward() visits nodes in the wrong order."""
        if self.assign_bug or self.walk_wrong or self.wrong_ops & {"+", "*"}:
            # those problems spoil these graphs too: one cause, one problem
            return self.skip(
                "backward() on graphs where the visiting order matters (L = (a*b + c) * f, ...)"
            )

        def hint(g: float | None, w: float) -> str:
            if self.merges_equal_data():
                return self.EQUAL_DATA
            if g == 0.0:
                return self.visit_order_cause()
            return self.lost_on_the_way()

        def lecture(V: type, a: Any, b: Any, c: Any, f: Any) -> tuple:
            e = a * b
            d = e + c
            return (e, d, d * f)

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
            ("b = a*2; c = b*3; out = b + c", _diamond, (1.5,), "a"),
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
        if not self.has_backward or not self.defines(["__mul__"]):
            return
        if "*" in self.wrong_ops or self.walk_wrong or self.assign_bug:
            return self.skip("backward() twice on y = x * x * x")
        ins = self.leaves((3.0,))
        if isinstance(ins, Failed):
            return
        (x,) = ins
        y = self.run(lambda: x * x * x)
        if isinstance(y, Failed) or not self.backward(y, "y = x * x * x"):
            return
        g1 = self.grad(x)
        done = self.run(lambda: y.backward())
        if isinstance(done, Failed):
            self.problem(
                f"backward() twice: for y = x * x * x with x = 3.0, the second "
                f"y.backward() {'crashed: ' * (not done.timeout)}{done.text}"
            )
            return
        g2 = self.grad(x)
        if g1 != 27.0:
            return  # wrong already; reported by the * checks
        if g2 == 54.0:
            self.report.passed.append(
                "backward() twice: x.grad 27 → 54, leaves accumulate (as in PyTorch and micrograd)"
            )
        elif g2 == 72.0:
            self.report.notes.append(
                "backward() twice on y = x * x * x (x = 3.0) gives x.grad 27 → 72, as the "
                "lecture's engine does: the intermediate x*x keeps its old grad and is counted "
                "again. PyTorch and micrograd give 54 (they reset intermediate grads). Either "
                "way, zero the grads before each backward()."
            )
        elif g2 == 27.0 and self.nothing_ran_again(x, y):
            self.problem(
                "backward() twice: for y = x * x * x with x = 3.0, a second y.backward() does "
                "nothing at all (x.grad set to 0 stays 0) — is the visited set or topo kept "
                "between calls (on the class, or as a default argument)? make them local to "
                "backward()"
            )
        elif g2 == 27.0:
            self.report.notes.append(
                "backward() twice on y = x * x * x (x = 3.0) leaves x.grad at 27: your "
                "backward() resets the grads. PyTorch and micrograd accumulate into leaves (54), "
                "which is why training loops call zero_grad()."
            )
        else:
            self.problem(
                f"backward() twice: for y = x * x * x with x = 3.0, x.grad goes 27 → "
                f"{describe(attr(x, 'grad'))}; expected 54 (leaves accumulate, as in "
                f"PyTorch) or 72 (the lecture's engine)"
            )

    def nothing_ran_again(self, x: Any, y: Any) -> bool:
        """After two backward() calls left x.grad at 27: does a third do anything at all? With
        x.grad set to 0 first, an engine that resets the grads gives 27 again; one that keeps
        its visited set between calls walks nothing and leaves 0."""

        def again() -> None:
            x.grad = 0.0
            y.backward()

        done = self.run(again)
        return not isinstance(done, Failed) and self.grad(x) == 0.0

    def deep(self) -> None:
        """A chain 3,000 nodes deep: a recursive build_topo runs out of stack (a note, not a
        problem: the lecture's does too)."""
        if not self.has_backward or not self.defines(["__add__"]):
            return
        if "+" in self.wrong_ops or self.walk_wrong or self.assign_bug:
            return self.skip("backward() on a chain 3,000 nodes deep")
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
        if isinstance(x, Failed):
            if isinstance(x.exc, RecursionError):
                self.report.notes.append(
                    f"backward() on a chain of {n:,} additions hits Python's recursion limit: a "
                    f"recursive build_topo (the lecture's) stops near 1,000 nodes deep. "
                    f"micrograd's backward() walks the graph with an explicit stack instead."
                )
            else:
                self.problem(f"backward(): for a chain of {n:,} additions, {x.text}")
        elif close(self.grad(x), 1.0):
            self.report.passed.append(f"backward(): a chain of {n:,} additions")
        else:
            self.problem(
                f"backward(): for a chain of {n:,} additions y = x + 0.001 + ..., x.grad "
                f"is {describe(attr(x, 'grad'))}, expected 1.0"
            )

    def all(self) -> None:
        try:
            if not self.basics():
                return
            for row in ROWS + registry_rows():
                self.row(row)
            check_by_hand(self, ROWS + registry_rows())  # no backward() yet: by hand
            self.numbers()
            self.missing_lines()
            self.reuse()
            self.shared()
            self.order()
            self.derived()
            self.compose()
            self.twice()
            self.deep()
        except StopChecking:
            if self.downstream:
                self.problem(
                    f"ops built from the ones above are wrong too: {'; '.join(self.downstream)}"
                )
            raise
