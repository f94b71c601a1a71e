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
from micrograd.playground.explore.explorer import EXAMPLES, MAX_PROGRAM_CHARS
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
    status, state = post(
        playground,
        "/api/explorer/load",
        {"program": example["program"]},
        "api-names-" + str(EXAMPLES.index(example)),
    )
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
    assert "α.grad = " in text and "(α)" not in text
    assert "c1.grad = " in text and "c2.grad = " in text  # the constants 3 and -1
    assert "3.grad" not in text and "(-1).grad" not in text
    assert "t1.grad = " in text and "t0" not in text  # tanh(b), unlabelled


# ------------------------------------------------------------------------ the box follows the graph


def _id(state: dict, name: str) -> str:
    return next(n["id"] for n in state["drawing"]["nodes"] if n.get("name") == name)


def _data(state: dict, drawing: dict | None = None) -> dict[str, float]:
    drawing = drawing or state["drawing"]
    names = {n["id"]: n["name"] for n in drawing["nodes"] if "name" in n}
    return {names[i]: v["data"] for i, v in state["values"].items()}


LECTURE_L = "a = 2.0; b = -3.0; c = 10.0\ne = a*b\nd = e + c\nf = -2.0\nL = d*f"


def test_setting_a_leaf_writes_its_number_into_the_program(playground: str) -> None:
    # The box, the menu and the graph agree: the answer's program is the old one with that one
    # number changed, and building it again gives every node the data the edit gave.
    s = "api-rewrite-1"
    _, state = post(playground, "/api/explorer/load", {"program": LECTURE_L}, s)
    body = {"node": _id(state, "b"), "value": -2.5}
    status, state = post(playground, "/api/explorer/set", body, s)
    assert status == 200, state
    assert state["program"] == LECTURE_L.replace("b = -3.0", "b = -2.5")
    _, loaded = post(playground, "/api/explorer/load", {"program": state["program"]}, s)
    _, rebuilt = post(playground, "/api/explorer/forward", {}, s)
    assert _data(rebuilt, loaded["drawing"]) == _data(state)
    assert _data(state)["L"] == (2.0 * -2.5 + 10.0) * -2.0  # by hand

    # A constant written inside an expression is edited where it is written; a negative number
    # before ** gets parentheses (-3 ** x would be -(3 ** x)).
    program = "x = 0.5\ny = 2*x + 3 ** x"
    _, state = post(playground, "/api/explorer/load", {"program": program}, s)
    x = _id(state, "x")
    consts = [n["id"] for n in state["drawing"]["nodes"] if n.get("leaf") and n["name"] != "x"]
    by_value = {state["values"][i]["data"]: i for i in consts}
    _, state = post(playground, "/api/explorer/set", {"node": by_value[2.0], "value": 4}, s)
    assert state["program"] == "x = 0.5\ny = 4.0*x + 3 ** x"
    status, answer = post(playground, "/api/explorer/set", {"node": by_value[3.0], "value": -3}, s)
    assert status == 400 and "-3" in answer["error"]  # (-3) ** 0.5 has no real value
    post(playground, "/api/explorer/set", {"node": x, "value": 2}, s)
    _, state = post(playground, "/api/explorer/set", {"node": by_value[3.0], "value": -3}, s)
    assert state["program"] == "x = 2.0\ny = 4.0*x + (-3.0) ** x", state
    assert _data(state)["y"] == 4.0 * 2.0 + (-3.0) ** 2.0


def test_a_constant_the_op_made_itself_is_not_editable(playground: str) -> None:
    # a - b is a + (-1)·b: that -1 is written nowhere, so it cannot follow into the text.
    s = "api-rewrite-2"
    _, state = post(playground, "/api/explorer/load", {"program": "a = 2.0; b = 1.5; y = a - b"}, s)
    leaves = {
        n["name"]: n
        for n in state["drawing"]["nodes"]
        if n.get("kind") == "value"
        and not any(e["to"] == n["id"] for e in state["drawing"]["edges"])
    }
    assert leaves["a"]["leaf"] and leaves["b"]["leaf"]
    (minus_one,) = [n for name, n in leaves.items() if name not in ("a", "b")]
    assert not minus_one["leaf"]  # drawn as a plain box: not clickable
    status, answer = post(playground, "/api/explorer/set", {"node": minus_one["id"], "value": 2}, s)
    assert status == 400 and "made of its own" in answer["error"], answer


# ------------------------------------------------------------------------ a gradient step


