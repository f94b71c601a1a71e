"""The training view's settings, data sets and losses: what a run is made of, checked.

`Settings` is everything that defines a run (the page keeps it in its URL; the same settings give
the same run). `Settings.from_dict` checks each one and raises ValueError naming the page's
control and the value. The data sets are `micrograd.data.DATASETS` (each declared once there: its
generator, title, classes, the losses that fit it; train_data.py makes a run's points); the losses
are `micrograd.losses.LOSSES` (each declared once there: its term, targets, title, formula); this
module gives the points their targets (`targets`). `options()` is what the page's menus offer.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from ... import data
from ...data import TARGET_RANGE
from ...losses import LOSSES
from ...nn import ACTIVATIONS
from ...train.jit_step import numpy_available

# ------------------------------------------------------------------ limits and choices
MAX_LAYERS = 6  # hidden layers
MAX_NEURONS = 32  # per hidden layer
MIN_POINTS, MAX_POINTS = 4, 500  # points a data set is generated with
MAX_ADDED = 300  # points a learner may click in, in all
MAX_LR = 10.0
GRID = 64  # decision-region grid side with jit or JavaScript (heat maps: at most half of it)
EAGER_GRID = 16  # the same without numpy: every cell is one scalar forward pass
EAGER_FRAME_SECONDS = 0.5  # and frames less often, so most of the time goes to training
HISTORY_CAP = 4_096  # loss-curve buckets kept; past it, neighbours merge (train_frames.LossCurve)
DATA_SEED = 1337  # karpathy's moons: moons(100, 0.1, seed=1337) is his demo's data exactly

# The Train view's data sets, as micrograd.data declares them (0 classes: a regression problem,
# each point's label a real number, its target in [-TARGET_RANGE, TARGET_RANGE]).
DATASETS: dict[str, data.DataSet] = {k: d for k, d in data.DATASETS.items() if d.train_view}

OPTIMIZERS = {"sgd": "SGD + momentum", "adam": "Adam"}

# The network's inputs for a 2-D data set, computed from a point (x1, x2) before the network sees
# it: key (as the URL writes it) -> (label, function). TensorFlow Playground's, as toggles.
FEATURES: dict[str, tuple[str, Callable[[float, float], float]]] = {
    "x1": ("x₁", lambda a, b: a),
    "x2": ("x₂", lambda a, b: b),
    "x1sq": ("x₁²", lambda a, b: a * a),
    "x2sq": ("x₂²", lambda a, b: b * b),
    "x1x2": ("x₁x₂", lambda a, b: a * b),
    "sinx1": ("sin x₁", lambda a, b: math.sin(a)),
    "sinx2": ("sin x₂", lambda a, b: math.sin(b)),
}

_REG = " + α·Σw²"


def loss_formula(name: str) -> str:
    """How the page writes loss `name` (declared once, in `micrograd.losses.LOSSES`), with the
    regularisation term and what its targets are."""
    loss = LOSSES[name]
    return f"{loss.formula}{_REG}     {loss.targets}"


OUTPUT_RULES = {
    "one": "one output s: class +1 (blue) where s > 0, −1 (orange) where s < 0",
    "per class": "one output zₖ per class: the class is argmax z, p = softmax(z)",
    "value": "one output s: the predicted value, drawn as the colour field (the points: their "
    "targets, on the same scale)",
}
# The mean squared error on a regression problem: its targets are the points' values, not ±1.
REGRESSION_FORMULA = "L = 1/N Σᵢ (sᵢ − yᵢ)²" + _REG + "     yᵢ: point i's target value"

# Settings that apply to the running model (the optimiser's and the batches'); any other change
# means a new model or new data, and training starts over.
LIVE_SETTINGS = frozenset({"lr", "momentum", "l2", "l1", "batch", "zero_grad"})

LABELS = {  # setting -> the control's name on the page, for error messages
    "dataset": "Dataset",
    "points": "Points",
    "noise": "Noise",
    "hidden": "Hidden layers",
    "activation": "Activation",
    "loss": "Loss",
    "optimizer": "Optimizer",
    "lr": "Learning rate",
    "momentum": "Momentum",
    "l2": "L2",
    "l1": "L1",
    "data_seed": "New data",
    "test": "Test data",
    "weight": "Weight",
    "bias": "Bias",
    "grads": "show ∂L/∂w",
    "graph": "graph shown",
    "features": "Inputs",
    "batch": "Batch size",
    "zero_grad": "Zero the grads",
    "seed": "Seed",
    "added": "Added points",
    "speed": "Speed",
}


# ------------------------------------------------------------------ settings


def check_number(name: str, v: object) -> float:
    """A JSON number, or a numeric string as an input box sends it, as a float."""
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise ValueError(f"{LABELS[name]} must be a number, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"{LABELS[name]} must be a number, got {v!r}")
    return float(v)


def check_real(name: str, v: object, low: float, high: float, low_open: bool = False) -> float:
    x = check_number(name, v)
    ok = math.isfinite(x) and (x > low if low_open else x >= low) and x <= high
    if not ok:
        bound = f"{'>' if low_open else '≥'} {low:g} and ≤ {high:g}"
        # a box's "1e400" is a float's inf: say what was typed, and why it is not finite
        got = repr(x)
        if isinstance(v, str) and math.isinf(x) and "inf" not in v.lower():
            got = f"{v.strip()} (too large: no number beyond about ±1.8e308 exists here)"
        raise ValueError(f"{LABELS[name]} must be a finite number {bound}, got {got}")
    return x


def check_whole(name: str, v: object, low: int, high: int) -> int:
    x = check_number(name, v)
    if not (math.isfinite(x) and x.is_integer() and low <= x <= high):
        raise ValueError(f"{LABELS[name]} must be a whole number from {low} to {high}, got {v!r}")
    return int(x)


def check_flag(name: str, v: object) -> bool:
    """true or false, as JSON or as the URL writes it."""
    if isinstance(v, bool):
        return v
    if v in ("true", "false"):
        return v == "true"
    raise ValueError(f"{LABELS.get(name, name)} must be true or false, got {str(v)[:40]!r}")


def check_choice(name: str, v: object, choices: Sequence[str]) -> str:
    if v not in choices:
        raise ValueError(f"unknown {LABELS[name]} {v!r}; choose one of {', '.join(choices)}")
    return str(v)


def check_features(v: object) -> tuple[str, ...]:
    """The chosen input features, in FEATURES' order ("x1,x1sq" from a URL, or a list)."""
    if isinstance(v, str):
        v = [p.strip() for p in v.split(",") if p.strip()]
    if not isinstance(v, (list, tuple)) or not all(isinstance(k, str) for k in v):
        raise ValueError(f"Inputs must be a list of feature names, got {v!r}")
    unknown = [k for k in v if k not in FEATURES]
    if unknown:
        raise ValueError(f"unknown input {unknown[0]!r}; choose from {', '.join(FEATURES)}")
    if not v:
        raise ValueError("choose at least one input")
    return tuple(k for k in FEATURES if k in v)


