"""`Trainer`: one tab's training run, advanced by whoever runs it.

    tr = Trainer(Settings(dataset="moons", hidden=(8, 8)))
    tr.step()                 # one optimisation step, as the page's Step button
    f = tr.frame()            # what the page draws: step, loss, accuracy, decision grid, ...
    tr.play()
    while ...: tr.advance(0.02)   # train for up to 20 ms; publishes a frame when one is due
    tr.pause()

It holds the data (a `micrograd.data` set plus the points the learner clicked in), an `MLP`
built from a seed (Reset rebuilds the same initial weights, New weights draws a new seed), a
loss from `micrograd.losses` and an optimizer from `micrograd.optim`. Each step is the training
library's (`micrograd.train.Step`): the batch loss as one `Value`, by `micrograd.jit` replaying
the per-sample loss over the batch with numpy when numpy is there (`train.jit_step.JitStep`), else
by the eager engine, one graph per point. Play only marks the run as
playing: it trains when its transport calls `advance` (the server's and the kernel's runner
thread, the static site's timer), never on a thread of its own, so the same object runs under a
web server, in a notebook and in a browser's Web Worker. Frames are published at most `fps`
times a second; a `FrameCursor` reads them, each reader getting the curve it has not had.
`point_payload` and `point_root` carry the chosen point's graph to the explorer, as JSON.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import data, io, optim
from ..engine import Value, topological_order
from ..jit.tracing import TraceError
from ..losses import LOSSES
from ..nn import MLP
from . import train_frames
from .engines import ENGINES
from .train_data import extent, featurize, make_data, split
from .train_frames import LossCurve, neuron_box, short
from .train_graph import layout, point_graph, through_network
from .train_settings import (
    HISTORY_CAP,
    LABELS,
    LIVE_SETTINGS,
    Settings,
    check_added,
    check_flag,
    check_index,
    check_real,
    numpy_available,
    targets,
)

# ------------------------------------------------------------------ the trainer

_RANDOM_LOCK = threading.Lock()  # MLP draws from the global `random`: one build at a time
KEEP: Any = object()  # an argument of `Trainer.view` left out


@dataclass
class Shown:
    """What the page shows, so that a frame holds that and no more (see `Trainer.view`)."""

    grads: bool = False  # the links draw ∂L/∂w (else only the weights)
    graph: bool = True  # the chosen point's graph is on screen: its numbers, every frame
    neuron: int | None = None  # the hidden neuron the big plot shows (counted over all layers)
    read: tuple[int, int, int | None] | None = None  # (layer, neuron, input or None: the bias)


class Trainer:
    """One tab's training run: `step`, `play`/`pause`, `reset`, `new_weights`, points, frames.

    `use_jit` picks the engine it trains with (engines.py): True or None, numpy's
    `micrograd.jit` when numpy is importable (else the eager engine); False, the eager engine;
    or an engine's name ("eager", "numpy", "javascript"). `fps` bounds how often a playing
    trainer publishes a frame.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        use_jit: bool | str | None = None,
        fps: float = 20.0,
    ) -> None:
        if isinstance(use_jit, str):
            if use_jit not in ENGINES:
                raise ValueError(
                    f"unknown engine {use_jit!r}; the engines are {', '.join(ENGINES)}"
                )
            self.engine_name = use_jit
        else:
            self.engine_name = "numpy" if use_jit is not False and numpy_available() else "eager"
        self.use_jit = self.engine_name != "eager"  # (read by tests and older callers)
        self.fps = fps
        # The model, data and counters: a transport may advance the run on one thread while it
        # answers the page on another.
        self.lock = threading.RLock()
        self._playing = False
        # (frame, its number, the curve's id and buckets then): one tuple, so that a reader on
        # another thread sees them together without waiting for the lock
        self._published: tuple[dict[str, Any] | None, int, int, list] = (None, 0, 0, [])
        self._next_frame = 0.0  # when a playing run publishes its next frame (monotonic time)
        self._next_step = 0.0  # when a slowed-down run takes its next step
        self.config_id = 0
        self.closed = False
        self.speed: float | None = None  # steps per second while playing; None: flat out
        self.clock = time.monotonic  # what `advance` measures time by
        self.frame_cost = 0.0  # seconds a frame takes to make (a moving average)
        # the point's graph's last numbers: (made at, seconds it took, for what, the numbers)
        self.graph_kept: tuple | None = None
        self.shown = Shown()
        self._stale = False  # trained since the last frame
        self._meta: dict[str, Any] = {}
        self._meta_key: tuple = ()
        self.configure(settings or Settings())

    # ---- setting up
    def configure(self, settings: Settings, restart: bool = False) -> None:
        """Apply `settings`: the learning rate, momentum, L2 and batch size to the running model
        (a learner who sees the loss oscillate lowers the rate and watches it settle); anything
        that changes the model's shape or its data starts over (the same seed gives the same
        initial weights). The same settings again (the page reloaded, or Back from the explorer)
        keep the run as it is, unless `restart`. `change` says what happened, for the page."""
        old = getattr(self, "settings", None)
        changed = [
            k
            for k in settings.to_dict()
            if old is None or settings.to_dict()[k] != old.to_dict()[k]
        ]
        if old is not None and not changed and not restart:
            with self.lock:
                self._publish()  # the run goes on; the page gets a frame to draw
            return
        self.change = ""
        if old is not None and changed and set(changed) <= LIVE_SETTINGS:
            with self.lock:
                self.settings = settings
                self.engine.live()
                self._batches = self._batch_iterator()
                names = ", ".join(LABELS[k] for k in changed)
                self.change = f"{names}: applied to the running model, at step {self.step_no}"
                self._publish()
            return
        if old is not None and changed:
            names = ", ".join(LABELS.get(k, k) for k in changed)
            self.change = f"{names}: a new model or new data, so training started over"
        with self.lock:  # a playing run plays on, from step 0
            self.settings = settings
            self.X, self.labels = make_data(settings)
            self.inputs = featurize(settings, self.X)  # what the network sees of each point
            self.train_idx, self.test_idx = split(settings, len(self.X))
            self.extent = extent(self.X)
            self.pick = min(getattr(self, "pick", 0), len(self.X) - 1)
            self.config_id += 1
            self._build()
            self._publish()

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
        self.T = targets(s.loss, self.labels, s.classes)
        self._batches = self._batch_iterator()
        self.step_no = 0
        self.shown = replace(self.shown, neuron=None, read=None)  # the old network's
        self.loss = math.nan
        self.accuracy: float | None = None
        self.curve = LossCurve(HISTORY_CAP)
        self.history_id = getattr(self, "history_id", 0) + 1
        self.error: str | None = None
        # One step object, whichever engine (engines.py): the batch loss, alpha·Σw² and
        # λ·Σ|w|, the grads zeroed, backward, the update; the accuracy is the view's own, on
        # every training point at once (a minibatch's would jump about). A neuron's heat map is
        # drawn in its square on the page: as many cells a side as the square has pixels.
        self.box = neuron_box([s.nin, *s.hidden, s.outputs])
        self.engine = ENGINES[self.engine_name](self)
        self.grid_side, self.heat_side = self.engine.grid_side, self.engine.heat_side
        self._layout_graph()

    @property
    def grid(self) -> list[list[float]]:
        """The network's inputs at each cell of the plot, row by row from the top."""
        return self._grid(self.grid_side)

    def _grid(self, side: int) -> list[list[float]]:
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

    def _layout_graph(self) -> None:
        if hasattr(self, "engine"):
            self.engine.sync()
        x = self.inputs[self.pick]
        try:
            _, nodes, _ = point_graph(self.model, x, self.T[self.pick], self.settings.loss)
        except (ValueError, OverflowError, ZeroDivisionError):  # diverged weights
            nodes = []
        self.graph_nodes = nodes
        self.graph_layout = layout(nodes)

    # ---- training
    def _batch(self) -> list[int] | None:
        """This step's points: None for every point (no test data held out), else indices."""
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

    def _step(self, seconds: float = 0.0) -> None:
        """One step; an engine that runs elsewhere (JavaScript) takes as many as fit in
        `seconds`, in one call. Caller holds the lock."""
        self._steps(lambda: self.engine.train(seconds, self._batch, lambda: self._playing))

    def _steps(self, run: Callable[[], list]) -> None:
        """Steps by `run()` (the engine's: each a batch loss + L2, the accuracy on all points
        before the update, backward, update), each recorded. Caller holds the lock."""
        if self.error:
            return
        try:
            results = run()
        except TraceError as e:  # jit could not compile the step: a bug of ours, not the rate's
            self._diverged(f"step {self.step_no + 1}: micrograd.jit failed ({e})")
            return
        except OverflowError as e:  # a number grew past a float: the weights diverged
            self._diverged(
                f"step {self.step_no + 1} failed ({e}): training diverged; lower the Learning "
                "rate and press Reset"
            )
            return
        except (ValueError, ZeroDivisionError) as e:  # the maths had no answer: say which
            self._diverged(f"step {self.step_no + 1} failed: {type(e).__name__}: {e}")
            return
        for total, acc in results:
            self.loss, self.accuracy = total, acc
            merges = self.curve.merges
            self.curve.add(self.step_no, short(total), acc)
            self.step_no += 1
            if self.curve.merges != merges:
                self.history_id += 1  # readers start the curve over, with the wider buckets
            self._stale = True
            if not math.isfinite(total):
                break
        if not math.isfinite(total) or not self.engine.weights_finite():
            self._diverged(
                f"the loss became {total} at step {self.step_no}: training diverged; "
                "lower the Learning rate and press Reset"
            )

    def _diverged(self, why: str) -> None:
        self.error = why
        self._playing = False

    def test_metrics(self) -> tuple[float, float | None] | None:
        """(loss, accuracy) on the held-out test points, by the model as it is now (no training
        on them: a forward pass only); None when no points are held out. The accuracy is None on
        a regression. Caller holds the lock."""
        idx = self.test_idx
        if not idx:
            return None
        return self.engine.test_metrics(idx)

    def step(self, n: int = 1) -> None:
        """`n` steps now (pausing a run first), then a frame."""
        with self.lock:
            self._playing = False
            for _ in range(n):
                self._step()
            self._publish()

    @property
    def history(self) -> list[tuple[int, float | None, float | None, float]]:
        """The curve so far: ``(first step, lowest loss, highest loss, accuracy)`` per bucket."""
        return list(self.curve.buckets)

    # ---- playing
    @property
    def playing(self) -> bool:
        return self._playing

    def play(self) -> None:
        """Mark the run as playing: its transport's `advance` calls now train it."""
        with self.lock:
            if self.error or self.closed:
                return
            if not self._playing:
                self._playing = True
                now = self.clock()
                self._next_step = now
                self._next_frame = now + self.frame_seconds
                self._publish()  # a frame that says it plays, at once

    def pause(self) -> None:
        """Stop playing: a turn under way ends after the step it is in (it checks between
        steps), so Pause waits for one step at most, not for the turn; then the frame of the run
        as it stopped."""
        self._playing = False
        with self.lock:
            frame = self._published[0]
            if self._stale or frame is None or frame["playing"]:
                self._publish()

    @property
    def frame_seconds(self) -> float:
        """How often a playing run publishes a frame: `fps`, or every half second eagerly
        (without numpy a frame's grid is one scalar forward pass per cell)."""
        return self.engine.frame_seconds(self.fps)

    def advance(self, budget: float, apart: bool = False) -> bool:
        """Train while playing, for at most `budget` seconds (at least one step unless a slowed
        run's next step is not due yet), then publish a frame if one is due. Returns whether a
        frame was published. A transport calls this again and again; between calls the page's
        requests get the lock. `apart`: a turn either trains (until the next frame is due) or
        publishes that frame, never both: a transport with one thread (the site's worker)
        answers the page between the two, so Pause waits for one or the other, not their sum."""
        with self.lock:
            if not self._playing:
                return False
            now = self.clock()
            if apart and now >= self._next_frame and self._stale:  # (never two in a row)
                self._publish_due(now)
                return True
            end = now + budget
            # A frame that falls due during the turn ends it (frames come on time); one already
            # due when it began does not (many runs at once: each turn trains, then shows)
            frame_at = self._next_frame if self._next_frame > now else end
            while self._playing:
                if self.speed:
                    if now < self._next_step:
                        break
                    # the next step one interval on (no burst of steps after a busy moment)
                    self._next_step = max(self._next_step + 1.0 / self.speed, now)
                    self._step()
                else:  # flat out: until the frame or the turn's end
                    self._step(min(end, frame_at) - now)
                now = self.clock()
                if now >= end or now >= frame_at:
                    break
            if not self._playing or (now >= self._next_frame and not apart):  # (diverged: now)
                self._publish_due(now)
                return True
            return False

    def _publish_due(self, now: float) -> None:
        self._publish()
        # Frames on a clock of fps a second (the next one period after the one due, not after
        # now: the step that ran past the due time does not slow the clock), and steps get as
        # much time as frames at least; a run that fell behind (a busy moment) is not caught up
        # with a burst of frames
        period = max(self.frame_seconds, 2 * self.frame_cost)
        self._next_frame = max(self._next_frame + period, now + period / 2)

    def due_in(self) -> float:
        """Seconds until a playing run has work (0: now); infinity when it is paused. A
        transport with nothing due sleeps this long rather than spin."""
        if not self._playing:
            return math.inf
        if not self.speed:
            return 0.0
        return max(0.0, self._next_step - self.clock())

    def set_speed(self, speed: object) -> None:
        """Steps per second while playing ("max" or None: as fast as it goes)."""
        if speed in (None, "max"):
            self.speed = None
            return
        self.speed = check_real("speed", speed, 0.0, 1000.0, low_open=True)

    def reset(self) -> None:
        """Back to step 0 with the same initial weights (and the same batches)."""
        self.configure(self.settings, restart=True)

    def new_weights(self) -> None:
        """Back to step 0 with a new seed (so new initial weights)."""
        self.configure(replace(self.settings, seed=random.SystemRandom().randrange(2**31)))

    def set_points(self, added: Sequence) -> None:
        """Replace the learner's points; training goes on from the current weights."""
        s = self.settings
        pts = check_added(added, s.classes, s.dims)
        with self.lock:
            self.settings = replace(s, added=pts)
            self.X, self.labels = make_data(self.settings)
            self.inputs = featurize(self.settings, self.X)
            self.T = targets(s.loss, self.labels, s.classes)
            n = len(self.X)
            self.train_idx, self.test_idx = split(self.settings, n)
            self._batches = self._batch_iterator()
            self.engine.data_changed()
            self.pick = min(self.pick, n - 1)
            self.config_id += 1
            self._layout_graph()
            self._publish()

    def choose(self, index: object) -> None:
        """Show the graph of point `index`."""
        with self.lock:
            self.pick = check_index(index, len(self.X))
            self._layout_graph()
            self.config_id += 1
            self._publish()

    def parameter(self, layer: object, neuron: object, inp: object) -> tuple[int, int, int | None]:
        """Where a parameter sits, checked: `layer` counts the model's layers from 0, `neuron`
        that layer's neurons, `inp` the neuron's inputs (None: its bias)."""
        layers = self.model.layers
        li = check_index(layer, len(layers), "layer")
        ni = check_index(neuron, len(layers[li].neurons), "neuron")
        ii = None if inp is None else check_index(inp, len(layers[li].neurons[ni].w), "input")
        return li, ni, ii

    def set_weight(self, layer: object, neuron: object, inp: object, value: object) -> None:
        """The learner edits one weight (a link on the page), or a bias (`inp` None: a neuron's
        small square): training goes on from there. `value` is the new number."""
        with self.lock:
            li, ni, ii = self.parameter(layer, neuron, inp)
            n = self.model.layers[li].neurons[ni]
            self.engine.sync()
            (n.b if ii is None else n.w[ii]).data = check_real(
                "weight" if ii is not None else "bias", value, -1e3, 1e3
            )
            self.engine.params_changed()
            self._publish()

    def view(
        self, grads: object = KEEP, graph: object = KEEP, neuron: object = KEEP, read: object = KEEP
    ) -> None:
        """What the page shows, so that frames hold that and no more (arguments left out keep
        theirs): `grads`, the links draw ∂L/∂w; `graph`, the chosen point's graph is on screen;
        `neuron`, the hidden neuron (counted over all hidden layers) on the big plot, or None;
        `read`, the parameter whose exact numbers each frame carries ([layer, neuron, input],
        input None for the bias), or None. A paused run publishes a frame with them at once."""
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
            # checked without the lock: a hover answers at once, not after the turn under way
            # (a network rebuilt meanwhile forgets it, and `read` then finds nothing)
            shown = replace(shown, read=self.parameter(*read))
        elif read is None:
            shown = replace(shown, read=None)
        self.shown = shown  # one assignment: a frame being made sees the old or the new
        if not self._playing:  # a playing run's next frame has it
            with self.lock:
                self._publish()

    # ---- what the page draws (train_frames makes it)
    def meta(self) -> dict[str, Any]:
        """What changes only with the settings: the data, the plot's extent, the graph layout
        (made when they change, so reading it never waits for a step)."""
        return self._meta

    def frame(self) -> dict[str, Any]:
        """The current picture: step, loss, accuracy, regions, heat maps, weights, graph."""
        return train_frames.frame(self)

    def _publish(self) -> None:
        key = (self.config_id, id(self.settings), self.change)
        if key != self._meta_key:  # the settings changed since: their meta first
            self._meta, self._meta_key = train_frames.meta(self), key
        start = time.perf_counter()
        self._stale = False
        f = self.frame()
        # what a frame costs (a moving average): a runner gives each run at least as much time
        # for steps, so that frames never take all of it
        self.frame_cost = 0.7 * self.frame_cost + 0.3 * (time.perf_counter() - start)
        no = self._published[1] + 1
        f["seq"] = no  # the page drops a frame older than one it has drawn
        self._published = (f, no, self.history_id, list(self.curve.buckets))

    def published(self) -> tuple[dict[str, Any] | None, int]:
        """The newest frame and its number (a reader compares numbers to see what is new)."""
        return self._published[:2]

    def model_json(self) -> str:
        """The model as `micrograd.io.save` writes it (so `micrograd.io.load` reads it back)."""
        with self.lock:
            self.engine.sync()
            return io.dumps(self.model, "the model")

    def latest(self) -> dict[str, Any]:
        """The last published frame."""
        frame = self._published[0]
        if frame is None:  # not yet: configure() publishes one before anyone can ask
            with self.lock:
                self._publish()
            return self.latest()
        return frame

    def close(self) -> None:
        """The tab is gone: stop training for good."""
        with self.lock:
            self.closed = True
            self._playing = False


