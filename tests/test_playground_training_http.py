"""The training view's HTTP API through a real server (urllib, no browser)."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
import uuid

import pytest

from micrograd.io import load


class Tab:
    """One browser tab's worth of requests (its own session id)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.session = uuid.uuid4().hex

    def call(self, path: str, body: object = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json", "X-Session": self.session},
        )
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def ok(self, path: str, body: object = None) -> dict:
        status, answer = self.call(path, body)
        assert status == 200, answer
        return answer


@pytest.fixture
def tab(playground):
    t = Tab(playground)
    yield t
    t.call("/api/train/control", {"action": "pause"})


@pytest.mark.parametrize(
    "path, body, words",
    [
        ("/api/train/config", {"hidden": [8, 0]}, "hidden layer 2 needs 1 to 32 neurons, got 0"),
        ("/api/train/config", {"hidden": [2] * 40}, "at most 6 hidden layers, got 40"),
        ("/api/train/config", {"lr": "nan"}, "Learning rate must be a finite number > 0"),
        ("/api/train/config", {"dataset": "imagenet"}, "unknown Dataset 'imagenet'"),
        ("/api/train/config", [1, 2], "the request body must be a JSON object"),
        (
            "/api/train/points",
            {"added": [[0.1, 0.1, 0]] * 10_000},
            "at most 300 added points, got 10000",
        ),
        ("/api/train/points", {"points": []}, 'send {"added"'),
        ("/api/train/pick", {"index": 100}, "point index must be a whole number from 0 to 99"),
        ("/api/train/control", {"action": "explode"}, "unknown action 'explode'"),
        ("/api/train/control", {"action": "step", "steps": 10**6}, "steps must be a whole number"),
    ],
)
def test_bad_input_is_a_400_with_one_line_and_nothing_is_lost(tab, path, body, words):
    tab.ok("/api/train/config", {"hidden": [3]})
    tab.ok("/api/train/control", {"action": "step", "steps": 2})
    status, answer = tab.call(path, body)
    assert status == 400 and words in answer["error"] and "\n" not in answer["error"]
    state = tab.ok("/api/train/state")  # the run is as it was
    assert state["meta"]["settings"]["hidden"] == [3] and state["frame"]["step"] == 2
    assert len(state["meta"]["points"]) == 100


def test_config_step_reset_and_the_model_file(tab, tmp_path):
    a = tab.ok("/api/train/config", {"hidden": [4], "seed": 7})
    assert a["meta"]["sizes"] == [2, 4, 1] and a["frame"]["step"] == 0
    opts = tab.ok("/api/train/options")
    assert "moons" in [d[0] for d in opts["datasets"]] and opts["limits"]["layers"] == 6
    f = tab.ok("/api/train/control", {"action": "step", "steps": 5})["frame"]
    assert f["step"] == 5 and f["loss"] > 0
    model = tab.ok("/api/train/model")
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    m = load(str(path))
    # the frame's links: each parameter's look, w/3 as a byte, in parameters() order
    links = [b / 127.5 - 1 for b in base64.b64decode(f["links"])]
    looks = [max(-1, min(1, p.data / 3)) for p in m.parameters()]
    assert links == pytest.approx(looks, abs=1 / 127)
    read = tab.ok("/api/train/view", {"read": [0, 0, 1]})["read"]  # and exactly, when read
    assert read["value"] == m.layers[0].neurons[0].w[1].data
    r = tab.ok("/api/train/control", {"action": "reset"})
    assert r["frame"]["step"] == 0 and r["meta"]["settings"]["seed"] == 7
    n = tab.ok("/api/train/control", {"action": "new_weights"})
    assert n["meta"]["settings"]["seed"] != 7


