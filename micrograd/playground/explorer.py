"""The backprop explorer: a program of the `micrograd graph` language, its graph, and the forward
and backward passes run one node at a time by the real engine.

`Explorer` is one graph and how far its passes have gone; `views.ExplorerView` offers it to the
pages (load, forward, step, backward, reset, set, role, nudge, descend, point), each action
answering with the whole view (`Explorer.state`): every node's data and grad, the pass's progress,
the chain-rule lines so far. One backward step does exactly what `Value.backward()` does at one
node, in the same order (reverse topological, children in `_prev` order, ``child.grad += local *
out.grad``), so after the last step every grad is bit for bit the one `backward()` gives. Each
chain-rule line writes out its whole arithmetic, the grad the child already had included
(``a.grad = -6.0000 + 3.0000 × 1.0000 = -3.0000   (∂d/∂a = b = 3.0000, d.grad = 1.0000)``),
so that it visibly holds when a node is used twice.

Leaves are parameters (a gradient step moves them) or data (it does not); the program says which
(``w: param = 1.0``, ``x: data = 2.0``; an unmarked named leaf is a parameter), and a learner can
switch one. Editing a leaf, or switching it, writes the change into the program's text (the
answer's `program`), so the Expression box, the Examples menu and the graph always agree; a
constant the engine makes of its own (the -1 of ``a - b``) is written nowhere, so it is not
editable. Each chain-rule step carries the op's own code (`source`): the lines of engine.py that
declare its forward pass and local derivatives.
"""

from __future__ import annotations

import inspect
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from ..core.walk import local_derivatives
from ..engine import OPS, Value, backward_step, explain_local, grad, op_kind, topological_order
from ..expr import Span, parse_program
from ..viz import caption as op_caption
from ..viz import display_names, trace
from ..viz.formatting import format_number as fmt
from ..viz.formatting import json_float, reads_as_number
from ..viz.layout import Box, layout
from .errors import ViewError
from .predict import Part, Question, Quiz, questions, seed_question
from .softmax import consumers_of, logit

MAX_PROGRAM_CHARS = 5000
MAX_NODES = 500  # Values in one graph
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

# Record geometry, in pixels of the page's 12px monospace font (the page draws the same sizes):
# a record is three rows, label / data / grad, so the graph stays narrow enough for a screen.
CHAR_W = 7.3
RECORD_PAD = 14.0
ROW_H = 16.0
RECORD_H = 3 * ROW_H + 6
OP_H = 24.0


# ------------------------------------------------------------------------ recomputing the graph


def recompute(topo: Sequence[Value], leaves: dict[Value, float]) -> dict[Value, Value]:
    """The graph evaluated again by the engine's own ops, with some leaves set to new numbers;
    fresh Values, nothing in `topo` is touched. Raises the engine's error (log of a negative...)."""
    fresh: dict[Value, Value] = {}
    for v in topo:
        if not v._prev:
            fresh[v] = Value(leaves.get(v, v.data))
        else:
            info = OPS[op_kind(v)]  # the op's own number too (the exponent of x ** p)
            fresh[v] = info.apply(*(fresh[c] for c in v._prev), p=info.parameter(v))
    return fresh


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


# ------------------------------------------------------------------------ the engine's own code


@cache
def op_source(kind: str) -> dict[str, Any] | None:
    """Where the engine declares op `kind` (its @_op declaration and method: the forward pass and
    the local derivatives side by side), as {"file", "first", "last", "code"}; read from the
    engine itself, so it is always the code that ran."""
    info = OPS.get(kind)
    if info is None:
        return None
    lines, first = inspect.getsourcelines(info.method)
    return {
        "file": f"micrograd/{Path(inspect.getfile(info.method)).name}",
        "first": first,
        "last": first + len(lines) - 1,
        "code": textwrap.dedent("".join(lines)).rstrip("\n"),
    }


# ------------------------------------------------------------------------ names and explanations


# a name (α, x₂, t1, w1.2.1: layer 1, neuron 2, input 1) or a non-negative number
_SIMPLE = re.compile(r"[^\W\d]\w*(\.\d+)*(')*|\d[\w.]*")
_CALL = re.compile(r"[^\W\d]\w*\([^()]*\)")


def in_formula(name: str) -> str:
    """A name as it reads inside a formula: 'x1*w1' becomes '(x1*w1)', '-2' becomes '(-2)'."""
    return name if _SIMPLE.fullmatch(name) or _CALL.fullmatch(name) else f"({name})"


def factor(x: float) -> str:
    """A number as a factor of a product: a negative one in parentheses (3.0000 × (-2.0000))."""
    text = fmt(x)
    return f"({text})" if text.startswith("-") else text


# ------------------------------------------------------------------------ the graph's drawing


