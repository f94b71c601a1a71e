"""`MLPKind`: the Train view's model kind for an `MLP` on a data set of points.

    mlp = MLPKind(Settings(dataset="moons", hidden=(8, 8)), "numpy")
    results = mlp.train(0.02, lambda: True)   # [(loss, accuracy), ...]: one step, or many
    mlp.meta(); mlp.frame(playing=False)      # what the page draws (train_frames.py makes it)

It holds the data (a `micrograd.data` set plus the points the learner clicked in), an `MLP`
built from a seed (Reset rebuilds the same initial weights, New weights draws a new seed), a
loss from `micrograd.losses`, an optimizer from `micrograd.optim`, and the engine it trains and
draws with (engines.py: eager, numpy's jit, JavaScript). It answers the model-kind interface a
`Trainer` runs (train_kinds.py), and the Train view's own edits: points, the chosen point, a
weight set by hand, what the page shows.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from ... import data, io, optim
from ...nn import MLP
from ...train.health_presets import apply_init
from . import train_frames
from .engines import ENGINES, Engine, Results
from .train_data import extent, featurize, make_data, split
from .train_frames import KEEP, Frame, neuron_box
from .train_graph import layout, point_graph
from .train_health import HealthTap
from .train_kinds import Shown
from .train_settings import (
    LABELS,
    LIVE_SETTINGS,
    Settings,
    check_added,
    check_flag,
    check_index,
    check_real,
    targets,
)

_RANDOM_LOCK = threading.Lock()  # MLP draws from the global `random`: one build at a time


class MLPKind:
    """An MLP on points (see the module docstring). `engine_name` is a key of `ENGINES`."""

    name = "mlp"
    LIVE = LIVE_SETTINGS  # settings that apply to the running model
    LABELS = LABELS  # each setting's control on the page, for what a change says

    def __init__(self, settings: Settings, engine_name: str) -> None:
        self.engine_name = engine_name
        self.config_id = 0  # the page's data and network: a new one at each change
        self.pick = 0  # the chosen point (its graph is shown)
        self.shown = Shown()
        # the point's graph's last numbers: (made at, seconds it took, for what, the numbers)
        self.graph_kept: tuple | None = None
        self.health = HealthTap()  # the Health panel's reads (train_health.py)
        self.init: dict = {}  # a Health preset's init (health_presets.apply_init's arguments)
        self.rebuild(settings)

    # ---- the model-kind interface (train_kinds.ModelKind)
    def rebuild(self, settings: Settings) -> None:
        """New data and a new model from `settings` (the same seed: the same initial weights)."""
        self.settings = s = settings
        self.X, self.labels = make_data(s)
        self.inputs = featurize(s, self.X)  # what the network sees of each point
        self.train_idx, self.test_idx = split(s, len(self.X))
        self.extent = extent(self.X)
        self.pick = min(self.pick, len(self.X) - 1)
        self.config_id += 1
        with _RANDOM_LOCK:  # seeded like karpathy's demo, without disturbing anyone's random
            state = random.getstate()
            random.seed(s.seed)
            try:
                self.model = MLP(s.nin, [*s.hidden, s.outputs], activation=s.activation)
                if self.init:  # (Kaiming's init draws from the same seeded random)
                    apply_init(self.model, **self.init)
            finally:
                random.setstate(state)
        self.params = self.model.parameters()
        if s.optimizer == "adam":
            self.opt: optim.Optimizer = optim.Adam(self.params, lr=s.lr)
        else:
            self.opt = optim.SGD(self.params, lr=s.lr, momentum=s.momentum)
        self.T = targets(s.loss, self.labels, s.classes)
        self._batches = self._batch_iterator()
        self.shown = replace(self.shown, neuron=None, read=None)  # the old network's
        # A neuron's heat map is drawn in its square on the page: as many cells a side as the
        # square has pixels. One step object, whichever engine (engines.py).
        self.box = neuron_box([s.nin, *s.hidden, s.outputs])
        self.engine: Engine = ENGINES[self.engine_name](self)
        self.grid_side, self.heat_side = self.engine.grid_side, self.engine.heat_side
        self.health.rebuilt(
            self.model,
            self.engine.step_fn,
            lambda: (self.settings.l2, self.settings.l1),
        )
        self._layout_graph()

    def live(self, settings: Settings) -> None:
        """Settings of `LIVE` changed: the rate, momentum, L2, batches apply to the model as is."""
        self.settings = settings
        self.engine.live()
        self._batches = self._batch_iterator()

    def train(self, seconds: float, playing: Callable[[], bool]) -> Results:
        """One step; an engine that runs elsewhere (JavaScript) as many as fit in `seconds`."""
        return self.engine.train(seconds, self.next_batch, playing)

    def weights_finite(self) -> bool:
        return self.engine.weights_finite()

    def frame_seconds(self, fps: float) -> float:
        seconds = self.health.period = self.engine.frame_seconds(fps)  # health: read as often
        return seconds

    def meta(self) -> Frame:
        return train_frames.meta(self)

    def frame(self, playing: bool) -> Frame:
        return {**train_frames.frame(self, playing), "health": self.health.frame()}

    def model_json(self) -> str:
        """The model as `micrograd.io.save` writes it (so `micrograd.io.load` reads it back)."""
        self.engine.sync()
        return io.dumps(self.model, "the model")

    # ---- the data and the steps' batches
    @property
    def grid(self) -> list[list[float]]:
        """The network's inputs at each cell of the plot, row by row from the top."""
        return self.grid_of(self.grid_side)

    def grid_of(self, side: int) -> list[list[float]]:
        """The network's inputs at the centres of a side x side grid over the plot; row 0 is the
        top of the picture (largest y), as a canvas counts rows."""
        s = self.settings
        x0, x1, y0, y1 = self.extent
        return featurize(
            s,
            [
                [x0 + (x1 - x0) * (i + 0.5) / side, y1 - (y1 - y0) * (r + 0.5) / side]
                + [0.0] * (s.dims - 2)
                for r in range(side)
                for i in range(side)
            ],
        )

    def _batch_iterator(self) -> Iterator | None:
        """Minibatches of the settings' size (seeded) from the training points, or None for all
        of them every step."""
        idx, s = self.train_idx, self.settings
        self._pending: list[list[int]] = []  # batches drawn and not trained on (put_back)
        if s.batch and s.batch < len(idx):
            return data.batches(idx, idx, s.batch, seed=s.seed)
        return None

    def next_batch(self) -> list[int] | None:
        """The next step's points: None for every point (no test data held out), else indices."""
        if self._batches is not None:
            if self._pending:
                return self._pending.pop(0)
            return next(self._batches)[0]
        return self.train_idx if self.test_idx else None

    def full_batch(self) -> bool:
        """Does every step train on all the training points (no minibatches)?"""
        return self._batches is None

    def put_back(self, batches: list[list[int]]) -> None:
        """Minibatches drawn for steps that were not taken: the next steps take them."""
        self._pending[:0] = batches

    def test_metrics(self) -> tuple[float, float | None] | None:
        """(loss, accuracy) on the held-out test points, by the model as it is now (a forward
        pass only); None when no points are held out. The accuracy is None on a regression."""
        return self.engine.test_metrics(self.test_idx) if self.test_idx else None

    def _layout_graph(self) -> None:
        self.engine.sync()
        try:
            _, nodes, _ = point_graph(
                self.model, self.inputs[self.pick], self.T[self.pick], self.settings.loss
            )
        except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights
            nodes = []
        self.graph_nodes = nodes
        self.graph_layout = layout(nodes)

    # ---- the Train view's edits
    def set_points(self, added: Sequence) -> None:
        """Replace the learner's points; training goes on from the current weights."""
        s = self.settings
        pts = check_added(added, s.classes, s.dims)
        self.settings = s = replace(s, added=pts)
        self.X, self.labels = make_data(s)
        self.inputs = featurize(s, self.X)
        self.T = targets(s.loss, self.labels, s.classes)
        self.train_idx, self.test_idx = split(s, len(self.X))
        self._batches = self._batch_iterator()
        self.engine.data_changed()
        self.choose(min(self.pick, len(self.X) - 1))

    def choose(self, index: object) -> None:
        """Show the graph of point `index`."""
        self.pick = check_index(index, len(self.X))
        self._layout_graph()
        self.config_id += 1

    def parameter(self, layer: object, neuron: object, inp: object) -> tuple[int, int, int | None]:
        """Where a parameter sits, checked: `layer` counts the model's layers from 0, `neuron`
        that layer's neurons, `inp` the neuron's inputs (None: its bias)."""
        layers = self.model.layers
        li = check_index(layer, len(layers), "layer")
        ni = check_index(neuron, len(layers[li].neurons), "neuron")
        ii = None if inp is None else check_index(inp, len(layers[li].neurons[ni].w), "input")
        return li, ni, ii

    def set_weight(self, layer: object, neuron: object, inp: object, value: object) -> None:
        """The learner edits one weight (a link on the page), or a bias (`inp` None)."""
        li, ni, ii = self.parameter(layer, neuron, inp)
        n = self.model.layers[li].neurons[ni]
        self.engine.sync()
        (n.b if ii is None else n.w[ii]).data = check_real(
            "weight" if ii is not None else "bias", value, -1e3, 1e3
        )
        self.engine.params_changed()

    def view(
        self, grads: object = KEEP, graph: object = KEEP, neuron: object = KEEP, read: object = KEEP
    ) -> None:
        """What the page shows (arguments left out keep theirs): see `Trainer.view`. Checked
        without the run's lock: a hover answers at once, not after the turn under way (a network
        rebuilt meanwhile forgets it, and `read` then finds nothing)."""
        shown = self.shown
        if grads is not KEEP:
            shown = replace(shown, grads=check_flag("grads", grads))
        if graph is not KEEP:
            shown = replace(shown, graph=check_flag("graph", graph))
        if neuron is not KEEP and neuron is not None:
            hidden = sum(self.settings.hidden)
            if not hidden:
                raise ValueError("this network has no hidden neuron to show")
            shown = replace(shown, neuron=check_index(neuron, hidden, "hidden neuron"))
        elif neuron is None:
            shown = replace(shown, neuron=None)
        if read is not KEEP and read is not None:
            if not isinstance(read, (list, tuple)) or len(read) != 3:
                raise ValueError(
                    f"read takes [layer, neuron, input] (input null: the bias), "
                    f"got {str(read)[:60]}"
                )
            shown = replace(shown, read=self.parameter(*read))
        elif read is None:
            shown = replace(shown, read=None)
        self.shown = shown  # one assignment: a frame being made sees the old or the new
