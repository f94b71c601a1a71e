"""The Train view's L1 penalty, New data and discretized output (TensorFlow Playground's own
options): L1 joins the loss of the running model (checked against PyTorch float64 from the model
file and the points), New data draws the same data set again with another seed (checked against
`micrograd.data`), and the discretized plot paints each region in one colour."""

from __future__ import annotations

import base64
import json
import math
import re
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
import torch

from micrograd import data, io
from tests.conftest import watch_errors


class Tab:
    def __init__(self, url: str) -> None:
        self.url, self.session = url.rstrip("/"), uuid.uuid4().hex

    def ok(self, path: str, body: object = None) -> Any:
        req = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json", "X-Session": self.session},
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def refused(self, path: str, body: object, words: str) -> None:
        """The request gets a 400 whose one line says `words`."""
        req = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "X-Session": self.session},
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=30)
        assert e.value.code == 400 and words in json.loads(e.value.read())["error"], body


def torch_loss(model_json: dict, points: list, l2: float, l1: float) -> float:
    """The mean hinge loss of the model file's MLP on the points, + l2·Σw² + l1·Σ|w|, in torch."""
    model = io.loads(json.dumps(model_json))
    params = [torch.tensor(p.data, dtype=torch.float64) for p in model.parameters()]
    k = 0
    X = torch.tensor([p[:-1] for p in points], dtype=torch.float64)
    y = torch.tensor([2.0 * p[-1] - 1.0 for p in points], dtype=torch.float64)
    h = X
    for li, layer in enumerate(model.layers):
        n_in = len(layer.neurons[0].w)
        W = torch.stack(
            [
                torch.stack(params[k + j * (n_in + 1) : k + j * (n_in + 1) + n_in])
                for j in range(len(layer.neurons))
            ]
        )
        b = torch.stack([params[k + j * (n_in + 1) + n_in] for j in range(len(layer.neurons))])
        k += len(layer.neurons) * (n_in + 1)
        h = h @ W.T + b
        if li < len(model.layers) - 1:
            h = torch.tanh(h)
    data_loss = torch.relu(1 - y * h[:, 0]).mean()
    w = torch.stack(params)
    return float(data_loss + l2 * (w * w).sum() + l1 * w.abs().sum())


def test_l1_joins_the_loss_of_the_running_model(playground: str) -> None:
    tab = Tab(playground)
    tab.ok("/api/train/config", {"hidden": [4], "l2": 0.001, "l1": 0.0})
    tab.ok("/api/train/control", {"action": "step", "steps": 3})
    answer = tab.ok("/api/train/config", {"hidden": [4], "l2": 0.001, "l1": 0.01})
    assert "L1: applied to the running model, at step 3" in answer["meta"]["change"]
    assert answer["meta"]["settings"]["l1"] == 0.01
    model, points = tab.ok("/api/train/model"), answer["meta"]["points"]
    frame = tab.ok("/api/train/control", {"action": "step"})["frame"]
    assert frame["step"] == 4  # went on: not restarted
    assert frame["loss"] == pytest.approx(torch_loss(model, points, 0.001, 0.01), rel=1e-5)


def test_new_data_draws_the_data_set_again(playground: str) -> None:
    tab = Tab(playground)
    first = tab.ok("/api/train/config", {})["meta"]
    assert first["settings"]["data_seed"] == 1337
    again = tab.ok("/api/train/config", {"data_seed": 7})["meta"]
    X, y = data.moons(100, 0.1, seed=7)
    assert [p[:2] for p in again["points"]] == [list(map(float, x)) for x in X]
    assert [p[2] for p in again["points"]] == [1 if c > 0 else 0 for c in y]
    assert again["points"] != first["points"] and "started over" in again["change"]


def test_new_data_and_the_discretized_plot_in_the_page(page: Any, playground: str) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.evaluate("() => { window.before = JSON.stringify(window.trainView.meta().points); }")
    page.get_by_role("button", name="New data").click()
    page.wait_for_function("() => JSON.stringify(window.trainView.meta().points) !== window.before")
    assert "data_seed=" in page.url and "data_seed=1337" not in page.url

    def shades() -> int:  # distinct colours in the plot's region picture
        return page.evaluate("""() => {
            const img = window.trainView.regions();
            const seen = new Set(); const px = new Uint32Array(img.data.buffer);
            for (const p of px) seen.add(p); return seen.size; }""")

    assert shades() > 10  # graded: how sure the network is
    page.get_by_label("discretize output").check()
    assert shades() == 2 and "discretize=1" in page.url  # one colour per class