ROLE_CHARS = len(" param")  # a leaf's label row also says what it is, "param" or "data"


def _record_width(nodes: Sequence[Value], names: dict[Value, str], grads: dict[Value, float]):
    chars = max(
        len("grad -0.0000"),
        max(len(names[v]) + (0 if v._prev else ROLE_CHARS) for v in nodes),
        max(len("data " + fmt(v.data)) for v in nodes),
        max(len("grad " + fmt(grads[v])) for v in nodes),
    )
    return round(chars * CHAR_W + RECORD_PAD, 1)


def _drawing(
    root: Value,
    nodes: Sequence[Value],
    ids: dict[Value, str],
    names: dict[Value, str],
    engine: str,
    editable: Callable[[Value], bool],
    final: dict[Value, float] | None = None,
    switchable: Callable[[Value], bool] = lambda v: False,
) -> dict[str, Any]:
    # Field widths fit the numbers before and after the backward pass, so nothing moves later.
    record_w = _record_width(nodes, names, _final_grads(root) if final is None else final)
    boxes: list[Box] = []
    edges: list[tuple[str, str]] = []
    info: list[dict[str, Any]] = []
    for v in nodes:
        vid = ids[v]
        boxes.append(Box(vid, record_w, RECORD_H))
        info.append(
            {
                "id": vid,
                "kind": "value",
                "name": names[v],
                "named": bool(v.label),
                "leaf": not v._prev and editable(v),  # the page lets you click it to edit
                "switchable": switchable(v),  # ... and make it a parameter, or data
            }
        )
        if v._prev:
            caption = op_caption(v)
            w = max(30.0, len(caption) * CHAR_W + 14)
            boxes.append(Box(vid + "op", w, OP_H, "ellipse"))
            edges.append((vid + "op", vid))
            info.append({"id": vid + "op", "kind": "op", "caption": caption, "of": vid})
    for v in nodes:
        for child in v._prev:
            edges.append((ids[child], ids[v] + "op"))
    placed = layout(boxes, edges, engine)
    for item, box in zip(info, boxes):
        x, y = placed.centers[box.id]
        item.update(x=round(x, 1), y=round(y, 1), w=round(box.width, 1), h=box.height)
    return {
        "width": round(placed.width, 1),
        "height": round(placed.height, 1),
        "row": ROW_H,
        "nodes": info,
        "edges": [{"from": s, "to": t, "d": d} for (s, t), d in zip(edges, placed.paths)],
        "engine": placed.engine,
        "notes": placed.notes,
    }


def _final_grads(root: Value) -> dict[Value, float]:
    """Every node's grad after a full backward pass, computed aside (no `.grad` is touched)."""
    topo = topological_order(root)
    return dict(zip(topo, grad(root, topo)))


# ------------------------------------------------------------------------ the session's state


