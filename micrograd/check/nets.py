"""A learner's Neuron, Layer and MLP against micrograd.nn: parameter counts, `parameters()` order,
outputs and gradients with the same weights at several inputs and several weights, and
`zero_grad()`.

Outputs are compared with every activation micrograd.nn offers, hidden and output layers apart,
so the learner's choice is found, not assumed; a few choices are classic mistakes and named as
such (ReLU on the output layer, no activation at all). The weights are the learner's own and
then ones the checker sets, with the output's bias far below and far above 0, so an output ReLU
cannot hide behind a lucky draw.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import islice
from typing import Any

from ..engine import Value
from ..nn import ACTIVATIONS, MLP, Layer, Neuron
from .report import CheckReport
from .timeout import MAX_PREV, Failed, Runner, attr
from .values import close, describe, fmt, number, repr_text

INPUTS = ([2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [-1.5, 0.5, 2.0])
OUT_BIAS = (None, -4.0, 4.0)  # the learner's weights; then set ones, the last bias low and high
MAX_COUNT = 10_000  # parameters read at most
MAX_WALK = 50_000  # nodes read when asking which parameters an output's graph holds

HIDDEN = ("tanh", "relu", "sigmoid", "linear")
OUTPUT = ("tanh", "linear", "sigmoid", "relu")

SHARED_NEURON = (
    "the same neuron repeated: [Neuron(nin)] * nout makes ONE neuron and lists it "
    "nout times; make each one, [Neuron(nin) for _ in range(nout)]"
)
SHARED_WEIGHT = (
    "a neuron's weights are one Value: [Value(...)] * nin makes ONE Value and lists "
    "it nin times; draw each, [Value(random.uniform(-1, 1)) for _ in range(nin)]"
)
WEIGHT_AS_BIAS = (
    "one Value used twice (as a weight and as the bias?): each parameter is a Value of its own"
)


def _mlp_mistake(hidden: str, out: str) -> str:
    """Why an MLP with these activations is wrong, or '' if it is a network one builds."""
    if hidden == "linear":
        return (
            "no activation in the hidden layers: a stack of linear layers is one linear "
            "map; apply tanh (the lecture) or ReLU to every hidden neuron"
        )
    if out == "relu":
        return (
            "ReLU on the output layer: the network can never output a number below 0 (the "
            "targets are ±1), and a neuron stuck at 0 passes no gradient; keep the last "
            "layer linear (karpathy's MLP: nonlin=False for it) or tanh (the lecture's)"
        )
    return ""


def _title(hidden: str, out: str) -> str:
    if (hidden, out) == ("tanh", "tanh"):
        return "tanh throughout (the lecture's)"
    if (hidden, out) == ("relu", "linear"):
        return "ReLU hidden, linear output (karpathy's micrograd)"
    return f"{hidden} hidden, {out} output"


class NNChecker:
    """Checks a learner's Neuron, Layer and MLP against micrograd.nn with the same weights."""

    def __init__(self, run: Runner, report: CheckReport) -> None:
        self.run = run
        self.report = report
        self.neuron_wrong = False  # Layer and MLP are built from it: their outputs say the same

    def problem(self, text: str, same: str = "", where: str = "") -> None:
        self.report.add(text, same=same, where=where)

    # parameters -----------------------------------------------------------------------------

    def params(
        self,
        what: str,
        module: Any,
        sizes: list[int],
        shape: str,
        outputs: Callable[[], Any] | None = None,
    ) -> list[Any] | None:
        """The module's parameters(), if they are as many as the neurons of `sizes` (each
        neuron's inputs) hold, each its own Value with a numeric data."""
        count = sum(n + 1 for n in sizes)
        ps = self.run(lambda: list(islice(module.parameters(), MAX_COUNT + 1)))
        if isinstance(ps, Failed):
            self.problem(f"{what}.parameters() crashed: {ps.text}")
            return None
        if len(ps) != count:
            n = f"more than {MAX_COUNT:,}" if len(ps) > MAX_COUNT else f"{len(ps)}"
            why = self.count_cause(len(ps), sizes, outputs)
            self.problem(
                f"{what}.parameters() has {n} entries, expected {count} ({shape})"
                f"{' — ' + why if why else ''}"
            )
            return None
        first: dict[int, int] = {}
        for i, p in enumerate(ps):
            if id(p) in first:
                j = first[id(p)]
                why = _duplicate_cause(ps, j, i, sizes)
                self.problem(
                    f"{what}.parameters(): entries {j} and {i} are the same Value — {why}",
                    same=f"duplicate {why}",
                    where=what,
                )
                return None
            first[id(p)] = i
        datas = [number(attr(p, "data")) for p in ps]
        if any(d is None for d in datas):
            self.problem(
                f"{what}.parameters() holds something without a numeric .data: "
                f"{repr_text(ps[datas.index(None)])}"
            )
            return None
        return ps

    def count_cause(self, got: int, sizes: list[int], outputs: Callable[[], Any] | None) -> str:
        """A cause for a wrong number of parameters, named only when the count and the number
        of outputs both fit it."""
        nin, nout = sizes[0], len(sizes)
        if len(set(sizes)) != 1 or outputs is None:
            return ""
        if got == nout * nin:
            return "no bias in parameters(): each neuron lists its weights, then its bias"
        if got == nin * (nout + 1) and nin != nout:
            outs = self.run(outputs)
            if not isinstance(outs, Failed) and len(_as_list(outs)) == nin:
                return (
                    f"it has {nin} neurons of {nout} weights each, and gives {nin} outputs: "
                    f"are nin and nout swapped? Layer(nin, nout) is nout neurons, each with "
                    f"nin weights"
                )
        return ""

    # outputs ----------------------------------------------------------------------------------

    def compare(
        self,
        what: str,
        module: Any,
        ps: list[Any],
        models: dict[tuple[str, str], Any],
        outputs: Callable[[Any, list], list[Any]],
        judge: bool = False,
    ) -> tuple[str, str] | None:
        """Run the learner's module and each candidate micrograd model at several inputs, with
        the learner's weights and with weights set here (copied into both). Returns the
        activations (hidden, output) of the one that matches everywhere, after checking its
        gradients too; reports and returns None otherwise. `judge`: a match that is a classic
        mistake (`_mlp_mistake`) is reported as one."""
        alive = dict(models)
        rng = random.Random(1)
        own = [number(p.data) for p in ps]
        try:
            for bias in OUT_BIAS:
                weights = list(own) if bias is None else [rng.uniform(-1, 1) for _ in ps]
                if bias is not None:
                    weights[-1] = bias
                for p, w in zip(ps, weights):
                    p.data = w
                for x in INPUTS:
                    got = self.run(lambda x=x: _as_list(module(list(x))))
                    if isinstance(got, Failed):
                        self.problem(f"{what}({x}) crashed: {got.text}")
                        return None
                    if (
                        bias is None
                        and x is INPUTS[0]
                        and what.startswith("Neuron")
                        and not self.all_used(what, got, ps, x)
                    ):
                        return None
                    values = [number(attr(o, "data")) for o in got]
                    expected = {}
                    for key, model in list(alive.items()):
                        for p, w in zip(model.parameters(), weights):
                            p.data = w
                        want = [o.data for o in outputs(model, list(x))]
                        expected[key] = want
                        if len(want) != len(values) or not all(
                            close(v, o) for v, o in zip(values, want)
                        ):
                            del alive[key]
                    if not alive:  # (the learner's weights are restored after saying why)
                        self.no_match(what, list(x), values, expected, ps, bias is None)
                        return None
        finally:
            for p, w in zip(ps, own):
                p.data = w
        key = next(iter(alive))
        mistake = _mlp_mistake(*key) if judge else ""
        if mistake:
            self.problem(
                f"{what}: its outputs, at {len(INPUTS)} inputs and with "
                f"{len(OUT_BIAS)} sets of weights, are those of micrograd's MLP with "
                f"{key[0]} hidden and {key[1]} output — {mistake}"
            )
            return None
        if not self.gradients(what, module, ps, models[key], outputs):
            return None
        return key

    def all_used(self, what: str, outs: list[Any], ps: list[Any], x: list[float]) -> bool:
        """Does every parameter of a Neuron reach its output's graph? Reports the first that does
        not (a number wrapped anew in parameters(), a bias kept aside): its grad would stay 0.
        (A Layer or an MLP that drops a neuron or a layer is told by its outputs.)"""

        def held() -> set[int]:
            seen = {id(o) for o in outs}
            stack = list(outs)
            while stack and len(seen) < MAX_WALK:
                for c in islice(getattr(stack.pop(), "_prev", ()) or (), MAX_PREV):
                    if id(c) not in seen:
                        seen.add(id(c))
                        stack.append(c)
            return seen

        found = self.run(held)
        if isinstance(found, Failed) or len(found) >= MAX_WALK:
            return True  # cannot tell: the outputs are compared instead
        lost = [i for i, p in enumerate(ps) if id(p) not in found]
        if not lost:
            return True
        k = lost[0]
        which = f"parameter {k}: the bias" if k == len(ps) - 1 else f"parameter {k}"
        more = f" ({len(lost)} parameters are not)" if len(lost) > 1 else ""
        self.problem(
            f"{what}: {which} never reaches the output: its grad stays 0 — "
            f"{what}({x})'s graph does not hold the Value parameters() returns{more}: "
            f"is it left out of w·x + b, or is a number wrapped in a new Value in "
            f"parameters(), or a Value made anew in __call__? make each weight and "
            f"bias a Value once, in __init__, and use that same Value in __call__ and "
            f"parameters()"
        )
        self.neuron_wrong = True
        return False

    def no_match(
        self,
        what: str,
        x: list[float],
        values: list[float | None],
        expected: dict,
        ps: list[Any],
        own_weights: bool,
    ) -> None:
        if self.neuron_wrong and "Neuron" not in what:
            self.problem(
                f"{what} gives other outputs than micrograd.nn too — built from the "
                f"Neuron above: fix it first",
                same="built on the neuron",
                where=what,
            )
            return
        why = self.neuron_cause(x, values, ps) if len(ps) == len(x) + 1 else ""
        if why:
            self.neuron_wrong = True
            self.problem(f"{what}({x}) gives {[describe(v) for v in values]} — {why}")
            return
        if "Neuron" in what:
            self.neuron_wrong = True
        shown = "; ".join(
            f"{'/'.join(dict.fromkeys(k))}: {[fmt(v) for v in e]}"
            for k, e in list(expected.items())[:3]
        )
        weights = "its own weights" if own_weights else "weights set by the checker"
        self.problem(
            f"{what}({x}) gives {[describe(v) for v in values]} with {weights}; "
            f"micrograd.nn with the same parameters() (in order: each neuron's w, "
            f"then its b) gives {shown}"
        )

    def neuron_cause(self, x: list[float], values: list[float | None], ps: list[Any]) -> str:
        """A neuron's output that no activation explains, tried against the classic mistakes
        with the same weights: the one it equals is named."""
        if len(values) != 1 or values[0] is None:
            return ""
        w = [number(p.data) for p in ps[:-1]]
        b = number(ps[-1].data)
        products = [wi * xi for wi, xi in zip(w, x)]
        for name in ("tanh", "relu", "sigmoid"):
            act = ACTIVATIONS[name]
            f = lambda z, act=act: act.apply(Value(z)).data
            mistakes = (
                (
                    sum(f(p) for p in products) + b,
                    f"{name} applied to each product w_i·x_i; apply it once, to the whole sum "
                    f"w·x + b",
                ),
                (
                    f(sum(products)),
                    "the bias never reaches the output: add b to w·x before the activation",
                ),
                (f(sum(products)) + b, f"b is added after {name}; it goes inside: {name}(w·x + b)"),
            )
            for guess, why in mistakes:
                if close(values[0], guess):
                    return why
        return ""

    def gradients(
        self,
        what: str,
        module: Any,
        ps: list[Any],
        model: Any,
        outputs: Callable[[Any, list], list[Any]],
    ) -> bool:
        for x in INPUTS[:2]:
            for p, q in zip(model.parameters(), ps):
                p.data = number(q.data)
                p.grad = 0.0
            Value.sum(outputs(model, list(x))).backward()

            def back(x: list[float] = x) -> None:
                for q in ps:
                    q.grad = 0.0
                got = _as_list(module(list(x)))
                total = got[0]
                for o in got[1:]:
                    total = total + o
                total.backward()

            done = self.run(back)
            if isinstance(done, Failed):
                self.problem(f"{what}: backward() from its outputs crashed: {done.text}")
                return False
            for i, (p, q) in enumerate(zip(model.parameters(), ps)):
                if not close(self.grad(q), p.grad):
                    self.problem(
                        f"{what}: at x = {x}, after backward() of the sum of its outputs, "
                        f"parameter {i} has grad {describe(attr(q, 'grad'))}, expected "
                        f"{fmt(p.grad)} (micrograd.nn, same weights)"
                    )
                    return False
        return True

    @staticmethod
    def grad(p: Any) -> float | None:
        return number(attr(p, "grad"))

    def zero_grad(self, what: str, module: Any, ps: list[Any]) -> None:
        if not callable(getattr(module, "zero_grad", None)):
            return  # optional: the lecture zeroes the grads in its training loop
        for p in ps:
            p.grad = 1.5
        done = self.run(module.zero_grad)
        if isinstance(done, Failed):
            self.problem(f"{what}.zero_grad() crashed: {done.text}")
            return
        left = [i for i, p in enumerate(ps) if self.grad(p) != 0.0]
        if left:
            self.problem(
                f"{what}.zero_grad() left parameter {left[0]} with grad "
                f"{describe(attr(ps[left[0]], 'grad'))}; it should set every "
                f"parameter's grad to 0"
            )
        else:
            self.report.passed.append(f"{what}.zero_grad() zeroes every parameter's grad")

    # the three classes ------------------------------------------------------------------------

    def matched(
        self,
        what: str,
        cls: type,
        args: tuple,
        sizes: list[int],
        shape: str,
        models: dict[tuple[str, str], Any],
        said: str,
        x: list[float] | None = None,
        judge: bool = False,
        outputs: Callable[[Any, list], list[Any]] = lambda m, x: m.outputs(x),
    ) -> tuple[Any, list[Any]] | None:
        """`cls(*args)`, its parameters() as `params` checks them (called on `x` first, if
        given), its outputs and gradients matched among `models` (`compare`): (module,
        parameters), and `said` passed ({act}: the activation, {title}: the MLP's); None, the
        problem said, if any is wrong."""
        module = self.run(cls, *args)
        if isinstance(module, Failed):
            self.problem(f"{what} crashed: {module.text}")
            return None
        ps = self.params(what, module, sizes, shape, None if x is None else lambda: module(x))
        if ps is None:
            return None
        kind = self.compare(what, module, ps, models, outputs, judge=judge)
        if kind is None:
            return None
        n = len(INPUTS)
        self.report.passed.append(said.format(what=what, act=kind[0], title=_title(*kind), n=n))
        return module, ps

    def neuron(self, cls: type) -> None:
        what = f"{cls.__name__}(3)"
        models = {(a, a): Neuron(3, activation=a) for a in ("tanh", "relu", "linear")}
        said = (
            "{what}: 4 parameters; output {act}(w·x + b) and its gradients match "
            "micrograd.nn.Neuron(3, activation='{act}') at {n} inputs"
        )
        shape = "3 weights and a bias"
        made = self.matched(what, cls, (3,), [3], shape, models, said, outputs=lambda m, x: [m(x)])
        if made is None:
            self.neuron_wrong = True
            return
        n, ps = made
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
        what = f"{cls.__name__}(3, 2)"
        models = {(a, a): Layer(3, 2, activation=a) for a in ("tanh", "relu", "linear")}
        said = (
            "{what}: 8 parameters, neuron by neuron; outputs and gradients match "
            "micrograd.nn.Layer(3, 2, activation='{act}')"
        )
        shape, x = "2 neurons × (3 weights + a bias)", [2.0, 3.0, -1.0]
        made = self.matched(what, cls, (3, 2), [3, 3], shape, models, said, x)
        if made is not None:
            self.zero_grad(what, *made)

    def mlp(self, cls: type) -> None:
        what = f"{cls.__name__}(3, [4, 4, 1])"
        models = {
            (h, o): MLP(3, [4, 4, 1], activation=h, out_activation=o)
            for h in HIDDEN
            for o in OUTPUT
        }
        said = (
            "{what}: 41 parameters, layer by layer; output and gradients match "
            "micrograd.nn.MLP, {title}, at {n} inputs"
        )
        sizes, shape = [3] * 4 + [4] * 4 + [4], "3·4+4 + 4·4+4 + 4+1"
        made = self.matched(what, cls, (3, [4, 4, 1]), sizes, shape, models, said, judge=True)
        if made is not None:
            self.zero_grad(what, *made)


