"""`Pacer`: when a playing Train run trains and when it shows a frame, by its transport's turns.

    pacer = Pacer(train=run_steps, publish=make_frame, frame_seconds=lambda: 0.05, lock=lock)
    pacer.play()
    while ...: pacer.advance(0.02)   # trains for up to 20 ms; publishes a frame when one is due

A run never trains on a thread of its own: its transport (the server's and the kernel's runner
thread, the static site's worker) calls `advance` again and again, and between calls the page's
requests get the lock. Frames come on a clock of `frame_seconds()` (slower when a frame costs
more than half the time: steps get as much time as frames at least); `speed` slows the steps
down to that many a second. `train(seconds)` takes one step, or (an engine that runs elsewhere)
as many as fit in `seconds`; it sets `stale` (trained since the last frame), `publish` clears it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from .train_settings import check_real


class Pacer:
    """Playing or not, and the clocks of a playing run's steps and frames (see the module)."""

    def __init__(
        self,
        train: Callable[[float], None],
        publish: Callable[[], None],
        frame_seconds: Callable[[], float],
        lock: threading.RLock | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.train, self.publish, self.frame_seconds = train, publish, frame_seconds
        self.lock = lock or threading.RLock()
        self.clock = clock  # what `advance` measures time by
        self.playing = False
        self.stale = False  # trained since the last frame
        self.speed: float | None = None  # steps per second while playing; None: flat out
        self.frame_cost = 0.0  # seconds a frame takes to make (its publisher's moving average)
        self.next_frame = 0.0  # when a playing run publishes its next frame (clock time)
        self.next_step = 0.0  # when a slowed-down run takes its next step

    def play(self) -> None:
        """Playing from now: the next step at once, the next frame one period on. Caller holds
        the lock and publishes the frame that says it plays."""
        self.playing = True
        now = self.clock()
        self.next_step = now
        self.next_frame = now + self.frame_seconds()

    def set_speed(self, speed: object) -> None:
        """Steps per second while playing ("max" or None: as fast as it goes)."""
        if speed in (None, "max"):
            self.speed = None
            return
        self.speed = check_real("speed", speed, 0.0, 1000.0, low_open=True)

    def advance(self, budget: float, apart: bool = False) -> bool:
        """Train while playing, for at most `budget` seconds (at least one step unless a slowed
        run's next step is not due yet), then publish a frame if one is due. Returns whether a
        frame was published. `apart`: a turn either trains (until the next frame is due) or
        publishes that frame, never both: a transport with one thread (the site's worker)
        answers the page between the two, so Pause waits for one or the other, not their sum."""
        with self.lock:
            if not self.playing:
                return False
            now = self.clock()
            if apart and now >= self.next_frame and self.stale:  # (never two in a row)
                self._publish_due(now)
                return True
            end = now + budget
            # A frame that falls due during the turn ends it (frames come on time); one already
            # due when it began does not (many runs at once: each turn trains, then shows)
            frame_at = self.next_frame if self.next_frame > now else end
            while self.playing:
                if self.speed:
                    if now < self.next_step:
                        break
                    # the next step one interval on (no burst of steps after a busy moment)
                    self.next_step = max(self.next_step + 1.0 / self.speed, now)
                    self.train(0.0)
                else:  # flat out: until the frame or the turn's end
                    self.train(min(end, frame_at) - now)
                now = self.clock()
                if now >= end or now >= frame_at:
                    break
            if not self.playing or (now >= self.next_frame and not apart):  # (diverged: now)
                self._publish_due(now)
                return True
            return False

    def _publish_due(self, now: float) -> None:
        self.publish()
        # Frames on a clock of fps a second (the next one period after the one due, not after
        # now: the step that ran past the due time does not slow the clock), and steps get as
        # much time as frames at least; a run that fell behind (a busy moment) is not caught up
        # with a burst of frames
        period = max(self.frame_seconds(), 2 * self.frame_cost)
        self.next_frame = max(self.next_frame + period, now + period / 2)

    def due_in(self) -> float:
        """Seconds until a playing run has work (0: now); infinity when it is paused. A
        transport with nothing due sleeps this long rather than spin."""
        if not self.playing:
            return math.inf
        if not self.speed:
            return 0.0
        return max(0.0, self.next_step - self.clock())