def check_hidden(v: object) -> tuple[int, ...]:
    if isinstance(v, str):  # "8,8" from a URL; "" is no hidden layer
        v = [p for p in v.replace(" ", "").split(",") if p]
    elif isinstance(v, int) and not isinstance(v, bool):  # train(hidden=8): one layer of 8
        v = [v]
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"Hidden layers must be a list of neuron counts, got {v!r}")
    if len(v) > MAX_LAYERS:
        raise ValueError(f"at most {MAX_LAYERS} hidden layers, got {len(v)}")
    sizes = []
    for i, n in enumerate(v):
        try:
            sizes.append(check_whole("hidden", n, 1, MAX_NEURONS))
        except ValueError:
            raise ValueError(
                f"hidden layer {i + 1} needs 1 to {MAX_NEURONS} neurons, got {n!r}"
            ) from None
    return tuple(sizes)


def check_added(v: object, classes: int, nin: int) -> tuple[tuple[float, float, float], ...]:
    """The learner's points: [x, y, class], or [x, y, target value] on a regression problem
    (`classes` 0)."""
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"Added points must be a list of [x, y, class], got {v!r:.60}")
    if v and nin != 2:
        raise ValueError("this data set is 3-D: points can be added to the 2-D sets only")
    if len(v) > MAX_ADDED:
        raise ValueError(f"at most {MAX_ADDED} added points, got {len(v)}")
    out = []
    for p in v:
        if not isinstance(p, (list, tuple)) or len(p) != 3:
            what = "target value" if classes == 0 else "class"
            raise ValueError(f"an added point is [x, y, {what}], got {p!r:.60}")
        x = check_real("added", p[0], -10.0, 10.0)
        y = check_real("added", p[1], -10.0, 10.0)
        if classes == 0:
            c: float = check_real("added", p[2], -TARGET_RANGE, TARGET_RANGE)
        else:
            c = check_whole("added", p[2], 0, classes - 1)
        out.append((x, y, c))
    return tuple(out)


