"""Is the network learning? makemore part 3's statistics of a network, step by step, and in words.

    from micrograd.train.health import Monitor
    from micrograd.train.diagnose import diagnose
    monitor = Monitor(model)                 # an nn.MLP, or a GPT (its blocks' ReLU layers)
    with monitor.recording():                # the step's forward and backward, as usual
        loss = ...; model.zero_grad(); loss.backward()
    monitor.read_grads()                     # before the optimiser: some zero the grads in step()
    opt.step()
    health = monitor.read_update(k)          # a StepHealth: every number below, for step k
    for problem in diagnose([health, ...]):  # the last steps' health, read as a teacher would
        print(problem)

`fit(..., health=True)` does this every step and keeps them in ``History.health``;
`micrograd.viz.health_plots` draws makemore part 3's four pictures from them.

Per layer (an MLP's Layer; a GPT block's MLP, whose activation is ReLU), from the Values of the
step's own graph (no second forward pass, no new graph: `recording` only keeps the layer's
outputs as they are made):
    activations     mean, std and histogram of its outputs over the batch; the share of tanh
                    outputs saturated (|t| > 0.97: tanh' = 1 - t² < 0.06, the gradient through
                    them nearly stops); the share of ReLU units dead (zero for every sample of the
                    batch: no gradient reaches their weights at all)
    gradients       mean, std and histogram of the loss's gradient with respect to those outputs
Per weight matrix (biases left out, as makemore does):
    grad:data       std of its grads / std of its weights
    update:data     log10(std of the step's update / std of its weights before the step), the
                    update being the weights after the optimiser's step minus before (so it is
                    right for any optimiser: SGD, momentum, Adam). makemore's guide is 10^-3.
std is the population std (numpy's default, ddof=0); histograms are numpy's ``np.histogram(x,
bins)`` on the data's own range, counts to the last one (tests/test_health.py holds every number
to numpy's to 1e-12).

On micrograd.jit's step (`JitStep`) there are no per-sample Values: `Monitor.attach(step)` asks
the jit to keep the layers' outputs as nodes of its program, and reads their values and grads from
its arrays, the same numbers (tests/test_health.py holds them to the eager step's). A step in
JavaScript (the static site's engines: playground/training/train_step.js, jit/gpt_step.js) computes
these statistics where its arrays are, by jit/health.js (`stepHealth`: this module's functions, line
for line), and `Monitor.given_stats` takes them in (tests/test_playground_health_js.py holds them
to the eager step's).

`train.diagnose` reads the last steps and names each problem by its cause and the lecture's fix,
with the numbers that show it. Standard library only.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.registry import OPS

SATURATED = 0.97  # makemore's |tanh| threshold: tanh' = 1 - 0.97² ≈ 0.06
BINS = 40  # histogram bins
KAIMING_GAIN = {"tanh": 5 / 3, "relu": math.sqrt(2), "linear": 1.0, "sigmoid": 1.0}


# ---------------------------------------------------------------- the statistics


def mean(xs: Sequence[float]) -> float:
    # math.fsum: the exact sum rounded once, so the mean is numpy's to the last bits or so
    return math.fsum(xs) / len(xs) if xs else math.nan


def std(xs: Sequence[float]) -> float:
    """The population standard deviation (numpy's ``np.std``, ddof=0)."""
    if not xs:
        return math.nan
    m = mean(xs)
    return math.sqrt(math.fsum((x - m) * (x - m) for x in xs) / len(xs))


@dataclass
class Histogram:
    """``np.histogram(xs, bins)``: `bins` equal bins from min(xs) to max(xs), the last closed."""

    edges: list[float]
    counts: list[int]


def histogram(xs: Sequence[float], bins: int = BINS) -> Histogram:
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if lo == hi:  # numpy's rule for a constant: the range ±0.5 around it
        lo, hi = lo - 0.5, hi + 0.5
    edges = _edges(lo, hi, bins)
    counts = [0] * (bins + 1)  # (one more, for x == hi: added to the last bin at the end)
    scale = bins / (hi - lo)
    for x in xs:
        i = int((x - lo) * scale)
        # the rounding of (x - lo) * scale may land one bin off: the edges decide, as numpy's do
        if x < edges[i]:
            i -= 1
        elif i < bins and x >= edges[i + 1]:
            i += 1
        counts[i] += 1
    counts[bins - 1] += counts.pop()  # the last bin is closed: [edge, hi]
    return Histogram(edges, counts)


def _edges(lo: float, hi: float, bins: int) -> list[float]:
    step = (hi - lo) / bins
    return [lo + i * step for i in range(bins)] + [hi]  # np.linspace's arithmetic


def log10_ratio(num: float, den: float) -> float:
    """log10(num / den); -inf for a zero numerator (no update at all), nan if den is 0."""
    if den == 0 or math.isnan(num) or math.isnan(den):
        return math.nan
    return -math.inf if num == 0 else math.log10(num / den)


@dataclass
class LayerHealth:
    """One layer's outputs (the activations) and their grads, over the step's batch."""

    name: str  # 'layer 1' (an MLP's first), 'block 1 mlp' (a GPT's first block's ReLUs)
    activation: str  # 'tanh', 'relu', 'linear', ...: its nonlinearity
    fan_in: int  # inputs of each unit
    recorded: bool  # False when the layer's outputs could not be read
    act_mean: float = math.nan
    act_std: float = math.nan
    act_hist: Histogram | None = None
    saturated: float | None = None  # tanh: share of outputs with |t| > 0.97
    dead: float | None = None  # relu: share of units zero for every sample
    dead_units: list[bool] | None = None  # relu: which units are dead
    grad_mean: float = math.nan
    grad_std: float = math.nan
    grad_hist: Histogram | None = None
    # share of the biases' grads this step's batch does not explain (an MLP's layer, eager):
    # ~1e-16 when the grads were zeroed, the earlier steps' grads when they were not
    stale_grad: float | None = None
    biases: bool = True  # its units have biases (an MLP's layer; a GPT block's MLP has none)


@dataclass
class WeightHealth:
    """One weight matrix: its grads against its data, and the step's update against its data."""

    name: str  # 'layer 1' or 'block 1 attn.wq'
    shape: tuple[int, int]  # (outputs, inputs)
    gain: float  # Kaiming's gain for the nonlinearity after it (5/3 tanh, √2 ReLU, 1 linear)
    data_std: float
    grad_mean: float
    grad_std: float
    grad_data: float  # std(grad) / std(data)
    update_data: float = math.nan  # log10(std(update) / std(data before)); makemore: ~ -3
    grad_hist: Histogram | None = None


@dataclass
class StepHealth:
    step: int  # 0-based
    layers: list[LayerHealth] = field(default_factory=list)
    weights: list[WeightHealth] = field(default_factory=list)


def layer_health(
    name: str,
    activation: str,
    fan_in: int,
    data: Sequence[Sequence[float]] | None,
    grads: Sequence[Sequence[float]] | None = None,
) -> LayerHealth:
    """The statistics of one layer from its outputs' `data` and `grads`: one row (a list of
    floats, one per unit) per sample."""
    if not data or grads is None:
        return LayerHealth(name, activation, fan_in, recorded=False)
    flat = [x for row in data for x in row]
    flat_grads = [g for row in grads for g in row]
    h = LayerHealth(name, activation, fan_in, recorded=True)
    h.act_mean, h.act_std, h.act_hist = mean(flat), std(flat), histogram(flat)
    h.grad_mean, h.grad_std, h.grad_hist = mean(flat_grads), std(flat_grads), histogram(flat_grads)
    if activation == "tanh":
        h.saturated = sum(abs(x) > SATURATED for x in flat) / len(flat)
    if activation == "relu":
        h.dead_units = [all(row[j] == 0 for row in data) for j in range(len(data[0]))]
        h.dead = sum(h.dead_units) / len(h.dead_units)
    return h


def weight_health(
    name: str, shape: tuple[int, int], gain: float, data: Sequence[float], grads: Sequence[float]
) -> WeightHealth:
    d, g = std(data), std(grads)
    ratio = g / d if d else math.nan
    return WeightHealth(name, shape, gain, d, mean(grads), g, ratio, grad_hist=histogram(grads))


# The derivative of an activation from its output alone (what a recording keeps), for the
# fresh-gradient check of the biases; None where the output does not tell (abs, softplus).
# tanh's and sigmoid's are the engine's own rules (engine.py, read from the op registry), which
# read the output alone: the input they are handed (NaN) is never used.
_SLOPE_FROM_OUTPUT = {
    "relu": lambda t: 1.0 if t > 0 else 0.0,
    "tanh": lambda t: OPS["tanh"].on_floats(t, math.nan)[0],
    "sigmoid": lambda t: OPS["sigmoid"].on_floats(t, math.nan)[0],
    "linear": lambda t: 1.0,
}


def stale_share(
    data: Sequence[Sequence[float]],
    grads: Sequence[Sequence[float]],
    biases: Sequence[Any],
    activation: str,
    alpha: float,
    l1: float,
) -> float | None:
    """How much of a layer's bias grads this step's batch does not explain: a bias's gradient is
    the sum over the batch of its unit's pre-activation grad (output grad x activation slope),
    plus the penalties' 2·alpha·b and l1·sign(b). What is left is what backward() added to a
    grad nobody zeroed: ||b.grad - fresh|| / ||b.grad|| (or / the terms' size, if larger)."""
    slope = _SLOPE_FROM_OUTPUT.get(activation)
    if slope is None or not data:
        return None
    left, total, size = [], [], []
    for j, b in enumerate(biases):
        terms = [g[j] * slope(d[j]) for d, g in zip(data, grads)]
        fresh = math.fsum(terms) + 2 * alpha * b.data + l1 * ((b.data > 0) - (b.data < 0))
        left.append(b.grad - fresh)
        total.append(b.grad)
        # the terms' size before they cancel: a balanced batch can sum to ~1e-18, all rounding
        size.append(math.fsum(abs(x) for x in terms))
    norm = max(_norm(total), _norm(size))
    return _norm(left) / norm if norm else 0.0


def _norm(xs: list[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in xs))


# ---------------------------------------------------------------- reading a model


@dataclass
class _Layer:
    """A layer whose outputs `recording` keeps: an MLP layer's `owner.attr` (its `outputs`) is
    replaced for the recording by a stand-in that notes them; a GPT block's are the input of its
    mlp_fc2 matrix (`owner`), noted by `_LinearTap` (its ReLUs' outputs)."""

    name: str
    activation: str
    fan_in: int
    owner: Any
    attr: str
    record_input: bool  # a GPT block's (fc2's input), not an MLP layer's outputs
    biases: list = field(default_factory=list)  # an MLP layer's neurons' biases
    outs: list = field(default_factory=list)
    units: int = 0  # its outputs (an MLP layer's neurons, a GPT block's ReLUs)


class _LinearTap:
    """Stands in for `micrograd.gpt.linear` during a recording: where its matrix is a block's
    mlp_fc2, notes its input (the block's ReLUs' outputs), then computes as it does. gpt.py's
    forward calls `linear` by its module-level name, so this reads the blocks from outside."""

    def __init__(self, linear: Any, taps: dict[int, list]) -> None:
        self.linear, self.taps = linear, taps  # id(fc2's matrix) -> that layer's outs

    def __call__(self, x: Any, w: Any) -> Any:
        outs = self.taps.get(id(w))
        if outs is not None:
            outs.append(list(x))
        return self.linear(x, w)


def _rows(w: Any) -> list[list[Any]]:
    return [list(r) for r in w]


class Monitor:
    """Reads a model's health once per step (see the module's docstring for the order of calls).

    An `nn.MLP`: each Layer is a layer and its neurons' weights a matrix. A `micrograd.gpt.GPT`
    (its ``sd``, microgpt's state_dict): each block's ReLU layer is a layer (read as the input
    of its mlp_fc2, through `gpt.linear`), and every matrix a matrix."""

    def __init__(self, model: Any, alpha: float = 0.0, l1: float = 0.0) -> None:
        self.model, self.alpha, self.l1 = model, alpha, l1  # the step's penalties (see stale_share)
        self.layers: list[_Layer] = []
        # (name, rows of weights, Kaiming gain; None: an embedding, a table rather than a layer)
        self.matrices: list[tuple[str, list[list[Any]], float | None]] = []
        layers = getattr(model, "layers", None)
        if layers and hasattr(layers[0], "neurons"):  # nn.MLP
            for i, layer in enumerate(layers):
                n = layer.neurons[0]
                name = f"layer {i + 1}"
                lay = _Layer(name, n.activation, len(n.w), layer, "outputs", False)
                lay.biases = [n.b for n in layer.neurons]
                lay.units = len(layer.neurons)
                self.layers.append(lay)
                gain = KAIMING_GAIN.get(n.activation, 1.0)
                self.matrices.append((name, [list(n.w) for n in layer.neurons], gain))
        elif isinstance(getattr(model, "sd", None), dict) and "wte" in model.sd:  # a GPT
            sd, relu = model.sd, KAIMING_GAIN["relu"]
            for name in ("wte", "wpe"):
                self.matrices.append((name, _rows(sd[name]), None))
            for i in range(model.n_layer):
                b, key = f"block {i + 1}", f"layer{i}."
                fc1, fc2 = sd[key + "mlp_fc1"], sd[key + "mlp_fc2"]
                lay = _Layer(f"{b} mlp", "relu", len(fc1[0]), fc2, "linear", True)
                lay.units = len(fc1)
                self.layers.append(lay)
                for part in ("wq", "wk", "wv", "wo"):
                    self.matrices.append((f"{b} attn.{part}", _rows(sd[key + "attn_" + part]), 1.0))
                self.matrices.append((f"{b} mlp.fc1", _rows(fc1), relu))
                self.matrices.append((f"{b} mlp.fc2", _rows(fc2), 1.0))
            self.matrices.append(("lm_head", _rows(sd["lm_head"]), 1.0))
        else:
            raise TypeError(f"health: Monitor reads an nn.MLP or a GPT, got {type(model).__name__}")
        self._before: list[list[float]] | None = None
        self._jitted: Any = None  # a jit step's loss, when `attach`ed
        # on a jit step, the statistics by numpy over its arrays (the same numbers to ~1e-16,
        # 20 to 100 times faster: the Health panel reads a big net within its time budget);
        # False: the plain Python ones, as on an eager step
        self.numpy_stats = True
        self._np: Any = None
        self._given: list[tuple[Any, Any]] | None = None  # (`given`)
        self._arrays: tuple[Any, Any, Any] | None = None  # (`given`: data, grads, after())
        self._stats: dict[str, Any] | None = None  # (`given_stats`)
        self._update_stds: list[float] | None = None  # (`given_stats`: each matrix's update's)
        self._idx: list[Any] = []  # each matrix's weights' places in the engine's params
        self._idx_of: int | None = None  # (the params list they were found in)
        self._kept_units: list[int] | None = None
        self._weights: list[WeightHealth] = []
        self._layers: list[LayerHealth] = []

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Keep each layer's outputs made inside the block (the step's forward and backward;
        on a jit step, the traced sample's, which `attach` makes its program keep)."""
        from .. import gpt

        taps = {}
        for lay in self.layers:
            lay.outs = []
            if lay.record_input:  # a GPT block: its fc2 matrix's input, through gpt.linear
                taps[id(lay.owner)] = lay.outs
            else:
                setattr(lay.owner, lay.attr, self._keeper(lay.owner.outputs, lay.outs))
        if taps:
            gpt.linear = _LinearTap(gpt.linear, taps)
        try:
            yield
        finally:
            if taps:
                gpt.linear = gpt.linear.linear
            for lay in self.layers:
                if not lay.record_input:
                    delattr(lay.owner, lay.attr)  # the class's method again

    @staticmethod
    def _keeper(outputs: Any, outs: list) -> Any:
        def keep(x: Any) -> Any:
            out = outputs(x)
            outs.append(out)
            return out

        return keep

    def read_grads(self) -> None:
        """After backward(), before the optimiser's step: the grads, and the data as it is."""
        if self._stats is not None:  # an engine's own statistics (`given_stats`)
            self._from_stats(self._stats)
            self._stats = None
            return
        np, arrays = self._np, self._arrays
        if arrays is not None:  # an engine's arrays (`given`): each matrix's part of them
            data_all, grads_all, _ = arrays
            self._before = [data_all[idx] for idx in self._idx]
            all_grads = [grads_all[idx] for idx in self._idx]
        else:
            self._before = [[w.data for row in m for w in row] for _, m, _ in self.matrices]
        self._weights = []
        for i, ((name, m, gain), data) in enumerate(zip(self.matrices, self._before)):
            grads = all_grads[i] if arrays is not None else [w.grad for row in m for w in row]
            shape, g = (len(m), len(m[0])), gain or math.nan
            if np is not None:
                self._weights.append(_weight_health_np(np, name, shape, g, data, grads))
            else:
                self._weights.append(weight_health(name, shape, g, data, grads))
        if self._given is not None:  # an engine's arrays (`given`)
            self._layers = [
                _layer_health_np(np, lay.name, lay.activation, lay.fan_in, v, g)
                for lay, (v, g) in zip(self.layers, self._given)
            ]
            for lay, h in zip(self.layers, self._layers):
                h.biases = not lay.record_input  # (a GPT block's ReLU layer has no biases)
            self._given = None
            for lay in self.layers:
                lay.outs = []
            return
        if np is not None and self._jitted is not None:  # a jit step: from its arrays
            self._layers = self._jit_layers()
            for lay in self.layers:
                lay.outs = []
            return
        rows = self._jit_rows() if self._jitted is not None else None
        self._layers = []
        for i, lay in enumerate(self.layers):
            if rows is not None:
                data, grads = rows[i]
            elif self._jitted is None and lay.outs:
                data = [[v.data for v in row] for row in lay.outs]
                grads = [[v.grad for v in row] for row in lay.outs]
            else:
                data = grads = None
            h = layer_health(lay.name, lay.activation, lay.fan_in, data, grads)
            h.biases = not lay.record_input  # (a GPT block's ReLU layer has no biases)
            if lay.biases and data and grads is not None:
                h.stale_grad = stale_share(
                    data, grads, lay.biases, lay.activation, self.alpha, self.l1
                )
            self._layers.append(h)
        for lay in self.layers:
            lay.outs = []  # let the graph go

    def given(
        self,
        layers: list[tuple[Any, Any]] | None,
        params: list | None = None,
        data: Any = None,
        grads: Any = None,
        after: Any = None,
    ) -> None:
        """This step as an engine holds it, in place of recorded Values (a GPT's numpy step):
        `layers`, each layer's outputs and their grads, two (units, samples) numpy arrays
        (`jit.gpt.JitGPT.relu_outputs`; None: not read); `params`, the model's parameters in the
        engine's order, `data` and `grads` its arrays of them before the optimiser's step, and
        `after()` the data after it. The next `read_grads` and `read_update` read them, by
        numpy: no second pass. (Layers without biases: no stale-grad check.)"""
        import numpy

        if layers is not None and len(layers) != len(self.layers):
            raise ValueError(
                f"health: given {len(layers)} layers, the model has {len(self.layers)}"
            )
        self._np, self._given = numpy, layers
        if params is not None:
            if self._idx_of != id(params):
                place = {id(p): i for i, p in enumerate(params)}
                self._idx = [
                    numpy.array([place[id(w)] for row in m for w in row])
                    for _, m, _ in self.matrices
                ]
                self._idx_of = id(params)
            self._arrays = (numpy.array(data, dtype=float), grads, after)

    def layout(self, params: Sequence[Any]) -> dict[str, Any]:
        """What health.js's `stepHealth` is told once per network by an engine whose arrays
        hold the model's parameters in the order of `params`: each matrix's weights' places in
        them, each layer's activation, units and biases' places (an MLP's), and the
        thresholds."""
        place = {id(p): i for i, p in enumerate(params)}
        return {
            "matrices": [[place[id(w)] for row in m for w in row] for _, m, _ in self.matrices],
            "layers": [
                {
                    "activation": lay.activation,
                    "units": lay.units,
                    "bias": [place[id(b)] for b in lay.biases] or None,
                }
                for lay in self.layers
            ],
            "saturated": SATURATED,
            "bins": BINS,
        }

    def given_stats(self, stats: dict[str, Any]) -> None:
        """This step's statistics as an engine computed them from its own arrays, in place of
        recorded Values: health.js's `stepHealth` (the JavaScript engines': the site's Python
        has no numpy), told this Monitor's `layout`. The next `read_grads` and `read_update`
        read them: no second pass. `stats`: ``{"layers": [...], "weights": [...]}``, one entry
        per layer (None: not read) and per matrix, as JSON brings them (a number that is not
        finite as its text)."""
        if len(stats["layers"]) != len(self.layers) or len(stats["weights"]) != len(self.matrices):
            raise ValueError(
                f"health: given {len(stats['layers'])} layers and {len(stats['weights'])} "
                f"matrices, the model has {len(self.layers)} and {len(self.matrices)}"
            )
        self._stats = stats

    def _from_stats(self, stats: dict[str, Any]) -> None:
        self._layers = []
        for lay, got in zip(self.layers, stats["layers"]):
            h = LayerHealth(lay.name, lay.activation, lay.fan_in, recorded=got is not None)
            h.biases = not lay.record_input  # (a GPT block's ReLU layer has no biases)
            self._layers.append(h)
            if got is None:
                continue
            h.act_mean, h.act_std = float(got["mean"]), float(got["std"])
            h.act_hist = _histogram_of(got["hist"])
            h.grad_mean, h.grad_std = float(got["grad_mean"]), float(got["grad_std"])
            h.grad_hist = _histogram_of(got["grad_hist"])
            if got["saturated"] is not None:
                h.saturated = float(got["saturated"])
            if got["dead_units"] is not None:
                h.dead_units = [bool(x) for x in got["dead_units"]]
                h.dead = sum(h.dead_units) / len(h.dead_units)
            if got["stale"] is not None:
                h.stale_grad = float(got["stale"])
        self._weights = []
        for (name, m, gain), got in zip(self.matrices, stats["weights"]):
            d, g = float(got["data_std"]), float(got["grad_std"])
            self._weights.append(
                WeightHealth(
                    name,
                    (len(m), len(m[0])),
                    gain or math.nan,
                    d,
                    float(got["grad_mean"]),
                    g,
                    g / d if d else math.nan,
                    grad_hist=_histogram_of(got["grad_hist"]),
                )
            )
        self._update_stds = [float(got["update_std"]) for got in stats["weights"]]
        self._before = []  # (read_update's: the update is the engine's)
        for lay in self.layers:
            lay.outs = []

    def attach(self, step: Any) -> None:
        """Read the layers of a micrograd.jit step (`train.jit_step.JitStep`: ``traced``) from
        its arrays: its jitted loss keeps the layers' outputs as nodes of its program, and
        `read_grads` reads their per-sample values and grads there (no Values per sample)."""
        jitted = getattr(step, "loss_fn", None)
        if getattr(step, "traced", False) and hasattr(jitted, "keep"):
            self._jitted = jitted
            jitted.keep = self._traced_outputs
            if self.numpy_stats:  # (the jit's own numpy: every statistic over its arrays)
                import numpy

                self._np = numpy

    def _traced_outputs(self) -> list[Any]:
        # called while the jitted loss traces (inside `recording`): each layer's latest outputs,
        # the traced sample's, are the nodes to keep (jit keeps none if they are not its nodes);
        # how many per layer, to split them again
        if not all(lay.outs for lay in self.layers):
            self._kept_units = None
            return []
        self._kept_units = [len(lay.outs[-1]) for lay in self.layers]
        return [v for lay in self.layers for v in lay.outs[-1]]

    def _jit_rows(self) -> list[tuple[list, list]] | None:
        kept = self._jitted.kept() if self._jitted is not None else None
        units = self._kept_units
        if kept is None or units is None or len(kept[0]) != sum(units):
            return None
        values, grads = kept
        out, at = [], 0
        for n in units:  # (units, B) -> one row per sample
            out.append((values[at : at + n].T.tolist(), grads[at : at + n].T.tolist()))
            at += n
        return out

    def _jit_layers(self) -> list[LayerHealth]:
        """Each layer's health from the jit's arrays (`Jitted.kept`: units x batch), by numpy."""
        np = self._np
        kept = self._jitted.kept()
        units = self._kept_units
        if kept is None or units is None or len(kept[0]) != sum(units):
            return [
                LayerHealth(lay.name, lay.activation, lay.fan_in, recorded=False)
                for lay in self.layers
            ]
        values, grads = kept
        out, at = [], 0
        for lay, n in zip(self.layers, units):
            v, g = values[at : at + n], grads[at : at + n]
            at += n
            h = _layer_health_np(np, lay.name, lay.activation, lay.fan_in, v, g)
            if lay.biases:
                h.stale_grad = _stale_share_np(
                    np, v, g, lay.biases, lay.activation, self.alpha, self.l1
                )
            out.append(h)
        return out

    def read_update(self, step: int) -> StepHealth:
        """After the optimiser's step: the update:data ratios; the step's whole health."""
        if self._before is None:
            raise RuntimeError("health: read_update before read_grads (call it after backward)")
        if self._update_stds is not None:  # (`given_stats`)
            for h, u in zip(self._weights, self._update_stds):
                h.update_data = log10_ratio(u, h.data_std)
            self._before = self._update_stds = None
            return StepHealth(step, self._layers, self._weights)
        np, arrays = self._np, self._arrays
        if arrays is not None:
            after_all = arrays[2]()
            for h, idx, before in zip(self._weights, self._idx, self._before):
                h.update_data = log10_ratio(float(np.std(after_all[idx] - before)), h.data_std)
            self._before = self._arrays = None
            return StepHealth(step, self._layers, self._weights)
        for h, (_, m, _), before in zip(self._weights, self.matrices, self._before):
            if np is not None:
                after = np.array([w.data for row in m for w in row])
                h.update_data = log10_ratio(float(np.std(after - np.array(before))), h.data_std)
                continue
            update = [w.data - b for w, b in zip((w for row in m for w in row), before)]
            h.update_data = log10_ratio(std(update), h.data_std)
        self._before = None
        return StepHealth(step, self._layers, self._weights)


def _histogram_of(got: dict[str, Any]) -> Histogram | None:
    """A histogram as health.js gives it: its range and counts (None: a value not finite)."""
    counts = got["counts"]
    if counts is None:
        return None
    return Histogram(_edges(float(got["lo"]), float(got["hi"]), len(counts)), counts)


# ---------------------------------------------------------------- the same, by numpy (a jit step)


def _histogram_np(np: Any, xs: Any, bins: int = BINS) -> Histogram:
    counts, edges = np.histogram(xs, bins)
    return Histogram(edges.tolist(), counts.tolist())


def _weight_health_np(
    np: Any, name: str, shape: tuple[int, int], gain: float, data: list, grads: list
) -> WeightHealth:
    d_arr, g_arr = np.array(data), np.array(grads)
    d, g = float(np.std(d_arr)), float(np.std(g_arr))
    ratio = g / d if d else math.nan
    h = WeightHealth(name, shape, gain, d, float(np.mean(g_arr)), g, ratio)
    h.grad_hist = _histogram_np(np, g_arr)
    return h


def _layer_health_np(
    np: Any, name: str, activation: str, fan_in: int, values: Any, grads: Any
) -> LayerHealth:
    """`layer_health` over a jit's arrays: `values`, `grads` are units x batch."""
    if values.size == 0:
        return LayerHealth(name, activation, fan_in, recorded=False)
    h = LayerHealth(name, activation, fan_in, recorded=True)
    flat, flat_grads = values.T.ravel(), grads.T.ravel()  # (the samples' rows, one after another)
    h.act_mean, h.act_std = float(np.mean(flat)), float(np.std(flat))
    h.act_hist = _histogram_np(np, flat)
    h.grad_mean, h.grad_std = float(np.mean(flat_grads)), float(np.std(flat_grads))
    h.grad_hist = _histogram_np(np, flat_grads)
    if activation == "tanh":
        h.saturated = int(np.count_nonzero(np.abs(flat) > SATURATED)) / flat.size
    if activation == "relu":
        h.dead_units = [bool(x) for x in (values == 0).all(axis=1)]
        h.dead = sum(h.dead_units) / len(h.dead_units)
    return h


def _stale_share_np(
    np: Any,
    values: Any,
    grads: Any,
    biases: Sequence[Any],
    activation: str,
    alpha: float,
    l1: float,
) -> float | None:
    """`stale_share` over a jit's arrays (units x batch)."""
    if activation == "relu":
        slope = (values > 0).astype(float)
    elif activation in ("tanh", "sigmoid"):  # the engine's rule, on the output alone
        slope = OPS[activation].local(np, values, np.full_like(values, math.nan))[0]
    elif activation == "linear":
        slope = np.ones_like(values)
    else:
        return None
    terms = grads * slope
    b = np.array([x.data for x in biases])
    fresh = terms.sum(axis=1) + 2 * alpha * b + l1 * np.sign(b)
    total = np.array([x.grad for x in biases])
    size = np.abs(terms).sum(axis=1)
    norm = max(float(np.linalg.norm(total)), float(np.linalg.norm(size)))
    return float(np.linalg.norm(total - fresh)) / norm if norm else 0.0
