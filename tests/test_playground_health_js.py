"""The Health panel's reads on the JavaScript engines (the static site's, here on Node.js): the
step in JavaScript hands back health.py's statistics of itself, computed there (jit/health.js)
from its own arrays, and they are `health.Monitor`'s numbers on the eager step of the same
network (the same weights, batches and optimiser, every step read), to 1e-12; no second pass runs
in Python (issue 58: the panel's cost on the site)."""

from __future__ import annotations

import math
import random
import shutil
from typing import Any

import pytest

from micrograd import engine, nn
from micrograd.playground.gpt.gpt_view import GPTView
from micrograd.playground.training.train_mlp import MLPKind
from micrograd.playground.training.train_settings import Settings
from micrograd.train import health
from micrograd.train.health import StepHealth

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and shutil.which("nodejs") is None,
    reason="Node.js is not installed",
)

TOL = 1e-12


def same(a: float | None, b: float | None, abs_tol: float = 1e-15) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=TOL, abs_tol=abs_tol)


def assert_same_health(js: StepHealth, eager: StepHealth) -> None:
    assert js.step == eager.step
    assert len(js.layers) == len(eager.layers) and len(js.weights) == len(eager.weights)
    for a, b in zip(js.layers, eager.layers):
        where = f"step {eager.step} {b.name}"
        assert a.recorded and b.recorded, where
        assert (a.name, a.activation, a.fan_in, a.biases) == (
            b.name,
            b.activation,
            b.fan_in,
            b.biases,
        )
        for key in ("act_mean", "act_std", "grad_mean", "grad_std"):
            assert same(getattr(a, key), getattr(b, key)), (where, key)
        for key in ("act_hist", "grad_hist"):
            ha, hb = getattr(a, key), getattr(b, key)
            assert ha.counts == hb.counts, (where, key)
            width = hb.edges[-1] - hb.edges[0]  # (an edge near 0: to rounding of the range)
            assert all(same(x, y, TOL * width) for x, y in zip(ha.edges, hb.edges)), (where, key)
        assert a.saturated == b.saturated and a.dead == b.dead, where
        assert a.dead_units == b.dead_units, where
        if b.stale_grad is None:
            assert a.stale_grad is None, where
        else:  # ~1e-16 when the grads were zeroed: what is left of rounding
            assert same(a.stale_grad, b.stale_grad, 1e-12), (where, a.stale_grad, b.stale_grad)
    for a, b in zip(js.weights, eager.weights):
        where = f"step {eager.step} {b.name}"
        assert (a.name, a.shape) == (b.name, b.shape), where
        assert same(a.gain, b.gain), where
        for key in ("data_std", "grad_mean", "grad_std", "grad_data"):
            assert same(getattr(a, key), getattr(b, key)), (where, key)
        assert same(a.update_data, b.update_data, TOL), (where, a.update_data, b.update_data)
        assert a.grad_hist.counts == b.grad_hist.counts, where


# the Train view's networks, each on the JavaScript engine and the eager one from the same seed
NETS = {
    "tanh, full batch": {"hidden": [8, 8], "activation": "tanh"},
    "relu, batches, L2 and L1, no zero_grad": {
        "dataset": "moons",
        "points": 100,
        "hidden": [16, 16],
        "activation": "relu",
        "batch": 20,
        "l2": 1e-3,
        "l1": 1e-4,
        "zero_grad": False,
    },
    "adam, sigmoid, momentum-free": {
        "hidden": [6, 5],
        "activation": "sigmoid",
        "optimizer": "adam",
        "lr": 0.05,
    },
    "softplus (its slope not told by its output: no stale check)": {
        "hidden": [6],
        "activation": "softplus",
    },
    "sgd with momentum, three classes": {
        "dataset": "spiral3",
        "hidden": [10],
        "activation": "tanh",
        "loss": "cross_entropy",
        "momentum": 0.9,
        "lr": 0.1,
    },
}


