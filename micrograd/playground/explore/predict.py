"""Predict each grad: the explorer asks the learner for every grad a Backward step writes before it
shows it, as the lecture does by hand ("what is dL/dc?").

`Explorer` (explorer.py) turns the mode on with `Quiz.on`; each Backward step then becomes the
questions of that step (`questions`: one per child whose grad the step writes, a child used twice
asked once, for its grad after both paths), made from the very numbers the step's chain-rule lines
write (`Part`: the explorer's `_parts`, one source). An answer is right to 4 decimals (a relative
error of 5e-5 beyond ±1), or when it is the step's arithmetic done on the 4-decimal numbers the
page shows (`Question.shown`: 0.7864 × 7.0000 for tanh's 0.786448… × 7 is right too: no more
digits are shown anywhere). A wrong one gets one line naming the mistake its number suggests
(`diagnose`, in check/mistakes.py, the list the notebooks' checks use too): a softmax's logit
given pᵢ alone or −yᵢ alone (softmax.py finds it), the local derivative alone, out.grad alone
(each plus the grad so far), the other factor of a product, this path's term with the wrong
sign, a second path forgotten (``b = a + a``: a.grad = 1), a grad from another path replaced
rather than added to; else "not yet: try Hint" (or, the hints used up, what they give). `Hint`
gives the line's shape, then its factors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...check.mistakes import TOLERANCE_TEXT, Question, diagnose, near
from ...engine import Value
from ...viz.formatting import format_number as fmt
from ...viz.formatting import reads_as_number
from ..errors import ViewError


@dataclass(frozen=True)
class Part:
    """One child's share of one Backward step: ``child.grad += local × out_grad``, from `before`
    to `after` (a child used twice has a Part per use, the second's `before` the first's
    `after`). `formula` is the local derivative as the op table writes it ("b", "1 - o²"), or
    None where a learner's own `_backward` decides it."""

    child: Value
    name: str
    formula: str | None
    local: float
    out_grad: float
    before: float
    after: float


def shown(x: float) -> float:
    """`x` as the page shows it (format_number), read back: what a learner can multiply."""
    return float(fmt(x))


def seed_question(root: Value, name: str) -> Question:
    return Question(root, name, None, name, "", 1.0, 0.0, 1.0, "1", 1.0, 1)


def questions(parent: Value, out: str, op: str, parts: list[Part]) -> list[Question]:
    """The step's questions: one per distinct child, in the order the step reaches them."""
    by_child: dict[Value, list[Part]] = {}
    for p in parts:
        by_child.setdefault(p.child, []).append(p)
    names = {p.child: p.name for p in parts}
    asked = []
    for child, uses in by_child.items():
        other = own = None
        product = ""
        if op == "*" and len(by_child) == 2:
            (mate,) = [c for c in by_child if c is not child]
            other, own = names[mate], child.data
            product = "·".join(p.name for p in parts)
        # the step's arithmetic on the numbers the graph and the hints show, each rounded
        by_hand = shown(uses[0].before) + sum(shown(p.local) * shown(p.out_grad) for p in uses)
        asked.append(
            Question(
                child,
                names[child],
                parent,
                out,
                op,
                uses[-1].after,
                uses[0].before,
                uses[0].local,
                uses[0].formula,
                uses[0].out_grad,
                len(uses),
                other,
                own,
                product,
                by_hand,
            )
        )
    return asked


def is_right(q: Question, x: float) -> bool:
    """`x` is the grad to 4 decimals, or the step's arithmetic on the numbers as shown."""
    return near(x, q.want) or near(x, q.shown)


def hints(q: Question, level: int) -> list[str]:
    """Hint 1: the line's shape; hint 2: its factors too (the answer is then one product away)."""
    kid, out = q.name, q.out
    if q.parent is None:
        lines = [
            f"{kid}.grad = ∂{kid}/∂{kid}: how much {kid} changes when {kid} itself changes "
            f"by a little"
        ]
        if level > 1:
            lines.append(
                "the backward pass starts at the output: ∂x/∂x for any x is the same number"
            )
        return lines
    each = f", once along each of its {q.paths} paths" if q.paths > 1 else ""
    lines = [f"{kid}.grad = {kid}.grad + ∂{out}/∂{kid} × {out}.grad{each}"]
    if level > 1:
        if q.formula is None:  # a learner's own _backward: its rule, not the op table's
            local = f"{fmt(q.local)} (what your _backward applies)"
        elif reads_as_number(q.formula):
            local = fmt(q.local)
        else:
            local = f"{q.formula} = {fmt(q.local)}"
        lines.append(
            f"∂{out}/∂{kid} = {local}; {out}.grad = {fmt(q.out_grad)}; {kid}.grad so far "
            f"= {fmt(q.had)}"
        )
    return lines


