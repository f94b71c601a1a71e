"""The playground's server over plain HTTP (urllib and raw sockets, no browser): pages and package
data, the refusals that keep a local server safe (Host header, other origins, sizes, bad JSON),
sessions, Server-Sent Events with clients that vanish, and the real `micrograd playground`
command stopping on Ctrl-C."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from micrograd.playground import EventStream, HTTPError, Request, serve
from micrograd.playground.serving.server import MAX_BODY, MAX_SESSIONS, Sessions, build_routes

REPO = pathlib.Path(__file__).resolve().parents[1]
SID = "test-session-0001"


def call(
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    method: str | None = None,
    raw: bytes | None = None,
) -> tuple[int, Any]:
    """(status, parsed JSON or text) for one request; never raises for an HTTP error status."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    h = {"X-Session": SID}
    if data is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, headers=h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, text, ctype = r.status, r.read().decode(), r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        status, text, ctype = e.code, e.read().decode(), e.headers["Content-Type"]
    if text and ctype.startswith("application/json"):
        return status, json.loads(text)
    return status, text


# ---------------------------------------------------------------- a server with test routes

stream_closed = threading.Event()
stream_sent: list[int] = []


def echo(req: Request) -> dict[str, Any]:
    if req.body is not None and not isinstance(req.body, dict):
        raise HTTPError(400, "the body must be a JSON object")
    count = req.session.state.setdefault("echo", {"count": 0})
    count["count"] += 1
    return {"body": req.body, "query": req.query, "session": req.session.id, **count}


def broken(req: Request) -> dict[str, Any]:
    raise RuntimeError("a bug in a handler")


def forever(req: Request) -> EventStream:
    def events() -> Iterator[dict[str, Any]]:
        i = 0
        while not req.session.closed.is_set():
            stream_sent.append(i)
            yield {"i": i, "pad": "x" * 2000}  # fills socket buffers fast once nobody reads
            i += 1

    return EventStream(events(), on_close=stream_closed.set)


def three(req: Request) -> EventStream:
    return EventStream(iter([{"n": 1}, None, {"n": 2}, {"n": 3}]))


ROUTES = {
    ("POST", "/api/test/echo"): echo,
    ("GET", "/api/test/echo"): echo,
    ("GET", "/api/test/broken"): broken,
    ("GET", "/api/test/forever"): forever,
    ("GET", "/api/test/three"): three,
}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    handle = serve(port=0, routes=ROUTES)
    yield handle
    handle.stop()


# ---------------------------------------------------------------- pages and package data


def test_pages_and_static_files_are_served(playground: str) -> None:
    status, html = call(playground)
    assert status == 200 and "<title>" in html and "static/common.js" in html
    for name in ("style.css", "common.js", "explorer/explorer.js", "train/train.css", "gpt/gpt.js"):
        status, text = call(playground + "static/" + name)
        assert status == 200 and len(text) > 100
    for page, name in (("", "index.html"), ("train", "train.html"), ("gpt.html", "gpt.html")):
        assert call(playground + page)[1] == call(playground + "static/" + name)[1]
    assert call(playground + "static/nope.css")[0] == 404
    # a page's folder, one deep, and nothing out of static/ through it
    assert call(playground + "static/explorer/nope.js")[0] == 404
    assert call(playground + "static/explorer/../common.js")[0] == 404
    assert call(playground + "static/explorer/..%2F..%2Fviews.py")[0] == 404
    assert call(playground + "static/a/b/common.js")[0] == 404
    assert call(playground + "static/explorer")[0] == 404
    assert call(playground + "static/..%2Fserver.py")[0] == 404
    assert call(playground + "static/../server.py")[0] == 404
    assert call(playground + "etc/passwd")[0] == 404


def test_the_real_route_table_joins_the_views() -> None:
    from micrograd.playground.views import READS, ExplorerView, GPTView, TrainView

    routes = build_routes()
    views = (("explorer", ExplorerView), ("train", TrainView), ("gpt", GPTView))
    actions = [(name, a) for name, cls in views for a in cls.ACTIONS]
    expected = {("POST", f"/api/{v}/{a}") for v, a in actions}
    expected |= {("GET", f"/api/{v}/{a}") for v, a in READS}
    expected |= {("GET", "/api/train/stream"), ("GET", "/api/gpt/stream")}
    assert set(routes) == expected
    assert all(method in ("GET", "POST") and path.startswith("/api/") for method, path in routes)


