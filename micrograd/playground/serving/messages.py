"""`MessageHost`: a tab's views answering one page over messages, the protocol of the notebook
widget and of the static site's Web Worker (the page's side is common.js's `messageTransport`):

    page -> Python   {id, view, action, body}      an action; the answer comes back with its id
                     {frames: true | false}        the Train view wants frames (again every 5 s
                                                   while it is shown), or no longer; with
                                                   fresh: true, from a whole one (a view just
                                                   shown: frames carry what changed);
                                                   view: "gpt" for the GPT view's (else
                                                   the Train view's)
    Python -> page   {id, answer} | {id, error}    an action's answer, or its refusal in one line
                     {frame}                       the Train view's newest frame, unasked

Messages are plain dicts here; each transport moves them its own way (the widget's comm, the
worker's postMessage) and decides when the Train view trains (a thread in the kernel, a timer
in the worker).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import ViewError
from ..limits import measure_object
from ..views import Tab


class MessageHost:
    """One page's playground over messages: `receive` a message, get the messages to send back;
    `frames()` the Train view's newest frame when the page wants frames. `meta_note(tab)` may
    add a line to the Train view's meta (the site says when a network is too big to be live)."""

    def __init__(
        self,
        tab: Tab,
        clock: Callable[[], float] = time.monotonic,
        meta_note: Callable[[Tab], str] | None = None,
    ) -> None:
        self.tab = tab
        self.clock = clock
        self.meta_note = meta_note
        self._cursor: Any = None  # the Train view's frame reader while the page wants frames
        self.heard = clock()  # when the page last said something

    def receive(self, msg: object) -> list[dict[str, Any]]:
        if not isinstance(msg, dict):
            return [{"error": f"a message must be a JSON object, got {type(msg).__name__}"}]
        try:
            measure_object(msg)  # the server's limits on a body, before anything is built
        except ViewError as exc:
            return [
                {
                    "id": msg.get("id") if isinstance(msg.get("id"), (int, str)) else None,
                    "error": exc.message,
                }
            ]
        self.heard = self.clock()
        if "frames" in msg:  # the Train view wants frames (again: it is still shown), or not
            view = self.tab.gpt if msg.get("view") == "gpt" else self.tab.train
            if msg["frames"] and (self._cursor is None or self._cursor.trainer is not view.trainer):
                self._cursor = view.cursor()
            elif msg["frames"] and msg.get("fresh"):
                self._cursor.restart()  # a view just shown: it needs a whole frame
            elif not msg["frames"]:
                self._cursor = None
            return self.frames()
        reply: dict[str, Any] = {"id": msg.get("id")}
        try:
            answer = self.tab.call(msg.get("view"), msg.get("action"), msg.get("body"))
            if self.meta_note is not None and isinstance(answer.get("meta"), dict):
                answer["meta"] = {**answer["meta"], "size_note": self.meta_note(self.tab)}
            reply["answer"] = answer
        except ViewError as exc:
            reply["error"] = exc.message
        except Exception as exc:  # a bug of ours: the view shows it in one line
            reply["error"] = f"internal error: {type(exc).__name__}: {exc}"
        return [reply, *self.frames()]

    def frames(self) -> list[dict[str, Any]]:
        """The Train view's newest frame as a message, if the page wants frames and it has not
        had it ([] otherwise)."""
        frame = self._cursor.next() if self._cursor is not None else None
        return [] if frame is None else [{"frame": frame}]

    def watched(self, seconds: float) -> bool:
        """Does the page still look (it wants frames and was heard from in `seconds`)?"""
        return self._cursor is not None and self.clock() - self.heard < seconds