# The parts of a frame a reader is sent only when they changed since the frame it had: the big
# ones, which a paused run, a slow one or a settled one often keeps (the rest are a few numbers).
PARTS = ("grid", "heat_scale", "shown", "links", "grads", "grad_max", "graph")


class FrameCursor:
    """One reader of a trainer's frames: `next()` is the newest frame it has not had (frames
    published in between are skipped: a slow reader never falls behind), with the part of the
    loss curve it has not had yet, or None when nothing is new.

    Only what changed is sent: a part of `PARTS` equal to the one this reader last had is left
    out, and so is each heat map that did not change (None in ``heat``). The first frame, and
    the first after `restart()`, is whole (``"full": True``); a reader keeps the parts it had."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer
        self.last: int | None = None  # the number of the last frame handed out
        self.sent = 0  # curve buckets handed out
        self.history_id: int | None = None
        self._had: dict[str, Any] | None = None  # the parts this reader has (None: nothing)

    def restart(self) -> None:
        """The reader lost what it had (a page that has just opened): send everything again."""
        self._had = None
        self.last = None
        self.history_id = None

    def next(self) -> dict[str, Any] | None:
        # the frame and the curve as they were published: never waits for a step under way
        frame, no, hid, hist = self.trainer._published
        if frame is None or no == self.last:
            return None
        self.last = no
        out = dict(frame)
        had = self._had
        out["full"] = had is None
        if had is not None:
            for k in PARTS:
                if k in had and had[k] == frame.get(k):
                    del out[k]
            old = had["heat"]
            if len(old) == len(frame["heat"]):
                out["heat"] = [None if h == o else h for h, o in zip(frame["heat"], old)]
        self._had = {k: frame.get(k) for k in (*PARTS, "heat")}
        if hid != self.history_id:
            self.sent, self.history_id = 0, hid
            out["history_reset"] = True
        # from the last bucket sent on: it may have grown since (the page replaces it)
        out["history"] = hist[max(self.sent - 1, 0) :]
        self.sent = len(hist)
        return out


# ------------------------------------------------------------------ the chosen point, as JSON


def point_payload(tr: Trainer) -> dict[str, Any]:
    """The Train view's chosen point as the explorer takes it: the network as it is now (the
    model file's JSON: exact, floats round-trip), the point's inputs and target, the loss and
    the inputs' names; and, when the point's loss is 0, the nearest point whose loss is not
    (`nearest`: its index, point, inputs, target and loss), for the explorer to offer. ValueError
    if the weights diverged (JSON cannot hold them)."""
    import json

    with tr.lock:
        tr.engine.sync()
        i, s = tr.pick, tr.settings
        names = list(s.features) if s.dims == 2 else [f"x{k}" for k in range(1, s.dims + 1)]
        return {
            "model": json.loads(io.dumps(tr.model)),
            "index": i,
            "point": list(tr.X[i]),
            "x": list(tr.inputs[i]),
            "target": tr.T[i],
            "loss": s.loss,
            "names": names,
            "nearest": _nearest_with_loss(tr, i),
        }


# Past this many parameters a point's graph is larger than the explorer shows (500 values): no
# point of it opens there, so none is looked for.
NEAREST_MAX_PARAMS = 500


def _nearest_with_loss(tr: Trainer, i: int) -> dict[str, Any] | None:
    """If point `i`'s loss is 0 (a hinge past its margin: every grad of its graph is 0), the
    point nearest to it whose loss is not 0, as `point_payload`'s fields; else None."""
    loss = LOSSES[tr.settings.loss]

    def loss_at(j: int) -> float:
        return loss.sample(tr.model.outputs(tr.inputs[j]), tr.T[j]).data

    if len(tr.model.parameters()) > NEAREST_MAX_PARAMS or loss_at(i) != 0.0:
        return None
    here = tr.X[i]
    order = sorted(range(len(tr.X)), key=lambda j: sum((a - b) ** 2 for a, b in zip(tr.X[j], here)))
    for j in order:
        value = loss_at(j) if j != i else 0.0
        if value != 0.0 and math.isfinite(value):
            return {
                "index": j,
                "point": list(tr.X[j]),
                "x": list(tr.inputs[j]),
                "target": tr.T[j],
                "loss": value,
            }
    return None


