"""The Train view's frames as the page draws them (issue 28): gradients on the links against
PyTorch, biases read and set, a regression problem trained with the mean squared error against
PyTorch, the Gaussian-clusters and regression data sets, frames built at the size drawn and sent
as they change, and a Pause that waits for one step at most. No server here (the HTTP and the
browser tests are test_playground_train_live_page.py)."""

from __future__ import annotations

import base64
import json
import math
import threading

import pytest

from micrograd import data
from micrograd.io import loads, to_torch
from micrograd.playground.errors import ViewError
from micrograd.playground.training import train_frames as TF
from micrograd.playground.training.train_publish import FrameCursor
from micrograd.playground.training.train_settings import Settings
from micrograd.playground.training.trainer import Trainer
from micrograd.playground.views import Tab

np = pytest.importorskip("numpy")

LARGEST = (32,) * 6


def unbyte(b64):
    return [b / 127.5 - 1.0 for b in base64.b64decode(b64)]


def torch_loss_and_grads(model_json, tr, regression=False):
    """The step's loss (the batch loss + alpha·Σp² over every point) and its gradient for each
    parameter in model.parameters() order, by PyTorch in float64, from the model file."""
    torch = pytest.importorskip("torch")
    net = to_torch(loads(model_json, "the model"))
    X = torch.tensor(tr.mlp.inputs, dtype=torch.float64)
    y = torch.tensor(tr.mlp.T, dtype=torch.float64)
    s = net(X)[:, 0]
    data = ((s - y) ** 2).mean() if regression else torch.relu(1 - y * s).mean()
    ps = list(net.parameters())
    loss = data + tr.settings.l2 * sum((p * p).sum() for p in ps)
    loss.backward()
    grads = []
    for linear in [m for m in net if isinstance(m, torch.nn.Linear)]:
        for j in range(linear.weight.shape[0]):
            grads += linear.weight.grad[j].tolist() + [linear.bias.grad[j].item()]
    return loss.item(), grads


# ------------------------------------------------------------------ gradients on the network


@pytest.mark.parametrize("use_jit", [True, False])
@pytest.mark.slow
def test_the_links_gradients_are_the_steps_against_torch(use_jit):
    tr = Trainer(Settings(hidden=(4, 3)), use_jit=use_jit)
    tr.step(5)
    before = tr.model_json()  # the weights the next step differentiates at
    tr.step()
    loss, grads = torch_loss_and_grads(before, tr)
    assert tr.loss == pytest.approx(loss, rel=1e-9)
    tr.view(grads=True)
    f = tr.frame()
    # the links' look: sign(g)·(1 + log10(|g|/max|g|)/3), clipped at 0, one byte each
    top = max(abs(g) for g in grads)
    assert f["grad_max"] == pytest.approx(top, rel=1e-5)
    expected = [
        math.copysign(max(0.0, 1 + math.log10(abs(g) / top) / TF.GRAD_DECADES), g) for g in grads
    ]
    assert unbyte(f["grads"]) == pytest.approx(expected, abs=1 / 127)
    # reading one: the exact numbers, weight and bias alike
    n = tr.model.layers[1].neurons[2]
    for inp, p, k in ((1, n.w[1], 4 * 3 + 2 * 5 + 1), (None, n.b, 4 * 3 + 2 * 5 + 4)):
        tr.view(read=[1, 2, inp])
        r = tr.frame()["read"]
        assert r == {"layer": 1, "neuron": 2, "input": inp, "value": p.data, "grad": p.grad}
        assert r["grad"] == pytest.approx(grads[k], rel=1e-9, abs=1e-15)


