"""The static site's transport, Python's side: the playground's views answering a Web Worker.

On the site `micrograd site` writes, each page starts `static/worker.js`, which runs CPython
(Pyodide) in a Web Worker, installs micrograd from the site's wheel, and hands every message the
page posts to one `Host`: the same view objects (`views.Tab`) the web server and the notebook
widget call, over the widget's messages (`messages.MessageHost`).

JSON text crosses between JavaScript and Python, never proxies: one parse on each side, nothing
to free. A browser worker has no threads, so the worker's timer trains a playing Train view:
it calls `advance` for a short slice, posts the frame it returns, lets the page's messages in,
and calls again after `due_in()` seconds. The steps themselves run in JavaScript: the Train view's
engine is micrograd.jit's JavaScript target (`engines.JavaScriptEngine`), which the worker
compiles once per network shape (`micrograd_compile` in worker.js); Python runs once per slice
and per frame, never per step.
"""

from __future__ import annotations

import json
import math
import random
import time
from typing import Any

from ..errors import ViewError
from ..limits import measure_text
from ..views import Tab
from .messages import MessageHost

FPS = 25.0  # the Train view's frames a second while playing, at most (20 on the server)
WATCH_SECONDS = 90.0  # a playing run whose page has not asked for frames this long pauses
# (a page says so every 5 s while shown; a hidden tab's timers may slow to once a minute)


class Host:
    """One page's playground in a worker: `receive` its messages (JSON text in, a JSON list of
    messages out), `advance` its training."""

    def __init__(self, tab: Tab | None = None, clock: Any = time.monotonic) -> None:
        # Python restored from the site's saved memory (site.python_memory) would draw the
        # random numbers it was saved with, the same on every visit: seeded afresh here
        random.seed()
        # (a frame crosses no network here: more of them than the server's 20 a second)
        self.tab = tab if tab is not None else Tab(jit="javascript", fps=FPS)  # type: ignore[arg-type]
        self.clock = clock
        self.host = MessageHost(self.tab, clock)
        self.prepared: tuple[Any, int] | None = None  # the GPT run whose lengths are all traced
        # a paused GPT frame goes at once, its pictures in the next turn (Pause in ≤ 100 ms)
        self.tab.gpt.on_trainer = lambda tr: setattr(tr.kind, "later", True)

    def receive(self, text: str) -> str:
        """A message from the page (JSON text) -> the messages to post back (a JSON list)."""
        try:
            measure_text(text, "a message")  # the server's limits, before json builds anything
            msg = json.loads(text)
        except ViewError as exc:
            return _out([{"error": exc.message}])
        except ValueError as exc:
            return _out([{"error": f"a message that is not JSON: {exc}"}])
        return _out(self.host.receive(msg))

    def advance(self, seconds: float) -> str:
        """Train for at most `seconds` if the Train view plays (or, the GPT view waiting, trace a
        word length ahead: `_prepare`); the frames to post (a JSON list, empty when none was
        published or nobody wants them)."""
        train = self._playing()
        if train is None:
            gpt = self.tab.gpt
            if gpt.started:  # a paused frame's pictures, owed (GPTKind.later): sent now
                tr = gpt.trainer
                with tr.lock:
                    if tr.kind.publish_owed(tr.publish):
                        return _out(self.host.frames())
            self._prepare(seconds)
            return "[]"
        if self.clock() - self.host.heard > WATCH_SECONDS:  # nobody looks: stop spending the CPU
            train.trainer.pause()
            return _out(self.host.frames())
        # a slice trains or makes a frame, not both: the page's messages get a turn between
        return _out(self.host.frames()) if train.advance(seconds, apart=True) else "[]"

    def due_in(self) -> float:
        """Seconds until the Train (or GPT) view has work (0: now, a waiting GPT run's tracing
        included); -1 when it is paused with nothing to do (JavaScript's JSON has no infinity,
        and the worker's timer then waits for a message)."""
        train = self._playing()
        if train is None:
            gpt = self.tab.gpt
            owed = gpt.started and gpt.trainer.kind.owed
            return 0.0 if owed or self._to_prepare() is not None else -1.0
        wait = train.trainer.due_in()
        return -1.0 if math.isinf(wait) else wait

    def _to_prepare(self) -> Any:
        """The GPT view's run when it waits and its engine has lengths left to trace (its
        `prepare` has not said True for these settings), while the page still looks; or None."""
        gpt = self.tab.gpt
        if not gpt.started or gpt.playing or self.clock() - self.host.heard > WATCH_SECONDS:
            return None
        tr = gpt.trainer
        return None if self.prepared == (tr.kind, tr.kind.config_id) else tr

    def _prepare(self, seconds: float) -> None:
        # A paused GPT run traces the word lengths it will meet, one length a turn (a trace
        # takes seconds in Pyodide and cannot be cut): Play then steps at once, and Pause is
        # answered, the page's messages getting a turn between traces.
        tr = self._to_prepare()
        if tr is None:
            return
        with tr.lock:
            if tr.kind.prepare(seconds):
                self.prepared = (tr.kind, tr.kind.config_id)

    def _playing(self) -> Any:
        """The view that plays (a page shows one: the Train view or the GPT view), or None."""
        return next((v for v in (self.tab.train, self.tab.gpt) if v.playing), None)


def _out(messages: list[dict[str, Any]]) -> str:
    # NaN and infinities are not JSON: the views send them as strings; this catches a slip.
    return json.dumps(messages, allow_nan=False, separators=(",", ":"))
