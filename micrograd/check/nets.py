"""A learner's Neuron, Layer and MLP against micrograd.nn: parameter counts, `parameters()` order,
outputs and gradients with the same weights, and `zero_grad()`."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any

from ..engine import Value
from ..nn import ACTIVATIONS
from .ops import StopChecking
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


class NNChecker:
    """Checks a learner's Neuron, Layer and MLP against micrograd.nn with the same weights."""

    def __init__(self, limit: float, report: CheckReport) -> None:
        self.limit = limit
        self.report = report
        self.x = [2.0, 3.0, -1.0]
        self.timeouts = 0

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) under the time limit; raises StopChecking after MAX_TIMEOUTS timeouts."""
        if self.timeouts >= MAX_TIMEOUTS:
            raise StopChecking
        result = run(self.limit, fn, *args)
        if isinstance(result, Failed) and result.timeout:
            self.timeouts += 1
        return result

    def problem(self, text: str) -> None:
        self.report.problems.append(text)

    def params(self, what: str, module: Any, count: int, shape: str) -> list[Any] | None:
        ps = self.run(lambda: list(islice(module.parameters(), count + 1)))
        if isinstance(ps, Failed):
            self.problem(f"{what}.parameters() crashed: {ps.text}")
            return None
        if len(ps) != count:
            more = "more than " if len(ps) > count else ""
            self.problem(f"{what}.parameters() has {more}{len(ps)} entries, expected {count} "
                         f"({shape})")
            return None
        first: dict[int, int] = {}
        for i, p in enumerate(ps):
            if id(p) in first:
                j = first[id(p)]
                block = i + 1 < len(ps) and ps[i + 1] is ps[j + 1]  # a run repeats: a neuron
                why = ("the same neuron repeated: [Neuron(nin)] * nout makes ONE neuron and "
                       "lists it nout times; make each one, [Neuron(nin) for _ in "
                       "range(nout)]") if block else (
                       "one Value used twice (as a weight and as the bias?): each parameter is a "
                       "Value of its own")
                self.problem(f"{what}.parameters(): entries {j} and {i} are the same Value — "
                             f"{why}")
                return None
            first[id(p)] = i
        datas = [number(attr(p, "data")) for p in ps]
        if any(d is None for d in datas):
            self.problem(f"{what}.parameters() holds something without a numeric .data: "
                         f"{repr_text(ps[datas.index(None)])}")
            return None
        return ps

    def compare(self, what: str, module: Any, ps: list[Any],
                models: dict[str, Any], outputs: Callable[[Any], list[Any]]) -> str | None:
        """Run the learner's module and each candidate micrograd model (same weights) on self.x.

        Returns the name of the candidate that matches, after checking its gradients too.
        """
        got = self.run(lambda: _as_list(module(list(self.x))))
        if isinstance(got, Failed):
            self.problem(f"{what}({self.x}) crashed: {got.text}")
            return None
        values = [number(attr(o, "data")) for o in got]
        matched = None
        expected: dict[str, list[float]] = {}
        for name, model in models.items():
            for p, q in zip(model.parameters(), ps):
                p.data = number(q.data)
                p.grad = 0.0
            outs = outputs(model)
            expected[name] = [o.data for o in outs]
            if len(outs) == len(values) and all(close(v, o.data) for v, o in zip(values, outs)):
                matched = name
                break
        if matched is None:
            why = self.neuron_cause(values, ps, models) if len(ps) == len(self.x) + 1 else ""
            if why:
                self.problem(f"{what}({self.x}) gives {[describe(v) for v in values]} — {why}")
                return None
            shown = "; ".join(f"{k}: {[fmt(v) for v in e]}" for k, e in expected.items())
            self.problem(f"{what}({self.x}) gives {[describe(v) for v in values]}; micrograd.nn "
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

        done = self.run(back)
        if isinstance(done, Failed):
            self.problem(f"{what}: backward() from its outputs crashed: {done.text}")
            return None
        for i, (p, q) in enumerate(zip(model.parameters(), ps)):
            if not close(self.grad(q), p.grad):
                self.problem(f"{what}: after backward() of the sum of its outputs, parameter {i} "
                             f"has grad {describe(attr(q, 'grad'))}, expected {fmt(p.grad)} "
                             f"(micrograd.nn, same weights)")
                return None
        return matched

    def neuron_cause(self, values: list[float | None], ps: list[Any],
                     models: dict[str, Any]) -> str:
        """A neuron's output that no activation explains, tried against the classic mistakes
        with the learner's own weights: the one it equals is named."""
        if len(values) != 1 or values[0] is None:
            return ""
        w = [number(p.data) for p in ps[:-1]]
        b = number(ps[-1].data)
        products = [wi * xi for wi, xi in zip(w, self.x)]
        for name in models:
            act = ACTIVATIONS[name]
            f = (lambda z, act=act: act.apply(Value(z)).data) if act.apply else (lambda z: z)
            mistakes = (
                (sum(f(p) for p in products) + b,
                 f"{name} applied to each product w_i·x_i; apply it once, to the whole sum "
                 f"w·x + b"),
                (f(sum(products)),
                 "the bias never reaches the output: add b to w·x before the activation"),
                (f(sum(products)) + b,
                 f"b is added after {name}; it goes inside: {name}(w·x + b)"),
            )
            for guess, why in mistakes:
                if close(values[0], guess):
                    return why
        return ""

    @staticmethod
    def grad(p: Any) -> float | None:
        return number(attr(p, "grad"))

    def zero_grad(self, what: str, module: Any, ps: list[Any]) -> None:
        if not callable(getattr(module, "zero_grad", None)):
            return  # optional: the lecture zeroes the grads in its training loop
        done = self.run(module.zero_grad)
        if isinstance(done, Failed):
            self.problem(f"{what}.zero_grad() crashed: {done.text}")
            return
        left = [i for i, p in enumerate(ps) if self.grad(p) != 0.0]
        if left:
            self.problem(f"{what}.zero_grad() left parameter {left[0]} with grad "
                         f"{describe(attr(ps[left[0]], 'grad'))}; it should set every "
                         f"parameter's grad to 0")
        else:
            self.report.passed.append(f"{what}.zero_grad() zeroes every parameter's grad")

    def neuron(self, cls: type) -> None:
        from ..nn import Neuron

        what = f"{cls.__name__}(3)"
        n = self.run(cls, 3)
        if isinstance(n, Failed):
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
        other = self.run(cls, 3)
        if not isinstance(other, Failed):
            theirs = self.run(lambda: [number(p.data) for p in other.parameters()])
            if theirs == [number(p.data) for p in ps]:
                self.problem(
                    f"two {what}s made one after the other start with the same parameters — "
                    f"does your Neuron call random.seed()? seed once, outside the class, and "
                    f"draw each weight with random.uniform(-1, 1); else every neuron of a layer "
                    f"learns the same thing"
                )
        self.zero_grad(what, n, ps)

    def layer(self, cls: type) -> None:
        from ..nn import Layer

        what = f"{cls.__name__}(3, 2)"
        layer = self.run(cls, 3, 2)
        if isinstance(layer, Failed):
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
        from ..nn import MLP

        what = f"{cls.__name__}(3, [4, 4, 1])"
        model = self.run(cls, 3, [4, 4, 1])
        if isinstance(model, Failed):
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
