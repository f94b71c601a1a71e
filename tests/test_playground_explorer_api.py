"""The explorer's JSON API without a browser: bad input gets a 4xx with a one-line message, each
tab has its own graph, and the grads it reports after the backward pass are exactly those of
`Value.backward()` (and, for the lecture's L, PyTorch's)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from micrograd.expr import parse_program
from micrograd.playground.explorer import EXAMPLES, MAX_PROGRAM_CHARS
from micrograd.viz import trace


def post(url: str, path: str, body: Any, session: str = "api-test-session") -> tuple[int, Any]:
    req = urllib.request.Request(
        url + path.lstrip("/"),
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Session": session},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_bad_requests_get_a_4xx_and_one_line(playground: str) -> None:
    s = "api-bad-inputs-1"
    assert post(playground, "/api/explorer/step", {}, s)[0] == 409  # nothing loaded yet
    cases = [
        ({"program": 42}, "must be text"),
        ({"program": "a = 1.0", "layout": "neato"}, "layout"),
        ({"program": "x" * (MAX_PROGRAM_CHARS + 1)}, "at most"),
        ({"program": "a = __import__('os')"}, "calling __import__()"),
        ({"program": "a = 2.0; b = log(a - 2.0)"}, "log"),
        ({}, "must be text"),
    ]
    for body, words in cases:
        status, answer = post(playground, "/api/explorer/load", body, s)
        assert status == 400, (body, answer)
        assert words in answer["error"] and "\n" not in answer["error"]
    status, answer = post(playground, "/api/explorer/load", ["a = 1.0"], s)
    assert status == 400 and "JSON object" in answer["error"]

    status, state = post(playground, "/api/explorer/load", {"program": "a = 2.0; b = a*a"}, s)
    assert status == 200
    leaf = next(n["id"] for n in state["drawing"]["nodes"] if n.get("leaf"))
    inner = state["output"]
    for body, words in [
        ({"node": inner, "value": 1.0}, "only a leaf"),
        ({"node": "v99", "value": 1.0}, "no node"),
        ({"node": leaf, "value": "3"}, "must be a number"),
        ({"node": leaf, "value": True}, "must be a number"),
        ({"node": leaf, "value": 1e300}, "between"),
    ]:
        status, answer = post(playground, "/api/explorer/set", body, s)
        assert status == 400 and words in answer["error"], (body, answer)
    assert post(playground, "/api/explorer/nudge", {"node": inner}, s)[0] == 400


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["title"][:20])
def test_the_backward_pass_gives_backwards_grads_exactly(playground: str, example: dict) -> None:
    s = "api-exact-grads"
    status, state = post(playground, "/api/explorer/load", {"program": example["program"]}, s)
    assert status == 200
    status, state = post(playground, "/api/explorer/backward", {}, s)
    root = next(reversed(parse_program(example["program"]).values()))
    root.backward()
    nodes = trace(root)[0]
    assert [state["values"][f"v{i}"]["grad"] for i in range(len(nodes))] == [v.grad for v in nodes]
    assert [state["values"][f"v{i}"]["data"] for i in range(len(nodes))] == [v.data for v in nodes]


def test_lecture_L_against_pytorch(playground: str) -> None:
    torch = pytest.importorskip("torch")
    s = "api-torch-L"
    _, loaded = post(playground, "/api/explorer/load", {"program": EXAMPLES[1]["program"]}, s)
    _, state = post(playground, "/api/explorer/backward", {}, s)
    names = {n["name"]: n["id"] for n in loaded["drawing"]["nodes"] if n["kind"] == "value"}
    a, b, c, f = (
        torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (2.0, -3.0, 10.0, -2.0)
    )
    L = (a * b + c) * f
    L.backward()
    for name, t in zip("abcf", (a, b, c, f)):
        assert state["values"][names[name]]["grad"] == t.grad.item(), name


def test_each_tab_has_its_own_graph(playground: str) -> None:
    post(playground, "/api/explorer/load", {"program": "a = 1.0; b = a + a"}, "api-tab-one")
    post(playground, "/api/explorer/load", {"program": "x = 3.0; y = x*x*x"}, "api-tab-two")
    _, one = post(playground, "/api/explorer/backward", {}, "api-tab-one")
    _, two = post(playground, "/api/explorer/backward", {}, "api-tab-two")
    assert len(one["values"]) == 2 and one["values"]["v1"]["grad"] == 2.0  # a + a: 2
    assert two["values"][two["output"]]["data"] == 27.0


def test_setting_a_leaf_runs_both_passes_and_the_nudge_matches(playground: str) -> None:
    s = "api-set-leaf"
    _, state = post(playground, "/api/explorer/load", {"program": "x = 2.0; y = x**3"}, s)
    x = next(n["id"] for n in state["drawing"]["nodes"] if n.get("name") == "x")
    status, state = post(playground, "/api/explorer/set", {"node": x, "value": 3}, s)
    assert status == 200 and state["phase"] == "done"
    assert state["values"][state["output"]]["data"] == 27.0
    assert state["values"][x]["grad"] == 27.0  # 3x² at 3
    slope = ((3.001) ** 3 - 27.0) / 0.001  # the lecture's forward difference, here by hand
    assert state["nudge"]["slope"] == pytest.approx(slope, rel=1e-9)
    assert "(y(x + h) - y(x)) / h" in state["nudge"]["text"]
    status, answer = post(playground, "/api/explorer/load", {"program": "x = 2.0; y = log(x)"}, s)
    x = next(n["id"] for n in answer["drawing"]["nodes"] if n.get("name") == "x")
    status, answer = post(playground, "/api/explorer/set", {"node": x, "value": -1}, s)
    assert status == 400 and "log" in answer["error"]
    _, state = post(playground, "/api/explorer/forward", {}, s)
    assert state["values"][x]["data"] == 2.0  # refused: nothing changed


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["title"] for e in EXAMPLES])
def test_every_node_of_every_example_has_its_own_name(playground: str, example: dict) -> None:
    # Two boxes called `c`, or two constants called `1`, make the chain-rule lines unreadable.
    status, state = post(playground, "/api/explorer/load", {"program": example["program"]},
                         "api-names-" + str(EXAMPLES.index(example)))
    assert status == 200
    names = [n["name"] for n in state["drawing"]["nodes"] if "name" in n]
    assert names and len(names) == len(set(names)), names


def test_names_in_the_log_are_those_of_the_pictures(playground: str) -> None:
    # Constants are c1, c2, ...; made-up names t1, t2, ... (as `micrograd graph` and the README
    # say); a Unicode name is written bare, like any other name.
    s = "api-names-1"
    program = "α = 2.0; b = α*3; c = tanh(b) + -1"
    status, state = post(playground, "/api/explorer/load", {"program": program}, s)
    assert status == 200, state
    status, state = post(playground, "/api/explorer/backward", {}, s)
    assert status == 200, state
    lines = [line for step in state["log"] for line in step["lines"]]
    text = "\n".join(lines)
    assert "α.grad +=" in text and "(α)" not in text
    assert "c1.grad +=" in text and "c2.grad +=" in text  # the constants 3 and -1
    assert "3.grad" not in text and "(-1).grad" not in text
    assert "t1.grad +=" in text and "t0" not in text  # tanh(b), unlabelled
