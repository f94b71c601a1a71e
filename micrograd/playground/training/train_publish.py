"""A Train run's frames, published for any number of readers: `Publisher` and `FrameCursor`.

    pub = Publisher()
    pub.publish(meta_key, make_meta, make_frame, history_id, buckets)  # by the run, under its lock
    frame, no = pub.published()                # the newest frame and its number, without a lock
    cursor = FrameCursor(pub); cursor.next()   # one reader: what it has not had, or None

A frame and the loss curve are published together as one tuple, so that a reader on another
thread sees them together without waiting for a step under way. Each reader (a page, a widget)
holds a `FrameCursor`: it is sent only the parts that changed since the frame it had.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any, Protocol

Frame = dict[str, Any]


class Publisher:
    """The newest frame of a run, its number, and the meta of its settings (made when they
    change, so reading it never waits for a step)."""

    def __init__(self) -> None:
        # (frame, its number, the curve's id and buckets then): one tuple, read whole
        self.latest: tuple[Frame | None, int, int, list] = (None, 0, 0, [])
        self.meta: Frame = {}
        self._meta_key: Hashable = ()
        self.frame_cost = 0.0  # seconds a frame takes to make (a moving average)
        self.clock: Callable[[], float] = time.perf_counter  # what a frame's cost is timed by

    def publish(
        self,
        meta_key: Hashable,
        make_meta: Callable[[], Frame],
        make_frame: Callable[[], Frame],
        history_id: int,
        buckets: list,
    ) -> float:
        """Make a frame (and the meta first, if `meta_key` changed) and publish it with the
        curve; returns what a frame costs, a moving average: a runner gives each run at least as
        much time for steps, so that frames never take all of it."""
        if meta_key != self._meta_key:
            self.meta, self._meta_key = make_meta(), meta_key
        start = self.clock()
        f = make_frame()
        # a part its maker paces by a clock of its own (the GPT's pictures: a share of the time)
        # is left out, or the frames between would be spaced out after it (`Pacer.advance`)
        spent = self.clock() - start - f.pop("self_paced", 0.0)
        self.frame_cost = 0.7 * self.frame_cost + 0.3 * max(spent, 0.0)
        no = self.latest[1] + 1
        f["seq"] = no  # the page drops a frame older than one it has drawn
        self.latest = (f, no, history_id, list(buckets))
        return self.frame_cost

    def published(self) -> tuple[Frame | None, int]:
        """The newest frame and its number (a reader compares numbers to see what is new)."""
        return self.latest[:2]


# The parts of a frame a reader is sent only when they changed since the frame it had: the big
# ones, which a paused run, a slow one or a settled one often keeps (the rest are a few numbers).
PARTS = ("grid", "heat_scale", "shown", "links", "grads", "grad_max", "graph")


class Run(Protocol):
    """A run whose frames a cursor reads: a `Trainer` (trainer.py imports this module)."""

    publisher: Publisher


class FrameCursor:
    """One reader of a run's frames: `next()` is the newest frame it has not had (frames
    published in between are skipped: a slow reader never falls behind), with the part of the
    loss curve it has not had yet, or None when nothing is new.

    Only what changed is sent: a part of `PARTS` equal to the one this reader last had is left
    out, and so is each heat map that did not change (None in ``heat``). The first frame, and
    the first after `restart()`, is whole (``"full": True``); a reader keeps the parts it had."""

    def __init__(self, trainer: Run) -> None:
        self.trainer = trainer
        self.publisher = trainer.publisher
        self.last: int | None = None  # the number of the last frame handed out
        self.sent = 0  # curve buckets handed out
        self.history_id: int | None = None
        self._had: Frame | None = None  # the parts this reader has (None: nothing)

    def restart(self) -> None:
        """The reader lost what it had (a page that has just opened): send everything again."""
        self._had = None
        self.last = None
        self.history_id = None

    def next(self) -> Frame | None:
        # the frame and the curve as they were published: never waits for a step under way
        frame, no, hid, hist = self.publisher.latest
        if frame is None or no == self.last:
            return None
        self.last = no
        out = dict(frame)
        had = self._had
        out["full"] = had is None
        if had is not None:
            for k in PARTS:
                if k in frame and had.get(k) == frame[k]:
                    del out[k]
            old, heat = had["heat"], frame.get("heat")  # (a GPT's frame has no heat maps)
            if old is not None and heat is not None and len(old) == len(heat):
                out["heat"] = [None if h == o else h for h, o in zip(frame["heat"], old)]
        self._had = {k: frame.get(k) for k in (*PARTS, "heat")}
        if hid != self.history_id:
            self.sent, self.history_id = 0, hid
            out["history_reset"] = True
        # from the last bucket sent on: it may have grown since (the page replaces it)
        out["history"] = hist[max(self.sent - 1, 0) :]
        self.sent = len(hist)
        return out