@dataclass(frozen=True)
class Settings:
    """Everything that defines a run; the page keeps it in its URL. Same settings, same run."""

    dataset: str = "moons"  # a key of DATASETS
    points: int = 100  # points generated (the lecture's set always has 4)
    noise: float = 0.1  # the data set's noise
    hidden: tuple[int, ...] = (8, 8)  # neurons per hidden layer
    activation: str = "tanh"  # hidden layers' nonlinearity (nn.ACTIVATIONS); output is linear
    loss: str = "hinge"  # a key of LOSSES
    optimizer: str = "sgd"  # "sgd" (with momentum) or "adam"
    lr: float = 0.03  # learning rate
    momentum: float = 0.9  # SGD's momentum (Adam ignores it)
    l2: float = 1e-4  # alpha of the L2 penalty alpha * sum(w*w)
    l1: float = 0.0  # alpha of the L1 penalty alpha * sum(|w|)
    batch: int = 0  # points per step; 0 = all of them
    seed: int = 1337  # initial weights: MLP built after random.seed(seed)
    added: tuple[tuple[float, float, float], ...] = ()  # learner's points: (x, y, class or value)
    zero_grad: bool = True  # False: the lecture's bug, grads never zeroed between steps
    data_seed: int = DATA_SEED  # the points' random draw (New data picks another)
    features: tuple[str, ...] = ("x1", "x2")  # the network's inputs (2-D data sets; FEATURES)
    test: float = 0.0  # the share of the generated points held out as test data (not trained on)

    @classmethod
    def from_dict(cls, d: object, base: Settings | None = None) -> Settings:
        """Validated settings from a JSON object; keys left out keep `base`'s (the defaults)."""
        if not isinstance(d, dict):
            raise ValueError(f"settings must be a JSON object, got {type(d).__name__}")
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(names), key=str)
        if unknown:
            near = difflib.get_close_matches(str(unknown[0]), names, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(
                f"unknown setting(s) {', '.join(map(repr, unknown))}{hint}; the "
                f"settings are {', '.join(names)}"
            )
        b = base or cls()
        g = lambda k: d.get(k, getattr(b, k))  # noqa: E731
        dataset = check_choice("dataset", g("dataset"), list(DATASETS))
        ds = DATASETS[dataset]
        classes, nin = ds.classes, ds.dims
        loss = check_choice("loss", g("loss"), list(LOSSES))
        if loss not in ds.losses:
            title, right = LOSSES[loss].title, LOSSES[ds.losses[0]].title
            if classes == 0:
                why = (
                    f"{ds.title} is a regression problem (each point has a "
                    f"real-valued target, not a class): the {title} loss is for classes"
                )
            elif classes > 2:
                why = f"the {title} loss separates 2 classes; {ds.title} has {classes}"
            else:
                why = f"the {title} loss is for more than 2 classes; {ds.title} has 2"
            raise ValueError(f"{why}: choose {right}")
        points = check_whole("points", g("points"), MIN_POINTS, MAX_POINTS)
        batch = check_whole("batch", g("batch"), 0, MAX_POINTS + MAX_ADDED)
        return cls(
            dataset=dataset,
            points=points,
            noise=check_real("noise", g("noise"), 0.0, 1.0),
            hidden=check_hidden(g("hidden")),
            activation=check_choice("activation", g("activation"), list(ACTIVATIONS)),
            loss=loss,
            optimizer=check_choice("optimizer", g("optimizer"), list(OPTIMIZERS)),
            lr=check_real("lr", g("lr"), 0.0, MAX_LR, low_open=True),
            momentum=check_real("momentum", g("momentum"), 0.0, 0.999),
            l2=check_real("l2", g("l2"), 0.0, 1.0),
            l1=check_real("l1", g("l1"), 0.0, 1.0),
            batch=batch,
            seed=check_whole("seed", g("seed"), 0, 2**31 - 1),
            added=check_added(g("added"), classes, nin),
            zero_grad=check_flag("zero_grad", g("zero_grad")),
            data_seed=check_whole("data_seed", g("data_seed"), 0, 2**31 - 1),
            test=check_real("test", g("test"), 0.0, 0.9),
            features=_features_for(dataset, check_features(g("features"))),
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        d["added"] = [list(p) for p in self.added]
        d["features"] = list(self.features)
        return d

    @property
    def classes(self) -> int:
        """The data set's classes (0: a regression problem, a real-valued target per point)."""
        return DATASETS[self.dataset].classes

    @property
    def regression(self) -> bool:
        return self.classes == 0

    @property
    def dims(self) -> int:
        """Coordinates of a point of the data set (2, or 3 for the lecture's points)."""
        return DATASETS[self.dataset].dims

    @property
    def nin(self) -> int:
        """The network's inputs: one per chosen feature (a 3-D set's points as they are)."""
        return len(self.features) if self.dims == 2 else self.dims

    @property
    def outputs(self) -> int:
        """Network outputs: 1 for the two-class losses, one per class for cross-entropy."""
        return self.classes if LOSSES[self.loss].outputs == "per class" else 1

    @property
    def output_kind(self) -> str:
        """What the output means: "one" score (two classes), "per class", or a "value"."""
        return "value" if self.regression else LOSSES[self.loss].outputs

    @property
    def loss_formula(self) -> str:
        return REGRESSION_FORMULA if self.regression else loss_formula(self.loss)


# What each kind of setting is, as the page reads and writes it (its URL and its boxes): "list"
# is written "8,8", "flag" true or false, "points" the learner's clicked points (no box of its
# own); the rest one box's text.
KINDS = ("choice", "whole", "number", "flag", "list", "points")


def _kind(name: str, default: object) -> str:
    if name == "added":
        return "points"
    if isinstance(default, bool):
        return "flag"
    if isinstance(default, tuple):
        return "list"
    return {int: "whole", float: "number", str: "choice"}[type(default)]


def schema() -> list[dict[str, str]]:
    """The settings as the page is told them (`options()["settings"]`): each `Settings` field's
    name, its control's label and its kind (KINDS), in the dataclass's order. Declared here once:
    the page has no list of its own."""
    return [
        {"name": f.name, "label": LABELS[f.name], "kind": _kind(f.name, f.default)}
        for f in fields(Settings)
    ]


def _features_for(dataset: str, features: tuple[str, ...]) -> tuple[str, ...]:
    if DATASETS[dataset].dims != 2 and features != ("x1", "x2"):
        raise ValueError(
            f"input features are for the 2-D data sets; {DATASETS[dataset].title} "
            f"gives the network its points as they are"
        )
    return features


# ------------------------------------------------------------------ targets


def targets(loss: str, labels: Sequence[Any], classes: int) -> list[Any]:
    """The points' targets as loss `loss` takes them (its declaration's `target_of`: ±1 for
    hinge and mse, 0/1 for bce, the class for cross-entropy); a regression problem's target
    values as they are."""
    if classes == 0:
        return [float(t) for t in labels]
    target_of = LOSSES[loss].target_of
    return [target_of(c, classes) for c in labels]


def check_index(v: object, n: int, what: str = "point") -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < n:
        raise ValueError(f"{what} index must be a whole number from 0 to {n - 1}, got {v!r}")
    return int(v)


def options() -> dict[str, Any]:
    """The menus and limits the page builds its controls from."""
    return {
        # [name, title, classes (0: regression), dimensions, sized (False: its points are
        # fixed, no count, noise or new draw)]
        "datasets": [[k, d.title, d.classes, d.dims, d.size is None] for k, d in DATASETS.items()],
        "activations": list(ACTIVATIONS),
        "losses": [[k, v.title, loss_formula(k), v.outputs] for k, v in LOSSES.items()],
        # the losses each data set takes (a change of data set keeps the loss if it fits)
        "fits": {k: d.losses for k, d in DATASETS.items()},
        "optimizers": [[k, v] for k, v in OPTIMIZERS.items()],
        "limits": {
            "layers": MAX_LAYERS,
            "neurons": MAX_NEURONS,
            "points": [MIN_POINTS, MAX_POINTS],
            "added": MAX_ADDED,
            "lr": MAX_LR,
        },
        "defaults": Settings().to_dict(),
        "settings": schema(),  # what the page reads, writes and keeps in its URL
        "features": [[k, label] for k, (label, _) in FEATURES.items()],
        "jit": numpy_available(),
    }