def test_the_stream_delivers_frames_while_playing_and_pause_stops(tab, playground):
    tab.ok("/api/train/config", {"hidden": [8, 8]})
    url = f"{tab.url}/api/train/stream?session={tab.session}"
    with urllib.request.urlopen(url, timeout=20) as stream:
        tab.ok("/api/train/control", {"action": "play"})
        frames, end = [], time.monotonic() + 10
        for line in stream:
            if line.startswith(b"data:"):
                frames.append(json.loads(line[5:]))
                if len(frames) >= 5 and frames[-1]["step"] > 50 or time.monotonic() > end:
                    break
    assert len(frames) >= 5 and frames[-1]["step"] > 50
    steps = [h[0] for f in frames for h in f["history"]]
    # every step, in order; a frame may send the previous frame's last bucket again (it may have
    # grown), which the page replaces
    steps = [k for i, k in enumerate(steps) if i == 0 or k != steps[i - 1]]
    assert steps == list(range(len(steps)))
    p = tab.ok("/api/train/control", {"action": "pause"})["frame"]
    time.sleep(0.3)
    assert tab.ok("/api/train/state")["frame"]["step"] == p["step"] and not p["playing"]


@pytest.mark.slow
def test_tabs_do_not_share_runs(playground):
    a, b = Tab(playground), Tab(playground)
    a.ok("/api/train/config", {"dataset": "xor"})
    b.ok("/api/train/config", {"dataset": "circles"})
    a.ok("/api/train/control", {"action": "step", "steps": 3})
    assert a.ok("/api/train/state")["meta"]["settings"]["dataset"] == "xor"
    sb = b.ok("/api/train/state")
    assert sb["meta"]["settings"]["dataset"] == "circles" and sb["frame"]["step"] == 0


@pytest.mark.slow
def test_a_closed_stream_is_no_longer_a_listener(tab, playground_server):
    tab.ok("/api/train/config", {"hidden": [2]})
    url = f"{tab.url}/api/train/stream?session={tab.session}"
    tr = playground_server.sessions.get(tab.session)  # the tab's session counts its streams
    assert tr.streams == 0
    stream = urllib.request.urlopen(url, timeout=20)
    stream.readline()
    assert wait(lambda: tr.streams == 1)
    tab.ok("/api/train/control", {"action": "play"})  # frames flow: the server writes often
    stream.close()
    assert wait(lambda: tr.streams == 0)  # so an unwatched tab's run pauses


@pytest.mark.slow
def test_a_closed_stream_of_a_paused_run_is_noticed_without_a_frame(tab, playground_server):
    # Nothing is written to a paused run's stream but keep-alive checks: the server must see
    # the tab's socket close there (the idea and fix are the train helper's), not only when a
    # 10 s heartbeat fails to send.
    tab.ok("/api/train/config", {"hidden": [2]})
    tr = playground_server.sessions.get(tab.session)
    stream = urllib.request.urlopen(f"{tab.url}/api/train/stream?session={tab.session}", timeout=20)
    stream.readline()
    assert wait(lambda: tr.streams == 1)
    stream.close()
    assert wait(lambda: tr.streams == 0, timeout=8.0)


def wait(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_no_jit_trains_on_the_eager_engine():
    from micrograd.playground import serve

    with serve(port=0, jit=False) as pg:
        tab = Tab(pg.url)
        a = tab.ok("/api/train/config", {"hidden": [3]})
        assert a["meta"]["engine"] == "eager"
        f = tab.ok("/api/train/control", {"action": "step", "steps": 2})["frame"]
        assert f["step"] == 2 and f["grid"]["kind"] == "score"


def test_the_first_settings_start_the_run_and_nothing_started_over(playground):
    # A page's first request brings its URL's settings: the run starts with them, and the page
    # does not say "a new model or new data, so training started over" on a first visit.
    answer = Tab(playground).ok("/api/train/config", {"hidden": [3], "dataset": "xor"})
    assert answer["meta"]["change"] == "" and answer["meta"]["settings"]["hidden"] == [3]
    assert answer["meta"]["sizes"] == [2, 3, 1] and answer["frame"]["step"] == 0
