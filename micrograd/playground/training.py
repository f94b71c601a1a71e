"""The playground's training view: train a small MLP live, on the real engine, one tab at a time.

    tr = Trainer(Settings(dataset="moons", hidden=(8, 8)))
    tr.step()                 # one optimisation step, as the page's Step button
    f = tr.frame()            # what the page draws: step, loss, accuracy, decision grid, ...
    tr.play(); ...; tr.pause()

A `Trainer` holds one browser tab's run: the data (a `micrograd.data` set plus the points the
learner clicked in), an `MLP` built from a seed (Reset rebuilds the same initial weights, New
weights draws a new seed), a loss from `micrograd.losses`, an optimizer from `micrograd.optim`.
Each step is the batch loss as one `Value`: `micrograd.jit` replays the per-sample loss over the
batch with numpy when numpy is there, else the eager engine builds one graph per point. Play
runs steps on one thread per trainer; pausing ends that thread, so a paused tab costs no CPU,
and a tab that stops listening is paused after `idle_after` seconds.

Frames (what the page draws) are made at most `fps` times a second while playing: the step
counter, loss and accuracy, the decision regions on a grid (50x50 with jit) and a heat map per
hidden neuron (computed by the model itself, one jitted replay per neuron over the whole grid),
the weights, and the computation graph of one chosen point. The graph is laid out once per
architecture; frames carry only its nodes' data and grad, in layout order, so the picture
stands still while the numbers move.

Every setting is checked (`Settings.from_dict`): a bad one raises ValueError naming the control
and the value, which the routes (`ROUTES`, mounted by `server.py`) send back as a 400.
"""

from __future__ import annotations

import base64
import math
import numbers
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from .. import data, losses, optim
from ..engine import Value
from ..nn import ACTIVATIONS, MLP
from .server import EventStream, HTTPError

# ------------------------------------------------------------------ limits and choices
MAX_LAYERS = 6  # hidden layers
MAX_NEURONS = 32  # per hidden layer
MIN_POINTS, MAX_POINTS = 4, 500  # points a data set is generated with
MAX_ADDED = 300  # points a learner may click in, in all
MAX_LR = 10.0
GRID = 50  # decision-region grid side with jit (heat maps use every second cell)
EAGER_GRID = 16  # the same without numpy: every cell is one scalar forward pass
EAGER_FRAME_SECONDS = 0.5  # and frames less often, so most of the time goes to training
HISTORY_CAP = 20_000  # loss/accuracy entries kept; past it, every second one is dropped
DATA_SEED = 1337  # karpathy's moons: moons(100, 0.1, seed=1337) is his demo's data exactly

# name -> (what the menu says, number of classes, input dimension)
DATASETS: dict[str, tuple[str, int, int]] = {
    "moons": ("Moons", 2, 2),
    "circles": ("Circles", 2, 2),
    "xor": ("XOR", 2, 2),
    "spiral": ("Spiral, 2 classes", 2, 2),
    "spiral3": ("Spiral, 3 classes", 3, 2),
    "lecture": ("The lecture's 4 points (3-D)", 2, 3),
}

OPTIMIZERS = {"sgd": "SGD + momentum", "adam": "Adam"}

_REG = " + α·Σw²"
# name -> (menu text, formula for the page, outputs: 1 or one per class)
LOSSES: dict[str, tuple[str, str, str]] = {
    "hinge": ("Hinge (SVM)", "L = 1/N Σᵢ max(0, 1 − yᵢ·sᵢ)" + _REG + "     yᵢ = ±1", "one"),
    "bce": (
        "Binary cross-entropy",
        "L = 1/N Σᵢ −[tᵢ·log σ(sᵢ) + (1 − tᵢ)·log(1 − σ(sᵢ))]" + _REG + "     tᵢ ∈ {0, 1}",
        "one",
    ),
    "mse": ("Mean squared error", "L = 1/N Σᵢ (sᵢ − yᵢ)²" + _REG + "     yᵢ = ±1", "one"),
    "cross_entropy": (
        "Cross-entropy (softmax)",
        "L = 1/N Σᵢ −log softmax(zᵢ)[cᵢ] = 1/N Σᵢ (log Σₖ e^zᵢₖ − zᵢ,cᵢ)" + _REG,
        "per class",
    ),
}

OUTPUT_RULES = {
    "one": "one output s: class +1 (blue) where s > 0, −1 (orange) where s < 0",
    "per class": "one output zₖ per class: the class is argmax z, p = softmax(z)",
}

ACTIVATION_FORMULAS = {
    "relu": "max(0, x)",
    "tanh": "(e²ˣ − 1)/(e²ˣ + 1)",
    "sigmoid": "1/(1 + e⁻ˣ)",
    "linear": "x",
    "softplus": "log(1 + eˣ)",
    "abs": "|x|",
}

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
    "batch": "Batch size",
    "seed": "Seed",
    "added": "Added points",
    "speed": "Speed",
}


def numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ settings