def test_the_run_bar_keeps_one_row_with_l1(browser: Any, playground: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = watch_errors(page)
    try:
        page.goto(playground + "train")
        page.wait_for_function("() => window.trainView && window.trainView.frame()")
        tops = {
            round(page.get_by_label(name, exact=True).bounding_box()["y"])
            for name in ("Speed", "Learning rate", "Momentum", "L2", "L1")
        }
        assert max(tops) - min(tops) <= 3, tops  # one row (a select sits a pixel lower)
        assert not errors, errors
    finally:
        context.close()


def torch_terms(model_json: dict, points: list) -> tuple[Any, Any]:
    """Each point's hinge loss and whether the model classifies it right, in torch float64."""
    model = io.loads(json.dumps(model_json))
    X = torch.tensor([p[:-1] for p in points], dtype=torch.float64)
    y = torch.tensor([2.0 * p[-1] - 1.0 for p in points], dtype=torch.float64)
    h = X
    for li, layer in enumerate(model.layers):
        W = torch.tensor([[w.data for w in n.w] for n in layer.neurons], dtype=torch.float64)
        b = torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64)
        h = h @ W.T + b
        if li < len(model.layers) - 1:
            h = torch.tanh(h)
    s = h[:, 0]
    return torch.relu(1 - y * s), ((s > 0) == (y > 0)).double()


def test_held_out_test_points_are_measured_never_trained_on(playground: str) -> None:
    tab = Tab(playground)
    meta = tab.ok("/api/train/config", {"hidden": [4], "test": 0.3, "l2": 0.0})["meta"]
    held = meta["test"]
    assert len(held) == 30 and len(set(held)) == 30 and meta["settings"]["test"] == 0.3
    points = meta["points"]
    train = [p for i, p in enumerate(points) if i not in set(held)]
    test = [points[i] for i in held]
    for _ in range(3):
        model = tab.ok("/api/train/model")
        frame = tab.ok("/api/train/control", {"action": "step"})["frame"]
        train_loss, train_hit = torch_terms(model, train)
        # the step's loss and accuracy: the training points only (before the update)
        assert frame["loss"] == pytest.approx(float(train_loss.mean()), rel=1e-5)
        assert frame["accuracy"] == pytest.approx(float(train_hit.mean()), abs=1e-12)
        # the test figures: the held-out points, with the weights after the update
        test_loss, test_hit = torch_terms(tab.ok("/api/train/model"), test)
        assert frame["test"][0] == pytest.approx(float(test_loss.mean()), rel=1e-5)
        assert frame["test"][1] == pytest.approx(float(test_hit.mean()), abs=1e-12)
    none = tab.ok("/api/train/config", {"hidden": [4], "test": 0.0})
    assert none["meta"]["test"] == [] and none["frame"]["test"] is None


def test_test_data_in_the_page(page: Any, playground: str, screenshot: Any) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_label("Test data", exact=True).select_option("0.3")
    page.wait_for_function("() => window.trainView.meta().test.length === 30")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.tests().length > 3")
    page.get_by_role("button", name="Pause").click()
    assert page.locator("#test-readout").is_visible()
    assert page.locator("#test-acc-text").text_content().startswith("test accuracy ")
    assert "test=0.3" in page.url
    page.get_by_label("show test data").check()
    assert "showtest=1" in page.url
    screenshot(page, "train-test-data")


def test_a_weight_set_by_hand(playground: str) -> None:
    tab = Tab(playground)
    tab.ok("/api/train/config", {"hidden": [4]})
    answer = tab.ok("/api/train/weight", {"layer": 0, "neuron": 1, "input": 0, "value": 0.5})
    assert base64.b64decode(answer["frame"]["links"])[3] == round((0.5 / 3 + 1) * 127.5)
    assert tab.ok("/api/train/view", {"read": [0, 1, 0]})["read"]["value"] == 0.5
    model = io.loads(json.dumps(tab.ok("/api/train/model")))
    assert model.layers[0].neurons[1].w[0].data == 0.5
    for body, words in [
        ({"layer": 5, "neuron": 0, "input": 0, "value": 1}, "layer index"),
        ({"layer": 0, "neuron": 9, "input": 0, "value": 1}, "neuron index"),
        ({"layer": 0, "neuron": 0, "input": 2, "value": 1}, "input index"),
        ({"layer": 0, "neuron": 0, "input": 0, "value": "big"}, "Weight must be a number"),
        ({"layer": 0, "neuron": 0, "input": 0, "value": 1e9}, "Weight must be a finite number"),
    ]:
        tab.refused("/api/train/weight", body, words)


