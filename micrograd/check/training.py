"""A learner's training step, judged by what it does to a network: `check(train_step=fn)`.

`fn(model, xs, ys, lr)` is one step as the lecture writes it: forward every sample, a loss, zero
the grads, backward, then ``p.data += -lr * p.grad`` for every parameter; it returns the loss.

It runs on the learner's own engine: their MLP class (``check(MLPClass=...)``, or the `MLP` the
step's module defines), else the lecture's MLP built from their Value class (``ValueClass=``, or
the Value class the step's code names, as in ``Value(0.0)`` or ``Value(yt)``), else micrograd's
MLP; so a step that mixes its own Values in is never run against a foreign engine. A Value of
another class that shows up anyway (in the loss, in a crash) is named as such.

Whatever loss the learner chose, its true gradient is known: the step is called again at the
same weights with lr = 0 (a probe; every parameter and grad is put back after it), and that
loss's graph is differentiated aside by their own engine, every grad in it zeroed first; one
probe per step also nudges the weights along a direction to confirm that gradient by central
differences. Several steps in a row, each with another learning rate, and grads that are not 0
before the first, then tell each classic mistake apart by its numbers: the update climbs;
the grads are zeroed between backward() and the update, never, only on the first step, or
after the update; `lr` is ignored; the update runs before backward(); only some parameters
move; the loss depends on another network, or is carried over from an earlier call (the same
weights give another loss); the inputs or targets change; no loss is returned.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from itertools import islice
from typing import Any

from ..engine import Value
from ..nn import MLP
from .learners import LectureMLP, class_name, learners_mlp, learners_value, named_classes
from .report import CheckReport
from .timeout import MAX_PREV, Failed, Runner, attr
from .values import fmt, number, repr_text

LRS = (0.05, 0.03, 0.07, 0.04)  # one learning rate per step: an lr ignored shows
XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]
REL = 1e-6  # how close a parameter's move must be to a rule to be called by it
FD_H, FD_REL = 1e-5, 1e-4  # central differences along one direction, and how close they agree
MAX_NODES = 50_000  # nodes of a loss graph read to zero its grads


def check_train_step(
    fn: Callable[..., Any],
    run: Runner,
    report: CheckReport,
    ValueClass: type | None = None,
    MLPClass: type | None = None,
) -> None:
    """Run the learner's step several times on a fresh network and report what it did."""
    if not callable(fn):
        raise TypeError(f"check: train_step must be a function, got {type(fn).__name__}")
    StepCheck(fn, run, report, ValueClass, MLPClass).all()