def _number(name: str, v: object) -> float:
    """A JSON number, or a numeric string as an input box sends it, as a float."""
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise ValueError(f"{LABELS[name]} must be a number, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"{LABELS[name]} must be a number, got {v!r}")
    return float(v)


def _real(name: str, v: object, low: float, high: float, low_open: bool = False) -> float:
    x = _number(name, v)
    ok = math.isfinite(x) and (x > low if low_open else x >= low) and x <= high
    if not ok:
        bound = f"{'>' if low_open else '≥'} {low:g} and ≤ {high:g}"
        raise ValueError(f"{LABELS[name]} must be a finite number {bound}, got {x!r}")
    return x


def _whole(name: str, v: object, low: int, high: int) -> int:
    x = _number(name, v)
    if not (math.isfinite(x) and x.is_integer() and low <= x <= high):
        raise ValueError(f"{LABELS[name]} must be a whole number from {low} to {high}, got {v!r}")
    return int(x)


def _choice(name: str, v: object, choices: Sequence[str]) -> str:
    if v not in choices:
        raise ValueError(f"unknown {LABELS[name]} {v!r}; choose one of {', '.join(choices)}")
    return str(v)


def _hidden(v: object) -> tuple[int, ...]:
    if isinstance(v, str):  # "8,8" from a URL; "" is no hidden layer
        v = [p for p in v.replace(" ", "").split(",") if p]
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"Hidden layers must be a list of neuron counts, got {v!r}")
    if len(v) > MAX_LAYERS:
        raise ValueError(f"at most {MAX_LAYERS} hidden layers, got {len(v)}")
    sizes = []
    for i, n in enumerate(v):
        try:
            sizes.append(_whole("hidden", n, 1, MAX_NEURONS))
        except ValueError:
            raise ValueError(
                f"hidden layer {i + 1} needs 1 to {MAX_NEURONS} neurons, got {n!r}"
            ) from None
    return tuple(sizes)


