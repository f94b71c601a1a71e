"""`Runner`: the thread that trains every playing Train view of a process, each in turn.

A `Trainer` trains only when asked (`Trainer.advance`). The web server and the notebook widget
ask from here: one thread that goes round the playing trainers and gives each a slice of time,
so tabs that train at once share the CPU fairly. Each keeps publishing frames while their steps
per second divide: the slice shrinks as more play, so that a round (every playing trainer once)
stays near `ROUND_SECONDS`, but never below what a frame of that run costs: with many tabs,
frames come less often and steps keep at least half of the time. A paused trainer costs
nothing; with nothing playing the thread sleeps until `wake()`. The static site has no
threads: its Web Worker's timer asks instead.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .trainer import Trainer

ROUND_SECONDS = 0.05  # a round of every playing trainer: a frame each, 20 a second, while it can
MIN_SLICE = 0.002  # each trainer's turn is at least this long (and at least one step)
MAX_SLICE = 0.05  # and at most this long: a Pause waits for the turn under way
IDLE_WAIT = 0.5  # with nothing playing, look again this often even if nobody wakes us


@dataclass
class _Entry:
    trainer: Trainer
    on_frame: Callable[[], None]  # called (on the runner's thread) after a frame is published
    watched: Callable[[], bool] | None  # False: nobody looks any more, so pause it


class Runner:
    """Advances the trainers `add`ed to it while they play, round-robin, on one daemon thread
    (started on first use). `wake()` after telling a trainer to play; `stop()` ends the thread."""

    def __init__(self, name: str = "micrograd-train") -> None:
        self.name = name
        self._entries: dict[int, _Entry] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(
        self,
        trainer: Trainer,
        on_frame: Callable[[], None],
        watched: Callable[[], bool] | None = None,
    ) -> None:
        """Run `trainer` while it plays; `on_frame()` after each frame it publishes; `watched()`
        (if given) False means nobody is looking: the runner pauses it."""
        with self._cond:
            self._entries[id(trainer)] = _Entry(trainer, on_frame, watched)
            self._start()
            self._cond.notify_all()

    def remove(self, trainer: Trainer) -> None:
        with self._cond:
            self._entries.pop(id(trainer), None)

    def wake(self) -> None:
        """A trainer may have started playing: look now."""
        with self._cond:
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._entries.clear()
            self._cond.notify_all()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=5.0)

    def __len__(self) -> int:
        with self._cond:
            return len(self._entries)

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopped = False
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                for key in [k for k, e in self._entries.items() if e.trainer.closed]:
                    del self._entries[key]  # its tab is gone: let it be freed
                entries = list(self._entries.values())
            playing = [e for e in entries if e.trainer.playing and not e.trainer.closed]
            soonest = math.inf
            share = max(MIN_SLICE, ROUND_SECONDS / max(1, len(playing)))
            for e in playing:
                # at least as long for steps as its frames take: with many tabs, frames come less
                # often rather than every step
                turn = min(MAX_SLICE, max(share, e.trainer.frame_cost))
                try:
                    soonest = min(soonest, self._turn(e, turn))
                except Exception as exc:  # a bug in one run must not stop everyone's
                    print(f"micrograd playground: training failed: {exc!r}", file=sys.stderr)
                    e.trainer.close()
            if soonest > 0:
                with self._cond:
                    if not self._stopped:
                        self._cond.wait(min(soonest, IDLE_WAIT))

    @staticmethod
    def _turn(e: _Entry, share: float) -> float:
        """One trainer's turn; returns how soon it wants another (0: at once)."""
        tr = e.trainer
        if e.watched is not None and not e.watched():
            tr.pause()  # nobody is watching: the tab closed or went away
            e.on_frame()
            return math.inf
        wait = tr.due_in()
        if wait > 0:
            return wait
        if tr.advance(share):
            e.on_frame()
        return tr.due_in()