def test_a_frame_holds_the_gradients_and_the_graph_only_when_the_page_shows_them():
    tr = Trainer()
    tr.step(3)
    f = tr.frame()
    assert f["grads"] is None and f["graph"] is not None  # the defaults: weights, graph in sight
    tr.view(grads=True, graph=False)
    f = tr.frame()
    assert f["grads"] is not None and f["graph"] is None
    tab = Tab()
    with pytest.raises(ViewError, match="view takes grads, graph, neuron, read; not 'colour'"):
        tab.call("train", "view", {"colour": 1})
    with pytest.raises(ViewError, match="show ∂L/∂w must be true or false"):
        tab.call("train", "view", {"grads": "yes"})
    with pytest.raises(ViewError, match="layer index must be a whole number from 0 to 2"):
        tab.call("train", "view", {"read": [3, 0, 0]})
    with pytest.raises(ViewError, match="input index must be a whole number from 0 to 7"):
        tab.call("train", "view", {"read": [1, 0, 8]})
    with pytest.raises(ViewError, match=r"read takes \[layer, neuron, input\]"):
        tab.call("train", "view", {"read": 5})
    with pytest.raises(ViewError, match="hidden neuron index must be a whole number from 0 to 15"):
        tab.call("train", "view", {"neuron": 16})
    answer = tab.call("train", "view", {"read": [2, 0, None]})  # the output's bias
    assert answer["read"]["value"] == tab.train.trainer.model.layers[2].neurons[0].b.data


def test_the_shown_neuron_comes_at_the_plots_size():
    tr = Trainer(Settings(hidden=(3, 2)))
    tr.step(10)
    tr.view(neuron=4)  # layer 2, neuron 2: counted over every hidden layer
    big = tr.frame()["shown"]
    values = unbyte(big["b64"])
    assert big["neuron"] == 4 and len(values) == tr.mlp.grid_side**2
    h = [tr.model.layers[1].outputs(tr.model.layers[0].outputs(x))[1].data for x in tr.mlp.grid]
    assert big["scale"] == pytest.approx(max(abs(v) for v in h), rel=1e-5)
    assert values == pytest.approx([v / big["scale"] for v in h], abs=1 / 127)
    tr.view(neuron=None)
    assert tr.frame()["shown"] is None


# ------------------------------------------------------------------ biases


def test_a_bias_set_by_hand_and_training_goes_on_from_it():
    tab = Tab()
    tab.call("train", "control", {"action": "step", "steps": 3})
    answer = tab.call("train", "bias", {"layer": 0, "neuron": 5, "value": -0.75})
    tr = tab.train.trainer
    assert tr.model.layers[0].neurons[5].b.data == -0.75
    k = 5 * 3 + 2  # neuron 6's parameters start at 5·(2 + 1); its bias comes after its 2 weights
    assert unbyte(answer["frame"]["links"])[k] == pytest.approx(-0.75 / TF.LINK_SCALE, abs=1 / 127)
    for body, words in [
        ({"layer": 0, "neuron": 5, "value": "x"}, "Bias must be a number, got 'x'"),
        ({"layer": 0, "neuron": 5, "value": 1e9}, "Bias must be a finite number ≥ -1000"),
        ({"layer": 3, "neuron": 0, "value": 1}, "layer index must be a whole number from 0 to 2"),
    ]:
        with pytest.raises(ViewError, match=words):
            tab.call("train", "bias", body)
    with pytest.raises(ViewError, match="a bias is set with the bias action"):
        tab.call("train", "weight", {"layer": 0, "neuron": 5, "value": 1.0})
    assert tr.model.layers[0].neurons[5].b.data == -0.75  # nothing changed by the refusals
    tab.call("train", "control", {"action": "step"})
    assert tr.step_no == 4 and tr.model.layers[0].neurons[5].b.data != -0.75


# ------------------------------------------------------------------ regression and data sets


@pytest.mark.parametrize("use_jit", [True, False])
@pytest.mark.parametrize("dataset", ["plane", "bumps"])
@pytest.mark.slow
def test_a_regression_trains_with_the_mean_squared_error_against_torch(dataset, use_jit):
    tr = Trainer(Settings(dataset=dataset, loss="mse", hidden=(6, 4)), use_jit=use_jit)
    assert tr.mlp.T == tr.mlp.labels and all(isinstance(t, float) for t in tr.mlp.T)
    losses = []
    for _ in range(3):
        loss, grads = torch_loss_and_grads(tr.model_json(), tr, regression=True)
        tr.step()
        losses.append(tr.loss)
        assert tr.loss == pytest.approx(loss, rel=1e-9)
        assert [p.grad for p in tr.params] == pytest.approx(grads, rel=1e-7, abs=1e-12)
    f = tr.frame()
    assert f["accuracy"] is None and f["grid"]["kind"] == "value"  # no classes: no accuracy
    # the big plot: the output s itself over the plane, on the targets' scale (±1)
    values = unbyte(f["grid"]["b64"])
    for cell in range(0, tr.mlp.grid_side**2, 37):
        s = tr.model(tr.mlp.grid[cell]).data
        assert values[cell] == pytest.approx(max(-1.0, min(1.0, s)), abs=1 / 127)
    meta = tr.meta()
    assert meta["classes"] == 0 and meta["output_kind"] == "value"
    assert (
        meta["loss_formula"].startswith("L = 1/N Σᵢ (sᵢ − yᵢ)²")
        and "target value" in meta["loss_formula"]
    )
    json.dumps(f, allow_nan=False)