def kinds(settings: dict) -> tuple[MLPKind, MLPKind]:
    s = Settings.from_dict(settings)
    js, eager = MLPKind(s, "javascript"), MLPKind(s, "eager")
    for k in (js, eager):
        k.health.show(True)
    assert [p.data for p in js.params] == [p.data for p in eager.params]
    return js, eager


@pytest.mark.parametrize("settings", NETS.values(), ids=NETS.keys())
def test_a_read_javascript_step_gives_health_monitors_numbers(settings: dict) -> None:
    js, eager = kinds(settings)
    rng = random.Random(7)
    for k in range(14):
        idx = None if js.full_batch() else rng.sample(list(js.train_idx), len(js.next_batch()))
        js.engine.sync()  # the eager step on the same weights (and grads, not zeroed)
        for p, q in zip(eager.params, js.params):
            p.data, p.grad = q.data, q.grad
        for kind in (js, eager):
            kind.health.restart_clock()  # (every step read: past the first ten, by the clock)
        got = js.engine.train(0.0, lambda idx=idx: idx, lambda: False)
        want = eager.engine.step(idx)
        assert len(got) == 1 and same(got[0][0], want[0], 0.0)
        assert len(js.health.history) == len(eager.health.history) == min(k + 1, 10)
        assert_same_health(js.health.history[-1], eager.health.history[-1])
    # the panel's frame is made of them: the same frame on both engines
    assert js.health.frame() == eager.health.frame()


def test_no_zero_grad_is_diagnosed_from_the_javascript_steps_numbers() -> None:
    js, eager = kinds(NETS["relu, batches, L2 and L1, no zero_grad"])
    for _ in range(10):
        idx = js.next_batch()
        js.engine.train(0.0, lambda idx=idx: idx, lambda: False)
        eager.engine.step(idx)
    stale = [lay.stale_grad for lay in js.health.history[-1].layers]
    assert all(s is not None and s > 0.1 for s in stale), stale  # the earlier steps' grads
    causes = {d["cause"] for d in js.health.frame()["diagnoses"]}
    assert causes == {d["cause"] for d in eager.health.frame()["diagnoses"]} == {"zero_grad"}


def test_a_slice_with_a_read_trains_on_past_the_first_steps() -> None:
    """A slice that read a step was that one step: with the panel open, a small fast network on
    the site ran at a fraction of its speed. A run's first steps are still each read, one a call;
    past them a read step is followed by the slice's others, unread."""
    from micrograd.playground.training.train_health import EVERY_STEP

    js, _ = kinds(NETS["tanh, full batch"])
    for k in range(EVERY_STEP - 1):  # each its own read, the slice's only step
        assert len(js.engine.train(5.0, lambda: None, lambda: True)) == 1, k
    for _ in range(2):  # the last of the first steps, then one read by the clock
        js.health.restart_clock()  # (a read due)
        reads, steps = js.health._reads, js.health.steps
        got = js.engine.train(5.0, lambda: None, lambda: True)
        assert len(got) > 1  # (the slice asks for 1.5 x its measured rate x 5 s + 1 steps)
        assert js.health._reads == reads + 1 and js.health.steps == steps + len(got)
    assert all(math.isfinite(loss) for loss, _ in got)


def test_a_read_runs_no_second_pass_in_python(monkeypatch) -> None:
    """The old read ran the step's forward and backward again on the model's Values (eagerly, in
    Pyodide: most of the panel's cost on the site): now nothing of the model runs in Python."""
    js, _ = kinds(NETS["tanh, full batch"])

    def refuse(*args, **kwargs):
        raise AssertionError("a read ran the model or backward() in Python")

    for name in ("__call__", "outputs"):
        monkeypatch.setattr(nn.MLP, name, refuse)
        monkeypatch.setattr(nn.Layer, name, refuse)
    monkeypatch.setattr(engine.Value, "backward", refuse)
    for _ in range(3):
        js.engine.train(0.0, lambda: None, lambda: False)
    assert len(js.health.history) == 3 and all(lay.recorded for lay in js.health.history[-1].layers)


