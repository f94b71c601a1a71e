"""The web layer every playground route shares: what a handler sees and returns (`Request`,
`Session`, `HTTPError`, `EventStream`), the tabs' sessions (`Sessions`), and the JSON helpers.

The view modules (`explorer.py`, `train_routes.py`) import only this, and `server.py` imports
them, so the package's import graph has no circle. Each browser tab has its own session.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import hmac
import http.cookies
import json
import math
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

MAX_SESSIONS = 64  # open tabs; past this the least recently seen session is dropped
SESSION_IDLE_SECONDS = 30 * 60.0  # a tab not heard from for this long is forgotten


class HTTPError(Exception):
    """A request the server refuses: sent as ``{"error": message}`` with `status` (4xx)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Session:
    """One browser tab's state: `.state` holds a dict per view (``state.setdefault('explorer',
    {})``), `.lock` serialises the tab's requests where a view needs it, `.closed` is set when the
    session expires or the server stops (a background thread of a view should watch it), and
    functions appended to `.on_close` run then (to stop such a thread)."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.state: dict[str, Any] = {}
        self.lock = threading.RLock()
        self.last_seen = time.monotonic()
        self.closed = threading.Event()
        self.on_close: list[Callable[[], None]] = []

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for fn in self.on_close:
            try:
                fn()
            except Exception as exc:  # one view's cleanup must not stop the others'
                print(f"micrograd playground: session cleanup failed: {exc!r}", file=sys.stderr)
        self.state.clear()  # its views go now, even if a stream's thread still holds the session


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, where the C library has it (Linux with glibc); else None."""
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    return getattr(libc, "malloc_trim", None)


_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Hand memory freed by closed sessions back to the operating system. Python frees a closed
    tab's objects at once, but glibc's malloc keeps the pages for reuse (in one pool per thread,
    and the server runs a thread per request), so a server that once had many tabs would keep
    their memory for good: 300 tabs took it from 48 to 235 MB, and this brings it back to 71.
    A collection first: a trainer holds reference cycles (its jitted functions are its own bound
    methods), so only the cyclic collector frees it."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


class Sessions:
    """The open sessions: at most `limit`; idle ones expire; past the limit the least recently
    seen one is dropped (a new tab always works; a long-forgotten one starts afresh)."""

    def __init__(
        self,
        limit: int = MAX_SESSIONS,
        idle: float = SESSION_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.idle = idle
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def get(self, session_id: str) -> Session:
        dropped: list[Session] = []
        with self._lock:
            now = self.clock()
            for sid, s in list(self._sessions.items()):
                if now - s.last_seen > self.idle and sid != session_id:
                    dropped.append(self._sessions.pop(sid))
            session = self._sessions.get(session_id)
            if session is None:
                while len(self._sessions) >= self.limit:
                    oldest = min(self._sessions.values(), key=lambda s: s.last_seen)
                    dropped.append(self._sessions.pop(oldest.id))
                session = self._sessions[session_id] = Session(session_id)
            session.last_seen = now
        for s in dropped:  # outside the lock: a cleanup may take a moment
            s.close()
        if dropped:
            give_back_memory()
        return session

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for s in sessions:
            s.close()
        give_back_memory()


class Request:
    """What a handler sees: `.method`, `.path`, `.query` (one value per name), `.body` (the parsed
    JSON of a POST, or None), `.session` (the tab's `Session`), `.options` (the server's options,
    e.g. ``{"jit": True}``), and `.stopping` (set when the server shuts down)."""

    def __init__(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        session: Session,
        options: dict[str, Any],
        stopping: threading.Event,
    ) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.session = session
        self.options = options
        self.stopping = stopping


class EventStream:
    """A handler's answer that streams Server-Sent Events: each item of `iterator` (a dict) is sent
    as one ``data: {json}`` event; an item None sends only a comment, so a generator waiting for
    something can yield None now and then and a vanished client is noticed. The stream ends when
    the iterator does, the client goes away, or the server stops; then the iterator is closed
    (a generator's ``finally`` runs) and `on_close` is called, once."""

    def __init__(
        self, iterator: Iterable[dict[str, Any] | None], on_close: Callable[[], None] | None = None
    ) -> None:
        self.iterator: Iterator[dict[str, Any] | None] = iter(iterator)
        self.on_close = on_close


Handler = Callable[[Request], "dict[str, Any] | EventStream"]


def json_float(x: float) -> float | str:
    """A float for a JSON answer: NaN and infinities (not JSON) as 'nan', 'inf', '-inf'."""
    return x if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))


def _json_default(value: Any) -> Any:
    raise TypeError(f"cannot send {type(value).__name__} as JSON")


def dumps(obj: Any) -> bytes:
    # NaN and infinities are not JSON; a handler sends them as strings, and this catches a slip.
    return json.dumps(obj, allow_nan=False, default=_json_default, separators=(",", ":")).encode()


def finite_json(obj: Any) -> Any:
    """JSON from the page with NaN/Infinity refused (Python's json accepts them by default)."""

    def refuse(name: str) -> float:
        raise ValueError(f"{name} is not a number JSON allows")

    return json.loads(obj, parse_constant=refuse)


# ------------------------------------------------------------------ sharing on a network

TOKEN_COOKIE = "micrograd_playground_token"
TOKEN = re.compile(r"[A-Za-z0-9_-]{8,128}")  # what serve(token=...) accepts
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def token_for(host: str, given: str | None = None) -> str:
    """The token a server on `host` requires: `given` if set; else a new random one when the
    host is reachable from other machines, and none on this machine only (loopback)."""
    if given is not None:
        return given
    return "" if host.strip("[]") in LOOPBACK else secrets.token_urlsafe(24)


def check_token(cookie_header: str, query: dict[str, str], token: str) -> str:
    """A request to a server with a `token` carries it, as Jupyter's do: in the URL the command
    printed (``?token=...``), then in the cookie the first answer sets, so the page's own links
    and requests keep working. Returns the Set-Cookie value to send ('' if the cookie came);
    HTTPError 403 without it. Compared in constant time."""
    cookies = http.cookies.SimpleCookie()
    try:
        cookies.load(cookie_header)
    except http.cookies.CookieError:
        cookies = http.cookies.SimpleCookie()
    sent = cookies.get(TOKEN_COOKIE)
    if sent is not None and hmac.compare_digest(sent.value.encode(), token.encode()):
        return ""
    given = query.get("token", "")
    if given and hmac.compare_digest(given.encode(), token.encode()):
        return f"{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000"
    raise HTTPError(
        403,
        "this playground is shared on a network and needs its token: open the URL "
        "`micrograd playground` printed (it ends in ?token=...)",
    )