@pytest.mark.slow
def test_a_regression_learns_its_surface():
    for dataset in ("plane", "bumps"):
        tr = Trainer(Settings(dataset=dataset, loss="mse", lr=0.1))
        tr.step()
        first = tr.loss
        tr.step(300)
        assert tr.loss < first / 50, (dataset, first, tr.loss)


def test_the_regression_targets_are_their_functions():
    X, y = data.regression("plane", 200, 0.0, seed=3)
    assert all(-1 <= a <= 1 and -1 <= b <= 1 for a, b in X)
    assert y == pytest.approx([(a + b) / 2 for a, b in X], abs=1e-15)
    X, y = data.regression("bumps", 200, 0.0, seed=3)
    bumps = [(-0.5, -0.5, 1), (0.5, 0.5, 1), (-0.5, 0.5, -1), (0.5, -0.5, -1)]
    truth = [
        sum(h * math.exp(-((a - u) ** 2 + (b - v) ** 2) / (2 * 0.35**2)) for u, v, h in bumps)
        for a, b in X
    ]
    assert y == pytest.approx(truth, abs=1e-15)
    _, noisy = data.regression("bumps", 200, 0.4, seed=3)
    assert noisy != y and all(-1 <= t <= 1 for t in noisy)


def test_gaussian_clusters_are_two_balanced_blobs():
    X, y = data.gauss(400, 0.1, seed=5)
    assert sorted(set(y)) == [-1, 1] and y.count(1) == 200
    for label in (-1, 1):
        pts = [p for p, c in zip(X, y) if c == label]
        mx = sum(p[0] for p in pts) / len(pts)
        sd = (sum((p[0] - mx) ** 2 for p in pts) / len(pts)) ** 0.5
        assert abs(mx - label) < 0.1 and abs(sd - 0.42) < 0.06  # centre ±1, sd 0.3 + 1.2·noise
    tr = Trainer(Settings(dataset="gauss"))
    tr.step(30)
    assert tr.accuracy == 1.0


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"dataset": "plane"}, "Regression: a plane is a regression problem"),
        ({"dataset": "bumps", "loss": "cross_entropy"}, "choose Mean squared error"),
        (
            {"dataset": "plane", "loss": "mse", "added": [[0, 0, 2]]},
            "Added points must be a finite number ≥ -1 and ≤ 1, got 2.0",
        ),
        (
            {"dataset": "plane", "loss": "mse", "added": [[0, 0]]},
            "an added point is [x, y, target value]",
        ),
    ],
)
def test_regression_settings_are_checked(bad, words):
    with pytest.raises(ValueError) as e:
        Settings.from_dict(bad)
    assert words in str(e.value)


def test_a_point_added_to_a_regression_has_its_target():
    tr = Trainer(Settings(dataset="bumps", loss="mse"))
    tr.set_points([[0.2, 0.3, -0.5]])
    assert tr.mlp.X[-1] == [0.2, 0.3] and tr.mlp.labels[-1] == -0.5 == tr.mlp.T[-1]
    assert tr.meta()["points"][-1] == [0.2, 0.3, -0.5]


# ------------------------------------------------------------------ frames at the size drawn


def test_the_largest_networks_frame_is_built_at_the_size_drawn():
    tr = Trainer(Settings(hidden=LARGEST))
    tr.step()
    tr.view(grads=True, graph=False)
    f = tr.frame()
    assert (
        tr.mlp.box == 16 == tr.mlp.heat_side
    )  # a neuron's square is 16 px: its map 16 cells a side
    assert len(f["heat"]) == 192 and all(len(base64.b64decode(h)) == 256 for h in f["heat"])
    assert len(base64.b64decode(f["links"])) == len(tr.params) == 5409
    # every weight, bias, gradient and heat map: 232 KB a frame before (issue 28)
    assert len(json.dumps(f)) < 100_000