def test_a_javascript_gpt_step_read_gives_health_monitors_numbers(monkeypatch) -> None:
    """The GPT view's JavaScript engine against its eager one (microgpt's step: gpt.py itself,
    recorded by health.Monitor), each step read: the same ReLU layers and matrices to 1e-12;
    and no forward or backward of the model in Python during the JavaScript engine's reads."""
    views = {}
    for jit in ("javascript", False):
        v = views[jit] = GPTView(jit=jit)
        v.config({"data": "builtin"})
        v.health({"preset": "dead_relus"})  # (dead units: the counts say which)
        v.health({"open": True})
    js, eager = views["javascript"].trainer.kind, views[False].trainer.kind
    js.prepare(60.0)  # every word length traced before the reads
    real_loss = type(js.model).loss

    def refuse(*args, **kwargs):
        raise AssertionError("a read ran the model or backward() in Python")

    for _ in range(12):
        for kind in (js, eager):
            kind.health.restart_clock()
        monkeypatch.setattr(type(js.model), "loss", refuse)
        monkeypatch.setattr(engine.Value, "backward", refuse)
        got = js.train(0.0, lambda: False)
        monkeypatch.undo()
        want = eager.train(0.0, lambda: False)
        assert real_loss is type(js.model).loss
        assert len(got) == len(want) == 1 and same(got[0][0], want[0][0], 1e-12)
        assert_same_health(js.health.history[-1], eager.health.history[-1])
    assert any(lay.dead for lay in js.health.history[-1].layers)


@pytest.mark.parametrize("jit", ["javascript", "numpy"])
def test_a_gpt_slice_with_a_read_trains_on_past_the_first_steps(jit: str) -> None:
    """The GPT view as the Train view: its first steps each read, one a call; past them a read
    step is the first of the slice's steps, not the slice."""
    from micrograd.playground.training.train_health import EVERY_STEP

    v = GPTView(jit=jit)
    v.config({"data": "builtin"})
    v.health({"open": True})
    kind = v.trainer.kind
    kind.prepare(60.0)
    for k in range(EVERY_STEP - 1):
        assert len(kind.train(5.0, lambda: True)) == 1, k
    kind.health.restart_clock()  # (a read due)
    reads, steps = kind.health._reads, kind.health.steps
    got = kind.train(5.0, lambda: True)
    assert len(got) > 1 and kind.health._reads == reads + 1
    assert kind.health.steps == steps + len(got)


def js_step_health() -> Any:
    """health.js's `stepHealth` alone, in Node.js (null in an array stands for NaN: JSON has
    none)."""
    from micrograd.jit.js_target import health_source as js_source
    from micrograd.playground.training.engines import javascript_host

    nan = "const f = (a) => a.map((x) => (x === null ? NaN : x));"
    call = javascript_host().compile(
        f"{js_source()}\nreturn {{ run(arg) {{ {nan}\n"
        "  for (const lay of arg.layers) { lay.V = f(lay.V); lay.G = f(lay.G); }\n"
        "  return stepHealth({ ...arg, before: f(arg.before), after: f(arg.after), "
        "grads: f(arg.grads) }); } };"
    )
    return lambda arg: call("run", arg)


class _P:  # a bias as stale_share reads it
    def __init__(self, data: float, grad: float) -> None:
        self.data, self.grad = data, grad