# ---------------------------------------------------------------- refusals


def test_a_foreign_host_header_is_refused(server: Any) -> None:
    # DNS rebinding: a page at evil.example resolves its name to 127.0.0.1 and calls us.
    for host in (f"evil.example:{server.port}", "evil.example", f"127.0.0.1.nip.io:{server.port}"):
        status, answer = call(server.url + "api/test/echo", headers={"Host": host})
        assert status == 403 and "refusing Host" in answer["error"], host
    # An address with another port is a proxy in front (jupyter-server-proxy passes on the Host
    # the browser sent it): no rebinding page can send an address, only a name.
    status, _ = call(server.url, headers={"Host": f"127.0.0.1:{server.port + 1}"})
    assert status == 200
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        assert call(server.url + "api/test/echo", headers={"Host": host})[0] == 200


def test_a_post_from_another_origin_is_refused(server: Any) -> None:
    url = server.url + "api/test/echo"
    status, answer = call(url, {"x": 1}, headers={"Origin": "http://evil.example"})
    assert status == 403 and "another origin" in answer["error"]
    status, _ = call(url, {"x": 1}, headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    own = f"http://127.0.0.1:{server.port}"
    status, answer = call(url, {"x": 1}, headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert status == 200 and answer["body"] == {"x": 1}


def test_a_cross_site_get_cannot_touch_or_push_out_a_session(server: Any) -> None:
    # Another page's <img src=".../api/...?session=..."> arrives as a cross-site GET: refused
    # before any session is made or refreshed, so the learner's session stays.
    mine = {"X-Session": "the-learners-tab"}
    assert call(server.url + "api/test/echo", headers=mine)[1]["count"] == 1
    before = len(server.sessions)
    for i in range(server.sessions.limit + 6):
        url = server.url + f"api/test/echo?session=intruder-{i:04d}"
        status, answer = call(url, headers={"X-Session": "", "Sec-Fetch-Site": "cross-site"})
        assert status == 403 and "another site" in answer["error"]
    assert len(server.sessions) == before
    assert call(server.url + "api/test/echo", headers=mine)[1]["count"] == 2  # still there


def test_bad_bodies_get_a_4xx_with_a_one_line_json_error(server: Any) -> None:
    url = server.url + "api/test/echo"
    cases = [
        (b"{not json", {}, 400, "not valid JSON"),
        (b'{"x": NaN}', {}, 400, "not valid JSON"),
        (b"\xff\xfe", {}, 400, "not valid JSON"),
        (b"[1, 2]", {}, 400, "JSON object"),
        (b"x=1", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "must be JSON"),
        (b"a" * (MAX_BODY + 1), {}, 413, "at most"),
        (b"[" * 100_000 + b"]" * 100_000, {}, 400, "nested more than 32 deep"),  # was a 500
    ]
    for raw, headers, status, words in cases:
        got, answer = call(url, raw=raw, headers=headers)
        assert got == status, (raw[:20], answer)
        assert words in answer["error"] and "\n" not in answer["error"]
    assert call(server.url + "api/test/echo", {"ok": True})[0] == 200  # still serving


def test_sessions_are_required_and_checked(server: Any) -> None:
    url = server.url + "api/test/echo"
    status, answer = call(url, headers={"X-Session": ""})
    assert status == 400 and "X-Session" in answer["error"]
    for bad in ("short", "has space in it", "x" * 65, "../../etc"):
        status, answer = call(url, headers={"X-Session": bad})
        assert status == 400 and "session id" in answer["error"], bad
    # EventSource cannot set headers: ?session= works too.
    status, answer = call(url + "?session=from-the-query", headers={"X-Session": ""})
    assert status == 200 and answer["session"] == "from-the-query"


def test_each_session_has_its_own_state(server: Any) -> None:
    url = server.url + "api/test/echo"
    counts = [call(url, headers={"X-Session": f"tab-number-{i % 2}"})[1]["count"] for i in range(6)]
    assert counts == [1, 1, 2, 2, 3, 3]


def test_unknown_paths_and_methods(server: Any) -> None:
    assert call(server.url + "api/nothing")[0] == 404
    status, answer = call(server.url + "api/test/broken", {"x": 1})
    assert status == 405 and "GET" in answer["error"]
    assert call(server.url + "api/test/echo", method="DELETE")[0] == 405
    assert call(server.url + "api/test/forever", method="HEAD")[0] == 405  # never a stream
    assert call(server.url, {"x": 1})[0] == 405
    assert call(server.url + "x" * 5000)[0] == 414


def test_a_handler_bug_is_a_500_and_the_server_keeps_serving(
    server: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    status, answer = call(server.url + "api/test/broken")
    assert status == 500 and "a bug in a handler" in answer["error"]
    assert "a bug in a handler" in capfd.readouterr().err
    assert call(server.url + "api/test/echo")[0] == 200


@pytest.mark.slow
def test_many_sessions_are_capped(server: Any) -> None:
    url = server.url + "api/test/echo"
    for i in range(MAX_SESSIONS + 20):
        assert call(url, headers={"X-Session": f"many-tabs-{i:04d}"})[0] == 200
    assert len(server.sessions) == MAX_SESSIONS
    # The newest tabs are kept, the least recently seen were dropped and start afresh.
    assert call(url, headers={"X-Session": f"many-tabs-{MAX_SESSIONS + 19:04d}"})[1]["count"] == 2
    assert call(url, headers={"X-Session": "many-tabs-0000"})[1]["count"] == 1


@pytest.mark.slow
def test_idle_sessions_expire_and_are_closed() -> None:
    now = [0.0]
    sessions = Sessions(limit=10, idle=60.0, clock=lambda: now[0])
    old = sessions.get("old-session")
    closed: list[str] = []
    old.on_close.append(lambda: closed.append("old"))
    now[0] = 30.0
    assert sessions.get("old-session") is old  # seen again: not idle
    now[0] = 100.0
    sessions.get("new-session")
    assert len(sessions) == 1 and old.closed.is_set() and closed == ["old"]
    assert sessions.get("old-session") is not old


# ---------------------------------------------------------------- Server-Sent Events


def read_events(url: str) -> list[str]:
    req = urllib.request.Request(url, headers={"X-Session": SID})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        return [line for line in r.read().decode().splitlines() if line.startswith("data:")]


@pytest.mark.slow
def test_an_event_stream_sends_one_data_line_per_item(server: Any) -> None:
    lines = read_events(server.url + "api/test/three")
    assert [json.loads(line[5:]) for line in lines] == [{"n": 1}, {"n": 2}, {"n": 3}]


@pytest.mark.slow
def test_a_client_vanishing_mid_stream_ends_it_and_the_server_goes_on(server: Any) -> None:
    for _ in range(3):
        stream_closed.clear()
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(
            f"GET /api/test/forever HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"X-Session: {SID}-sse\r\n\r\n".encode()
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.close()  # the tab is closed mid-stream, while events keep coming
        assert stream_closed.wait(10), "the stream did not notice its client was gone"
    # Several half-finished requests at once: none stalls the others.
    stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
    for s in stalled:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes its headers
    assert call(server.url + "api/test/echo")[0] == 200
    for s in stalled:
        s.close()


@pytest.mark.slow
def test_stop_ends_open_streams_and_frees_the_port() -> None:
    stream_closed.clear()
    handle = serve(port=0, routes=ROUTES)
    req = urllib.request.Request(handle.url + "api/test/forever", headers={"X-Session": SID})
    r = urllib.request.urlopen(req, timeout=10)
    r.readline()
    handle.stop()
    assert stream_closed.wait(10)
    r.close()
    handle.stop()  # twice is fine
    with pytest.raises(OSError):
        urllib.request.urlopen(handle.url, timeout=5)


@pytest.mark.slow
def test_a_taken_port_falls_back_to_a_free_one() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with serve(port=port, routes=ROUTES) as handle:
            assert handle.port != port and f"port {port} is taken" in handle.note
            assert call(handle.url + "api/test/echo")[0] == 200


def test_serve_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="port"):
        serve(port=70000)
    with pytest.raises(ValueError, match="port"):
        serve(port=True)
    with pytest.raises(TypeError, match="host"):
        serve(host=127)


# ---------------------------------------------------------------- the real command


def start_command(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "micrograd", "playground", "--no-browser", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "serving http://" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, line.split("serving ")[1].split()[0]


def test_ctrl_c_stops_the_command_promptly_with_status_0() -> None:
    proc, url = start_command("--port", "0")
    try:
        assert call(url)[0] == 200
        idle = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].strip("/"))))
        idle.sendall(b"GET / HTTP/1.1\r\n")  # a client in the middle of a request
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        elapsed = time.monotonic() - start
        idle.close()
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err
    # The issue asks for "within a second"; the bound is loose for a loaded CI machine, and the
    # time is printed for the record (`pytest -s`).
    print(f"playground stopped {elapsed:.2f} s after SIGINT")
    assert elapsed < 5


