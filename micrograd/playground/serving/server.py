"""The playground's web server: the standard library's `ThreadingHTTPServer`, nothing else.

It serves the pages in `static/` (package data: plain HTML, CSS and JavaScript, no build step, no
network) and a small JSON API over the views (`views.Tab`): ``POST api/<view>/<action>`` with a
JSON body calls ``tab.call(view, action, body)`` and answers with its dict (a `ViewError` as
``{"error": message}`` with its status); the actions that only read also answer a GET; and
``GET api/<train or gpt>/stream`` sends the view's frames as Server-Sent Events. Every URL the
pages use is relative, so the playground works under any path prefix (jupyter-server-proxy's
``/proxy/8000/``, JupyterHub's ``/user/NAME/proxy/8000/``, Binder).

`build_routes()` makes that table; `serve(routes=...)` takes another (a handler is ``fn(req:
Request) -> dict | EventStream``, bad input raises `HTTPError(status, message)`). Playing Train
views are trained by one `runner.Runner` thread per server, each in turn.

Each browser tab makes its own session id (`static/common.js` keeps it in `sessionStorage`) and
sends it as the ``X-Session`` header, or as ``?session=`` where a header cannot be set
(EventSource). `Request.session` is that tab's `Session`, holding its views.

Security, as for any local server: it binds 127.0.0.1 unless told otherwise; without a token, a
request whose Host header is not a loopback or IP address (or the host it was started with) is
refused with 403, so a web page cannot reach it through DNS rebinding; with a token (shared on a
network) every request must carry the token, which a rebinding page cannot know, so any Host is
accepted, as in Jupyter; an API request from another origin is refused with 403 and a POST body
must be JSON (which a cross-site HTML form cannot send); no other site may frame the pages
(``frame-ancestors 'self'``); bodies, URLs and the number of sessions are capped; a number no
float can hold is refused with 400 (by `views.Tab.call`, for every action); nothing a user sends
is executed.
"""

from __future__ import annotations

import http.server
import ipaddress
import mimetypes
import os
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
from typing import Any

from ..errors import ViewError
from ..limits import MAX_BODY, measure_text
from ..training.train_thread import Runner
from ..views import PAGES, READS, ExplorerView, GPTView, Tab, TrainView
from . import pages
from .web import (  # noqa: F401  (re-exported: the server's public names)
    LOOPBACK,
    MAX_SESSIONS,
    TOKEN,
    EventStream,
    Handler,
    HTTPError,
    Request,
    Session,
    SessionClosed,
    Sessions,
    SessionsFull,
    check_token,
    dumps,
    finite_json,
    give_back_memory,
    json_float,
)

MAX_URL = 4096  # characters of a request target
SOCKET_TIMEOUT = 30.0  # a client that sends nothing (or reads nothing) for this long is dropped
HEARTBEAT_SECONDS = 10.0  # an EventStream sends a comment this often, to notice vanished clients
KEEPALIVE_SECONDS = 2.0  # a frame stream looks at its client this often while nothing happens

_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
# a file of static/ or of one page's folder in it (explorer/, train/, gpt/): never a dot first
_STATIC_NAME = re.compile(r"(?:[A-Za-z0-9_-]+/)?[A-Za-z0-9_-][A-Za-z0-9_.-]*")
# a page's URL: its file's name, or its view's (not the explorer's)
_PAGES = {"/": PAGES["explorer"]}
_PAGES.update({f"/{name}": name for name in PAGES.values()})
_PAGES.update({f"/{view}": name for view, name in PAGES.items() if view != "explorer"})
_VIEWS = {name: view for view, name in PAGES.items()}


def build_routes() -> dict[tuple[str, str], Handler]:
    """The route table: ``POST /api/<view>/<action>`` for every action of the views (and GET for
    those that only read), and the Train view's event stream."""
    routes: dict[tuple[str, str], Handler] = {}
    for view, cls in (("explorer", ExplorerView), ("train", TrainView), ("gpt", GPTView)):
        for action in cls.ACTIONS:
            handler = _view_route(view, action)
            routes[("POST", f"/api/{view}/{action}")] = handler
            if (view, action) in READS:
                routes[("GET", f"/api/{view}/{action}")] = handler
    routes[("GET", "/api/train/stream")] = train_stream
    routes[("GET", "/api/gpt/stream")] = lambda req: train_stream(req, "gpt")
    return routes