class StepCheck:
    def __init__(
        self,
        fn: Callable[..., Any],
        run: Runner,
        report: CheckReport,
        V: type | None,
        M: type | None,
    ) -> None:
        self.fn, self.run, self.report = fn, run, report
        named = named_classes(fn)
        self.V = V or learners_value(named)
        self.M = M or learners_mlp(fn)
        self.engine = ""  # what the step ran on, for the report

    def problem(self, text: str) -> None:
        self.report.add(
            f"train_step, {text}" if text.startswith("step ") else f"train_step: {text}"
        )

    # the network ------------------------------------------------------------------------

    def build(self) -> tuple[Any, list[Any]] | None:
        state = random.getstate()
        random.seed(1337)
        try:
            if self.M is not None:
                model = self.run(self.M, 3, [4, 4, 1])
                self.engine = f"your {self.M.__name__}(3, [4, 4, 1])"
                what = f"{self.M.__name__}(3, [4, 4, 1])"
            elif self.V is not None and self.V is not Value:
                model = self.run(LectureMLP, self.V, 3, [4, 4, 1])
                self.engine = f"the lecture's MLP(3, [4, 4, 1]) built from your {self.V.__name__}"
                what = f"the lecture's MLP built from {self.V.__name__}"
            else:
                model = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
                self.engine = "micrograd's MLP(3, [4, 4, 1]) (tanh)"
                what = "micrograd's MLP"
        finally:
            random.setstate(state)
        if isinstance(model, Failed):
            self.problem(f"could not build {what} to run the step on: {model.text}")
            return None
        params = self.run(lambda: list(islice(model.parameters(), 10_000)))
        if (
            isinstance(params, Failed)
            or not params
            or any(number(attr(p, "data")) is None for p in params)
        ):
            self.problem(
                f"{what}.parameters() is not a list of Values with numbers in .data "
                f"(check(MLPClass=...) says more)"
            )
            return None
        if len({id(p) for p in params}) != len(params):
            self.problem(
                f"{what}.parameters() lists one Value twice, so a step cannot be judged "
                f"on it: fix the MLP first (check(MLPClass=...) says how)"
            )
            return None
        return model, params

    # one call of the learner's step ----------------------------------------------------------

    def call(self, model: Any, xs: list, lr: float, seed: int) -> Any:
        state = random.getstate()
        random.seed(seed)  # the same draws in a probe as in the step (a random minibatch)
        try:
            ys = list(YS)
            out = self.run(self.fn, model, xs, ys, lr)
            if ys != YS and not isinstance(out, Failed):
                return Failed("it changed the targets ys: update only model.parameters()")
            return out
        finally:
            random.setstate(state)

    def loss_value(self, out: Any, params: list[Any], k: int, probe: bool = False) -> float | None:
        """The loss's number, or None (reported) if what came back is not a loss of this
        network's engine."""
        where = f"step {k}" + (" (run again at the same weights with lr = 0)" if probe else "")
        if isinstance(out, Failed) and out.text.startswith("it changed"):
            self.problem(f"{where}: {out.text}")
            return None
        if isinstance(out, Failed):
            self.problem(f"{where}: it crashed: {out.text}{self.mixed_hint(out.text, params)}")
            return None
        data = attr(out, "data")
        if isinstance(data, Failed) or out is None or isinstance(out, (int, float)):
            self.problem(
                f"{where}: it returned {type(out).__name__} {repr_text(out)[:40]}; return "
                f"the loss (the Value you called backward() on), so its gradient can "
                f"be checked"
            )
            return None
        value = number(data)
        if value is None:
            self.problem(
                f"{where}: the loss it returned holds {repr_text(data)} in .data, not a "
                f"number: a Value wrapped in another Value{self.mixed_hint('', params)}"
            )
            return None
        P = type(params[0])
        if not isinstance(out, P):
            self.problem(
                f"{where}: the loss is a {class_name(type(out))} while the network's "
                f"parameters are {class_name(P)}: the step mixes two Value classes — "
                f"build the loss from the model's outputs with one engine"
            )
            return None
        return value

    def mixed_hint(self, text: str, params: list[Any]) -> str:
        P = type(params[0])
        others = [
            c for c in named_classes(self.fn).values() if c is not P and c.__name__ == P.__name__
        ]
        if others and (not text or "Value" in text):
            return (
                f" — the step makes Values of {class_name(others[0])}, the network's are "
                f"{class_name(P)}: two engines mixed; use the one the model is built from"
            )
        return ""

    def truth(
        self, model: Any, params: list[Any], xs: list, at: list[float], k: int
    ) -> tuple[float, list[float], Any] | None:
        """The loss at weights `at` and its gradient: a probe call (lr = 0), its loss's graph
        differentiated by the engine, every grad in it zeroed first."""
        keep = [(p.data, p.grad) for p in params]
        try:
            for p, d in zip(params, at):
                p.data = d
            out = self.call(model, xs, 0.0, k)
            value = self.loss_value(out, params, k, probe=True)
            if value is None:
                return None
            for p, d in zip(params, at):
                p.data = d  # a probe that moved them anyway (lr ignored)

            def differentiate() -> list[float | None]:
                for v in (*params, *_graph(out)):
                    v.grad = 0.0
                out.backward()
                return [number(attr(p, "grad")) for p in params]

            g = self.run(differentiate)
            if isinstance(g, Failed):
                self.problem(f"step {k}: backward() on the loss it returns crashed: {g.text}")
                return None
            if any(x is None for x in g):
                self.problem(
                    f"step {k}: after backward() on its loss, a parameter's grad is not a number"
                )
                return None
            return value, g, out
        finally:
            for p, (d, gr) in zip(params, keep):
                p.data, p.grad = d, gr

    def nudged(
        self, model: Any, params: list[Any], xs: list, at: list[float], u: list[float], k: int
    ) -> float | None:
        """d loss / d t along `u` at `at`, by central differences of probe calls."""
        keep = [(p.data, p.grad) for p in params]
        values = []
        try:
            for h in (FD_H, -FD_H):
                for p, d, ui in zip(params, at, u):
                    p.data = d + h * ui
                out = self.call(model, xs, 0.0, k)
                value = None if isinstance(out, Failed) else number(attr(out, "data"))
                if value is None:
                    return None
                values.append(value)
        finally:
            for p, (d, gr) in zip(params, keep):
                p.data, p.grad = d, gr
        return (values[0] - values[1]) / (2 * FD_H)

    # the steps ----------------------------------------------------------------------------

    def all(self) -> None:
        built = self.build()
        if built is None:
            return
        model, params = built
        P = type(params[0])
        xs_made = self.run(lambda: [[P(x) for x in row] for row in XS])
        xs = xs_made if not isinstance(xs_made, Failed) else [list(r) for r in XS]
        rng = random.Random(7)
        dirt = [rng.choice((-1, 1)) * rng.uniform(0.2, 0.6) for _ in params]
        for p, d in zip(params, dirt):  # grads left over, as after a backward() of your own
            p.grad = d
        history: list[list[float]] = []  # each step's true gradient
        zeroed_after = False
        for k, lr in enumerate(LRS, start=1):
            before = [p.data for p in params]
            grads_before = [number(attr(p, "grad")) or 0.0 for p in params]
            out = self.call(model, xs, lr, k)
            loss = self.loss_value(out, params, k)
            if loss is None:
                return
            if any(
                number(attr(v, "data")) != x
                for row, vrow in zip(XS, xs)
                for x, v in zip(row, vrow)
                if not isinstance(v, float)
            ):
                self.problem(f"step {k}: it changed the inputs: update only model.parameters()")
                return
            after = [p.data for p in params]
            grads_after = [number(attr(p, "grad")) for p in params]
            got = self.truth(model, params, xs, before, k)
            if got is None:
                return
            value, g, again = got
            moved = [a - b for a, b in zip(after, before)]
            if again is out:
                self.problem(
                    f"step {k}: it returns the very same loss Value each time it is "
                    f"called: the loss is computed once, outside the step (or kept from "
                    f"an earlier call); compute it in the step, from model's outputs"
                )
                return
            if not any(g):
                self.problem(
                    f"step {k}: the loss it returns ({fmt(loss)}) does not depend on the "
                    f"model it was given (every parameter's gradient is 0): does the step "
                    f"use another network, such as a global one, instead of its argument "
                    f"`model`?"
                )
                return
            if not math.isclose(value, loss, rel_tol=1e-9, abs_tol=1e-12):
                first = [-lr * x for x in grads_before]
                if any(first) and _fits(moved, first):
                    self.problem(
                        f"step {k} (lr = {lr}): the update came first, with the grads "
                        f"left from before the step, and the loss it returns is the one "
                        f"at the new weights: is the update done before backward()? "
                        f"forward, zero the grads, backward(), then update"
                    )
                else:
                    self.problem(
                        f"step {k}: {self.loss_cause(model, params, xs, loss, value, after, k)}"
                    )
                return
            if k == 1 and not self.confirmed(model, params, xs, before, g, k):
                return
            cause = self.cause(k, lr, moved, g, history, dirt, grads_after)
            if cause == "zeroed after":
                zeroed_after = True
            elif cause:
                self.problem(f"step {k} (lr = {lr}): {cause}")
                return
            history.append(g)
        if zeroed_after:
            self.report.notes.append(
                "train_step zeroes the grads after the update, not before backward(): right "
                "while they start at 0, but its first step on a model whose grads are not 0 "
                "(after a backward() of your own) used them too; zeroing before backward() is "
                "safer"
            )
        self.report.passed.append(
            f"train_step: {len(LRS)} steps on {self.engine}, each p.data += -lr * p.grad with "
            f"the gradient of that step's loss (confirmed by nudging the weights)"
        )

    def confirmed(
        self, model: Any, params: list[Any], xs: list, at: list[float], g: list[float], k: int
    ) -> bool:
        """The engine's gradient of the loss against central differences along one direction."""
        rng = random.Random(3)
        u = [rng.uniform(-1, 1) for _ in params]
        slope = self.nudged(model, params, xs, at, u, k)
        if slope is None:
            return True  # the probes crashed: reported elsewhere if it matters
        want = sum(gi * ui for gi, ui in zip(g, u))
        if math.isclose(slope, want, rel_tol=FD_REL, abs_tol=1e-7):
            return True
        self.problem(
            f"step {k}: backward() gives this loss a gradient that nudging the weights "
            f"does not confirm (along one direction: {fmt(want)} by backward(), "
            f"{fmt(slope)} by nudging): the engine under the step is wrong — "
            f"check(Value) names the op"
        )
        return False

    def loss_cause(
        self,
        model: Any,
        params: list[Any],
        xs: list,
        loss: float,
        again: float,
        after: list[float],
        k: int,
    ) -> str:
        """The step returned `loss`, but the same weights give `again`: why, from evidence."""
        later = self.truth(model, params, xs, after, k)
        if later is not None and math.isclose(later[0], loss, rel_tol=1e-9, abs_tol=1e-12):
            return (
                f"the loss it returns ({fmt(loss)}) is the loss at the new weights, computed "
                f"after the update: return the loss you called backward() on"
            )
        return (
            f"it returned the loss {fmt(loss)}, but run again at the same weights it "
            f"returns {fmt(again)}: the loss is not computed afresh from this call's model "
            f"and data — is a loss (or a running sum) carried over from an earlier call? "
            f"start from a new one in every step"
        )

    def cause(
        self,
        k: int,
        lr: float,
        moved: list[float],
        g: list[float],
        history: list[list[float]],
        dirt: list[float],
        grads_after: list,
    ) -> str:
        """Why the parameters moved by `moved`, when each should have moved by -lr * g; '' if
        they did, 'zeroed after' for a step right but for grads zeroed after the update."""

        def fits(rule: list[float]) -> bool:
            return _fits(moved, rule)

        if fits([-lr * x for x in g]):
            return ""
        if k == 1 and fits([-lr * (x + d) for x, d in zip(g, dirt)]):
            # the grads that were there before the step were used: zeroed after, or never
            return (
                "zeroed after"
                if self.zeroed_since(grads_after)
                else (
                    "the update used the grads left over from before the step as well as this "
                    "step's: the grads are never zeroed — set p.grad = 0.0 for every parameter "
                    "before backward(), in every step"
                )
            )
        if not any(moved):
            if all(x == 0 for x in grads_after):
                return (
                    "no parameter moved, and every p.grad is 0 — are the grads zeroed between "
                    "backward() and the update? zero them before backward()"
                )
            if all(math.isclose(a, x, rel_tol=REL, abs_tol=1e-12) for a, x in zip(grads_after, g)):
                return (
                    "no parameter moved, though afterwards each p.grad holds this step's "
                    "gradient: is the update done before backward()? forward, zero the "
                    "grads, backward(), then update"
                )
            return (
                "no parameter of `model` moved: update each p.data by -lr * p.grad for p in "
                "model.parameters() (is another network updated instead?)"
            )
        if fits([lr * x for x in g]):
            return (
                "every parameter moved up its gradient (p.data += lr * p.grad): that climbs "
                "the loss; step against it, p.data += -lr * p.grad"
            )
        if history and fits([-lr * x for x in history[-1]]):
            return (
                "the update used the previous step's gradient: is it done before backward()? "
                "forward, zero the grads, backward(), then update"
            )
        for start in range(len(history)):  # zeroed up to step start + 1, then no more
            since = [sum(h[i] for h in history[start:]) + g[i] for i in range(len(g))]
            if fits([-lr * t for t in since]):
                return _piled(start + 1, k)
        if history:
            total = [sum(h[i] for h in history) + g[i] for i in range(len(g))]
            if fits([-lr * (t + d) for t, d in zip(total, dirt)]):
                return (
                    "the update used this step's gradient plus every earlier one's: the "
                    "grads were never zeroed — set p.grad = 0.0 for every parameter before "
                    "backward()"
                )
        scale = _scale(moved, g)
        if scale is not None and not math.isclose(scale, -lr, rel_tol=1e-3):
            if math.isclose(scale, -1.0, rel_tol=REL):
                return (
                    "each parameter moved by -p.grad, not -lr * p.grad: the learning rate is "
                    "ignored"
                )
            return (
                f"each parameter moved by {fmt(scale)} × its gradient, not -lr × it with lr = "
                f"{lr}: the learning rate passed in is not the one used"
            )
        still = [i for i, m in enumerate(moved) if m == 0 and g[i] != 0]
        if still and fits([0.0 if i in still else -lr * x for i, x in enumerate(g)]):
            return (
                f"{len(still)} of {len(moved)} parameters did not move (parameter {still[0]} "
                f"first): update every p in model.parameters()"
            )
        worst = max(range(len(moved)), key=lambda i: abs(moved[i] + lr * g[i]))
        return (
            f"parameter {worst} moved by {fmt(moved[worst])}, expected {fmt(-lr * g[worst])} "
            f"(-lr × its gradient, {fmt(g[worst])})"
        )

    @staticmethod
    def zeroed_since(grads_after: list) -> bool:
        return all(x == 0 for x in grads_after)


