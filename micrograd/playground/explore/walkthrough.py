"""The explorer's passes over one graph, a node at a time: `Walkthrough`, over a `Stepper` that
says how the graph's numbers are made and how one backward step runs.

`Walkthrough` is what every explorer shares: the graph traced and drawn, the forward pass, the
backward pass one step at a time (the seed, then one node per step, in reverse topological
order), its chain-rule lines, Predict each grad (predict.py), and the view's answer (`state`).
What differs between graphs is the `Stepper`:

- `EngineStepper`: a graph of micrograd's own Values. The data is computed by the engine's ops,
  and a step does exactly what `Value.backward()` does at one node (`backward_step`: children in
  `_prev` order, ``child.grad += local * out.grad``), so after the last step every grad is bit
  for bit the one `backward()` gives; each line carries the op's code (`op_source`).
- `foreign.LearnerStepper`: a graph of a learner's own Value class, each step run by *their*
  `_backward`.

Editing a leaf, the nudge and a gradient step are `explorer.Explorer`'s, a walkthrough of a graph
of micrograd's own Values: a learner's graph is theirs to change, in their notebook.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from ...core.walk import local_derivatives
from ...engine import OPS, Value, backward_step, explain_local, op_kind, topological_order
from ...viz import display_names, trace
from ...viz.formatting import format_number as fmt
from ...viz.formatting import json_float, reads_as_number
from ..errors import ViewError
from .drawing import drawing as draw_graph
from .predict import Part, Question, Quiz, questions, seed_question
from .softmax import consumers_of, logit

MAX_NODES = 500  # Values in one graph

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


# ------------------------------------------------------------------------ how a graph is stepped


class Stepper(Protocol):
    """How one kind of graph is stepped: what `Walkthrough` asks of it."""

    own_value: bool  # a graph of a learner's own Value class, stepped by their code
    fixed: str  # why its leaves cannot be edited here ("" when they can)

    def verdict(self, walk: Walkthrough) -> str:
        """What a check of the graph's rules found ("" when nothing was checked)."""

    def record_grads(self, walk: Walkthrough) -> dict[Value, float] | None:
        """The grads the records' widths are made for (None: those a full backward pass gives)."""

    def mark(self, walk: Walkthrough, drawing: dict[str, Any]) -> None:
        """Mark on the drawing what is wrong with its nodes, if anything."""

    def reset(self, walk: Walkthrough) -> None:
        """Back to before any pass (the learner's grads too, for theirs)."""

    def compute_data(self, walk: Walkthrough) -> None:
        """The forward pass: every node's data, from the leaves as they are now."""

    def seed(self, walk: Walkthrough) -> list[str]:
        """The first backward step: every grad 0, then output.grad = 1; its lines."""

    def apply(self, walk: Walkthrough, v: Value) -> dict[str, Any]:
        """The backward step at `v`: its grads written; the log entry's lines (and code)."""

    def parts(self, walk: Walkthrough, v: Value) -> list[Part]:
        """The chain rule at `v`, not yet applied: what a prediction is checked against."""


class EngineStepper:
    """A graph of micrograd's own Values, stepped by the engine itself."""

    own_value = False
    fixed = ""

    def verdict(self, walk: Walkthrough) -> str:
        return ""  # nothing to check: the engine's own rules

    def record_grads(self, walk: Walkthrough) -> dict[Value, float] | None:
        return None

    def mark(self, walk: Walkthrough, drawing: dict[str, Any]) -> None:
        return None

    def reset(self, walk: Walkthrough) -> None:
        return None  # (the walkthrough zeroes the grads it draws: they are the engine's)

    def compute_data(self, walk: Walkthrough) -> None:
        try:
            fresh = recompute(walk.topo, {})
        except (ArithmeticError, ValueError) as exc:
            raise ViewError(f"the forward pass fails: {exc}") from None
        changed = [v for v in walk.topo if fresh[v].data != v.data and v._prev]
        for node in walk.topo:
            node.data = fresh[node].data
            node._local = fresh[node]._local
        if changed:
            walk.drawing = walk.draw()  # wider numbers may need wider records
            walk.note = (
                f"Forward pass done: {len(changed)} node(s) have new data, from the "
                f"leaves as they are now."
            )

    def seed(self, walk: Walkthrough) -> list[str]:
        # what a pass starts from: every grad 0 (a backward() in the notebook, or another view
        # of this graph, may have left grads behind, and backward() adds onto what is there)
        for v in walk.nodes:
            v.grad = 0.0
        root = walk.root
        out_name = in_formula(walk.names[root])
        # What backward() does first: d(root)/d(root) = 1 (a leaf root accumulates).
        if root._prev:
            root.grad = 1.0
        else:
            root.grad += 1.0
        return [
            f"{out_name}.grad = 1.0000  (∂{out_name}/∂{out_name} = 1: the backward pass "
            f"starts at the output)"
        ]

    def apply(self, walk: Walkthrough, v: Value) -> dict[str, Any]:
        name = in_formula(walk.names[v])
        parts = self.parts(walk, v)
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
        return {"lines": lines, "source": op_source(op_kind(v))}

    def parts(self, walk: Walkthrough, v: Value) -> list[Part]:
        """Each child's ``grad += local × v.grad`` (in `_prev` order, as `backward_step` adds),
        with the grad it has before and after. What the step's lines write and what a
        prediction is checked against: one source."""
        name = in_formula(walk.names[v])
        child_names = [in_formula(walk.names[c]) for c in v._prev]
        formulas = explain_local(v, child_names, name)  # the op table's formula
        g = v.grad
        had = {c: c.grad for c in v._prev}  # what each child's grad holds so far
        parts = []
        for child, d, formula, cname in zip(v._prev, local_derivatives(v), formulas, child_names):
            after = had[child] + d * g  # `child.grad += d * g`: the same float operations
            parts.append(Part(child, cname, formula, d, g, had[child], after))
            had[child] = after
        return parts