class Quiz:
    """The mode's state in one explorer: on or off, the step's questions and the score."""

    def __init__(self) -> None:
        self.on = False
        self.restart()

    def restart(self) -> None:
        """A new pass (Reset, an edit, a new graph): no question, the score from 0."""
        self.right_first = 0
        self.resolved = 0  # grads the pass wrote with the mode on: typed right, or shown
        self.revealed = 0  # ... of them shown by Show me or Backward pass (asked, not right)
        self.clear()

    def clear(self) -> None:
        self.asked: list[Question] = []
        self.index = 0
        self.tries = 0
        self.level = 0  # hints shown for the question asked now
        self.feedback: dict[str, Any] | None = None

    @property
    def pending(self) -> bool:
        return self.index < len(self.asked)

    @property
    def current(self) -> Question:
        return self.asked[self.index]

    def ask(self, asked: list[Question]) -> None:
        self.clear()
        self.asked = asked

    def answer(self, value: object) -> bool:
        """Check `value` against the question asked now; True once every question of the step
        is answered right (the caller then applies the step)."""
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ViewError(f"your answer must be a number, got {str(value)[:40]!r}")
        if not self.pending:
            raise ViewError("no grad is asked now: press Backward step first", 409)
        q = self.current
        if is_right(q, float(value)):
            self.resolved += 1
            self.right_first += self.tries == 0
            self.feedback = {"right": True, "text": f"Right: {q.name}.grad = {fmt(q.want)}."}
            self.index += 1
            self.tries = self.level = 0
            return not self.pending
        self.tries += 1
        self.feedback = {"right": False, "text": diagnose(q, float(value), self.level)}
        return False

    def hint(self) -> None:
        if not self.pending:
            raise ViewError("no grad is asked now: press Backward step first", 409)
        self.level = min(2, self.level + 1)

    def reveal(self, writes: int) -> None:
        """Show me, or one step of Backward pass: the step's grads not yet answered (those asked
        now, or the `writes` grads of a step not asked yet) are shown: they count as asked and
        not right, so the score counts every grad the pass writes with the mode on."""
        if self.on:
            shown = len(self.asked) - self.index if self.pending else writes
            self.resolved += shown
            self.revealed += shown
        self.clear()

    def state(self, ids: dict[Value, str]) -> dict[str, Any]:
        ask = None
        if self.on and self.pending:
            q = self.current
            ask = {
                "node": ids[q.child],
                "parent": ids[q.parent] if q.parent is not None else None,
                "name": q.name,
                "label": f"your {q.name}.grad",
                "index": self.index + 1,
                "of": len(self.asked),
                "hint": hints(q, self.level) if self.level else [],
            }
        score = ""
        if self.resolved:
            score = (
                f"Right at the first try: {self.right_first} of {self.resolved} "
                f"grad{'s' if self.resolved != 1 else ''}"
            )
            if self.revealed:
                score += f" ({self.revealed} shown)"
        return {
            "on": self.on,
            "ask": ask,
            "feedback": self.feedback,
            "score": score,
            "tolerance": TOLERANCE_TEXT,
        }


class PredictActions:
    """The explorer view's actions for the mode (`views.ExplorerView` has them): predict {on},
    answer {value}, hint, reveal (Show me). Each answers with the whole view."""

    ACTIONS = ("predict", "answer", "hint", "reveal")
    _explorer: Any = None

    def _current(self) -> Any:
        raise NotImplementedError

    @property
    def explorer(self) -> Any:
        return self._explorer

    @explorer.setter
    def explorer(self, new: Any) -> None:
        """A new graph keeps the learner's mode: Predict each grad stays on."""
        if self._explorer is not None and new is not None:
            new.quiz.on = self._explorer.quiz.on
        self._explorer = new

    def predict(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.set_predict(body.get("on"))
        return ex.state()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.answer(body.get("value"))
        return ex.state()

    def hint(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.hint()
        return ex.state()

    def reveal(self, body: dict[str, Any]) -> dict[str, Any]:
        """Show me: the step asked now is applied, its chain-rule line shown."""
        ex = self._current()
        ex.show()
        return ex.state()