def _added(v: object, classes: int, nin: int) -> tuple[tuple[float, float, int], ...]:
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"Added points must be a list of [x, y, class], got {v!r:.60}")
    if v and nin != 2:
        raise ValueError("this data set is 3-D: points can be added to the 2-D sets only")
    if len(v) > MAX_ADDED:
        raise ValueError(f"at most {MAX_ADDED} added points, got {len(v)}")
    out = []
    for p in v:
        if not isinstance(p, (list, tuple)) or len(p) != 3:
            raise ValueError(f"an added point is [x, y, class], got {p!r:.60}")
        x = _real("added", p[0], -10.0, 10.0)
        y = _real("added", p[1], -10.0, 10.0)
        c = _whole("added", p[2], 0, classes - 1)
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
    batch: int = 0  # points per step; 0 = all of them
    seed: int = 1337  # initial weights: MLP built after random.seed(seed)
    added: tuple[tuple[float, float, int], ...] = ()  # learner's points: (x, y, class)

    @classmethod
    def from_dict(cls, d: object, base: Settings | None = None) -> Settings:
        """Validated settings from a JSON object; keys left out keep `base`'s (the defaults)."""
        if not isinstance(d, dict):
            raise ValueError(f"settings must be a JSON object, got {type(d).__name__}")
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown setting(s) {', '.join(map(repr, unknown))}")
        b = base or cls()
        g = lambda k: d.get(k, getattr(b, k))  # noqa: E731
        dataset = _choice("dataset", g("dataset"), list(DATASETS))
        _, classes, nin = DATASETS[dataset]
        loss = _choice("loss", g("loss"), list(LOSSES))
        if classes > 2 and LOSSES[loss][2] == "one":
            raise ValueError(
                f"the {LOSSES[loss][0]} loss separates 2 classes; {DATASETS[dataset][0]} has "
                f"{classes}: choose Cross-entropy"
            )
        points = _whole("points", g("points"), MIN_POINTS, MAX_POINTS)
        batch = _whole("batch", g("batch"), 0, MAX_POINTS + MAX_ADDED)
        return cls(
            dataset=dataset,
            points=points,
            noise=_real("noise", g("noise"), 0.0, 1.0),
            hidden=_hidden(g("hidden")),
            activation=_choice("activation", g("activation"), list(ACTIVATIONS)),
            loss=loss,
            optimizer=_choice("optimizer", g("optimizer"), list(OPTIMIZERS)),
            lr=_real("lr", g("lr"), 0.0, MAX_LR, low_open=True),
            momentum=_real("momentum", g("momentum"), 0.0, 0.999),
            l2=_real("l2", g("l2"), 0.0, 1.0),
            batch=batch,
            seed=_whole("seed", g("seed"), 0, 2**31 - 1),
            added=_added(g("added"), classes, nin),
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        d["added"] = [list(p) for p in self.added]
        return d

    @property
    def classes(self) -> int:
        return DATASETS[self.dataset][1]

    @property
    def nin(self) -> int:
        return DATASETS[self.dataset][2]

    @property
    def outputs(self) -> int:
        """Network outputs: 1 for the two-class losses, one per class for cross-entropy."""
        return 1 if LOSSES[self.loss][2] == "one" else self.classes


# ------------------------------------------------------------------ data


def spiral3(n_samples: int = 100, noise: float = 0.1, seed: int | None = DATA_SEED) -> tuple:
    """Three spiral arms (cs231n's spiral), labels 0, 1, 2; `noise` jitters the angle."""
    rng = random.Random(seed)
    X, y = [], []
    for k in range(3):
        n = n_samples // 3 + (1 if k < n_samples % 3 else 0)
        for i in range(n):
            r = (i + 1) / n
            t = 4.0 * k + 4.0 * r + rng.gauss(0.0, 2.0 * noise)
            X.append([r * math.sin(t), r * math.cos(t)])
            y.append(k)
    order = list(range(len(X)))
    rng.shuffle(order)
    return [X[i] for i in order], [y[i] for i in order]


def make_data(s: Settings) -> tuple[list[list[float]], list[int]]:
    """The settings' points and their classes (0, 1 (, 2)); the learner's points come last."""
    if s.dataset == "lecture":
        X, ys = data.lecture()
    elif s.dataset == "spiral3":
        X, ys = spiral3(s.points, s.noise)
    else:
        X, ys = getattr(data, s.dataset)(s.points, s.noise, seed=DATA_SEED)
    if s.dataset == "spiral3":
        cls = [int(c) for c in ys]
    else:  # ±1 labels: class 1 is +1
        cls = [1 if c > 0 else 0 for c in ys]
    X = [list(map(float, x)) for x in X]
    for x, y, c in s.added:
        X.append([x, y])
        cls.append(c)
    return X, cls


def extent(X: Sequence[Sequence[float]]) -> tuple[float, float, float, float]:
    """The plotted square (xmin, xmax, ymin, ymax): the points' box plus a margin."""
    xs, ys = [p[0] for p in X], [p[1] for p in X]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = max(max(xs) - min(xs), max(ys) - min(ys), 1.0) / 2 * 1.2 + 0.1
    return (round(cx - half, 3), round(cx + half, 3), round(cy - half, 3), round(cy + half, 3))


# ------------------------------------------------------------------ per-sample losses
# Each takes the network's outputs for one point (a list of Values) and that point's target; the
# batch loss is their mean. Where `micrograd.losses` offers its per-sample terms (`TERMS`), those
# are used, so each formula lives once, there. Otherwise the two-class ones are the batch loss of
# a batch of one (its sum) and cross-entropy is logsumexp(z) - z·onehot. Either way the target
# of cross-entropy is a one-hot row, so every point has the same graph and `jit` traces it once.


def _ce_one_hot(zs: list[Value], onehot: Sequence[Any]) -> Value:
    return losses.logsumexp(zs) - Value.dot(zs, list(onehot))


_TERMS: dict[str, Callable[..., Value]] | None = getattr(losses, "TERMS", None)
if _TERMS is not None:
    _T = _TERMS
    PER_SAMPLE: dict[str, Callable[[list[Value], Any], Value]] = {
        "hinge": lambda zs, y: _T["hinge"](zs[0], y),
        "bce": lambda zs, t: _T["bce"](zs[0], t),
        "mse": lambda zs, y: _T["mse"](zs[0], y),
        "cross_entropy": lambda zs, onehot: _T["cross_entropy"](zs, list(onehot)),
    }
else:
    PER_SAMPLE = {
        "hinge": lambda zs, y: losses.hinge(zs, [y], reduction="sum"),
        "bce": lambda zs, t: losses.binary_cross_entropy_with_logits(zs, [t], reduction="sum"),
        "mse": lambda zs, y: losses.mse(zs, [y], reduction="sum"),
        "cross_entropy": _ce_one_hot,
    }


def targets(loss: str, cls: Sequence[int], classes: int) -> list[Any]:
    """Classes as the loss takes them: ±1 (hinge, mse), 0/1 (bce), one-hot rows (cross-entropy)."""
    if loss in ("hinge", "mse"):
        return [2.0 * c - 1.0 for c in cls]
    if loss == "bce":
        return [float(c) for c in cls]
    return [[1.0 if k == c else 0.0 for k in range(classes)] for c in cls]


def predict(outs: Sequence[float]) -> int:
    """The class a point gets from the network's outputs: sign of s, or argmax z."""
    if len(outs) == 1:
        return 1 if outs[0] > 0 else 0
    return max(range(len(outs)), key=lambda k: outs[k])


# ------------------------------------------------------------------ the model's views


def _b64(values: Any) -> str:
    """Numbers in [-1, 1] as one byte each, base64: 0 is -1, 255 is +1."""
    import numpy as np

    q = np.clip(np.rint((np.asarray(values, dtype=float) + 1.0) * 127.5), 0, 255)
    return base64.b64encode(np.nan_to_num(q).astype(np.uint8).tobytes()).decode("ascii")


def _b64_list(values: Sequence[float]) -> str:
    """The same without numpy."""
    out = bytearray()
    for v in values:
        v = 0.0 if math.isnan(v) else max(-1.0, min(1.0, v))
        out.append(int(round((v + 1.0) * 127.5)))
    return base64.b64encode(bytes(out)).decode("ascii")


class _JitLayers:
    """Every neuron's output over a batch of points, by the model itself: one `jit` replay per
    neuron, reading the previous layer's outputs (so a 2-8-8-1 net is 17 small programs)."""

    def __init__(self, model: MLP) -> None:
        from ..jit import jit

        self.fns = [
            [jit(lambda h, n=n: n(h)) for n in layer.neurons] for layer in model.layers
        ]

    def __call__(self, X: Any) -> list[Any]:
        """[(B, n_1), (B, n_2), ..., (B, n_out)] arrays for X (B, nin)."""
        import numpy as np

        outs, h = [], np.ascontiguousarray(X, dtype=float)
        for fns in self.fns:
            h = np.stack([f.outputs(h) for f in fns], axis=1)
            outs.append(h)
        return outs


def _eager_layers(model: MLP, X: Sequence[Sequence[float]]) -> list[list[list[float]]]:
    """The same, one scalar forward pass per point (no numpy): [layer][point][neuron]."""
    per_layer: list[list[list[float]]] = [[] for _ in model.layers]
    for x in X:
        h: Any = list(x)
        for i, layer in enumerate(model.layers):
            h = layer.outputs(h)
            per_layer[i].append([v.data for v in h])
    return per_layer


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None  # JSON has no NaN or inf


def _short(x: float) -> float | None:
    # JSON has no NaN or inf; 6 significant digits are plenty for a picture.
    return float(f"{x:.6g}") if math.isfinite(x) else None


# ------------------------------------------------------------------ the chosen point's graph


def point_graph(
    model: MLP, x: Sequence[float], target: Any, loss: str
) -> tuple[list[Value], list[dict[str, Any]], Value]:
    """The graph of one point's loss, forward and backward done, without the weights.

    Returns the nodes to draw (inputs, each neuron's w·x+b and its activation, the outputs, the
    loss's own nodes; parameters and constants are left out: the network picture shows the
    weights), a description of each (label, op, parents among the drawn nodes), and the loss.
    """
    xs = [Value(float(v), label=f"x{_sub(i + 1)}") for i, v in enumerate(x)]
    names: dict[int, str] = {id(v): v.label for v in xs}
    h: list[Value] = xs
    last = len(model.layers) - 1
    for li, layer in enumerate(model.layers):
        h = layer.outputs(h)
        for j, v in enumerate(h):
            tag = f"{li + 1}.{j + 1}" if li < last else (str(j + 1) if len(h) > 1 else "")
            act = v._prev[0] if v._op != "dot" and v._prev else None
            if li == last:
                names[id(v)] = f"z{_sub(int(tag))}" if tag else "s"
            else:
                names[id(v)] = f"h{tag}"
                if act is not None:
                    names[id(act)] = f"a{tag}"
    out = PER_SAMPLE[loss](h, target)
    out.backward()
    keep = {id(v) for v in xs}
    order: list[Value] = []
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(out, False)]
    while stack:  # iterative post-order: children first, in tuple order (deterministic)
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        for c in reversed(v._prev):
            if id(c) not in seen and (c._prev or id(c) in keep):
                stack.append((c, False))
    # Drop what does not depend on the point (e.g. a target negated by a '*' node): constants.
    live = {id(v) for v in xs}
    for v in order:
        if any(id(c) in live for c in v._prev):
            live.add(id(v))
    order = [v for v in order if id(v) in live]
    index = {id(v): i for i, v in enumerate(order)}
    nodes = []
    for v in order:
        label = names.get(id(v), "")
        if v is out:
            label = "loss"
        nodes.append(
            {
                "label": label,
                "op": "w·x+b" if v._op == "dot" else v._op,
                "children": [index[id(c)] for c in v._prev if id(c) in index],
            }
        )
    return order, nodes, out


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def layout(nodes: list[dict[str, Any]], w: int = 118, h: int = 46, gap: int = 28) -> dict:
    """Columns by depth (inputs left, loss right), rows in graph order: positions in pixels."""
    depth: list[int] = []
    for n in nodes:
        depth.append(1 + max((depth[c] for c in n["children"]), default=-1))
    cols: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        cols.setdefault(d, []).append(i)
    tallest = max((len(c) for c in cols.values()), default=0)
    pos = [(0, 0)] * len(nodes)
    for d, members in cols.items():
        top = (tallest - len(members)) * (h + 10) / 2
        for r, i in enumerate(members):
            pos[i] = (d * (w + gap), round(top + r * (h + 10)))
    return {
        "width": (max(cols, default=0) + 1) * (w + gap) - gap,
        "height": tallest * (h + 10) - 10,
        "box": [w, h],
        "pos": pos,
    }