@pytest.mark.parametrize("activation", ["tanh", "relu", "sigmoid", "linear", "softplus"])
def test_health_js_is_health_pys_functions_on_awkward_data(activation: str) -> None:
    """stepHealth against health.py's own functions, on data with ties, constants, zeros, a
    value that is not finite, and the penalties' terms in the biases' grads."""
    rng = random.Random(activation)
    run = js_step_health()
    units, S = 5, 7
    rows = [
        [rng.choice([0.0, 0.5, rng.uniform(-1.2, 1.2)]) for _ in range(units)] for _ in range(S)
    ]
    if activation == "relu":
        rows = [[max(0.0, x) for x in r] for r in rows]
        for r in rows:
            r[2] = 0.0  # a dead unit
    grows = [[rng.gauss(0, 1e-3) for _ in range(units)] for _ in range(S)]
    n = 12
    before = [rng.gauss(0, 1) for _ in range(n)]
    after = [b - rng.uniform(0, 0.01) for b in before]
    grads = [rng.gauss(0, 0.1) for _ in range(n)]
    bias = [7, 8, 9, 10, 11]
    const = [[0.25] * 3 for _ in range(2)]  # a constant layer: numpy's ±0.5 range
    arg = {
        "layers": [
            {  # units x samples, as the steps hand them over
                "V": [rows[s][j] for j in range(units) for s in range(S)],
                "G": [grows[s][j] for j in range(units) for s in range(S)],
                "units": units,
                "S": S,
                "activation": activation,
                "bias": bias,
            },
            {"V": [0.25] * 6, "G": [0.0] * 6, "units": 3, "S": 2, "activation": "tanh"},
            {"V": [1.0, None], "G": [0.0, 0.0], "units": 1, "S": 2, "activation": "tanh"},
            {"V": [], "G": [], "units": 0, "S": 0, "activation": "relu"},
        ],
        "matrices": [[0, 1, 2, 3], [4, 5, 6]],
        "before": before,
        "after": after,
        "grads": grads,
        "alpha": 1e-3,
        "l1": 1e-4,
        "saturated": health.SATURATED,
        "bins": health.BINS,
    }
    got = run(arg)
    mon = health.Monitor(nn.MLP(2, [1]))  # (its given_stats reads the JSON's shapes)
    want = health.layer_health("l", activation, 3, rows, grows)
    stale = health.stale_share(
        rows, grows, [_P(before[k], grads[k]) for k in bias], activation, 1e-3, 1e-4
    )
    lay = got["layers"][0]
    assert same(lay["mean"], want.act_mean) and same(lay["std"], want.act_std)
    assert same(lay["grad_mean"], want.grad_mean) and same(lay["grad_std"], want.grad_std)
    for key, h in (("hist", want.act_hist), ("grad_hist", want.grad_hist)):
        ours = health._histogram_of(lay[key])
        assert ours.counts == h.counts and ours.edges == h.edges, key
    assert lay["saturated"] == want.saturated and lay["dead_units"] == want.dead_units
    if stale is None:
        assert lay["stale"] is None
    else:
        assert same(lay["stale"], stale, 1e-15)
    # a constant layer: numpy's range of ±0.5 around it; a value not finite: no histogram
    c = health.layer_health("c", "tanh", 1, const, [[0.0] * 3] * 2)
    assert health._histogram_of(got["layers"][1]["hist"]).edges == c.act_hist.edges
    assert got["layers"][1]["saturated"] == c.saturated == 0.0
    assert got["layers"][2]["hist"]["counts"] is None and got["layers"][2]["mean"] == "NaN"
    assert got["layers"][3] is None  # nothing recorded
    for places, w in zip(arg["matrices"], got["weights"]):
        d, g = [before[k] for k in places], [grads[k] for k in places]
        wh = health.weight_health("w", (1, len(places)), 1.0, d, g)
        assert same(w["data_std"], wh.data_std) and same(w["grad_std"], wh.grad_std)
        assert same(w["grad_mean"], wh.grad_mean)
        assert health._histogram_of(w["grad_hist"]).counts == wh.grad_hist.counts
        assert same(w["update_std"], health.std([after[k] - before[k] for k in places]))
    with pytest.raises(ValueError, match="health: given 4 layers and 2 matrices, the model has 1"):
        mon.given_stats(got)