def test_hover_a_neuron_and_click_a_link(page: Any, playground: str, screenshot: Any) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    neuron = page.get_by_role("img", name=re.compile(r"^neuron h1\.1: hover"))
    neuron.hover()
    assert "neuron h1.1's output" in page.locator("#plot-status").text_content()
    assert page.locator("#test-readout").is_hidden()  # no test data held out
    screenshot(page, "train-neuron-on-plot")
    page.mouse.move(0, 0)
    assert page.locator("#plot-status").text_content() == ""
    # the link from input 1 to neuron h1.1: halfway between the two squares
    ends = page.eval_on_selector_all(
        "#net canvas:not(#net-links)",
        "els => els.slice(0, 3).map(c => { const r = c.getBoundingClientRect();"
        " return [r.right, r.top + r.height / 2, r.left]; })",
    )
    (x1, y1, _), _, (_, y2, x2) = ends
    page.mouse.click(x1 + 0.5 * (x2 - x1), y1 + 0.5 * (y2 - y1))
    value = page.get_by_label("w (layer 1, neuron 1, input 1)")
    assert value.is_visible()
    page.wait_for_function("() => document.getElementById('weight-value').value !== ''")
    w = io.loads(json.dumps(page.evaluate("() => window.trainView.call('model')")))
    assert float(value.input_value()) == w.layers[0].neurons[0].w[0].data  # exact, not a byte
    value.fill("-0.75")
    value.press("Enter")
    page.wait_for_function("() => document.getElementById('weight-form').hidden")
    w = io.loads(json.dumps(page.evaluate("() => window.trainView.call('model')")))
    assert w.layers[0].neurons[0].w[0].data == -0.75


def test_input_features(playground: str) -> None:
    tab = Tab(playground)
    chosen = ["x1", "x2", "x1sq", "x2sq", "sinx1"]
    answer = tab.ok(
        "/api/train/config", {"dataset": "circles", "hidden": [4], "l2": 0.0, "features": chosen}
    )
    meta = answer["meta"]
    assert meta["sizes"][0] == 5 and meta["features"] == ["x₁", "x₂", "x₁²", "x₂²", "sin x₁"]
    assert len(meta["inputs"]) == 5
    model = tab.ok("/api/train/model")
    assert model["nin"] == 5
    frame = tab.ok("/api/train/control", {"action": "step"})["frame"]
    featured = [[x, y, x * x, y * y, math.sin(x), c] for x, y, c in meta["points"]]  # by hand
    loss, _ = torch_terms(model, featured)
    assert frame["loss"] == pytest.approx(float(loss.mean()), rel=1e-5)
    for body, words in [
        ({"features": ["x3"]}, "unknown input 'x3'"),
        ({"features": []}, "at least one input"),
        (
            {"dataset": "lecture", "loss": "mse", "features": ["x1sq"]},
            "input features are for the 2-D data sets",
        ),
    ]:
        tab.refused("/api/train/config", body, words)


def test_input_features_in_the_page(page: Any, playground: str, screenshot: Any) -> None:
    page.goto(playground + "train?dataset=circles")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.get_by_label("x₁²").check()
    page.get_by_label("x₂²", exact=True).check()
    page.wait_for_function("() => window.trainView.meta().sizes[0] === 4")
    inputs = page.eval_on_selector_all(
        "#net canvas:not(#net-links)", "els => els.map(c => c.title)"
    )
    assert inputs[:4] == ["input x₁", "input x₂", "input x₁²", "input x₂²"], inputs
    assert "features=x1%2Cx2%2Cx1sq%2Cx2sq" in page.url
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => window.trainView.frame().accuracy === 1")
    page.get_by_role("button", name="Pause").click()
    screenshot(page, "train-features")


def test_the_same_settings_again_keep_the_run(playground: str) -> None:
    # The page sends its settings when it loads: a reload, or Back from the explorer, must not
    # throw the learner's run away. Reset still starts over.
    tab = Tab(playground)
    tab.ok("/api/train/config", {"hidden": [4]})
    tab.ok("/api/train/control", {"action": "step", "steps": 5})
    again = tab.ok("/api/train/config", {"hidden": [4]})
    assert again["frame"]["step"] == 5
    assert tab.ok("/api/train/control", {"action": "reset"})["frame"]["step"] == 0


def test_back_from_the_explorer_finds_the_run_where_it_was(page: Any, playground: str) -> None:
    page.goto(playground + "train")
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    for _ in range(3):
        page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("() => window.trainView.frame().step === 3")
    page.get_by_role("link", name="Step through this point's graph in the explorer").click()
    page.wait_for_url(re.compile(r"from=train"))
    page.wait_for_selector("body[data-view='explorer'][data-ready='1']")
    page.go_back()
    page.wait_for_function("() => window.trainView && window.trainView.frame()")
    page.wait_for_function("() => window.trainView.frame().step === 3")
