"""The course's chapter 9, "Why isn't it learning?" (makemore part 3 on the learner's own Value):
the learner's numbers judged, and a wrong one answered with the mistake it suggests.

    from micrograd.check.not_learning import check_saturation, check_update_data, check_diagnosis
    check_saturation(saturation, Value)   # share of a layer's tanh outputs with |t| > 0.97
    check_update_data(update_data)        # log10(std(after - before) / std(before))
    check_diagnosis({'A': ..., 'B': ..., 'C': ...})   # the three broken networks' causes
    check_kaiming(kaiming_std)            # gain / √fan_in
    check_fixed(stats)                    # the three networks, re-initialised, now learn

The three networks (`NETS`) are the chapter's: moons, an MLP(2, [12, 12, 1]) drawn as karpathy's
(uniform(-1, 1) weights, in order, biases 0) and then broken in its init. The verdicts on a
diagnosis quote what micrograd's own `train.health` measures on the same network (built here with
micrograd's Value from the same seed), and its thresholds are `train.diagnose.THRESHOLDS`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..train.diagnose import THRESHOLDS
from ..train.health import KAIMING_GAIN, SATURATED
from ..viz.formatting import format_number as fmt
from .notebook import CheckFailed, fail, passed

SIZES = (2, 12, 12, 1)  # the chapter's MLP: 2 inputs, two hidden layers of 12, one score
N_SAMPLES, SEED, LR, STEPS = 50, 9, 1.0, 15  # moons(50, noise 0.1, seed 9), SGD at lr 1.0
REL = 1e-9


@dataclass(frozen=True)
class Net:
    activation: str  # the hidden layers'
    init_scale: float  # karpathy's uniform(-1, 1) weights times this
    bias: float  # the hidden layers' biases start here
    cause: str  # one of CAUSES: what is wrong with it


NETS = {
    "A": Net("tanh", 3.0, 0.0, "saturated tanh"),
    "B": Net("relu", 1.0, -1.0, "dead relus"),
    "C": Net("relu", 10.0, 0.0, "init too large"),
}
CAUSES = ("saturated tanh", "dead relus", "learning rate too high", "init too large", "healthy")


def _floats(name: str, got: Any) -> float:
    x = getattr(got, "data", got)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        fail(f"{name} returned {got!r}; expected a number")
    return float(x)


def _answer(where: str, name: str, fn: Callable[..., Any], *args: Any) -> float:
    """The learner's `fn(*args)` as a float (`_floats`, `name` its function's); what it raises,
    failed as `where` raised."""
    try:
        return _floats(name, fn(*args))
    except CheckFailed:
        raise
    except Exception as e:
        fail(f"{where} raised {type(e).__name__}: {e}")


def _near(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=REL, abs_tol=REL)


# ------------------------------------------------------------------ saturation

# (outputs of a layer: one row per sample, one column per unit), chosen so that each slip below
# gives another number: ±0.97 exactly (not saturated: |t| > 0.97), a negative saturated output,
# a unit saturated for some samples only, and as many rows as columns nowhere.
SATURATION_POINTS: tuple[list[list[float]], ...] = (
    [[0.99, -0.5, 0.97], [-0.98, 0.1, -0.2], [0.3, -0.975, 0.96]],
    [[0.999, -0.999], [0.95, -0.995], [0.2, -0.98], [0.985, 0.0], [-0.971, 0.5]],
    [[0.1, 0.2, -0.3, 0.4], [-0.97, 0.97, 0.5, 0.99]],
)


def saturation_f(rows: Sequence[Sequence[float]], level: float = SATURATED) -> float:
    flat = [t for row in rows for t in row]
    return sum(abs(t) > level for t in flat) / len(flat)


def _share(rows: Sequence[Sequence[float]], pick: Callable[[float], bool]) -> float:
    flat = [t for row in rows for t in row]
    return sum(pick(t) for t in flat) / len(flat)


def _units(rows: Sequence[Sequence[float]], every: bool) -> float:
    cols = list(zip(*rows))
    test = all if every else any
    return sum(test(abs(t) > SATURATED for t in c) for c in cols) / len(cols)


SATURATION_SLIPS: tuple[tuple[str, Callable[[list[list[float]]], float]], ...] = (
    (
        "counts t > 0.97 only: a tanh output near -1 is saturated too: use abs(t)",
        lambda r: _share(r, lambda t: t > SATURATED),
    ),
    (
        "counts |t| >= 0.97: the line is |t| > 0.97, strictly",
        lambda r: _share(r, lambda t: abs(t) >= SATURATED),
    ),
    (
        "returns how many are saturated, not their share: divide by the number of outputs",
        lambda r: saturation_f(r) * sum(map(len, r)),
    ),
    ("returns a percentage: the share is between 0 and 1", lambda r: 100 * saturation_f(r)),
    (
        "divides by the number of samples (rows) only: the share is over every output, "
        "samples x units",
        lambda r: saturation_f(r) * sum(map(len, r)) / len(r),
    ),
    (
        "divides by the number of units only: the share is over every output, samples x units",
        lambda r: saturation_f(r) * sum(map(len, r)) / len(r[0]),
    ),
    (
        "counts units saturated for some sample: the share is of outputs, each sample's own",
        lambda r: _units(r, every=False),
    ),
    (
        "counts units saturated for every sample: the share is of outputs, each sample's own",
        lambda r: _units(r, every=True),
    ),
    ("uses another line than makemore's 0.97", lambda r: saturation_f(r, 0.99)),
    ("uses another line than makemore's 0.97", lambda r: saturation_f(r, 0.9)),
)


def check_saturation(saturation: Callable[..., Any], V: type) -> None:
    """`saturation(outs)`: `outs` a list (one per sample) of lists of Values (one per unit) ->
    the share of them with |t| > 0.97, a float."""
    for rows in SATURATION_POINTS:
        outs = [[V(t) for t in row] for row in rows]
        where = f"saturation of {len(rows)} samples x {len(rows[0])} units {rows}"
        got = _answer(where, "saturation", saturation, outs)
        want = saturation_f(rows)
        if not _near(got, want):
            for why, f in SATURATION_SLIPS:
                if _near(got, f(rows)):
                    fail(f"{where} gave {fmt(got)}, expected {fmt(want)}: it {why}")
            fail(
                f"{where} gave {fmt(got)}, expected {fmt(want)}: the share of all the outputs "
                f"(samples x units) with |t| > {SATURATED}"
            )
    passed("saturation is right: the share of outputs with |t| > 0.97")


# ------------------------------------------------------------------ update:data

UPDATE_POINTS: tuple[tuple[list[float], list[float]], ...] = (
    ([0.5, -0.3, 0.8, -1.1, 0.2], [0.52, -0.31, 0.77, -1.05, 0.2]),
    ([1.0, 2.0, -1.5, 0.25], [0.0, 3.5, -2.0, 1.0]),  # a big step: after's std is not before's
    ([0.01, -0.02, 0.015, 0.03, -0.01, 0.0], [0.0101, -0.0199, 0.015, 0.0302, -0.0101, 0.0001]),
)


def std_f(xs: Sequence[float]) -> float:
    m = math.fsum(xs) / len(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / len(xs))


def update_data_f(before: Sequence[float], after: Sequence[float]) -> float:
    return math.log10(std_f([a - b for a, b in zip(after, before)]) / std_f(before))


def _upd(before: Sequence[float], after: Sequence[float]) -> list[float]:
    return [a - b for a, b in zip(after, before)]


UPDATE_SLIPS: tuple[tuple[str, Callable[[list[float], list[float]], float]], ...] = (
    (
        "divides by the std of the data after the step: the update is measured against the data "
        "it was applied to, before",
        lambda b, a: math.log10(std_f(_upd(b, a)) / std_f(a)),
    ),
    (
        "gives the ratio itself: makemore plots its log10 (10^-3 is -3)",
        lambda b, a: std_f(_upd(b, a)) / std_f(b),
    ),
    (
        "takes the natural log: makemore's ratio is in powers of ten, math.log10",
        lambda b, a: math.log(std_f(_upd(b, a)) / std_f(b)),
    ),
    (
        "divides the data's std by the update's: the other way round (update / data)",
        lambda b, a: math.log10(std_f(b) / std_f(_upd(b, a))),
    ),
    (
        "compares the stds of the data before and after: the update is after - before, value by "
        "value, then its std",
        lambda b, a: math.log10(abs(std_f(a) - std_f(b)) / std_f(b)),
    ),
    (
        "compares mean sizes, not stds: std(update) / std(data)",
        lambda b, a: math.log10(math.fsum(map(abs, _upd(b, a))) / math.fsum(map(abs, b))),
    ),
)


def check_update_data(update_data: Callable[..., Any]) -> None:
    """`update_data(before, after)`: two lists of floats, a matrix's weights before and after a
    step -> log10(std(after - before) / std(before))."""
    for before, after in UPDATE_POINTS:
        where = f"update_data({before}, {after})"
        got = _answer(where, "update_data", update_data, list(before), list(after))
        want = update_data_f(before, after)
        if not _near(got, want):
            for why, f in UPDATE_SLIPS:
                try:
                    slip = f(before, after)
                except ValueError:  # the slip has no value here (a log of 0)
                    continue
                if _near(got, slip):
                    fail(f"{where} gave {fmt(got)}, expected {fmt(want)}: it {why}")
            fail(
                f"{where} gave {fmt(got)}, expected {fmt(want)}: "
                "log10(std(after - before) / std(before))"
            )
    passed("update_data is right: log10(std(update) / std(data))")


# ------------------------------------------------------------------ the three networks


def build(name: str, V: type, std: Callable[[int, str], float] | None = None) -> list[dict]:
    """Net `name` of NETS as the chapter's code builds it, on the Value class `V`: a list of
    layers, each ``{'w': rows of Values, 'b': Values, 'activation': name}``. With `std`
    (``std(fan_in, activation)``, the learner's Kaiming) the weights are redrawn from
    N(0, std²) and the biases set to 0: the fix."""
    net = NETS[name]
    random.seed(SEED)
    layers = []
    for i, (nin, nout) in enumerate(zip(SIZES, SIZES[1:])):
        act = net.activation if i < len(SIZES) - 2 else "linear"
        rows = [
            [V(random.uniform(-1, 1) * net.init_scale) for _ in range(nin)] for _ in range(nout)
        ]
        bias = [V(net.bias if act != "linear" else 0.0) for _ in range(nout)]
        layers.append({"w": rows, "b": bias, "activation": act})
    if std is not None:
        for layer in layers:
            s = std(len(layer["w"][0]), layer["activation"])
            for row in layer["w"]:
                for w in row:
                    w.data = random.gauss(0.0, s)
            for b in layer["b"]:
                b.data = 0.0
    return layers


def _to_mlp(layers: list[dict]) -> Any:
    """micrograd's MLP with `layers`' numbers (built with micrograd's Value)."""
    from ..nn import MLP

    acts = [layer["activation"] for layer in layers]
    model = MLP(SIZES[0], list(SIZES[1:]), activation=acts[0], out_activation="linear")
    for layer, src in zip(model.layers, layers):
        for n, row, b in zip(layer.neurons, src["w"], src["b"]):
            for w, v in zip(n.w, row):
                w.data = v.data
            n.b.data = b.data
    return model


def measure(name: str, std: Callable[[int, str], float] | None = None) -> Any:
    """Net `name` trained as the chapter trains it, with micrograd's `train.health`."""
    from .. import data, optim
    from ..engine import Value
    from ..train import Diverged, fit

    state = random.getstate()
    try:
        model = _to_mlp(build(name, Value, std))
    finally:
        random.setstate(state)  # the learner's stream is left as it was
    X, y = data.moons(N_SAMPLES, 0.1, SEED)
    opt = optim.SGD(model.parameters(), lr=LR)
    try:
        return fit(model, X, y, optimizer=opt, steps=STEPS, progress=False, health=True)
    except Diverged as e:
        return e.history


def evidence(name: str) -> str:
    """What micrograd measures on net `name`: the numbers a diagnosis stands on."""
    h = measure(name)
    first, hs = h.health[0], h.health
    parts = [f"loss {fmt(h.loss[0])} at step 1 (before any update)"]
    hidden = [lay for lay in first.layers if lay.activation != "linear"]
    if hidden[0].activation == "tanh":
        parts.append(
            "saturated "
            + ", ".join(
                f"{lay.name} {max(s.layers[i].saturated for s in hs):.0%}"
                for i, lay in enumerate(hidden)
            )
        )
    else:
        parts.append(
            "dead ReLUs at step 1 / at the end: "
            + ", ".join(
                f"{lay.name} {first.layers[i].dead:.0%} / {hs[-1].layers[i].dead:.0%}"
                for i, lay in enumerate(hidden)
            )
        )
    ud = max(w.update_data for w in first.weights)
    if ud == -math.inf:
        parts.append("no update at all at step 1 (every weight's grad is 0)")
    else:
        parts.append(f"update:data 10^{ud:.1f} at step 1")
    scale = max(w.data_std * math.sqrt(w.shape[1]) / w.gain for w in first.weights)
    parts.append(f"weights' std x √fan_in / gain up to {scale:.1f} (Kaiming: 1)")
    return "; ".join(parts)


WHY_NOT = {  # (the truth, the answer) -> why the answer does not fit
    ("init too large", "learning rate too high"): "the loss before any update is already far "
    "from the ~1 a right init starts at: the learning rate has not acted yet",
    ("init too large", "dead relus"): "its ReLUs die after the first update (at step 1 almost "
    "none are dead) and the loss before any update is already huge: what killed them is the "
    "init",
    ("dead relus", "init too large"): "its weights are karpathy's usual scale; what is dead from "
    "step 1 are units whose biases start negative",
    ("dead relus", "learning rate too high"): "its ReLUs are dead from step 1, before the "
    "learning rate has acted, and its updates are small",
    ("saturated tanh", "dead relus"): "its layers are tanh: a tanh unit is never 0 for every "
    "sample; look at how many are near ±1",
    ("saturated tanh", "learning rate too high"): "its updates are small; look at how many of "
    "its tanh outputs are near ±1",
}


def check_diagnosis(diagnosis: Any) -> None:
    """`diagnosis`: a dict, net name -> one of CAUSES."""
    if not isinstance(diagnosis, dict) or set(diagnosis) != set(NETS):
        fail(f"diagnosis should be a dict with the keys {sorted(NETS)}; got {diagnosis!r}")
    for name, net in NETS.items():
        said = diagnosis[name]
        if said not in CAUSES:
            fail(f"net {name}: {said!r} is none of the causes: choose one of {', '.join(CAUSES)}")
        if said != net.cause:
            why = WHY_NOT.get((net.cause, said), "")
            if said == "healthy":
                why = "it does not learn"
            if said == "saturated tanh" and net.activation != "tanh":
                why = "its layers are ReLU: no tanh to saturate"
            fail(f"net {name} is not {said!r}: {why}. What micrograd measures: {evidence(name)}")
    passed("the three diagnoses are right: " + ", ".join(f"{k} {n.cause}" for k, n in NETS.items()))


# ------------------------------------------------------------------ the fix: Kaiming's init

KAIMING_POINTS = ((2, "tanh"), (12, "tanh"), (12, "relu"), (2, "relu"), (12, "linear"), (7, "relu"))


def kaiming_f(fan_in: int, activation: str) -> float:
    return KAIMING_GAIN[activation] / math.sqrt(fan_in)


KAIMING_SLIPS: tuple[tuple[str, Callable[[int, str], float]], ...] = (
    ("divides by fan_in, not by its square root", lambda n, a: KAIMING_GAIN[a] / n),
    (
        "leaves out the gain (5/3 for tanh, √2 for ReLU, 1 for linear)",
        lambda n, a: 1 / math.sqrt(n),
    ),
    ("squares the gain", lambda n, a: KAIMING_GAIN[a] ** 2 / math.sqrt(n)),
    (
        "multiplies by √fan_in: the more inputs a unit sums, the smaller each weight",
        lambda n, a: KAIMING_GAIN[a] * math.sqrt(n),
    ),
)
GAIN_NAMES = {"tanh": "5/3", "relu": "√2", "linear": "1"}


def check_kaiming(kaiming_std: Callable[..., Any]) -> None:
    """`kaiming_std(fan_in, activation)` -> gain / √fan_in (tanh 5/3, relu √2, linear 1)."""
    for n, act in KAIMING_POINTS:
        where = f"kaiming_std({n}, {act!r})"
        got = _answer(where, "kaiming_std", kaiming_std, n, act)
        want = kaiming_f(n, act)
        if not _near(got, want):
            for other, gain in KAIMING_GAIN.items():
                if other in ("tanh", "relu") and other != act and _near(got, gain / math.sqrt(n)):
                    fail(
                        f"{where} gave {fmt(got)}, expected {fmt(want)}: it uses {other}'s gain "
                        f"{GAIN_NAMES[other]} for {act}: {act}'s is {GAIN_NAMES[act]}"
                    )
            for why, f in KAIMING_SLIPS:
                if _near(got, f(n, act)):
                    fail(f"{where} gave {fmt(got)}, expected {fmt(want)}: it {why}")
            fail(f"{where} gave {fmt(got)}, expected {fmt(want)}: gain / √fan_in")
    passed("kaiming_std is right: gain / √fan_in (5/3 tanh, √2 ReLU, 1 linear)")


def check_fixed(stats: Any) -> None:
    """`stats`: net name -> the chapter's per-step records of the re-initialised net (dicts with
    'loss', 'saturation', 'dead' and 'update_data', one number per layer each). Each must now
    be healthy by `train.health`'s thresholds, and its loss fall."""
    if not isinstance(stats, dict) or set(stats) != set(NETS):
        fail(f"stats should be a dict with the keys {sorted(NETS)}; got {type(stats).__name__}")
    for name, steps in stats.items():
        if not steps:
            fail(f"net {name}: no steps recorded")
        sat = max((s for st in steps for s in st["saturation"] if s is not None), default=0.0)
        if sat > THRESHOLDS["saturated"]:
            fail(f"net {name} is still saturated: {sat:.0%} of a layer's tanh outputs |t| > 0.97")
        dead = [
            max(d for d in st["dead"] if d is not None)
            for st in steps[-3:]
            if any(d is not None for d in st["dead"])
        ]
        if dead and min(dead) > THRESHOLDS["dead"]:
            fail(f"net {name} still has {min(dead):.0%} of a layer's ReLUs dead at the end")
        ud = max(u for st in steps for u in st["update_data"])
        if ud > THRESHOLDS["update_data"]:
            fail(
                f"net {name}: update:data 10^{ud:.1f}: its steps are still as large as its weights"
            )
        if not steps[-1]["loss"] < steps[0]["loss"]:
            fail(
                f"net {name}: its loss went from {fmt(steps[0]['loss'])} to "
                f"{fmt(steps[-1]['loss'])}: it is not learning"
            )
    passed(
        "all three learn now: "
        + ", ".join(
            f"{k} loss {fmt(v[0]['loss'])} -> {fmt(v[-1]['loss'])}" for k, v in stats.items()
        )
    )