# ------------------------------------------------------------------ the trainer

_RANDOM_LOCK = threading.Lock()  # MLP draws from the global `random`: one build at a time


class Trainer:
    """One tab's training run: `step`, `play`/`pause`, `reset`, `new_weights`, points, frames.

    `use_jit` None means: `micrograd.jit` when numpy is importable. `fps` bounds how often a
    playing trainer makes a frame; `idle_after` is how long it plays with nobody listening.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        use_jit: bool | None = None,
        fps: float = 20.0,
        idle_after: float = 8.0,
    ) -> None:
        have_numpy = numpy_available()
        self.use_jit = have_numpy if use_jit is None else bool(use_jit) and have_numpy
        self.fps = fps
        self.idle_after = idle_after
        self.lock = threading.RLock()  # the model, data and counters
        self.frames = threading.Condition()  # a new frame was published
        self._thread: threading.Thread | None = None
        self._playing = False
        self._frame: dict[str, Any] | None = None
        self._frame_no = 0
        self.streams = 0  # event streams open on this trainer
        self.last_seen = time.monotonic()
        self.config_id = 0
        self.closed = False
        self.speed: float | None = None  # steps per second while playing; None: flat out
        self.configure(settings or Settings())

    # ---- setting up
    def configure(self, settings: Settings) -> None:
        """Start over with `settings` (the same seed gives the same initial weights)."""
        playing = self._stop()
        with self.lock:
            self.settings = settings
            self.X, self.cls = make_data(settings)
            self.extent = extent(self.X)
            self.pick = min(getattr(self, "pick", 0), len(self.X) - 1)
            self.config_id += 1
            self._build()
            self._publish()
        if playing:
            self.play()

    def _build(self) -> None:
        s = self.settings
        with _RANDOM_LOCK:  # seeded like karpathy's demo, without disturbing anyone's random
            state = random.getstate()
            random.seed(s.seed)
            try:
                self.model = MLP(s.nin, [*s.hidden, s.outputs], activation=s.activation)
            finally:
                random.setstate(state)
        self.params = self.model.parameters()
        if s.optimizer == "adam":
            self.opt: optim.Optimizer = optim.Adam(self.params, lr=s.lr)
        else:
            self.opt = optim.SGD(self.params, lr=s.lr, momentum=s.momentum)
        self.T = targets(s.loss, self.cls, s.classes)
        n = len(self.X)
        if s.batch and s.batch < n:
            idx = list(range(n))
            self._batches: Iterator | None = data.batches(idx, idx, s.batch, seed=s.seed)
        else:
            self._batches = None
        self.step_no = 0
        self.loss = math.nan
        self.accuracy = math.nan
        self.history: list[tuple[int, float, float]] = []
        self.history_id = getattr(self, "history_id", 0) + 1
        self.error: str | None = None
        fn = PER_SAMPLE[s.loss]
        model = self.model
        self._loss_of_point = lambda x, t: fn(model.outputs(x), t)
        side = GRID if self.use_jit else EAGER_GRID
        x0, x1, y0, y1 = self.extent
        # Row 0 is the top of the picture (largest y), as a canvas counts rows.
        self.grid = [
            [x0 + (x1 - x0) * (i + 0.5) / side, y1 - (y1 - y0) * (r + 0.5) / side]
            + [0.0] * (s.nin - 2)
            for r in range(side)
            for i in range(side)
        ]
        self.grid_side = side
        if self.use_jit:
            import numpy as np

            from ..jit import jit

            self._Xa = np.array(self.X, dtype=float)
            self._Ta = np.array(self.T, dtype=float)
            self._Ga = np.array(self.grid, dtype=float)
            self._jit_loss = jit(self._loss_of_point)
            self._jit_layers = _JitLayers(model)
            k = s.outputs
            self._jit_out = [jit(lambda x, k=k: model.outputs(x)[k]) for k in range(k)]
        self._layout_graph()

    def _layout_graph(self) -> None:
        x = self.X[self.pick]
        try:
            _, nodes, _ = point_graph(self.model, x, self.T[self.pick], self.settings.loss)
        except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights
            nodes = []
        self.graph_nodes = nodes
        self.graph_layout = layout(nodes)

    # ---- training
    def _batch(self) -> list[int] | None:
        return None if self._batches is None else next(self._batches)[0]

    def _step(self) -> None:
        """One step: batch loss (+ L2), accuracy on all points (before the update), backward,
        update. Caller holds the lock."""
        if self.error:
            return
        s = self.settings
        idx = self._batch()
        try:
            if self.use_jit:
                Xb = self._Xa if idx is None else self._Xa[idx]
                Tb = self._Ta if idx is None else self._Ta[idx]
                import numpy as np

                with np.errstate(all="ignore"):  # a diverging run is caught below, by value
                    total = self._jit_loss(Xb, Tb)
                    acc = self._accuracy_jit()
            else:
                rows = range(len(self.X)) if idx is None else idx
                terms, hits = [], 0
                for i in rows:
                    zs = self.model.outputs(self.X[i])
                    terms.append(PER_SAMPLE[s.loss](zs, self.T[i]))
                    hits += predict([z.data for z in zs]) == self.cls[i]
                total = Value.sum(terms) * (1.0 / len(terms))
                acc = hits / len(terms) if idx is None else self._accuracy_eager()
            if s.l2:
                total = total + losses.l2(self.params, s.l2)
            self.model.zero_grad()
            total.backward()
            self.opt.step()
        except (ValueError, OverflowError, ZeroDivisionError) as e:
            self._diverged(
                f"step {self.step_no + 1} failed ({e}): training diverged; lower the Learning "
                "rate and press Reset"
            )
            return
        self.loss, self.accuracy = total.data, acc
        self.history.append((self.step_no, _short(total.data), acc))
        self.step_no += 1
        if len(self.history) > HISTORY_CAP:
            self.history = self.history[::2]
            self.history_id += 1
        if not math.isfinite(total.data) or not all(math.isfinite(p.data) for p in self.params):
            self._diverged(
                f"the loss became {total.data} at step {self.step_no}: training diverged; "
                "lower the Learning rate and press Reset"
            )

    def _diverged(self, why: str) -> None:
        self.error = why
        self._playing = False

    def _accuracy_jit(self) -> float:
        import numpy as np

        outs = np.stack([f.outputs(self._Xa) for f in self._jit_out], axis=1)
        pred = (outs[:, 0] > 0).astype(int) if outs.shape[1] == 1 else outs.argmax(axis=1)
        return float((pred == np.array(self.cls)).mean())

    def _accuracy_eager(self) -> float:
        hits = sum(
            predict([z.data for z in self.model.outputs(x)]) == c for x, c in zip(self.X, self.cls)
        )
        return hits / len(self.X)

    def step(self, n: int = 1) -> None:
        """`n` steps now (pausing a run first), then a frame."""
        self._stop()
        with self.lock:
            for _ in range(n):
                self._step()
            self._publish()

    # ---- playing
    @property
    def playing(self) -> bool:
        return self._playing

    def play(self) -> None:
        with self.lock:
            if self.error or self.closed:
                return
            self.touch()
            self._playing = True
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="micrograd-train", daemon=True
                )
                self._thread.start()

    def pause(self) -> None:
        self._stop()
        with self.lock:
            self._publish()

    def _stop(self) -> bool:
        """End the training thread (it finishes its step); say whether it was playing."""
        was = self._playing
        self._playing = False
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join()
        return was

    def _run(self) -> None:
        interval = 1.0 / self.fps if self.use_jit else max(1.0 / self.fps, EAGER_FRAME_SECONDS)
        next_frame = 0.0
        while True:
            with self.lock:
                if not self._playing:
                    break
                if self.streams == 0 and time.monotonic() - self.last_seen > self.idle_after:
                    self._playing = False  # nobody is watching: the tab closed or went away
                    break
                self._step()
                now = time.monotonic()
                if now >= next_frame or not self._playing:
                    self._publish()
                    next_frame = now + interval
            time.sleep(0)  # let a request waiting for the lock have it between two steps
            if self.speed:  # a slow run for the eye: wait (without the lock) for the next step
                wake = now + 1.0 / self.speed
                while self._playing and time.monotonic() < wake:
                    time.sleep(min(0.05, max(0.0, wake - time.monotonic())))
        with self.lock:
            self._publish()

    def set_speed(self, speed: object) -> None:
        """Steps per second while playing ("max" or None: as fast as it goes)."""
        if speed in (None, "max"):
            self.speed = None
            return
        self.speed = _real("speed", speed, 0.0, 1000.0, low_open=True)

    def reset(self) -> None:
        """Back to step 0 with the same initial weights (and the same batches)."""
        self.configure(self.settings)

    def new_weights(self) -> None:
        """Back to step 0 with a new seed (so new initial weights)."""
        self.configure(replace(self.settings, seed=random.SystemRandom().randrange(2**31)))

    def set_points(self, added: Sequence) -> None:
        """Replace the learner's points; training goes on from the current weights."""
        s = self.settings
        pts = _added(added, s.classes, s.nin)
        playing = self._stop()
        with self.lock:
            self.settings = replace(s, added=pts)
            self.X, self.cls = make_data(self.settings)
            self.T = targets(s.loss, self.cls, s.classes)
            if self.use_jit:
                import numpy as np

                self._Xa = np.array(self.X, dtype=float)
                self._Ta = np.array(self.T, dtype=float)
            n = len(self.X)
            if s.batch and s.batch < n:
                idx = list(range(n))
                self._batches = data.batches(idx, idx, s.batch, seed=s.seed)
            else:
                self._batches = None
            self.pick = min(self.pick, n - 1)
            self.config_id += 1
            self._layout_graph()
            self._publish()
        if playing:
            self.play()

    def choose(self, index: object) -> None:
        """Show the graph of point `index`."""
        i = _whole_index(index, len(self.X))
        playing = self._stop()
        with self.lock:
            self.pick = i
            self._layout_graph()
            self.config_id += 1
            self._publish()
        if playing:
            self.play()

    # ---- what the page draws
    def meta(self) -> dict[str, Any]:
        """What changes only with the settings: the data, the plot's extent, the graph layout."""
        with self.lock:
            s = self.settings
            return {
                "config_id": self.config_id,
                "settings": s.to_dict(),
                "engine": "jit" if self.use_jit else "eager",
                "points": [[*x, c] for x, c in zip(self.X, self.cls)],  # exact: JSON floats
                "classes": s.classes,
                "extent": self.extent,
                "grid": self.grid_side,
                "heat": self.grid_side // 2 if self.use_jit else self.grid_side,
                "slice": "x₃ = 0" if s.nin == 3 else None,
                "sizes": [s.nin, *s.hidden, s.outputs],
                "loss_formula": LOSSES[s.loss][1],
                "output_rule": OUTPUT_RULES[LOSSES[s.loss][2]],
                "activation_formula": f"h = {s.activation}(w·x + b),  {s.activation}(x) = "
                + ACTIVATION_FORMULAS.get(s.activation, s.activation),
                "pick": self.pick,
                "graph": {"nodes": self.graph_nodes, **self.graph_layout},
            }

    def frame(self) -> dict[str, Any]:
        """The current picture (see the module docstring). Caller may hold the lock."""
        with self.lock:
            s = self.settings
            try:
                grid, heat = self._grid_views()
                order, _, _ = point_graph(self.model, self.X[self.pick], self.T[self.pick], s.loss)
            except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights: no picture
                grid, heat, order = None, [], []
            return {
                "type": "frame",
                "config_id": self.config_id,
                "step": self.step_no,
                "loss": _short(self.loss) if self.step_no else None,
                "accuracy": self.accuracy if self.step_no else None,
                "playing": self._playing,
                "error": self.error,
                "grid": grid,
                "heat": heat,
                "weights": [
                    [[_short(w.data) for w in n.w] + [_short(n.b.data)] for n in layer.neurons]
                    for layer in self.model.layers
                ],
                "graph": {
                    # exact (not rounded twice on the way to the page's 4 decimals)
                    "data": [_finite(v.data) for v in order],
                    "grad": [_finite(v.grad) for v in order],
                },
            }

    def _grid_views(self) -> tuple[dict[str, Any], list[str]]:
        """The decision regions and one heat map per hidden neuron, from the model's forward
        pass over the grid."""
        k = self.settings.outputs
        if self.use_jit:
            import numpy as np

            with np.errstate(all="ignore"):
                layers = self._jit_layers(self._Ga)
                side = self.grid_side
                heat = []
                for a in layers[:-1]:
                    sub = a.reshape(side, side, -1)[::2, ::2].reshape(-1, a.shape[1])
                    scale = np.abs(sub).max(axis=0)
                    scale[~(scale > 0)] = 1.0
                    heat += [_b64(sub[:, j] / scale[j]) for j in range(a.shape[1])]
                out = layers[-1]
                if k == 1:
                    return {"kind": "score", "b64": _b64(np.tanh(out[:, 0]))}, heat
                z = out - out.max(axis=1, keepdims=True)
                p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
                return {"kind": "classes", "cls": _b64_classes(p.argmax(axis=1)),
                        "b64": _b64(2 * p.max(axis=1) - 1)}, heat
        per_layer = _eager_layers(self.model, self.grid)
        heat = []
        for a in per_layer[:-1]:
            for j in range(len(a[0])):
                col = [row[j] for row in a]
                scale = max((abs(v) for v in col if math.isfinite(v)), default=0.0) or 1.0
                heat.append(_b64_list([v / scale for v in col]))
        out = per_layer[-1]
        if k == 1:
            return {"kind": "score", "b64": _b64_list([math.tanh(r[0]) for r in out])}, heat
        cls, conf = [], []
        for r in out:
            m = max(r)
            e = [math.exp(v - m) for v in r]
            c = predict(r)
            cls.append(c)
            conf.append(2 * e[c] / sum(e) - 1)
        return {"kind": "classes", "cls": _b64_classes(cls), "b64": _b64_list(conf)}, heat

    def _publish(self) -> None:
        f = self.frame()
        with self.frames:
            self._frame_no += 1
            f["seq"] = self._frame_no  # the page drops a frame older than one it has drawn
            self._frame = f
            self.frames.notify_all()

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def model_json(self) -> str:
        """The model as `MLP.save` writes it (so `MLP.load` reads it back)."""
        with self.lock:
            fd, path = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            try:
                self.model.save(path)
                with open(path, encoding="utf-8") as f:
                    return f.read()
            finally:
                os.unlink(path)

    def latest(self) -> dict[str, Any]:
        """The last published frame."""
        with self.frames:
            frame = self._frame
        if frame is None:  # not yet: configure() publishes one before anyone can ask
            with self.lock:
                self._publish()
            return self.latest()
        return frame

    def close(self) -> None:
        """The tab's session ended: stop training and end its streams."""
        self.closed = True
        self._stop()
        with self.frames:
            self.frames.notify_all()

    def stream(self, keepalive: float = 2.0) -> Iterator[dict[str, Any] | None]:
        """Frames as they are published (the newest only, if the reader is slow), each with
        the loss/accuracy history this reader has not had yet; None (a keep-alive for the
        server to send as a comment) while nothing happens. Ends when the trainer closes."""
        sent, history_id, last = 0, None, None
        self.streams += 1
        try:
            while not self.closed:
                with self.frames:
                    fresh = lambda seen=last: self._frame_no != seen  # noqa: E731
                    self.frames.wait_for(fresh, timeout=keepalive)
                    frame, no = self._frame, self._frame_no
                self.touch()
                if no == last or frame is None:
                    yield None
                    continue
                last = no
                hist, hid = self.history, self.history_id
                out = dict(frame)
                if hid != history_id:
                    sent, history_id = 0, hid
                    out["history_reset"] = True
                out["history"] = hist[sent:]
                sent += len(out["history"])
                yield out
        finally:
            self.streams -= 1
            self.touch()


