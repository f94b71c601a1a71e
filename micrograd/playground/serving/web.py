"""The web transport's pieces every playground route shares: what a handler sees and returns
(`Request`, `Session`, `HTTPError`, `EventStream`), the tabs' sessions (`Sessions`), the JSON
helpers, and the network-sharing token.

Each browser tab has its own session, and a session holds that tab's views (`views.Tab`): the
routes `server.build_routes()` makes from the views' actions call them. The views know nothing
of HTTP; this module and `server.py` are the one web transport over them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import hmac
import http.cookies
import json
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...viz.formatting import json_float  # noqa: F401  (re-exported)

MAX_SESSIONS = 64  # open tabs (`micrograd playground --max-sessions`)
KEEPSAKES = 1024  # dropped tabs whose work is kept, to make them again (see Sessions)
BUSY_WAIT = 10.0  # a new tab waits this long for a tab's request to end, to take its place
SESSION_IDLE_SECONDS = 30 * 60.0  # a tab not heard from for this long is forgotten
WATCH_SECONDS = 8.0  # a playing tab with no event stream and no request for this long is held


class HTTPError(Exception):
    """A request the server refuses: sent as ``{"error": message}`` with `status` (4xx)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class SessionClosed(Exception):
    """A session's views were asked for after it closed (the server is stopping: a session
    being answered is never dropped, see `Sessions.acquire`)."""