def _view_route(view: str, action: str) -> Handler:
    def handler(req: Request) -> dict[str, Any]:
        session = req.session
        with session.lock:  # one request of a tab at a time; training goes on meanwhile
            answer = session.tab.call(view, action, req.body)
        if view in ("train", "gpt"):
            session.frame_published()  # e.g. a pause: its streams send the new frame now
            runner = req.options.get("runner")
            if runner is not None:
                runner.wake()  # e.g. a play
        return answer

    handler.__name__ = f"{view}_{action}"
    return handler


def train_stream(req: Request, view: str = "train") -> EventStream:
    """Server-Sent Events: the tab's Train (or GPT) view frames as they are published (the
    newest, if the page reads slower than they come), None now and then to see a client gone.

    The tab counts as watched while the connection is served: `_Handler._stream` calls the
    stream's `on_open` before its first byte and `on_close` when it ends however it ends (a
    client that resets the connection before the first byte included), not a generator's
    ``finally``, which never runs for a generator that never started."""
    session = req.session
    with session.lock:
        cursor = getattr(session.tab, view).cursor()
    runner = req.options.get("runner")

    def fresh() -> bool:
        return cursor.trainer.published()[1] != cursor.last or session.closed.is_set()

    def frames() -> Any:
        while not session.closed.is_set() and not req.stopping.is_set():
            with session.frames:
                session.frames.wait_for(fresh, timeout=KEEPALIVE_SECONDS)
            yield cursor.next()

    def opened() -> None:
        with session.lock:
            session.streams += 1
        if runner is not None:
            runner.wake()  # a run held while nobody watched goes on

    def closed() -> None:
        with session.lock:
            session.streams -= 1
            session.last_seen = time.monotonic()

    return EventStream(frames(), on_close=closed, on_open=opened)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    server_version = "micrograd-playground"
    sys_version = ""

    # ------------------------------------------------------------------------------ plumbing

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError, OSError):
            self.close_connection = True  # the client went away: nothing to answer

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_PUT(self) -> None:
        self._refuse_method()

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    def _refuse_method(self) -> None:
        self._send_json(405, {"error": f"method {self.command} is not allowed"})

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if getattr(self, "_new_cookie", ""):  # the token came in the URL: keep it for the page
            self.send_header("Set-Cookie", self._new_cookie)
        if getattr(self, "_holds", None) is not None:
            self.send_header("X-Playground-Holds", ",".join(self._holds))
        if status >= 400:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, dumps(obj), "application/json; charset=utf-8")

    # ------------------------------------------------------------------------------ checks

    def _check_host(self) -> None:
        """403 unless the Host header names this server by an address or localhost (or by the
        name it was started with): a DNS-rebinding page reaches us under its own domain name.
        With a token, any Host: the token is what a rebinding page cannot send (as in Jupyter),
        and students open the page by the machine's name."""
        host = self.headers.get("Host")
        if not host:
            raise HTTPError(400, "the request has no Host header")
        if self.server.token or "*" in self.server.allowed_names:
            return
        try:
            name = urllib.parse.urlsplit("//" + host).hostname
        except ValueError:
            raise HTTPError(403, f"refusing Host {host[:80]!r}") from None
        # Any port: a proxy in front (jupyter-server-proxy's /proxy/8000/) passes on the Host the
        # browser sent it, with its own port; a rebinding page needs a name, not an address.
        if name is None:
            raise HTTPError(403, f"refusing Host {host[:80]!r}: not this server's address")
        if name in self.server.allowed_names:
            return
        try:
            ipaddress.ip_address(name)
        except ValueError:
            raise HTTPError(
                403,
                f"refusing Host {host[:80]!r}: this server answers only to its address "
                f"(e.g. {self.server.url}), to protect it from other web pages",
            ) from None

    def _check_token(self, query: dict[str, str]) -> None:
        """When the server has a token (shared beyond this machine), every request carries it;
        an answer to a request that had it in the URL sets it as a cookie (see web.check_token)."""
        self._new_cookie = ""
        if self.server.token:
            self._new_cookie = check_token(
                self.headers.get("Cookie", ""), query, self.server.token, self.server.port
            )

    def _check_origin(self) -> None:
        """An API request must come from a page of this server (or from a program, which sends
        no Origin): another web page in the user's browser may not drive the playground."""
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            raise HTTPError(403, "refusing a request from another site")
        origin = self.headers.get("Origin")
        if origin is None or site == "same-origin":
            # The browser itself says the page is ours (a proxy in front, as Jupyter's, passes
            # its own Origin and Host, so they need not match ours)
            return
        hosts = {self.headers.get("Host") or "", self.headers.get("X-Forwarded-Host") or ""}
        if urllib.parse.urlsplit(origin).netloc not in hosts - {""}:
            raise HTTPError(403, f"refusing a request from another origin ({origin[:80]})")

    def _read_body(self) -> Any:
        length_text = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            raise HTTPError(411, "send the body with a Content-Length, not chunked")
        if length_text is None:
            return None
        try:
            length = int(length_text)
        except ValueError:
            raise HTTPError(400, f"bad Content-Length {length_text[:20]!r}") from None
        if length < 0:
            raise HTTPError(400, f"bad Content-Length {length_text[:20]!r}")
        if length > MAX_BODY:
            raise HTTPError(413, f"the request body is {length} bytes; at most {MAX_BODY} allowed")
        if length == 0:
            return None
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HTTPError(
                415,
                f"the body must be JSON (Content-Type application/json), got "
                f"{ctype[:40] or 'none'!r}",
            )
        raw = self.rfile.read(length)
        if len(raw) < length:
            raise ConnectionError("the client sent less than its Content-Length")
        measure_text(raw)  # depth and values too, before anything is built from it
        try:
            return finite_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise HTTPError(400, f"the body is not valid JSON: {exc}") from None

    def _session(self, query: dict[str, str]) -> Session:
        sid = self.headers.get("X-Session") or query.get("session")
        if not sid:
            raise HTTPError(400, "missing the X-Session header (reload the page)")
        if not _SESSION_ID.fullmatch(sid):
            raise HTTPError(400, "bad session id: 8 to 64 letters, digits, - or _")
        return self.server.sessions.acquire(sid)  # (released by _api once answered)

    # ------------------------------------------------------------------------------ dispatch

    def _dispatch(self, method: str) -> None:
        self._holds: list[str] | None = None
        try:
            if len(self.path) > MAX_URL:
                raise HTTPError(414, f"the URL is longer than {MAX_URL} characters")
            self._check_host()
            split = urllib.parse.urlsplit(self.path)
            path = split.path
            query = {k: v[-1] for k, v in urllib.parse.parse_qs(split.query).items()}
            self._check_token(query)
            if path.startswith("/api/"):
                self._api(method, path, query)
            elif method == "POST":
                raise HTTPError(405, f"cannot POST to {path[:80]}")
            else:
                self._static(path)
        except (HTTPError, ViewError) as exc:
            self._send_json(exc.status, {"error": exc.message})
        except SessionsFull as exc:
            self.server.say_full(str(exc))
            self._send_json(503, {"error": str(exc)})
        except SessionClosed:
            self._send_json(503, {"error": "the playground is stopping"})
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # a bug: say so in one line, keep serving
            print(
                f"micrograd playground: error on {method} {self.path[:80]}: {exc!r}",
                file=sys.stderr,
            )
            try:
                self._send_json(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})
            except OSError:
                self.close_connection = True

    def _api(self, method: str, path: str, query: dict[str, str]) -> None:
        methods = [m for (m, p) in self.server.routes if p == path]
        if not methods:
            raise HTTPError(404, f"no such API: {path[:80]}")
        handler = self.server.routes.get((method, path))  # HEAD: no API answers it
        if handler is None:
            raise HTTPError(405, f"{path[:80]} takes {' or '.join(sorted(methods))}")
        # Every API request, GET too, must come from a page of this server: even a GET makes or
        # refreshes a session, and 70 <img> tags on another site would push the learner's out.
        self._check_origin()
        body = None
        if method == "POST":
            body = self._read_body()
        elif self.headers.get("Content-Length", "0") != "0" or self.headers.get(
            "Transfer-Encoding"
        ):
            self.close_connection = True  # a GET with a body: never read it as the next request
        session = self._session(query)  # not dropped until this request is answered
        try:
            # What the server holds of this tab, before the request changes it: a page that
            # holds a program or settings the server does not (it was restarted, or forgot the
            # tab) sends them again (common.js's httpTransport).
            self._holds = session.holds()
            req = Request(
                method, path, query, body, session, self.server.options, self.server.stopping
            )
            result = handler(req)
            if isinstance(result, EventStream):
                self._stream(result)
            elif isinstance(result, dict):
                self._send_json(200, result)
            else:
                raise TypeError(f"handler for {path} returned {type(result).__name__}, not a dict")
        finally:
            self.server.sessions.release(session)

    def _static(self, path: str) -> None:
        name = _PAGES.get(path)
        if name is None and path.startswith("/static/"):
            name = path[len("/static/") :]
        if name is None or not _STATIC_NAME.fullmatch(name):
            raise HTTPError(404, f"not found: {path[:80]}")
        try:
            view = _VIEWS.get(name)
            data = pages.static_bytes(name) if view is None else pages.page_html(view).encode()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise HTTPError(404, f"not found: {path[:80]}") from None
        ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype in ("application/javascript", "image/svg+xml"):
            ctype += "; charset=utf-8"
        extra = {}
        if name.endswith(".html"):
            # frame-ancestors: no other site may frame a page (and trick the learner into
            # clicking in it); the page itself, or a notebook served through the same origin
            # (jupyter-server-proxy's /proxy/8000/), may. The notebook widget is not framed: it
            # is these scripts inside the notebook's own page, whatever its origin.
            extra["Content-Security-Policy"] = (
                "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                "base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
            )
            extra["X-Frame-Options"] = "SAMEORIGIN"  # the same, for browsers before CSP 2
        self._send(200, data, ctype, extra)

    def _stream(self, stream: EventStream) -> None:
        """Send events until the iterator ends, the client vanishes, or the server stops."""
        if stream.on_open is not None:
            stream.on_open()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            # Chunked, not a body that ends when the connection does: a proxy built on tornado
            # (jupyter-server-proxy) forwards chunks as they come, but holds a close-delimited
            # body until the end, which a stream never reaches.
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("X-Accel-Buffering", "no")  # nginx in front: do not buffer either
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self._chunk(b"retry: 2000\n\n")
            last = time.monotonic()
            for item in stream.iterator:
                if self.server.stopping.is_set():
                    break
                if item is None:
                    if self._client_gone():
                        break  # the tab closed: free this thread and its reader now
                    if time.monotonic() - last < HEARTBEAT_SECONDS:
                        continue
                    chunk = b": keep-alive\n\n"
                else:
                    chunk = b"data: " + dumps(item) + b"\n\n"
                self._chunk(chunk)
                last = time.monotonic()
            self.wfile.write(b"0\r\n\r\n")  # the last chunk: the stream ended
        except (ConnectionError, TimeoutError, OSError):
            self.close_connection = True  # the tab was closed or reloaded: end quietly
        finally:
            close = getattr(stream.iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception as exc:
                    print(
                        f"micrograd playground: closing a stream failed: {exc!r}", file=sys.stderr
                    )
            if stream.on_close is not None:
                stream.on_close()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _client_gone(self) -> bool:
        """Whether the client hung up: its socket reads as closed (an EventStream's client
        sends nothing after its request, so readable means end of file, or pipelined bytes)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True  # a stuck client never keeps the process alive
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(
        self,
        address: tuple[str, int],
        family: int,
        host: str,
        routes: dict[tuple[str, str], Handler] | None,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.address_family = family
        super().__init__(address, _Handler)
        self.port: int = self.server_address[1]
        self.routes = build_routes() if routes is None else dict(routes)
        self.runner = Runner()
        self.sessions = Sessions(limit=max_sessions, make_tab=self._make_tab)
        self.options: dict[str, Any] = {"runner": self.runner}
        self._full_said = 0.0
        self.stopping = threading.Event()
        self.verbose = False
        self.allowed_names = {"localhost", host.strip("[]").lower()}
        if os.environ.get("JUPYTERHUB_SERVICE_PREFIX"):
            # Inside a JupyterHub (or Binder) server: pages reach us only through the hub's
            # authenticated proxy, under the hub's name, and the browser is on another machine,
            # so this machine's loopback is not the browser's for a rebinding page to reach.
            self.allowed_names.add("*")
        shown = "127.0.0.1" if host in ("", "0.0.0.0") else "::1" if host == "::" else host
        shown = f"[{shown}]" if ":" in shown else shown
        self.url = f"http://{shown}:{self.port}/"
        self.token = ""  # when set, every request must carry it (see Handler._check_token)

    def _make_tab(self, session: Session) -> Tab:
        """A new browser tab's views; its Train view trains on this server's runner."""
        tab = Tab(jit=bool(self.options.get("jit", True)))

        def run(trainer: Any) -> None:
            self.runner.add(trainer, on_frame=session.frame_published, watched=session.watched)
            session.on_close.append(lambda: self.runner.remove(trainer))

        tab.train.on_trainer = tab.gpt.on_trainer = run
        return tab

    def say_full(self, message: str) -> None:
        """The session cap was reached: one line on the console (not one per refused request)."""
        now = time.monotonic()
        if now - self._full_said > 60.0:
            self._full_said = now
            print(f"micrograd playground: {message}", file=sys.stderr, flush=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return  # a client hung up: not worth a traceback
        print(f"micrograd playground: error with a client: {exc!r}", file=sys.stderr)


class Playground:
    """A running playground server: `.url` to open, `.stop()` to shut it down (idempotent),
    `.note` says why the port differs from the one asked for (or is ''). Also a context manager."""

    def __init__(self, server: _Server, thread: threading.Thread, note: str) -> None:
        self._server = server
        self._thread = thread
        self.url: str = server.url
        self.port: int = server.port
        self.token: str = server.token
        self.note = note
        self._stopped = False

    @property
    def sessions(self) -> Sessions:
        return self._server.sessions

    def stop(self) -> None:
        """Stop serving: ends every stream and session, closes the socket; returns within about a
        second (daemon threads still talking to a stuck client are left to die with the process)."""
        if self._stopped:
            return
        self._stopped = True
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._server.sessions.close_all()
        self._server.runner.stop()
        self._thread.join(timeout=2.0)
        give_back_memory()  # again, now that the request threads are done with theirs

    def __enter__(self) -> Playground:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<Playground {self.url}{' (stopped)' if self._stopped else ''}>"

    def _repr_html_(self) -> str:  # a link (micrograd.widgets puts a view in a cell)
        return f'<a href="{self.url}" target="_blank">micrograd playground at {self.url}</a>'


def _check_port(port: object) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"serve: port must be an int from 0 to 65535, got {port!r}")
    return port


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = False,
    jit: bool = True,
    verbose: bool = False,
    routes: dict[tuple[str, str], Handler] | None = None,
    token: str = "",
    max_sessions: int = MAX_SESSIONS,
) -> Playground:
    """Start the playground in a background thread and return its handle (`.url`, `.stop()`).

    `port` 0 picks a free port; a taken port also falls back to a free one (`.note` says so).
    `host` is the address to listen on: 127.0.0.1 (this machine only) unless you mean to share the
    page on a network. `jit` lets the training view use `micrograd.jit` (numpy) when available.
    `routes` replaces the API table of `build_routes()` (for tests, or a view of your own).
    `token`: when not empty, every request must carry it (the handle's `.url` includes it, and
    the first page sets it as a cookie), as Jupyter does; `token_for(host)` picks one for a host.
    `max_sessions`: browser tabs at once; past it, a tab that does not watch its training makes
    room, and when every tab does, a new one is refused with a line saying so.
    """
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"serve: max_sessions must be a whole number >= 1, got {max_sessions!r}")
    if not isinstance(token, str) or (token and not TOKEN.fullmatch(token)):
        raise ValueError("serve: token must be 8 to 128 letters, digits, - or _")
    if not isinstance(host, str):
        raise TypeError(f"serve: host must be a str, got {type(host).__name__} {host!r}")
    if not token and host.strip("[]") not in LOOPBACK:
        # Other machines can reach it: without a token, anyone on the network drives it (and a
        # web page through DNS rebinding, by its address). Refused, not silently open.
        raise ValueError(
            f"serve: listening on {host} lets other machines reach the playground, "
            f"so it needs a token (token_for({host!r}) picks one; the command line "
            f"picks one unless given --token); an empty token is allowed only on "
            f"127.0.0.1"
        )
    _check_port(port)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    bind = host.strip("[]")
    note = ""
    try:
        server = _Server((bind, port), family, host, routes, max_sessions)
    except OSError as exc:
        if port == 0 or exc.errno not in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
        server = _Server((bind, 0), family, host, routes, max_sessions)
        note = f"port {port} is taken; using {server.port} instead"
    server.options.update(jit=bool(jit))
    server.token = token
    if token:
        server.url += f"?token={token}"
    server.verbose = verbose
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        daemon=True,
        name="micrograd-playground",
    )
    thread.start()
    handle = Playground(server, thread, note)
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(handle.url,), daemon=True).start()
    return handle
