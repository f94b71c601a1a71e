"""`Trainer`: one tab's training run, advanced by whoever runs it.

    tr = Trainer(Settings(dataset="moons", hidden=(8, 8)))
    tr.step()                 # one optimisation step, as the page's Step button
    f = tr.frame()            # what the page draws: step, loss, accuracy, decision grid, ...
    tr.play()
    while ...: tr.advance(0.02)   # train for up to 20 ms; publishes a frame when one is due
    tr.pause()

A trainer is three parts: the run (this class: its settings, its step count, loss and curve, its
error when training diverged), a `Pacer` (train_pacer.py: playing or not, and when a playing run
steps and shows) and a `Publisher` (train_publish.py: the newest frame, read by any number of
`FrameCursor`s). What it trains is a *model kind* (train_kinds.py; today `MLPKind`,
train_mlp.py): the run asks it for steps and its part of each frame, and never looks inside.
Play only marks the run as playing: it trains when its transport calls `advance` (a runner
thread, the site's timer), never on a thread of its own, so the same object runs under a web
server, in a notebook and in a browser's Web Worker.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ...jit.tracing import TraceError
from ...nn import Module
from ...viz.formatting import json_float
from .engines import Results, engine_named
from .train_frames import KEEP, Frame, LossCurve, short
from .train_kinds import ModelKind
from .train_mlp import MLPKind
from .train_pacer import Pacer
from .train_publish import Publisher
from .train_settings import HISTORY_CAP, Settings

LOWER = "lower the Learning rate and press Reset"


class Trainer:
    """One tab's training run: `step`, `play`/`pause`, `reset`, `new_weights`, points, frames.
    `use_jit` picks the engine (`engines.engine_named`); `fps` bounds how often a playing run
    publishes a frame; `kind` makes the model kind from the settings and the engine's name."""

    def __init__(
        self,
        settings: Settings | None = None,
        use_jit: bool | str | None = None,
        fps: float = 20.0,
        kind: Callable[[Any, str], ModelKind] = MLPKind,
    ) -> None:
        self.engine_name = engine_named(use_jit)
        self.use_jit = self.engine_name != "eager"  # (read by tests and older callers)
        self.fps = fps
        self.lock = threading.RLock()  # a transport may advance the run while it answers a page
        self.closed = False
        self.history_id = 0  # the curve's: a reader starts it over when it changes
        self.publisher = Publisher()
        self.pacer = pacer = Pacer(self._train, self.publish, self._frame_seconds, self.lock)
        # playing, by the pacer's clocks: `advance(budget, apart)` trains for a turn and shows a
        # frame when one is due, `due_in()` is when there is work, `set_speed(steps a second)`
        self.advance, self.due_in, self.set_speed = pacer.advance, pacer.due_in, pacer.set_speed
        self.change = ""  # what the last settings change did, for the page
        self.kind = kind(settings or Settings(), self.engine_name)
        self._restart()
        self.publish()

    # ---- the run's parts, read through it
    @property
    def settings(self) -> Any:  # the kind's own (`Settings` for the MLP)
        return self.kind.settings

    @property
    def mlp(self) -> MLPKind:
        """The kind as the Train view's MLP: its data, engine and edits. TypeError for
        another kind (which has no points, weights or neurons to edit)."""
        if not isinstance(self.kind, MLPKind):
            raise TypeError(f"this run trains a {self.kind.name} model, not the Train view's MLP")
        return self.kind

    @property
    def model(self) -> Module:
        return self.kind.model

    @property
    def params(self) -> list:
        return self.kind.params

    @property
    def playing(self) -> bool:
        return self.pacer.playing

    @property
    def frame_cost(self) -> float:
        """Seconds a frame takes to make (a moving average): a runner's turn is as long."""
        return self.publisher.frame_cost

    @property
    def history(self) -> list[tuple[int, float | None, float | None, float]]:
        """The curve so far: ``(first step, lowest loss, highest loss, accuracy)`` per bucket."""
        return list(self.curve.buckets)

    # ---- setting up
    def configure(self, settings: Any, restart: bool = False) -> None:
        """Apply `settings`: the learning rate, momentum, L2 and batch size to the running model
        (a learner who sees the loss oscillate lowers the rate and watches it settle); anything
        that changes the model's shape or its data starts over (the same seed gives the same
        initial weights). The same settings again (the page reloaded, or Back from the explorer)
        keep the run as it is, unless `restart`. `change` says what happened, for the page."""
        old, new = self.settings.to_dict(), settings.to_dict()
        changed = [k for k in new if new[k] != old[k]]
        labels = self.kind.LABELS
        with self.lock:  # a playing run plays on (from step 0, if it starts over)
            if changed and set(changed) <= self.kind.LIVE:
                self.kind.live(settings)
                names = ", ".join(labels[k] for k in changed)
                self.change = f"{names}: applied to the running model, at step {self.step_no}"
            elif changed or restart:
                names = ", ".join(labels.get(k, k) for k in changed)
                self.change = f"{names}: a new model or new data, so training started over"
                self.change = self.change if changed else ""
                self.kind.rebuild(settings)
                self._restart()
            self.publish()  # the run goes on, or starts over; the page gets a frame to draw

    def _restart(self) -> None:
        """Step 0 of the kind's model as just built."""
        self.step_no = 0
        self.loss = math.nan
        self.accuracy: float | None = None
        self.curve = LossCurve(HISTORY_CAP)
        self.history_id += 1
        self.error: str | None = None

    def reset(self) -> None:
        """Back to step 0 with the same initial weights (and the same batches)."""
        self.configure(self.settings, restart=True)

    def new_weights(self) -> None:
        """Back to step 0 with a new seed (so new initial weights)."""
        self.configure(replace(self.settings, seed=random.SystemRandom().randrange(2**31)))

    # ---- training
    def _train(self, seconds: float = 0.0) -> None:
        """One step; an engine that runs elsewhere (JavaScript) takes as many as fit in
        `seconds`, in one call. Caller holds the lock."""
        self.record(lambda: self.kind.train(seconds, lambda: self.pacer.playing))

    def record(self, run: Callable[[], Results]) -> None:
        """Steps by `run()` (the kind's: each a batch loss + L2, the accuracy on all points
        before the update, backward, update), each recorded. Caller holds the lock."""
        if self.error:
            return
        nxt = self.step_no + 1
        try:
            results = run()
        except TraceError as e:  # jit could not compile the step: a bug of ours, not the rate's
            return self._diverged(f"step {nxt}: micrograd.jit failed ({e})")
        except OverflowError as e:  # a number grew past a float: the weights diverged
            return self._diverged(f"step {nxt} failed ({e}): training diverged; {LOWER}")
        except (ValueError, ZeroDivisionError) as e:  # the maths had no answer: say which
            return self._diverged(f"step {nxt} failed: {type(e).__name__}: {e}")
        if not results:  # the kind has no step left to take (its run is done): play ends
            self.pacer.playing = False
        total = math.nan
        for total, acc in results:
            self.loss, self.accuracy = total, acc
            merges = self.curve.merges
            self.curve.add(self.step_no, short(total), acc)
            self.step_no += 1
            if self.curve.merges != merges:
                self.history_id += 1  # readers start the curve over, with the wider buckets
            self.pacer.stale = True
            if not math.isfinite(total):
                break
        if results and (not math.isfinite(total) or not self.kind.weights_finite()):
            self._diverged(
                f"the loss became {total} at step {self.step_no}: training diverged; {LOWER}"
            )

    def _diverged(self, why: str) -> None:  # (training stops; Reset starts it again)
        self.error = why
        self.pacer.playing = False

    def step(self, n: int = 1) -> None:
        """`n` steps now (pausing a run first), then a frame."""
        with self.lock:
            self.pacer.playing = False
            for _ in range(n):
                self._train()
            self.publish()

    # ---- playing (the pacer's)
    def play(self) -> None:
        """Mark the run as playing: its transport's `advance` calls now train it."""
        with self.lock:
            if self.error or self.closed or self.pacer.playing:
                return
            self.pacer.play()
            self.publish()  # a frame that says it plays, at once

    def pause(self) -> None:
        """Stop playing: a turn under way ends after the step it is in (it checks between
        steps), so Pause waits for one step at most, not for the turn; then the frame of the run
        as it stopped."""
        self.pacer.playing = False
        with self.lock:
            frame = self.publisher.latest[0]
            if self.pacer.stale or frame is None or frame["playing"]:
                self.publish()

    def _frame_seconds(self) -> float:
        """How often a playing run publishes a frame: `fps`, or every half second eagerly
        (without numpy a frame's grid is one scalar forward pass per cell)."""
        return self.kind.frame_seconds(self.fps)

    # ---- the MLP kind's edits (the Train view's points, chosen point, weights, what it shows)
    def _edit(self, edit: Callable[[], object]) -> None:  # then a frame with the edit
        with self.lock:
            edit()
            self.publish()

    def set_points(self, added: Sequence) -> None:
        """Replace the learner's points; training goes on from the current weights."""
        self._edit(lambda: self.mlp.set_points(added))

    def choose(self, index: object) -> None:
        """Show the graph of point `index`."""
        self._edit(lambda: self.mlp.choose(index))

    def set_weight(self, layer: object, neuron: object, inp: object, value: object) -> None:
        """The learner edits one weight (a link on the page), or a bias (`inp` None: a neuron's
        small square): training goes on from there. `value` is the new number."""
        self._edit(lambda: self.mlp.set_weight(layer, neuron, inp, value))

    def view(
        self, grads: object = KEEP, graph: object = KEEP, neuron: object = KEEP, read: object = KEEP
    ) -> None:
        """What the page shows, so that frames hold that and no more (arguments left out keep
        theirs): `grads`, the links draw ∂L/∂w; `graph`, the chosen point's graph is on screen;
        `neuron`, the hidden neuron (counted over all hidden layers) on the big plot, or None;
        `read`, the parameter whose exact numbers each frame carries ([layer, neuron, input],
        input None for the bias), or None. A paused run publishes a frame with them at once."""
        self.mlp.view(grads, graph, neuron, read)
        if not self.pacer.playing:  # a playing run's next frame has it
            self._edit(lambda: None)

    # ---- what the page draws
    def meta(self) -> Frame:
        """What changes only with the settings: the data, the plot's extent, the graph layout
        (made when they change, so reading it never waits for a step)."""
        return self.publisher.meta

    def frame(self) -> Frame:
        """The current picture: the run's step, loss, accuracy and the kind's part."""
        done = bool(self.step_no)
        return {
            "type": "frame",
            "config_id": self.kind.config_id,
            "step": self.step_no,
            "loss": short(self.loss) if done else None,
            # the same, every digit (a test compares engines with it; the page shows `loss`)
            "loss_exact": json_float(self.loss) if done else None,
            "accuracy": self.accuracy if done else None,  # None on a regression
            "playing": self.pacer.playing,
            "error": self.error,
            **self.kind.frame(self.pacer.playing),
        }

    def publish(self) -> None:
        """A frame of the run as it is now, for every reader (and the meta first, when the
        settings changed since the last). Caller holds the lock."""
        key = (self.kind.config_id, id(self.kind.settings), self.change)
        self.pacer.stale = False
        meta = lambda: {**self.kind.meta(), "change": self.change}  # noqa: E731
        cost = self.publisher.publish(key, meta, self.frame, self.history_id, self.curve.buckets)
        self.pacer.frame_cost = cost

    def published(self) -> tuple[Frame | None, int]:
        """The newest frame and its number (a reader compares numbers to see what is new)."""
        return self.publisher.published()

    def latest(self) -> Frame:
        """The last published frame."""
        frame = self.publisher.latest[0]  # (the constructor publishes one before anyone asks)
        return frame if frame is not None else self.frame()

    def model_json(self) -> str:
        """The model as `micrograd.io.save` writes it (so `micrograd.io.load` reads it back)."""
        with self.lock:
            return self.kind.model_json()

    def close(self) -> None:
        """The tab is gone: stop training for good."""
        with self.lock:
            self.closed = True
            self.pacer.playing = False
