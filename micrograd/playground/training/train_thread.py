"""`Runner`: the thread that trains every playing Train view of a process, each in turn.

A `Trainer` trains only when asked (`Trainer.advance`). The web server and the notebook widget
ask from here: one thread that goes round the playing trainers and gives each a slice of time,
so tabs that train at once share the CPU fairly. Each keeps publishing frames while their steps
per second divide: the slice shrinks as more play, so that a round (every playing trainer once)
stays near `ROUND_SECONDS`, but never below what a frame of that run costs: with many tabs,
frames come less often and steps keep at least half of the time. A paused trainer costs
nothing; with nothing playing the thread sleeps until `wake()`. A playing trainer nobody
watches (`watched()` False: its tab went away) is held, not stepped, until it is watched
again. The static site has no threads: its Web Worker's timer asks instead. Where Python has
no threads at all (Pyodide: the course's JupyterLite kernel) the same rounds run as a task on
the running asyncio loop (the kernel's), which steps between the kernel's messages as the
site's worker does on its timer.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .trainer import Trainer

ROUND_SECONDS = 0.05  # a round of every playing trainer: a frame each, 20 a second, while it can
MIN_SLICE = 0.002  # each trainer's turn is at least this long (and at least one step)
MAX_SLICE = 0.05  # and at most this long: a Pause waits for the turn under way
IDLE_WAIT = 0.5  # with nothing playing, look again this often even if nobody wakes us


def threads_available() -> bool:
    """False in Pyodide (CPython in a browser), where a thread cannot be started."""
    return sys.platform != "emscripten"


@dataclass
class _Entry:
    trainer: Trainer
    on_frame: Callable[[], None]  # called (on the runner's thread) after a frame is published
    watched: Callable[[], bool] | None  # False: nobody looks now, so hold it


class Runner:
    """Advances the trainers `add`ed to it while they play, round-robin, on one daemon thread
    (started on first use). `wake()` after telling a trainer to play; `stop()` ends the thread."""

    def __init__(self, name: str = "micrograd-train") -> None:
        self.name = name
        self._entries: dict[int, _Entry] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._task: Any = None  # without threads: the asyncio task doing the rounds
        self._stopped = False

    def add(
        self,
        trainer: Trainer,
        on_frame: Callable[[], None],
        watched: Callable[[], bool] | None = None,
    ) -> None:
        """Run `trainer` while it plays; `on_frame()` after each frame it publishes; `watched()`
        (if given) False means nobody is looking: the runner holds it (no steps) until True."""
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
        if not threads_available():
            if self._task is None or self._task.done():
                import asyncio

                self._stopped = False
                self._task = asyncio.get_event_loop().create_task(self._run_on_loop())
            return
        if self._thread is None or not self._thread.is_alive():
            self._stopped = False
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
            soonest = self._round()
            if soonest > 0:
                with self._cond:
                    if not self._stopped:
                        self._cond.wait(min(soonest, IDLE_WAIT))

    async def _run_on_loop(self) -> None:
        """`_run` without threads: each round, then the loop's other work (the kernel's
        messages: Pause, a new frame asked for) until the next is due."""
        import asyncio

        while not self._stopped:
            soonest = self._round()
            await asyncio.sleep(min(soonest, ROUND_SECONDS if self._entries else IDLE_WAIT))

    def _round(self) -> float:
        """Every playing trainer's turn, once; returns how soon one wants another."""
        with self._cond:
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
        return soonest

    @staticmethod
    def _turn(e: _Entry, share: float) -> float:
        """One trainer's turn; returns how soon it wants another (0: at once)."""
        tr = e.trainer
        if e.watched is not None and not e.watched():
            # Nobody is watching (the tab closed, or went away for now): no steps, no CPU, but
            # still playing, so that it goes on when its page looks again (`wake()`).
            return math.inf
        wait = tr.due_in()
        if wait > 0:
            return wait
        if tr.advance(share):
            e.on_frame()
        return tr.due_in()