def point_root(payload: object) -> tuple[Value, list[Value], str]:
    """The explorer's graph of a `point_payload`: the point's loss through a copy of the network,
    every weight and bias a leaf named by where it sits (w2.3.1: layer 2, neuron 3, input 1), the
    point's inputs named as the Train view names them. Returns the loss, the parameters (what a
    gradient step moves) and a title. ValueError (or TypeError) naming what is wrong."""
    import json

    from ..viz.formatting import format_number as fmt

    if not isinstance(payload, dict):
        raise TypeError(f"expected an object, got {type(payload).__name__}")
    loss = payload.get("loss")
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {str(loss)[:40]!r}")
    model = io.loads(json.dumps(payload.get("model")), "the network")
    x, names = payload.get("x"), payload.get("names")
    nin = len(model.layers[0].neurons[0].w)
    if (
        not isinstance(x, list)
        or len(x) != nin
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in x
        )
    ):
        raise ValueError(f"the point's inputs must be {nin} finite numbers")
    if (
        not isinstance(names, list)
        or len(names) != len(x)
        or not all(isinstance(n, str) and 0 < len(n) <= 20 for n in names)
    ):
        raise ValueError("the inputs' names must be one short text per input")
    target = payload.get("target")
    outputs = len(model.layers[-1].neurons)
    if (
        isinstance(target, bool)
        or not isinstance(target, (int, float))
        or not (
            0 <= target < outputs and float(target).is_integer()
            if outputs > 1
            else math.isfinite(target)
        )
    ):
        raise ValueError(
            f"the point's target must fit the network's {outputs} output(s): "
            f"a class index, or a number for one output"
        )
    target = int(target) if outputs > 1 else float(target)
    for li, layer in enumerate(model.layers, start=1):
        for ni, n in enumerate(layer.neurons, start=1):
            for k, w in enumerate(n.w, start=1):
                w.label = f"w{li}.{ni}.{k}"
            n.b.label = f"b{li}.{ni}"
    xs = [Value(float(v), label=name) for v, name in zip(x, names)]
    try:
        out, node_names = through_network(model, xs, target, loss)  # named as the Train view's are
    except ArithmeticError as exc:  # e.g. a target of 1e308: its loss is past what a float holds
        field = "target" if abs(target) > 1e150 else "model's weights or the point's inputs x"
        raise ValueError(f"its loss overflows a float (check its {field}): {exc}") from None
    for v in topological_order(out):
        if id(v) in node_names:
            v.label = node_names[id(v)]
    out.label = "loss"
    point = payload.get("point")
    where = ", ".join(fmt(v) for v in point) if isinstance(point, list) else ""
    title = (
        f"the Train view's point {payload.get('index', '?')} (x = {where}): its {loss} loss "
        f"through the network as it was at that moment. Build graph replaces it with an "
        f"expression."
    )
    return out, model.parameters(), title