# ------------------------------------------------------------------------ the walkthrough


class Walkthrough:
    """One graph (`root`, drawn with layout `engine`) and how far its passes have gone, stepped
    by `stepper`. `title` says what the graph is when there is no program to show."""

    program: str | None = None  # the text it was built from (an Explorer's), else None

    def __init__(self, root: Value, engine: str, stepper: Stepper, title: str = "") -> None:
        self.stepper = stepper
        self.title = title
        self.root = root
        self.nodes, _ = trace(self.root, max_nodes=MAX_NODES)
        self.ids = {v: f"v{i}" for i, v in enumerate(self.nodes)}
        self.by_id = {i: v for v, i in self.ids.items()}
        self.topo = topological_order(self.root)
        self.names = display_names(self.topo)  # c1, c2, ... and t1, t2, ... as in pictures
        self.engine = engine
        self.params: list[Value] = []  # what a gradient step moves (an Explorer's)
        self.descents = 0
        self.notice: dict[str, Any] | None = None  # what to know about this graph (a loss of 0)
        self.quiz = Quiz()  # Predict each grad: off until the learner turns it on
        self._consumers: dict[Value, list[Value]] | None = None  # each node's parents, when asked
        self.drawing = self.draw()
        self.order = [v for v in reversed(self.topo) if v._prev]  # the backward steps after seed
        self.reset()

    @property
    def verdict(self) -> str:
        return self.stepper.verdict(self)

    @property
    def own_value(self) -> bool:
        return self.stepper.own_value

    def editable(self, v: Value) -> bool:
        """Can the learner set this leaf here? Not in a walkthrough alone (an Explorer's can)."""
        return False

    def switchable(self, v: Value) -> bool:
        """Can the learner make this leaf a parameter, or data? Not in a walkthrough alone."""
        return False

    def draw(self) -> dict[str, Any]:
        drawing = draw_graph(
            self.root,
            self.nodes,
            self.ids,
            self.names,
            self.engine,
            self.editable,
            self.stepper.record_grads(self),
            switchable=self.switchable,
        )
        self.stepper.mark(self, drawing)
        return drawing

    # -- passes

    def reset(self) -> None:
        self.stepper.reset(self)
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
        """Every node's data computed from the leaves, children first. A graph from the notebook
        may have had a leaf set there since (``a.data = 3.0``): its nodes then get the numbers
        that leaf gives, as the lecture's forward pass would."""
        if self.phase != "built":
            return
        self.stepper.compute_data(self)
        self.phase = "forward"
        self.current = None

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
        if self.done_steps == 0:
            lines = self.stepper.seed(self)
            self.current, self.touched = self.ids[self.root], []
            self.log.append({"node": self.current, "lines": lines})
        else:
            v = self.order[self.done_steps - 1]
            entry = self.stepper.apply(self, v)
            self.current = self.ids[v]
            self.touched = [self.ids[c] for c in v._prev]
            self.log.append({"node": self.current, **entry})
        self.done_steps += 1
        if self.done_steps == self.total_steps:
            self.phase = "done"

    # -- predicting each grad (predict.py)

    def _ask(self) -> None:
        """The next step's grads, asked (a step that writes none is applied at once)."""
        if self.done_steps == 0:
            asked = [seed_question(self.root, in_formula(self.names[self.root]))]
        else:
            v = self.order[self.done_steps - 1]
            asked = questions(v, in_formula(self.names[v]), v._op, self.stepper.parts(self, v))
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