def _duplicate_cause(ps: list[Any], j: int, i: int, sizes: list[int]) -> str:
    """Why entries j < i of parameters() are one Value, from where they sit: two weights of one
    neuron, a whole neuron repeated, or a weight that is also a bias."""
    starts, at = [], 0
    for n in sizes:
        starts.append(at)
        at += n + 1

    def place(k: int) -> tuple[int, int]:  # (neuron, index within it; == its size: the bias)
        for idx in range(len(starts) - 1, -1, -1):
            if k >= starts[idx]:
                return idx, k - starts[idx]
        return 0, k

    (nj, kj), (ni, ki) = place(j), place(i)
    bias_j, bias_i = kj == sizes[nj], ki == sizes[ni]
    if nj == ni and not bias_j and not bias_i:
        return SHARED_WEIGHT
    if nj != ni and kj == ki and sizes[nj] == sizes[ni]:
        a, b = starts[nj], starts[ni]
        n = sizes[nj] + 1
        if all(ps[a + k] is ps[b + k] for k in range(n)):
            return SHARED_NEURON
    if bias_j != bias_i:
        return WEIGHT_AS_BIAS
    return "each parameter is a Value of its own: make a new Value for each"


def _as_list(out: Any) -> list[Any]:
    # karpathy's Layer returns a lone Value for one neuron and a list otherwise: accept both.
    if isinstance(out, (list, tuple)):
        return list(islice(out, 64))
    return [out]