class Keepsake:
    """A dropped session's keepsake, taken while a new session for the same tab may already be
    waiting for it: `get()` waits until `put` (taken by the thread that dropped it)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._value: dict[str, Any] | None = None

    def put(self, value: dict[str, Any] | None) -> None:
        self._value = value
        self._ready.set()

    def get(self) -> dict[str, Any] | None:
        self._ready.wait(30.0)  # (taken in milliseconds; a stuck cleanup must not hang a tab)
        return self._value


class Session:
    """One browser tab: `.tab` holds its views (made on first use), `.lock` serialises the tab's
    requests, `.frames` is notified when its Train view publishes a frame, `.streams` counts its
    open event streams, `.closed` is set when the session expires or the server stops (a
    background thread should watch it), and functions appended to `.on_close` run then."""

    def __init__(self, session_id: str, make_tab: Callable[[Session], Any] | None = None) -> None:
        self.id = session_id
        self._make_tab = make_tab
        self._tab: Any = None
        self.state: dict[str, Any] = {}  # what a custom route keeps (tests, a view of your own)
        self.lock = threading.RLock()
        self.frames = threading.Condition()
        self.streams = 0
        self.last_seen = time.monotonic()
        self.closed = threading.Event()
        self.on_close: list[Callable[[], None]] = []
        self.kept: Keepsake | None = None  # a dropped tab's keepsake, to make it again
        self.busy = 0  # requests being answered (`Sessions.acquire`): not dropped meanwhile

    @property
    def tab(self) -> Any:
        """This tab's `views.Tab` (made again from `kept`, when it was dropped before)."""
        with self.lock:
            if self.closed.is_set():
                raise SessionClosed(self.id)
            if self._tab is None:
                if self._make_tab is None:
                    raise RuntimeError("this session has no views")
                self._tab = self._make_tab(self)
                if self.kept is not None:
                    kept, self.kept = self.kept.get(), None
                    if kept is not None:
                        self._tab.restore(kept)
            return self._tab

    def holds(self) -> list[str] | None:
        """The views this tab holds something in (`views.Tab.holds`); None without views."""
        if self._make_tab is None:
            return None
        return list(self.tab.holds())

    def retire(self) -> dict[str, Any] | None:
        """Close this session and return what remakes its views (`views.Tab.keepsake`, or
        None), at once: no request of the tab changes it in between."""
        with self.lock:
            if self._tab is not None and hasattr(self._tab, "keepsake"):
                kept = self._tab.keepsake()
            else:
                kept = self.kept.get() if self.kept is not None else None
            self.close()
        return kept

    def watched(self) -> bool:
        """Is anybody looking? An open event stream, or a request lately."""
        return self.streams > 0 or time.monotonic() - self.last_seen < WATCH_SECONDS

    def frame_published(self) -> None:
        with self.frames:
            self.frames.notify_all()

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        if self._tab is not None:
            self.on_close.insert(0, self._tab.close)
        for fn in self.on_close:
            try:
                fn()
            except Exception as exc:  # one view's cleanup must not stop the others'
                print(f"micrograd playground: session cleanup failed: {exc!r}", file=sys.stderr)
        self.frame_published()  # its streams wake up and end
        self._tab = None  # its views go now, even if a stream's thread still holds the session
        self.state.clear()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, where the C library has it (Linux with glibc); else None."""
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    return getattr(libc, "malloc_trim", None)


_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Hand memory freed by closed sessions back to the operating system. Python frees a closed
    tab's objects at once, but glibc's malloc keeps the pages for reuse (in one pool per thread,
    and the server runs a thread per request). What the trim saves (benchmarks/bench_trim.py,
    Python 3.11, 2026-12-07; MiB resident, start 48): 1,000 tabs, 69 with it against 75 without
    while serving, 63 against 75 once stopped; 300 tabs, 63 against 68, 56 against 67.
    A collection first: a trainer holds reference cycles (its jitted functions are its own bound
    methods), so only the cyclic collector frees it."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


class SessionsFull(Exception):
    """A new tab, and every session is in use (`Sessions.limit` of them)."""


class Sessions:
    """The open sessions: at most `limit`; sessions not heard from for `idle` seconds expire.
    A new tab past the limit takes the place of the least recently seen session that has no
    open event stream (a tab watching training is never dropped); if every session has one,
    the new tab is refused (`SessionsFull`). `make_tab(session)` makes a session's views.

    A session dropped to make room (or expired) leaves its tab's keepsake (`views.Tab.keepsake`:
    a program, a run's settings, weights and step; a few KB), the last `KEEPSAKES` of them:
    when that tab asks again, its views are made again from it, so a learner whose tab was
    pushed out by a class's other tabs finds their work where they left it."""

    def __init__(
        self,
        limit: int = MAX_SESSIONS,
        idle: float = SESSION_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        make_tab: Callable[[Session], Any] | None = None,
    ) -> None:
        self.limit = limit
        self.idle = idle
        self.clock = clock
        self.make_tab = make_tab
        self._sessions: dict[str, Session] = {}
        self._kept: OrderedDict[str, Keepsake] = OrderedDict()  # id -> a dropped tab's keepsake
        self._lock = threading.Lock()
        self._released = threading.Condition(self._lock)  # a request was answered

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def get(self, session_id: str) -> Session:
        """The session of `session_id` (made, or made again from its keepsake, if need be)."""
        session = self.acquire(session_id)
        self.release(session)
        return session

    def release(self, session: Session) -> None:
        """A request `acquire` began is answered: the session may be dropped again."""
        with self._lock:
            session.busy -= 1
            self._released.notify_all()

    def acquire(self, session_id: str) -> Session:
        """`get`, for a request: the session is not dropped until `release` (a tab's request is
        answered by the session it found, never by one dropped meanwhile)."""
        dropped: list[tuple[Session, Keepsake]] = []

        def drop(sid: str) -> None:  # (under the lock) its keepsake is promised at once
            kept = self._kept[sid] = Keepsake()
            dropped.append((self._sessions.pop(sid), kept))

        try:
            with self._lock:
                now = self.clock()
                for sid, s in list(self._sessions.items()):
                    if (
                        now - s.last_seen > self.idle
                        and sid != session_id
                        and not s.streams
                        and not s.busy
                    ):
                        drop(sid)
                waited_until = time.monotonic() + BUSY_WAIT
                while (session := self._sessions.get(session_id)) is None:
                    if len(self._sessions) < self.limit:
                        session = Session(session_id, self.make_tab)
                        session.kept = self._kept.pop(session_id, None)
                        self._sessions[session_id] = session
                        break
                    free = [s for s in self._sessions.values() if not s.streams and not s.busy]
                    if free:
                        drop(min(free, key=lambda s: s.last_seen).id)
                    elif (
                        any(not s.streams for s in self._sessions.values())
                        and time.monotonic() < waited_until
                    ):
                        self._released.wait(0.1)  # a request being answered ends soon
                    else:
                        raise SessionsFull(
                            f"the playground has {self.limit} tabs open, each watching its "
                            f"training (its --max-sessions is {self.limit}): close one, or "
                            f"restart it with a larger --max-sessions"
                        )
                session.last_seen = now
                session.busy += 1
                while len(self._kept) > KEEPSAKES:
                    self._kept.popitem(last=False)
        finally:
            for s, kept in dropped:  # outside the lock: a cleanup may take a moment
                value = None
                try:
                    value = s.retire()
                except Exception as exc:  # its views could not say what they hold: start anew
                    print(
                        f"micrograd playground: a tab's keepsake failed: {exc!r}", file=sys.stderr
                    )
                finally:
                    kept.put(value)
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
    (a generator's ``finally`` runs) and `on_close` is called, once. `on_open` is called just
    before the first byte is sent: a stream is counted from `on_open` to `on_close`, both called
    by the connection whatever happens to it."""

    def __init__(
        self,
        iterator: Iterable[dict[str, Any] | None],
        on_close: Callable[[], None] | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> None:
        self.iterator: Iterator[dict[str, Any] | None] = iter(iterator)
        self.on_close = on_close
        self.on_open = on_open


Handler = Callable[[Request], "dict[str, Any] | EventStream"]


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

TOKEN = re.compile(r"[A-Za-z0-9_-]{8,128}")  # what serve(token=...) accepts
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def token_cookie(port: int) -> str:
    """The token cookie's name: it carries the port, so two playgrounds on one machine (cookies
    ignore ports) keep their own tokens."""
    return f"micrograd_playground_token_{port}"


def token_for(host: str, given: str | None = None) -> str:
    """The token a server on `host` requires: `given` if set; else a new random one when the
    host is reachable from other machines, and none on this machine only (loopback)."""
    if given is not None:
        return given
    return "" if host.strip("[]") in LOOPBACK else secrets.token_urlsafe(24)


def check_token(cookie_header: str, query: dict[str, str], token: str, port: int) -> str:
    """A request to a server with a `token` carries it, as Jupyter's do: in the URL the command
    printed (``?token=...``), then in the cookie the first answer sets, so the page's own links
    and requests keep working. Returns the Set-Cookie value to send ('' if the cookie came);
    HTTPError 403 without it. Compared in constant time."""
    name = token_cookie(port)
    cookies = http.cookies.SimpleCookie()
    try:
        cookies.load(cookie_header)
    except http.cookies.CookieError:
        cookies = http.cookies.SimpleCookie()
    sent = cookies.get(name)
    if sent is not None and hmac.compare_digest(sent.value.encode(), token.encode()):
        return ""
    given = query.get("token", "")
    if given and hmac.compare_digest(given.encode(), token.encode()):
        return f"{name}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000"
    raise HTTPError(
        403,
        "this playground is shared on a network and needs its token: open the URL "
        "`micrograd playground` printed (it ends in ?token=...)",
    )


def share_urls(port: int, token: str, host: str = "0.0.0.0") -> list[str]:
    """The URLs other machines can open a playground listening on `host` by: the machine's host
    name, then each of its addresses (no packet is sent to find them), token included."""
    import socket

    names: list[str] = []
    wildcard = host.strip("[]") in ("", "0.0.0.0", "::")

    def add(name: str) -> None:
        if name and name not in names and name not in LOOPBACK and not name.startswith("127."):
            names.append(name)

    if wildcard:
        add(socket.gethostname())
        fqdn = socket.getfqdn()
        if "." in fqdn:
            add(fqdn)
        # the address families the server listens on: 0.0.0.0 is IPv4 only, :: both (Linux)
        families = [(socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")]
        if host.strip("[]") in ("", "0.0.0.0"):
            families = families[:1]
        for family, probe in families:
            try:  # the address the machine would use to reach the world: connect sends nothing
                with socket.socket(family, socket.SOCK_DGRAM) as s:
                    s.connect((probe, 9))
                    add(s.getsockname()[0])
            except OSError:
                continue
        try:
            infos = socket.getaddrinfo(
                socket.gethostname(), None, families[-1][0] if len(families) == 1 else 0
            )
        except OSError:  # the host name has no address: the ones above are what there is
            infos = []
        for info in infos:
            add(str(info[4][0]))
    else:
        add(host.strip("[]"))
    query = f"?token={token}" if token else ""
    return [f"http://{f'[{n}]' if ':' in n else n}:{port}/{query}" for n in names]
