"""The playground under an adversary's requests and a class's faults (issue 35): aborted event
streams, bodies built to blow up memory, numbers that overflow, hostile programs, evictions."""

from __future__ import annotations

import json
import socket
import struct
import time
import types
import urllib.error
import urllib.request
import uuid

import pytest

from micrograd.playground import serve
from micrograd.playground.serving.server import _Handler, train_stream
from micrograd.playground.serving.web import Request, Sessions
from micrograd.playground.training.train_thread import Runner
from micrograd.playground.training.trainer import Trainer
from micrograd.playground.views import Tab as ViewTab


def wait(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def call(url, path, body=None, session=None, raw=None):
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url.rstrip("/") + path,
        data=data,
        method="GET" if data is None else "POST",
        headers={"Content-Type": "application/json", "X-Session": session or uuid.uuid4().hex},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# ------------------------------------------------------------------ 1. aborted event streams


@pytest.mark.slow
def test_a_stream_whose_first_write_fails_is_not_counted_as_a_watcher():
    sessions = Sessions(make_tab=lambda s: ViewTab())
    session = sessions.get("tab-aborted-1")
    req = Request(
        "GET",
        "/api/train/stream",
        {},
        None,
        session,
        {},
        types.SimpleNamespace(is_set=lambda: False),
    )

    def reset(*args):
        raise ConnectionResetError("the client reset the connection")

    handler = types.SimpleNamespace(
        send_response=reset,
        server=types.SimpleNamespace(stopping=types.SimpleNamespace(is_set=lambda: False)),
    )
    for _ in range(5):  # connect, send, reset before the first byte: five times
        _Handler._stream(handler, train_stream(req))
    assert session.streams == 0
    sessions.close_all()


def _aborted_stream(port: int, session: str) -> None:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(
        f"GET /api/train/stream?session={session} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    )
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # RST


@pytest.mark.slow
def test_aborted_streams_leave_room_for_new_tabs():
    with serve(port=0, max_sessions=4) as pg:
        tabs = [uuid.uuid4().hex for _ in range(4)]
        for t in tabs:
            assert call(pg.url, "/api/train/config", {"hidden": [2]}, t)[0] == 200
            for _ in range(5):
                _aborted_stream(pg.port, t)
        assert wait(lambda: all(pg.sessions.get(t).streams == 0 for t in tabs))
        status, answer = call(pg.url, "/api/train/state")  # a fifth tab: one makes room
        assert status == 200, answer


@pytest.mark.slow
def test_a_tab_nobody_watches_stops_stepping_and_goes_on_when_watched():
    runner = Runner()
    tr = Trainer()
    watched = {"now": True}
    runner.add(tr, on_frame=lambda: None, watched=lambda: watched["now"])
    try:
        tr.play()
        runner.wake()
        assert wait(lambda: tr.step_no > 3)
        watched["now"] = False  # the page went away

        def still() -> bool:
            n = tr.step_no
            time.sleep(1.0)
            return tr.step_no == n

        assert wait(still)  # no more steps (no CPU spent) ...
        assert tr.playing  # ... but it is still the learner's playing run
        n = tr.step_no
        watched["now"] = True  # the page looks again
        runner.wake()
        assert wait(lambda: tr.step_no > n + 3)
    finally:
        runner.stop()


# ------------------------------------------------------------------ 2. bodies measured first


def _nested(depth: int, zeros: int) -> dict:
    body: object = [0] * zeros
    for i in range(depth):
        body = {f"k{i:03d}" + "x" * 36: body}
    return body  # type: ignore[return-value]


def test_a_body_that_unfolds_costs_no_more_than_its_size():
    import tracemalloc

    body = _nested(30, 60_000)  # within every limit: 30 keys of 40 characters, 60,000 zeros
    tab = ViewTab()
    tracemalloc.start()
    try:
        with pytest.raises(Exception):  # noqa: B017 (whatever the view says of it)
            tab.call("explorer", "load", body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024, f"{peak / 2**20:.0f} MiB to look at a 0.4 MB body"


@pytest.mark.parametrize(
    "body, words",
    [
        (_nested(900, 10), "nested more than 32 deep"),
        ([[0] * 1000] * 120, "more than 100,000 values"),
        ({"program": "a = " + "[" * 100_000}, None),  # a string: its brackets do not count
    ],
)
@pytest.mark.slow
def test_every_transport_measures_a_body_before_building_it(body, words):
    from micrograd.playground.serving.messages import MessageHost
    from micrograd.playground.serving.worker import Host

    text = json.dumps(body, separators=(",", ":"))
    with serve(port=0) as pg:
        status, answer = call(pg.url, "/api/explorer/load", raw=text.encode())
    host = MessageHost(ViewTab())
    [reply] = host.receive({"id": 1, "view": "explorer", "action": "load", "body": body})
    [worker_reply] = json.loads(
        Host().receive(
            json.dumps(
                {"id": 1, "view": "explorer", "action": "load", "body": body}, separators=(",", ":")
            )
        )
    )
    if words is None:  # not refused for its size: the program's own error
        assert status == 400 and "nested" not in answer["error"]
        return
    assert status in (400, 413) and words in answer["error"], answer
    assert words in reply["error"] and words in worker_reply["error"]


# ------------------------------------------------------------------ 10. the worker's limits


def test_the_worker_refuses_deep_json_with_a_line_not_a_recursion_error():
    from micrograd.playground.serving.worker import Host

    host = Host()
    [reply] = json.loads(host.receive("[" * 100_000 + "]" * 100_000))
    assert "nested more than 32 deep" in reply["error"]
    [ok] = json.loads(
        host.receive(json.dumps({"id": 2, "view": "train", "action": "options", "body": {}}))
    )
    assert "answer" in ok  # and it goes on answering


# ------------------------------------------------------------------ 4. overflows are a 4xx


@pytest.mark.parametrize("field", ["target", "weight"])
@pytest.mark.slow
def test_an_overflowing_point_is_a_400_naming_the_field(field):
    with serve(port=0) as pg:
        t = uuid.uuid4().hex
        point = call(pg.url, "/api/train/point", {}, t)[1]
        if field == "target":
            point["target"] = 1e308
        else:
            point["model"]["weights"] = [1e308] * len(point["model"]["weights"])
        status, answer = call(pg.url, "/api/explorer/point", {"from": point}, t)
    assert status == 400, answer
    assert ("target" if field == "target" else "weights") in answer["error"]
    assert "internal error" not in answer["error"]


# ------------------------------------------------------------------ 5. line separators


@pytest.mark.parametrize("sep", ["\u2028", "\x0b", "\x0c", "\x1c", "\x85", "\u2029"])
def test_a_program_with_an_odd_line_separator_in_a_comment_survives_a_leaf_edit(sep):
    from micrograd.playground.explore.explorer import Explorer

    program = f"a = 2.0  # one{sep}more\nb = 3.0\nc = a * b\n"
    ex = Explorer(program, "layered")
    leaf = next(v for v in ex.topo if v.label == "b")
    ex.set_leaf(ex.ids[leaf], 5.0)
    assert ex.program == f"a = 2.0  # one{sep}more\nb = 5.0\nc = a * b\n"
    Explorer(ex.program, "layered")  # and it still builds


# ------------------------------------------------------------------ 6. no token off loopback


def test_an_empty_token_off_loopback_is_refused_at_start():
    with pytest.raises(ValueError, match="needs a token"):
        serve(host="0.0.0.0", port=0, token="")
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "micrograd",
            "playground",
            "--no-browser",
            "--port",
            "0",
            "--host",
            "0.0.0.0",
            "--token",
            "",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "serving" not in done.stdout
    assert "needs a token" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ 3. evicted tabs come back


@pytest.mark.slow
def test_a_tab_pushed_out_by_others_comes_back_as_it_was():
    with serve(port=0, max_sessions=2) as pg:
        ex, tr = uuid.uuid4().hex, uuid.uuid4().hex
        built = call(pg.url, "/api/explorer/load", {"program": "a = 2.0\nb = a * 3.0"}, ex)[1]
        leaf = next(k for k, v in built["values"].items() if v["data"] == 2.0)
        call(pg.url, "/api/explorer/set", {"node": leaf, "value": 5.0}, ex)
        call(pg.url, "/api/train/config", {"hidden": [4], "dataset": "xor"}, tr)
        call(pg.url, "/api/train/control", {"action": "step", "steps": 30}, tr)
        model = call(pg.url, "/api/train/model", None, tr)[1]
        for _ in range(3):  # three other tabs: both are pushed out
            assert call(pg.url, "/api/train/state")[0] == 200
        assert ex not in pg.sessions._sessions and tr not in pg.sessions._sessions
        status, state = call(pg.url, "/api/explorer/state", None, ex)
        assert status == 200, state
        assert state["program"] == "a = 5.0\nb = a * 3.0"
        status, state = call(pg.url, "/api/train/state", None, tr)
        assert status == 200 and state["frame"]["step"] == 30
        assert state["meta"]["settings"]["hidden"] == [4]
        assert state["meta"]["settings"]["dataset"] == "xor"
        assert call(pg.url, "/api/train/model", None, tr)[1] == model  # the same weights


@pytest.mark.slow
def test_a_tab_being_answered_is_never_dropped_under_it():
    from micrograd.playground.serving.web import SessionsFull

    sessions = Sessions(limit=1, make_tab=lambda s: ViewTab())
    a = sessions.acquire("tab-a-0000")  # a request of tab a is being answered
    with pytest.raises(SessionsFull):
        sessions.get("tab-b-0000")  # so b cannot take its place now
    a.tab.call("explorer", "load", {"program": "x = 1.5\ny = x * x"})
    sessions.release(a)
    sessions.get("tab-b-0000")  # now it can: a is dropped, its keepsake kept
    back = sessions.get("tab-a-0000")
    assert back is not a and back.tab.call("explorer", "state")["program"] == "x = 1.5\ny = x * x"
    sessions.close_all()