@pytest.mark.slow
def test_host_0000_prints_a_warning_and_a_bad_port_is_one_line() -> None:
    proc, url = start_command("--port", "0", "--host", "0.0.0.0")
    try:
        # shared on the network: the printed URL carries a random token, and nothing works
        # without it
        assert "?token=" in url and len(url.split("?token=")[1]) >= 24
        assert call(url.split("?")[0])[0] == 403
        assert call(url)[0] == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert url.startswith("http://127.0.0.1:")
    assert "warning" in err and "0.0.0.0" in err and proc.returncode == 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    bad = subprocess.run(
        [sys.executable, "-m", "micrograd", "playground", "--no-browser", "--port", "99999"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--port" in bad.stderr


def test_a_stop_that_fails_still_gives_ctrl_c_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """`micrograd playground` ignores Ctrl-C while it stops (a second one must not cut the stop
    short); a stop that raised used to leave it ignored for good: in a notebook's kernel, Jupyter's
    Interrupt would never work again, and every process it started would ignore Ctrl-C too."""
    from micrograd.commands import cli
    from micrograd.commands import playground as command

    class Broken:
        note, url, port, token = "", "http://127.0.0.1:1/", 1, ""

        def stop(self) -> None:
            raise OSError("the socket would not close")

    def serve_then_term(*args: Any, **kwargs: Any) -> Broken:
        signal.raise_signal(signal.SIGTERM)  # as `kill`: stop at once
        return Broken()

    monkeypatch.setattr(command, "serve", serve_then_term)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(OSError, match="would not close"):
            cli.main(["playground", "--no-browser"])
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


@pytest.mark.slow
def test_a_shared_playground_needs_its_token_then_a_cookie() -> None:
    # As Jupyter: off loopback a random token is required; here turned on for 127.0.0.1.
    from micrograd.playground.serving.web import token_cookie, token_for

    assert token_for("127.0.0.1") == "" and token_for("localhost") == ""
    shared = token_for("0.0.0.0")
    assert len(shared) >= 24 and shared != token_for("0.0.0.0")  # random, each time
    assert token_for("0.0.0.0", "my-own-token") == "my-own-token"
    handle = serve(port=0, routes=ROUTES, token="s3cret-token")
    try:
        assert handle.url.endswith("/?token=s3cret-token")
        bare = handle.url.split("?")[0]
        for url in (bare, bare + "api/test/echo", bare + "?token=wrong-token"):
            status, answer = call(url)
            assert status == 403 and "needs its token" in answer["error"], url
        req = urllib.request.Request(handle.url, headers={"Host": f"127.0.0.1:{handle.port}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200
            cookie = r.headers["Set-Cookie"]
        assert cookie.startswith(f"{token_cookie(handle.port)}=s3cret-token;")
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        status, answer = call(bare + "api/test/echo", headers={"Cookie": cookie.split(";")[0]})
        assert status == 200, answer  # the page's own requests carry the cookie
    finally:
        handle.stop()
    with pytest.raises(ValueError, match="token"):
        serve(port=0, token="short")


@pytest.mark.slow
def test_no_view_module_imports_a_transport() -> None:
    # The views are plain objects: the web server, the notebook widget and the static site's
    # worker are transports over them, and none of the views knows which one it runs under.
    import ast

    from micrograd.playground import views
    from micrograd.playground.serving import server

    views_dir = REPO / "micrograd" / "playground"
    transports = {
        "web",
        "server",
        "runner",
        "command",
        "socket",
        "select",
        "http",
        "ctypes",
        "widgets",
        "anywidget",
        "ipywidgets",
        "micrograd.widgets",
    }
    for name in (
        "views",
        "explore/explorer",
        "training/trainer",
        "training/train_settings",
        "training/train_frames",
        "errors",
        "../viz/layout",
    ):
        tree = ast.parse((views_dir / f"{name}.py").read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
                imported |= {a.name for a in node.names if node.level}
        assert not imported & transports, (name, imported & transports)
    # and the server's tabs are the views' Tab
    with serve(port=0) as handle:
        assert isinstance(handle._server.sessions.get("any-tab-0001").tab, views.Tab)
    assert server.Tab is views.Tab