class Explorer:
    """One tab's explorer: the program's graph and how far the passes have gone.

    Made from a program of the expression language (`program`: its parameters are the named
    leaves not marked `data`), or from a graph already built (`root`, with `title` saying what
    it is, as the Train view's point is): then there is no text to keep in step, every leaf can
    be edited or switched, and the parameters are `tunable` (by default the named leaves). A
    gradient step moves the parameters only."""

    verdict = ""  # what a check of the graph's rules found (a learner's own Value: foreign.py)
    own_value = False  # a graph of a learner's own Value class, stepped by their code

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
        self.program = program
        self.title = title
        self.root = root
        self.nodes, _ = trace(self.root, max_nodes=MAX_NODES)
        self.ids = {v: f"v{i}" for i, v in enumerate(self.nodes)}
        self.by_id = {i: v for v, i in self.ids.items()}
        self.topo = topological_order(self.root)
        self.names = display_names(self.topo)  # c1, c2, ... and t1, t2, ... as in pictures
        self.engine = engine
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
        self.notice: dict[str, Any] | None = None  # what to know about this graph (a loss of 0)
        self.descents = 0
        self.quiz = Quiz()  # Predict each grad: off until the learner turns it on
        self._consumers: dict[Value, list[Value]] | None = None  # each node's parents, when asked
        self.drawing = self._draw()
        self.order = [v for v in reversed(self.topo) if v._prev]  # the backward steps after seed
        self.reset()

    def editable(self, v: Value) -> bool:
        """Can the learner set this leaf? Yes if its number is written in the program (or there is
        no program); not a constant the engine made of its own (the -1 of ``a - b``)."""
        return not v._prev and (self.program is None or v in self.sources)

    def switchable(self, v: Value) -> bool:
        """Can the learner make this leaf a parameter, or data? Any leaf of a graph without a
        program; in a program, a leaf with a name (its marker is written on its assignment)."""
        return self.editable(v) and (self.program is None or v in self.marks)

    def _draw(self) -> dict[str, Any]:
        return _drawing(
            self.root,
            self.nodes,
            self.ids,
            self.names,
            self.engine,
            self.editable,
            self._record_grads(),
            switchable=self.switchable,
        )

    def _record_grads(self) -> dict[Value, float] | None:
        """The grads the records' widths are made for (None: those a full backward pass gives)."""
        return None

    # -- passes

    def reset(self) -> None:
        for v in self.nodes:
            v.grad = 0.0
        self.phase = "built"  # built -> forward -> backward -> done
        self.done_steps = 0  # 0 = nothing yet; 1 = the seed; 1 + k = k nodes processed
        self.log: list[dict[str, Any]] = []
        self.current: str | None = None
        self.touched: list[str] = []
        self.nudge: dict[str, Any] | None = None
        self.note = ""  # what the last action did, for the status line
        self.quiz.restart()

    @property
    def total_steps(self) -> int:
        return 1 + len(self.order)

    def forward(self) -> None:
        """Every node's data computed from the leaves, children first, by the engine's ops. A
        graph from the notebook may have had a leaf set there since (``a.data = 3.0``): its
        nodes then get the numbers that leaf gives, as the lecture's forward pass would."""
        if self.phase != "built":
            return
        self._compute_data()
        self.phase = "forward"
        self.current = None

    def _compute_data(self) -> None:
        try:
            fresh = recompute(self.topo, {})
        except (ArithmeticError, ValueError) as exc:
            raise ViewError(f"the forward pass fails: {exc}") from None
        changed = [v for v in self.topo if fresh[v].data != v.data and v._prev]
        for node in self.topo:
            node.data = fresh[node].data
            node._local = fresh[node]._local
        if changed:
            self.drawing = self._draw()  # wider numbers may need wider records
            self.note = (
                f"Forward pass done: {len(changed)} node(s) have new data, from the "
                f"leaves as they are now."
            )

    def _start_backward(self) -> None:
        """What a pass starts from: every grad 0 (a backward() in the notebook, or another view of
        this graph, may have left grads behind, and backward() adds onto what is there)."""
        for v in self.nodes:
            v.grad = 0.0

    def step(self) -> None:
        """One step of the backward pass: the seed first, then one node per step. Predicting
        (`quiz.on`): the step's grads are asked first (`answer`, `show`), not written."""
        if self.quiz.on and self.done_steps < self.total_steps:
            if not self.quiz.pending:
                self.note = ""
                self.forward()
                self._ask()
            return
        self._step()

    def _step(self) -> None:
        self.note = ""  # (what the last action did: this step, or the forward pass it runs)
        self.forward()
        if self.done_steps >= self.total_steps:
            return
        self.phase = "backward"
        out_name = in_formula(self.names[self.root])
        if self.done_steps == 0:
            self._start_backward()
            # What backward() does first: d(root)/d(root) = 1 (a leaf root accumulates).
            if self.root._prev:
                self.root.grad = 1.0
            else:
                self.root.grad += 1.0
            text = (
                f"{out_name}.grad = 1.0000  (∂{out_name}/∂{out_name} = 1: the backward pass "
                f"starts at the output)"
            )
            self.current = self.ids[self.root]
            self.touched = []
            self.log.append({"node": self.current, "lines": [text]})
        else:
            v = self.order[self.done_steps - 1]
            name = in_formula(self.names[v])
            parts = self._parts(v)
            backward_step(v)  # exactly backward()'s update, in the same order
            lines = []
            for p in parts:
                # "∂e/∂a = b = -3.0000"; a formula that is a number is shown once: "= 1.0000".
                # The grad the child already had is written out: the line's arithmetic holds
                # even for a child used twice (a + a), where `+=` is the whole point.
                formula = p.formula or ""
                shown = fmt(p.local) if reads_as_number(formula) else f"{formula} = {fmt(p.local)}"
                lines.append(
                    f"{p.name}.grad = {fmt(p.before)} + {factor(p.local)} × {factor(p.out_grad)} "
                    f"= {fmt(p.after)}   (∂{name}/∂{p.name} = {shown}, {name}.grad = "
                    f"{fmt(p.out_grad)})"
                )
            self.current = self.ids[v]
            self.touched = [self.ids[c] for c in v._prev]
            self.log.append({"node": self.current, "lines": lines, "source": op_source(op_kind(v))})
        self.done_steps += 1
        if self.done_steps == self.total_steps:
            self.phase = "done"

    def _parts(self, v: Value) -> list[Part]:
        """The chain rule at `v`, not yet applied: each child's ``grad += local × v.grad`` (in
        `_prev` order, as `backward_step` adds), with the grad it has before and after. What the
        step's lines write and what a prediction is checked against: one source."""
        name = in_formula(self.names[v])
        child_names = [in_formula(self.names[c]) for c in v._prev]
        formulas = explain_local(v, child_names, name)  # the op table's formula
        g = v.grad
        had = {c: c.grad for c in v._prev}  # what each child's grad holds so far
        parts = []
        for child, d, formula, cname in zip(v._prev, local_derivatives(v), formulas, child_names):
            after = had[child] + d * g  # `child.grad += d * g`: the same float operations
            parts.append(Part(child, cname, formula, d, g, had[child], after))
            had[child] = after
        return parts

    # -- predicting each grad (predict.py)

    def _ask(self) -> None:
        """The next step's grads, asked (a step that writes none is applied at once)."""
        if self.done_steps == 0:
            asked = [seed_question(self.root, in_formula(self.names[self.root]))]
        else:
            v = self.order[self.done_steps - 1]
            asked = questions(v, in_formula(self.names[v]), v._op, self._parts(v))
            asked = [self._with_logit(q) for q in asked]
        self.current, self.touched = None, []
        if asked:
            self.quiz.ask(asked)
        else:
            self._step()

    def _with_logit(self, q: Question) -> Question:
        """`q`, told that its child is a logit of a softmax with cross-entropy, when it is one
        (softmax.py): a wrong answer can then be named pᵢ alone or −yᵢ alone."""
        if not isinstance(q.parent, Value) or q.parent._op != "exp":
            return q  # (the seed, or a learner's own Value class: its graph is its own)
        if self._consumers is None:
            self._consumers = consumers_of(self.topo)
        z = logit(
            q.child,
            q.parent,
            q.want - q.had,
            self._consumers,
            lambda v: in_formula(self.names[v]),
        )
        return q if z is None else replace(q, logit=z)

    def set_predict(self, on: object) -> None:
        if not isinstance(on, bool):
            raise ViewError(f"predict is true or false, got {str(on)[:40]!r}")
        self.quiz.on = on
        self.quiz.clear()
        self.note = (
            "Predict each grad: Backward step asks for each grad before it shows it." if on else ""
        )

    def answer(self, value: object) -> None:
        self.note = ""
        if self.quiz.answer(value):
            feedback = self.quiz.feedback
            self.quiz.clear()
            self._step()
            self.quiz.feedback = feedback

    def hint(self) -> None:
        self.quiz.hint()

    def _writes(self) -> int:
        """How many grads the next step writes (a child used twice is one grad)."""
        if self.done_steps >= self.total_steps:
            return 0
        if self.done_steps == 0:
            return 1
        return len(dict.fromkeys(self.order[self.done_steps - 1]._prev))

    def show(self) -> None:
        """Show me: the step asked now is applied (or the next one, if none is asked)."""
        self.quiz.reveal(self._writes())
        self._step()

    def backward(self) -> None:
        """Every step left; predicting, each grad they write counts as shown (the score)."""
        while self.done_steps < self.total_steps:
            self.quiz.reveal(self._writes())
            self._step()
        self.quiz.clear()

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
        self.drawing = self._draw()
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

    # -- the answer

    def state(self, with_drawing: bool = False) -> dict[str, Any]:
        shown = self.phase != "built"
        values = {
            self.ids[v]: {
                "data": json_float(v.data) if shown or not v._prev else None,
                "grad": json_float(v.grad),
            }
            for v in self.nodes
        }
        answer: dict[str, Any] = {
            "phase": self.phase,
            "values": values,
            "step": self.done_steps,
            "steps": self.total_steps,
            "current": self.current,
            "touched": self.touched,
            "log": self.log,
            "nudge": self.nudge,
            "output": self.ids[self.root],
            "forward_order": [self.ids[v] for v in self.topo],
            "note": self.note,
            "notice": self.notice,
            "params": [self.ids[v] for v in self.params],
            "descents": self.descents,
            # the text the Expression box shows: the program, or what the graph is
            "program": self.program if self.program is not None else f"# {self.title}",
            "from_program": self.program is not None,
            "verdict": self.verdict,
            "own_value": self.own_value,
            "predict": self.quiz.state(self.ids),
        }
        if with_drawing:
            answer["drawing"] = self.drawing
        return answer


def nudge_h(a: float) -> float:
    """The lecture's h = 0.001 where the floats near `a` are at least 1,000 times closer than
    that (a + h - a is then h to within 0.1%); else the smallest power of ten that is."""
    room = 1000 * math.ulp(a)
    return NUDGE_H if room <= NUDGE_H else 10.0 ** math.ceil(math.log10(room))


def _paren6(x: float) -> str:
    text = f"{x:.6f}"
    return f"({text})" if text.startswith("-") else text
