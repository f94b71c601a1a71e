"""`Trainer`: one browser tab's training run, on one thread while it plays.

    tr = Trainer(Settings(dataset="moons", hidden=(8, 8)))
    tr.step()                 # one optimisation step, as the page's Step button
    f = tr.frame()            # what the page draws: step, loss, accuracy, decision grid, ...
    tr.play(); ...; tr.pause()

It holds the data (a `micrograd.data` set plus the points the learner clicked in), an `MLP`
built from a seed (Reset rebuilds the same initial weights, New weights draws a new seed), a
loss from `micrograd.losses` and an optimizer from `micrograd.optim`. Each step is the batch
loss as one `Value`: `micrograd.jit` replays the per-sample loss over the batch with numpy when
numpy is there, else the eager engine builds one graph per point. Play runs steps on one thread
per trainer; pausing ends that thread, so a paused tab costs no CPU, and a tab that stops
listening is paused after `idle_after` seconds. Frames are published at most `fps` times a
second; `stream()` hands them to a reader (the server's event stream).
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from .. import data, io, optim
from ..engine import Value
from ..nn import MLP
from ..tracing import TraceError
from ..train import backprop
from . import train_frames
from .train_frames import JitLayers, LossCurve, layout, point_graph, short
from .train_settings import (
    EAGER_FRAME_SECONDS,
    EAGER_GRID,
    GRID,
    HISTORY_CAP,
    LABELS,
    LIVE_SETTINGS,
    PER_SAMPLE,
    Settings,
    check_added,
    check_index,
    check_real,
    extent,
    featurize,
    make_data,
    numpy_available,
    predict,
    split,
    targets,
)

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
    def configure(self, settings: Settings, restart: bool = False) -> None:
        """Apply `settings`: the learning rate, momentum, L2 and batch size to the running model
        (a learner who sees the loss oscillate lowers the rate and watches it settle); anything
        that changes the model's shape or its data starts over (the same seed gives the same
        initial weights). The same settings again (the page reloaded, or Back from the explorer)
        keep the run as it is, unless `restart`. `change` says what happened, for the page."""
        old = getattr(self, "settings", None)
        changed = [k for k in settings.to_dict() if old is None or
                   settings.to_dict()[k] != old.to_dict()[k]]  # fmt: skip
        if old is not None and not changed and not restart:
            with self.lock:
                self._publish()  # the run goes on; the page gets a frame to draw
            return
        self.change = ""
        if old is not None and changed and set(changed) <= LIVE_SETTINGS:
            with self.lock:
                self.settings = settings
                self.opt.lr = settings.lr
                if isinstance(self.opt, optim.SGD):
                    self.opt.momentum = settings.momentum
                self._batches = self._batch_iterator()
                names = ", ".join(LABELS[k] for k in changed)
                self.change = f"{names}: applied to the running model, at step {self.step_no}"
                self._publish()
            return
        if old is not None and changed:
            names = ", ".join(LABELS.get(k, k) for k in changed)
            self.change = f"{names}: a new model or new data, so training started over"
        playing = self._stop()
        with self.lock:
            self.settings = settings
            self.X, self.cls = make_data(settings)
            self.inputs = featurize(settings, self.X)  # what the network sees of each point
            self.train_idx, self.test_idx = split(settings, len(self.X))
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
        self._batches = self._batch_iterator()
        self.step_no = 0
        self.loss = math.nan
        self.accuracy = math.nan
        self.curve = LossCurve(HISTORY_CAP)
        self.history_id = getattr(self, "history_id", 0) + 1
        self.error: str | None = None
        fn = PER_SAMPLE[s.loss]
        model = self.model
        self._loss_of_point = lambda x, t: fn(model.outputs(x), t)
        side = GRID if self.use_jit else EAGER_GRID
        x0, x1, y0, y1 = self.extent
        # Row 0 is the top of the picture (largest y), as a canvas counts rows.
        self.grid = featurize(s, [
            [x0 + (x1 - x0) * (i + 0.5) / side, y1 - (y1 - y0) * (r + 0.5) / side]
            + [0.0] * (s.dims - 2)
            for r in range(side)
            for i in range(side)
        ])  # the network's inputs at each grid point
        self.grid_side = side
        if self.use_jit:
            import numpy as np

            from ..jit import jit

            self._Xa = np.array(self.inputs, dtype=float)
            self._Ta = np.array(self.T, dtype=float)
            self._Ga = np.array(self.grid, dtype=float)
            self._jit_loss = jit(self._loss_of_point)
            self._jit_layers = JitLayers(model)
            k = s.outputs
            self._jit_out = [jit(lambda x, k=k: model.outputs(x)[k]) for k in range(k)]
        self._layout_graph()

    def _batch_iterator(self) -> Iterator | None:
        """Minibatches of the settings' size (seeded) from the training points, or None for all
        of them every step."""
        idx, s = self.train_idx, self.settings
        if s.batch and s.batch < len(idx):
            return data.batches(idx, idx, s.batch, seed=s.seed)
        return None

    def _layout_graph(self) -> None:
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
            return next(self._batches)[0]
        return self.train_idx if self.test_idx else None

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
                rows = range(len(self.inputs)) if idx is None else idx
                terms, hits = [], 0
                for i in rows:
                    zs = self.model.outputs(self.inputs[i])
                    terms.append(PER_SAMPLE[s.loss](zs, self.T[i]))
                    hits += predict([z.data for z in zs]) == self.cls[i]
                total = Value.sum(terms) * (1.0 / len(terms))
                acc = hits / len(terms) if self._batches is None else self._accuracy_eager()
            total = backprop(self.model, total, s.l2, self.params, zero_grad=s.zero_grad,
                             l1=s.l1)
            self.opt.step()
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
        self.loss, self.accuracy = total.data, acc
        merges = self.curve.merges
        self.curve.add(self.step_no, short(total.data), acc)
        self.step_no += 1
        if self.curve.merges != merges:
            self.history_id += 1  # readers start the curve over, with the wider buckets
        if not math.isfinite(total.data) or not all(math.isfinite(p.data) for p in self.params):
            self._diverged(
                f"the loss became {total.data} at step {self.step_no}: training diverged; "
                "lower the Learning rate and press Reset"
            )

    def _diverged(self, why: str) -> None:
        self.error = why
        self._playing = False

    def _accuracy_jit(self, idx: Sequence[int] | None = None) -> float:
        """Accuracy on the training points (or on the points `idx`)."""
        import numpy as np

        idx = self.train_idx if idx is None else idx
        X = self._Xa[idx]
        outs = np.stack([f.outputs(X) for f in self._jit_out], axis=1)
        pred = (outs[:, 0] > 0).astype(int) if outs.shape[1] == 1 else outs.argmax(axis=1)
        return float((pred == np.array(self.cls)[idx]).mean())

    def test_metrics(self) -> tuple[float, float] | None:
        """(loss, accuracy) on the held-out test points, by the model as it is now (no training
        on them: a forward pass only); None when no points are held out. Caller holds the lock."""
        idx = self.test_idx
        if not idx:
            return None
        if self.use_jit:
            import numpy as np

            with np.errstate(all="ignore"):
                loss = float(self._jit_loss.outputs(self._Xa[idx], self._Ta[idx]).mean())
                return loss, self._accuracy_jit(idx)
        s, hits, total = self.settings, 0, 0.0
        for i in idx:
            zs = self.model.outputs(self.inputs[i])
            total += PER_SAMPLE[s.loss](zs, self.T[i]).data
            hits += predict([z.data for z in zs]) == self.cls[i]
        return total / len(idx), hits / len(idx)

    def _accuracy_eager(self) -> float:
        hits = sum(
            predict([z.data for z in self.model.outputs(self.inputs[i])]) == self.cls[i]
            for i in self.train_idx
        )
        return hits / len(self.train_idx)

    def step(self, n: int = 1) -> None:
        """`n` steps now (pausing a run first), then a frame."""
        self._stop()
        with self.lock:
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

    def grid_layers(self) -> list[Any]:
        """Every layer's outputs over the plot's grid points, by jit (one array per layer)."""
        return self._jit_layers(self._Ga)

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
        playing = self._stop()
        with self.lock:
            self.settings = replace(s, added=pts)
            self.X, self.cls = make_data(self.settings)
            self.inputs = featurize(self.settings, self.X)
            self.T = targets(s.loss, self.cls, s.classes)
            if self.use_jit:
                import numpy as np

                self._Xa = np.array(self.inputs, dtype=float)
                self._Ta = np.array(self.T, dtype=float)
            n = len(self.X)
            self.train_idx, self.test_idx = split(self.settings, n)
            self._batches = self._batch_iterator()
            self.pick = min(self.pick, n - 1)
            self.config_id += 1
            self._layout_graph()
            self._publish()
        if playing:
            self.play()

    def choose(self, index: object) -> None:
        """Show the graph of point `index`."""
        i = check_index(index, len(self.X))
        playing = self._stop()
        with self.lock:
            self.pick = i
            self._layout_graph()
            self.config_id += 1
            self._publish()
        if playing:
            self.play()

    def set_weight(self, layer: object, neuron: object, inp: object, value: object) -> None:
        """The learner edits one weight (a link on the page): training goes on from there.
        `layer` counts the model's layers from 0, `neuron` that layer's neurons, `inp` the
        neuron's inputs; `value` is the new weight."""
        with self.lock:
            layers = self.model.layers
            li = check_index(layer, len(layers), "layer")
            ni = check_index(neuron, len(layers[li].neurons), "neuron")
            w = layers[li].neurons[ni].w
            ii = check_index(inp, len(w), "input")
            w[ii].data = check_real("weight", value, -1e3, 1e3)
            self._publish()

    # ---- what the page draws (train_frames makes it)
    def meta(self) -> dict[str, Any]:
        """What changes only with the settings: the data, the plot's extent, the graph layout."""
        return train_frames.meta(self)

    def frame(self) -> dict[str, Any]:
        """The current picture: step, loss, accuracy, regions, heat maps, weights, graph."""
        return train_frames.frame(self)

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
        """The model as `micrograd.io.save` writes it (so `micrograd.io.load` reads it back)."""
        with self.lock:
            return io.dumps(self.model, "the model")

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
                # from the last bucket sent on: it may have grown since (the page replaces it)
                out["history"] = hist[max(sent - 1, 0):]
                sent = len(hist)
                yield out
        finally:
            self.streams -= 1
            self.touch()