def _b64_classes(cls: Any) -> str:
    return base64.b64encode(bytes(int(c) for c in cls)).decode("ascii")


def _whole_index(v: object, n: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < n:
        raise ValueError(f"point index must be a whole number from 0 to {n - 1}, got {v!r}")
    return int(v)


def options() -> dict[str, Any]:
    """The menus and limits the page builds its controls from."""
    return {
        "datasets": [[k, v[0], v[1]] for k, v in DATASETS.items()],
        "activations": [[a, ACTIVATION_FORMULAS.get(a, a)] for a in ACTIVATIONS],
        "losses": [[k, v[0], v[1], v[2]] for k, v in LOSSES.items()],
        "optimizers": [[k, v] for k, v in OPTIMIZERS.items()],
        "limits": {
            "layers": MAX_LAYERS,
            "neurons": MAX_NEURONS,
            "points": [MIN_POINTS, MAX_POINTS],
            "added": MAX_ADDED,
            "lr": MAX_LR,
        },
        "defaults": Settings().to_dict(),
        "jit": numpy_available(),
    }



# ------------------------------------------------------------------ the HTTP API (server.py)


def _trainer(req: Any) -> Trainer:
    """This tab's trainer, made on its first request (default settings)."""
    session = req.session
    with session.lock:
        tr = session.state.get("train")
        if tr is None or tr.closed:
            tr = Trainer(use_jit=bool(req.options.get("jit", True)))
            session.state["train"] = tr
            session.on_close.append(tr.close)
    tr.touch()
    return tr


def _body(req: Any) -> dict[str, Any]:
    if not isinstance(req.body, dict):
        raise HTTPError(400, "send a JSON object")
    return req.body


def _answer(tr: Trainer) -> dict[str, Any]:
    return {"meta": tr.meta(), "frame": tr.latest()}


def _checked(fn: Callable[[], None]) -> None:
    try:
        fn()
    except (ValueError, TypeError) as e:
        raise HTTPError(400, str(e)) from None


def api_options(req: Any) -> dict[str, Any]:
    return options()


def api_state(req: Any) -> dict[str, Any]:
    return _answer(_trainer(req))


def api_config(req: Any) -> dict[str, Any]:
    """Start over with these settings (keys left out: the defaults); 400 names a bad one."""
    body = _body(req)
    tr = _trainer(req)
    try:
        settings = Settings.from_dict(body)
    except ValueError as e:
        raise HTTPError(400, str(e)) from None
    tr.configure(settings)
    return _answer(tr)


CONTROLS = ("play", "pause", "step", "reset", "new_weights", "speed")


def api_control(req: Any) -> dict[str, Any]:
    body = _body(req)
    action = body.get("action")
    if action not in CONTROLS:
        raise HTTPError(400, f"unknown action {action!r}; one of {', '.join(CONTROLS)}")
    tr = _trainer(req)
    if action == "speed":
        _checked(lambda: tr.set_speed(body.get("value")))
    elif action == "step":
        steps = body.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 1000:
            raise HTTPError(400, f"steps must be a whole number from 1 to 1000, got {steps!r}")
        tr.step(steps)
    else:
        getattr(tr, action)()
    return _answer(tr)


def api_points(req: Any) -> dict[str, Any]:
    """Replace the learner's points: ``{"added": [[x, y, class], ...]}`` ([] clears them)."""
    body = _body(req)
    if "added" not in body:
        raise HTTPError(400, 'send {"added": [[x, y, class], ...]}')
    tr = _trainer(req)
    _checked(lambda: tr.set_points(body["added"]))
    return _answer(tr)


def api_pick(req: Any) -> dict[str, Any]:
    """Show the graph of point ``{"index": i}``."""
    body = _body(req)
    tr = _trainer(req)
    _checked(lambda: tr.choose(body.get("index")))
    return _answer(tr)


def api_model(req: Any) -> dict[str, Any]:
    """The model as `MLP.save` writes it (the page offers it as a file for `MLP.load`)."""
    import json

    tr = _trainer(req)
    try:
        return json.loads(tr.model_json())
    except ValueError as e:  # e.g. diverged weights: JSON cannot hold them
        raise HTTPError(409, str(e)) from None


def api_stream(req: Any) -> Any:
    """Server-Sent Events: a frame whenever the trainer publishes one."""
    tr = _trainer(req)

    def frames() -> Iterator[dict[str, Any] | None]:
        inner = tr.stream()
        try:
            for item in inner:
                if req.stopping.is_set() or req.session.closed.is_set():
                    return
                yield item
        finally:
            inner.close()  # now, not when collected: the trainer counts its listeners

    return EventStream(frames())


ROUTES: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("GET", "/api/train/options"): api_options,
    ("GET", "/api/train/state"): api_state,
    ("POST", "/api/train/config"): api_config,
    ("POST", "/api/train/control"): api_control,
    ("POST", "/api/train/points"): api_points,
    ("POST", "/api/train/pick"): api_pick,
    ("GET", "/api/train/model"): api_model,
    ("GET", "/api/train/stream"): api_stream,
}