def test_gradient_steps_move_every_input_against_its_gradient(playground: str) -> None:
    # L = (a*b + c)*f; dL/da = b*f, dL/db = a*f, dL/dc = f, dL/df = a*b + c, worked by hand.
    s = "api-descend"
    _, state = post(playground, "/api/explorer/load", {"program": LECTURE_L}, s)
    a, b, c, f = 2.0, -3.0, 10.0, -2.0
    lr = 0.01
    for k in range(1, 4):
        before = (a * b + c) * f
        a, b, c, f = a - lr * b * f, b - lr * a * f, c - lr * f, f - lr * (a * b + c)
        status, state = post(playground, "/api/explorer/descend", {"lr": lr}, s)
        assert status == 200, state
        got = _data(state)
        for name, want in {"a": a, "b": b, "c": c, "f": f, "L": (a * b + c) * f}.items():
            assert got[name] == pytest.approx(want, rel=1e-12, abs=1e-12), (k, name)
        assert got["L"] < before  # downhill
        assert state["descents"] == k and state["phase"] == "done"
        grads = {n: state["values"][_id(state, n)]["grad"] for n in "abcf"}  # of the new point
        assert grads["a"] == pytest.approx(b * f, rel=1e-12)
        assert (
            state["program"] == f"a = {a!r}; b = {b!r}; c = {c!r}\ne = a*b\nd = e + c\n"
            f"f = {f!r}\nL = d*f"
        )
    assert "L: " in state["log"][0]["lines"][-1] and "Gradient step 3" in state["note"]
    for bad in (0, "0.1", True, float("1e9"), None):
        status, answer = post(playground, "/api/explorer/descend", {"lr": bad}, s)
        assert status == 400 and "step size" in answer["error"], (bad, answer)


# ------------------------------------------------------------------------ the engine's code


def test_each_chain_rule_step_carries_the_engines_own_code_for_its_op(playground: str) -> None:
    from pathlib import Path

    import micrograd.engine as engine

    lines = Path(engine.__file__).read_text().splitlines()
    s = "api-source"
    post(playground, "/api/explorer/load", {"program": EXAMPLES[5]["program"]}, s)  # karpathy's
    _, state = post(playground, "/api/explorer/backward", {}, s)
    ops = set()
    for entry in state["log"][1:]:  # after the seed, every step is one op's chain rule
        src = entry["source"]
        assert src["file"] == "micrograd/engine.py"
        written = "\n".join(lines[src["first"] - 1 : src["last"]])
        assert [ln.strip() for ln in written.splitlines()] == [
            ln.strip() for ln in src["code"].splitlines()
        ]  # the file's own lines
        assert "@_op(" in src["code"] and "def " in src["code"]
        ops.add(src["code"].split('"')[1])  # the op's registered name: @_op("+", ...
    assert {"+", "*", "**p", "ReLU"} <= ops, ops


# ------------------------------------------------------------------------ the Train view's point


def get(url: str, path: str, session: str) -> Any:
    req = urllib.request.Request(url + path.lstrip("/"), headers={"X-Session": session})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_the_train_views_point_opens_in_the_explorer(playground: str) -> None:
    from micrograd import io

    s = "api-point"
    status, answer = post(playground, "/api/explorer/point", {}, s)
    assert status == 409 and "Train view" in answer["error"]
    train = get(playground, "/api/train/state", s)  # the tab's training, at its start
    pick = train["meta"]["pick"]
    point = train["meta"]["points"][pick]
    model_text = (
        urllib.request.urlopen(
            urllib.request.Request(playground + "api/train/model", headers={"X-Session": s}),
            timeout=30,
        )
        .read()
        .decode()
    )
    payload = post(playground, "/api/train/point", {}, s)[1]  # what the Train page hands over
    status, state = post(playground, "/api/explorer/point", {"from": payload}, s)
    assert status == 200, state
    assert state["program"].startswith("# the Train view's point")
    drawing = state["drawing"]
    names = {n["name"] for n in drawing["nodes"] if "name" in n}
    assert {"x1", "x2", "w1.1.1", "b1.1", "a1.1", "h1.1", "s", "loss"} <= names
    _, state = post(playground, "/api/explorer/backward", {}, s)
    # The same numbers from the model file, by the engine here: loss and every weight's grad.
    model = io.loads(model_text)
    from micrograd import Value

    xs = [Value(v) for v in point[:-1]]
    settings = train["meta"]["settings"]
    assert settings["loss"] == "hinge"  # the default: its target is ±1
    y = 2.0 * point[-1] - 1.0
    loss = (1 - y * model.outputs(xs)[0]).relu()  # the hinge, written out here
    loss.backward()
    got = _data(state, drawing)
    assert got["loss"] == loss.data
    grads = {n["name"]: state["values"][n["id"]]["grad"] for n in drawing["nodes"] if "name" in n}
    w = model.layers[0].neurons[0].w[0]
    assert grads["w1.1.1"] == w.grad
    assert all(n["leaf"] for n in drawing["nodes"] if n.get("name", "").startswith("w"))