def _piled(last: int, k: int) -> str:
    """Grads zeroed before step `last` and never since: at step `k` the update used the
    gradients of steps `last` to `k` together."""
    fix = (
        "set p.grad = 0.0 for every parameter before backward() in every step, not under a "
        "condition or a count"
    )
    if last == 1:
        return (
            "the update used this step's gradient plus the earlier steps': the grads were "
            "zeroed on the first step only (the leftover grads before it were cleared), so "
            f"from step 2 on they pile up — {fix}"
        )
    steps = f"step {last}'s" if last == k - 1 else f"steps {last} to {k - 1}'s"
    return (
        f"the update used this step's gradient plus {steps}: the grads were zeroed in steps "
        f"1 to {last} and not since, so from step {last + 1} on they pile up — {fix}"
    )


def _fits(moved: list[float], rule: list[float]) -> bool:
    return all(math.isclose(m, r, rel_tol=REL, abs_tol=1e-12) for m, r in zip(moved, rule))


def _scale(moved: list[float], g: list[float]) -> float | None:
    """c if moved = c · g for one number c, else None."""
    gg = sum(x * x for x in g)
    if gg == 0:
        return None
    c = sum(m * x for m, x in zip(moved, g)) / gg
    if all(math.isclose(m, c * x, rel_tol=REL, abs_tol=1e-12) for m, x in zip(moved, g)):
        return c
    return None


def _graph(out: Any) -> list[Any]:
    seen, stack, nodes = {id(out)}, [out], []
    while stack and len(nodes) < MAX_NODES:
        v = stack.pop()
        nodes.append(v)
        for c in islice(getattr(v, "_prev", ()), MAX_PREV):
            if id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return nodes