def test_a_reader_is_sent_only_what_changed():
    tr = Trainer(Settings(hidden=(4, 4)))
    tr.step(3)
    cursor = FrameCursor(tr)
    first = cursor.next()
    assert first["full"] and first["links"] and len(first["heat"]) == 8
    tr.view(neuron=2)  # paused: a new frame with the neuron shown big, nothing else new
    second = cursor.next()
    assert not second["full"] and second["seq"] == first["seq"] + 1
    assert second["shown"]["neuron"] == 2
    for part in ("grid", "links", "graph", "heat_scale"):
        assert part not in second, part
    assert second["heat"] == [None] * 8
    tr.step()  # a step changes everything: it is all sent
    third = cursor.next()
    assert "links" in third and "grid" in third and all(third["heat"])
    # a reader that keeps what it had holds the whole frame (as the page merges them)
    whole = dict(first)
    for f in (second, third):
        whole.update({k: v for k, v in f.items() if k != "heat"})
        whole["heat"] = [h if h is not None else o for h, o in zip(f["heat"], whole["heat"])]
    latest = tr.published()[0]
    for k in ("heat", "heat_scale", "links", "grid", "graph", "shown", "step"):
        assert whole[k] == latest[k], k
    assert cursor.next() is None  # nothing new since
    cursor.restart()  # a page that has just opened: the frame it needs is the whole newest one
    again = cursor.next()
    assert again["full"] and again["seq"] == latest["seq"] and again["links"]


# ------------------------------------------------------------------ Pause


def test_pause_waits_for_the_step_under_way_not_the_turn(monkeypatch):
    tr = Trainer()
    inside, go = threading.Event(), threading.Event()
    train = tr.kind.train

    def slow_train(*args):  # a step that lasts until the test lets it finish
        inside.set()
        assert go.wait(30)
        return train(*args)

    monkeypatch.setattr(tr.kind, "train", slow_train)
    tr.play()
    turn = threading.Thread(target=tr.advance, args=(600.0,))  # a turn of up to ten minutes
    turn.start()
    assert inside.wait(30)
    paused = threading.Thread(target=tr.pause)
    paused.start()
    paused.join(0.2)
    assert paused.is_alive()  # it waits for the step under way ...
    go.set()
    paused.join(30)
    turn.join(30)
    assert not paused.is_alive() and not turn.is_alive()  # ... and the turn ends with it
    assert tr.step_no == 1 and not tr.playing
    f = tr.latest()
    assert f["step"] == 1 and not f["playing"]


def test_meta_is_read_without_waiting_for_a_step():
    tr = Trainer()
    got = []
    with tr.lock:  # a step under way on another thread holds the lock
        reader = threading.Thread(target=lambda: got.append(tr.meta()))
        reader.start()
        reader.join(30)
        assert got and got[0]["config_id"] == tr.kind.config_id


# ------------------------------------------------------------------ without numpy (the static site)

NO_NUMPY = r"""
import json, sys
sys.modules["numpy"] = None  # as on the static site's Pyodide: importing numpy fails
from micrograd.playground.training.train_publish import FrameCursor
from micrograd.playground.training.trainer import Trainer
from micrograd.playground.training.train_settings import Settings
for s in (Settings(hidden=(3, 2)), Settings(dataset="bumps", loss="mse", hidden=(3,)),
          Settings(dataset="spiral3", loss="cross_entropy", hidden=(3,))):
    tr = Trainer(s)
    assert not tr.use_jit
    cursor = FrameCursor(tr)
    tr.step(2)
    tr.view(grads=True, neuron=1, read=[0, 1, None])
    f = cursor.next()
    json.dumps(f, allow_nan=False)
    assert f["full"] and f["grads"] and f["shown"]["neuron"] == 1 and f["read"]["input"] is None
    tr.step()
    assert "links" in cursor.next()
print("ok")
"""


@pytest.mark.slow
def test_frames_are_made_without_numpy():
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", NO_NUMPY], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
