"""The backprop explorer: a program of the `micrograd graph` language, its graph, the forward
and backward passes run one node at a time by the real engine, and the leaves a learner can move.

`Explorer` is a walkthrough (walkthrough.py: the graph, its passes, Predict, the view's answer)
stepped by the engine, with what only a graph of micrograd's own Values allows: setting a leaf,
the nudge, making a leaf a parameter or data, a gradient step. `views.ExplorerView` offers it to
the pages (load, forward, step, backward, reset, set, role, nudge, descend, point), each action
answering with the whole view (`Walkthrough.state`). One backward step does exactly what
`Value.backward()` does at one node, so after the last step every grad is bit for bit the one
`backward()` gives. Each chain-rule line writes out its whole arithmetic, the grad the child
already had included (``a.grad = -6.0000 + 3.0000 × 1.0000 = -3.0000   (∂d/∂a = b = 3.0000,
d.grad = 1.0000)``), so that it visibly holds when a node is used twice.

Leaves are parameters (a gradient step moves them) or data (it does not); the program says which
(``w: param = 1.0``, ``x: data = 2.0``; an unmarked named leaf is a parameter), and a learner can
switch one. Editing a leaf, or switching it, writes the change into the program's text (the
answer's `program`), so the Expression box, the Examples menu and the graph always agree; a
constant the engine makes of its own (the -1 of ``a - b``) is written nowhere, so it is not
editable. Each chain-rule step carries the op's own code (`source`): the lines of engine.py that
declare its forward pass and local derivatives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...engine import Value
from ...expr import Span, parse_program
from ...viz.formatting import format_number as fmt
from ...viz.formatting import json_float
from ..errors import ViewError
from .walkthrough import EngineStepper, Walkthrough, factor, in_formula, recompute

# (a GPT's last step over 64 characters and the end, as the GPT view links to it, gpt-loss.js:
# about 5,000, at most 6,700 with the longest names and numbers)
MAX_PROGRAM_CHARS = 8000
NUDGE_H = 0.001  # the lecture's h
MAX_ABS_VALUE = 1e15  # an edited leaf: beyond this the 4-decimal display is a wall of digits
MAX_LR = 1e3  # a gradient step's size, either sign (a negative one climbs, as the lecture does)
# Predicting, an edit or a gradient step asks the grads again at the new numbers (a new pass)
ASK_AGAIN = "Backward step asks for each grad again, at the new numbers."

EXAMPLES = [
    {
        # The lecture trains the weights and the bias; the inputs are data, never moved.
        "title": "The neuron with tanh (lecture)",
        "program": "x1: data = 2.0; x2: data = 0.0\nw1: param = -3.0; w2: param = 1.0\n"
        "b: param = 6.8813735870195432\n"
        "x1w1 = x1*w1; x2w2 = x2*w2\nx1w1x2w2 = x1w1 + x2w2\nn = x1w1x2w2 + b\no = tanh(n)",
    },
    {
        # Every leaf a parameter (unmarked): the lecture nudges a, b, c and f alike.
        "title": "L = (a*b + c)*f (lecture)",
        "program": "a = 2.0; b = -3.0; c = 10.0\ne = a*b\nd = e + c\nf = -2.0\nL = d*f",
    },
    {
        "title": "tanh built from exp (lecture)",
        "program": "x1: data = 2.0; x2: data = 0.0\nw1: param = -3.0; w2: param = 1.0\n"
        "b: param = 6.8813735870195432\n"
        "n = x1*w1 + x2*w2 + b\ne = exp(2*n)\no = (e - 1)/(e + 1)",
    },
    {
        # The lecture's bug: a _backward that assigns (=) gives a.grad 1; accumulating (+=), 2.
        "title": "b = a + a: a used twice (the lecture's bug: = gives a.grad 1, += gives 2)",
        "program": "a = 3.0\nb = a + a",
    },
    {
        "title": "a used twice, fixed by += (lecture)",
        "program": "a = -2.0; b = 3.0\nd = a*b\ne = a + b\nf = d*e",
    },
    {
        "title": "karpathy's README: g = 24.7041",
        "program": "a = -4.0; b = 2.0\nc = a + b\nd = a*b + b**3\nc = c + c + 1\n"
        "c = c + 1 + c + (-a)\nd = d + d*2 + relu(b + a)\nd = d + 3*d + relu(b - a)\n"
        "e = c - d\nf = e**2\ng = f/2.0\ng = g + 10.0/f",
    },
    {
        # A GPT's last step, written out: each logit's grad comes to pᵢ − yᵢ (softmax.py names
        # the two halves when Predict each grad is given one alone). Class 2 is the target and
        # not the likeliest, so the loss pulls z2 up and the others down.
        "title": "Softmax and cross-entropy (the GPT's last step)",
        "program": "z1 = 2.0; z2 = 1.0; z3 = 0.1  # the logits\n"
        "y1: data = 0.0; y2: data = 1.0; y3: data = 0.0  # the target: class 2\n"
        "e1 = exp(z1); e2 = exp(z2); e3 = exp(z3)\ns = e1 + e2 + e3\n"
        "p1 = e1/s; p2 = e2/s; p3 = e3/s  # softmax: the probabilities\n"
        "l1 = log(p1); l2 = log(p2); l3 = log(p3)\n"
        "L = -(y1*l1 + y2*l2 + y3*l3)  # cross-entropy",
    },
    {
        # One position looking at two: the GPT's attention at its smallest (size 2, so √2).
        "title": "One attention head",
        "program": "q1 = 1.0; q2 = -0.5  # the query\n"
        "ka1 = 0.8; ka2 = 0.2; kb1 = -0.3; kb2 = 0.9  # two keys, a and b\n"
        "va1 = 1.0; va2 = -1.0; vb1 = 0.5; vb2 = 2.0  # their values\n"
        "sa = (q1*ka1 + q2*ka2)/2**0.5; sb = (q1*kb1 + q2*kb2)/2**0.5  # q·k/√2\n"
        "ea = exp(sa); eb = exp(sb); s = ea + eb\n"
        "wa = ea/s; wb = eb/s  # softmax: the weights\n"
        "o1 = wa*va1 + wb*vb1; o2 = wa*va2 + wb*vb2  # the weighted sum of the values\n"
        "t1: data = 0.0; t2: data = 1.0  # what o should be\n"
        "L = (o1 - t1)**2 + (o2 - t2)**2",
    },
]
DEFAULT_PROGRAM = EXAMPLES[0]["program"]

# ------------------------------------------------------------------------ the text of a program


def _literal(x: float) -> str:
    """A number as the program's text writes it: Python's shortest repr (-2.5, 1e-05)."""
    return repr(float(x))


def splice(text: str, span: Span, literal: str, *holders: dict[Value, Span]) -> str:
    """`text` with `span` replaced by `literal`; every span in `holders` that lies after it is
    moved to where its text now is (the replaced span itself becomes the literal's)."""
    start, end = span
    shift = len(literal) - (end - start)
    for spans in holders:
        for other, (s, e) in spans.items():
            if (s, e) == span:
                spans[other] = (start, start + len(literal))
            elif s >= end:
                spans[other] = (s + shift, e + shift)
    return text[:start] + literal + text[end:]


def rewrite(
    program: str, spans: dict[Value, Span], new: dict[Value, float], *others: dict[Value, Span]
) -> str:
    """`program` with the numbers written at the spans of `new`'s leaves replaced by their new
    values; `spans` (and the spans in `others`) are updated to where they now are. A negative
    number written where a ``**`` follows is parenthesized (``-3 ** a`` would read as
    ``-(3 ** a)``)."""
    text = program
    for v in sorted(new, key=lambda v: spans[v][0], reverse=True):  # right to left: offsets hold
        start, end = spans[v]
        literal = _literal(new[v])
        if literal.startswith("-") and text[end:].lstrip().startswith("**"):
            literal = f"({literal})"
        text = splice(text, (start, end), literal, spans, *others)
    return text


# ------------------------------------------------------------------------ the session's state


class Explorer(Walkthrough):
    """One tab's explorer on a graph of micrograd's own Values: a walkthrough stepped by the
    engine (`EngineStepper`), whose leaves the learner can set, switch, nudge and move by a
    gradient step.

    Made from a program of the expression language (`program`: its parameters are the named
    leaves not marked `data`), or from a graph already built (`root`, with `title` saying what
    it is, as the Train view's point is): then there is no text to keep in step, every leaf can
    be edited or switched, and the parameters are `tunable` (by default the named leaves). A
    gradient step moves the parameters only."""

    def __init__(
        self,
        program: str | None,
        engine: str,
        root: Value | None = None,
        title: str = "",
        tunable: Sequence[Value] | None = None,
    ) -> None:
        self.sources: dict[Value, Span] = {}  # where each leaf's number is written
        self.marks: dict[Value, Span] = {}  # where each named leaf's name (and marker) is written
        roles: dict[Value, tuple[str | None, Span]] = {}
        if program is not None:
            names_by_label = parse_program(program, self.sources, roles)
            self.marks = {v: span for v, (_, span) in roles.items()}
            root = next(reversed(names_by_label.values()))
        if root is None:
            raise TypeError("Explorer needs a program or a root Value")
        self.program = program  # (before the walkthrough draws: what is editable depends on it)
        super().__init__(root, engine, EngineStepper(), title)
        # What a gradient step moves: the parameters. In a program, its named leaves not marked
        # `data` (as the lecture trains w1, w2, b and nudges a, b, c, f), never the constants
        # written inside expressions (the 2 of 2*n)
        if program is not None:
            chosen = {v for v, (role, _) in roles.items() if role != "data"}
        elif tunable is not None:
            chosen = set(tunable)
            inside = set(self.topo)
            for v in tunable:
                if not isinstance(v, Value) or v not in inside or v._prev:
                    what = (
                        f"{v.label or repr(v)} is computed from other nodes"
                        if isinstance(v, Value) and v in inside
                        else f"{str(v)[:40]} is not a leaf of this graph"
                    )
                    raise ValueError(
                        f"explore: params must be leaves of the graph (what a "
                        f"gradient step moves): {what}"
                    )
        else:  # a graph built in Python: its named leaves, as the lecture nudges a, b, c, f
            chosen = {v for v in self.topo if not v._prev and v.label}
        self.params = [v for v in self.topo if v in chosen and not v._prev]

    def editable(self, v: Value) -> bool:
        """Can the learner set this leaf? Yes if its number is written in the program (or there is
        no program); not a constant the engine made of its own (the -1 of ``a - b``)."""
        return not v._prev and (self.program is None or v in self.sources)

    def switchable(self, v: Value) -> bool:
        """Can the learner make this leaf a parameter, or data? Any leaf of a graph without a
        program; in a program, a leaf with a name (its marker is written on its assignment)."""
        return self.editable(v) and (self.program is None or v in self.marks)

    # -- editing a leaf

    def leaf(self, node_id: object) -> Value:
        if not isinstance(node_id, str) or node_id not in self.by_id:
            raise ViewError(f"no node {str(node_id)[:40]!r} in this graph")
        v = self.by_id[node_id]
        if v._prev:
            raise ViewError(
                f"{self.names[v]} is computed from other nodes; only a leaf (an input) can be set",
            )
        if not self.editable(v):
            raise ViewError(
                f"{self.names[v]} = {fmt(v.data)} is a constant the op made of its own (as a - b "
                f"is a + (-1)·b), not a number written in the expression: it cannot be set",
            )
        return v

    def _move(self, new: dict[Value, float]) -> None:
        """Give leaves new numbers: the forward and backward passes run again, by the engine, and
        the program's text follows. Raises ViewError if the engine refuses the arithmetic."""
        try:
            fresh = recompute(self.topo, new)
        except (ArithmeticError, ValueError) as exc:
            what = ", ".join(f"{self.names[v]} = {x:g}" for v, x in new.items())
            raise ViewError(f"with {what}: {exc}") from None
        for node in self.topo:
            node.data = fresh[node].data
            node._local = fresh[node]._local
        if self.program is not None:
            self.program = rewrite(self.program, self.sources, new, self.marks)
        self.reset()
        self.drawing = self.draw()
        if self.quiz.on:  # predicting: the grads at the new numbers are asked, from the seed
            self.forward()
        else:
            self.backward()
        self.current = None
        self.touched = []

    def descend(self, lr: object) -> None:
        """The lecture's move by hand: every parameter nudged against its gradient,
        ``p.data -= lr * p.grad``, then both passes again; the output moves (down, for lr > 0).
        The data stays where it is."""
        if (
            isinstance(lr, bool)
            or not isinstance(lr, (int, float))
            or not math.isfinite(lr)
            or not 0 < abs(lr) <= MAX_LR
        ):
            raise ViewError(
                f"the step size must be a number, not 0, between -{MAX_LR:g} and "
                f"{MAX_LR:g}, got {str(lr)[:40]!r}"
            )
        if not self.params:
            how = (
                "write `w: param = 1.0`"
                if self.program is not None
                else "in the notebook, explore(out, params=model.parameters())"
            )
            raise ViewError(
                f"this graph has no parameters to move: click a leaf and make it a "
                f"parameter (or {how})"
            )
        ran = self.phase != "done"
        self.backward()  # the grads the step follows
        before = self.root.data
        new = {v: v.data - lr * v.grad for v in self.params}
        bad = [v for v, x in new.items() if not math.isfinite(x) or abs(x) > MAX_ABS_VALUE]
        if bad:
            v = bad[0]
            raise ViewError(
                f"the step would move {self.names[v]} to {new[v]:g}, beyond "
                f"±1e15: take a smaller step"
            )
        shown_lr = f"({lr:g})" if lr < 0 else f"{lr:g}"
        lines = [
            f"{in_formula(self.names[v])}.data = {fmt(v.data)} - {shown_lr} × "
            f"{factor(v.grad)} = {fmt(x)}"
            for v, x in new.items()
        ]
        stay = [
            self.names[v] for v in self.topo if not v._prev and self.switchable(v) and v not in new
        ]
        self._move(new)
        self.descents += 1
        out = in_formula(self.names[self.root])
        moved = ", ".join(self.names[v] for v in new)
        head = (
            f"Gradient step {self.descents} (lr = {lr:g}): the parameters {moved} move, "
            f"p.data -= lr × p.grad"
            + (f"; the data {', '.join(stay)} stay{'s' if len(stay) == 1 else ''}" if stay else "")
            + (" (the backward pass ran first, for the grads)" if ran else "")
        )
        tail = f"{out}: {fmt(before)} → {fmt(self.root.data)}"
        self.log = [{"node": None, "lines": [head, *lines, tail]}]
        self.note = (
            f"Gradient step {self.descents}: {out} went from {fmt(before)} to "
            f"{fmt(self.root.data)}; "
            + (ASK_AGAIN if self.quiz.on else "the grads are those of the new point.")
        )

    def set_role(self, node_id: object, role: object) -> None:
        """Make a leaf a parameter ("param": a gradient step moves it) or data ("data": it does
        not); in a program, its marker is written on its assignment (``x: data = 2.0``)."""
        if role not in ("param", "data"):
            raise ViewError(f"a leaf is 'param' or 'data', got {str(role)[:40]!r}")
        v = self.leaf(node_id)
        if not self.switchable(v):
            raise ViewError(
                f"{self.names[v]} = {fmt(v.data)} is a number written inside an expression, "
                f"neither a parameter nor data: give it a name of its own (k = {_literal(v.data)}) "
                f"to make it a parameter"
            )
        if (v in self.params) != (role == "param"):
            if role == "param":
                self.params = [u for u in self.topo if u in self.params or u is v]
            else:
                self.params = [u for u in self.params if u is not v]
        if self.program is not None:
            start, end = self.marks[v]
            name = self.program[start:end].split(":")[0].strip()
            self.program = splice(
                self.program, (start, end), f"{name}: {role}", self.marks, self.sources
            )
        what = (
            "a parameter: a gradient step moves it"
            if role == "param"
            else "data: a gradient step leaves it where it is"
        )
        self.note = f"{self.names[v]} is {what}."

    def set_leaf(self, node_id: object, value: object) -> None:
        v = self.leaf(node_id)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ViewError(f"the value must be a number, got {str(value)[:40]!r}")
        value = float(value)
        if not math.isfinite(value) or abs(value) > MAX_ABS_VALUE:
            raise ViewError(f"the value must be a number between -1e15 and 1e15, got {value!r}")
        self._move({v: value})
        ran = (
            "forward pass ran again; " + ASK_AGAIN
            if self.quiz.on
            else "forward and backward passes ran again"
        )
        self.log = [{"node": node_id, "lines": [f"{self.names[v]} = {fmt(value)}: the {ran}"]}]
        if self.quiz.on:
            self.note = f"{self.names[v]} = {fmt(value)}: {ASK_AGAIN}"
        self.nudge = self.nudge_at(v)

    def nudge_at(self, v: Value) -> dict[str, Any]:
        """The lecture's numerical derivative: (L(a + h) - L(a)) / h with h = 0.001, or an h
        the floats near a can hold (`nudge_h`), and why; or why the nudge cannot see the
        slope (L too large for h to move it)."""
        a, out = in_formula(self.names[v]), in_formula(self.names[self.root])
        base = self.root.data
        h = nudge_h(v.data)
        try:
            bumped = recompute(self.topo, {v: v.data + h})[self.root].data
        except (ArithmeticError, ValueError) as exc:
            return {"node": self.ids[v], "text": f"{out}({a} + h) cannot be computed: {exc}"}
        slope = (bumped - base) / h
        text = (
            f"({out}({a} + h) - {out}({a})) / h = ({bumped:.6f} - {_paren6(base)}) / "
            f"{h:g} = {fmt(slope)}"
        )
        why = []
        if h != NUDGE_H:
            why.append(
                f"h = {h:g}, not the lecture's {NUDGE_H:g}: near {a} = {fmt(v.data)} "
                f"floats are {math.ulp(v.data):g} apart, so {a} + {NUDGE_H:g} would be "
                f"{a} again, or off by far more than {NUDGE_H:g}"
            )
        if (
            bumped == base
            and math.isfinite(base)
            and math.ulp(base) > 0
            and self.phase == "done"
            and v.grad != 0
        ):
            why.append(
                f"{out}({a} + h) = {out}({a}) in floats: near {out} = {fmt(base)} they "
                f"are {math.ulp(base):g} apart, more than h moves {out}, so the nudge "
                f"cannot see the slope here"
            )
        if self.phase == "done":
            compare = f"{a}.grad = {fmt(v.grad)} (backprop)"
        else:
            compare = f"{a}.grad: run the backward pass to compare"
        return {
            "node": self.ids[v],
            "text": text,
            "compare": compare,
            "slope": json_float(slope),
            "why": " ".join(why),
            "h": h,
        }


def nudge_h(a: float) -> float:
    """The lecture's h = 0.001 where the floats near `a` are at least 1,000 times closer than
    that (a + h - a is then h to within 0.1%); else the smallest power of ten that is."""
    room = 1000 * math.ulp(a)
    return NUDGE_H if room <= NUDGE_H else 10.0 ** math.ceil(math.log10(room))


def _paren6(x: float) -> str:
    text = f"{x:.6f}"
    return f"({text})" if text.startswith("-") else text
