"""train.health: each statistic against numpy and PyTorch (float64) on random networks, to 1e-12;
the diagnoses of each broken preset, and silence on the healthy runs."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from micrograd import data, gpt, losses, optim, train
from micrograd.nn import MLP
from micrograd.train import diagnose as D
from micrograd.train import health
from micrograd.train.health_presets import BROKEN, run_broken, run_microgpt, run_moons

torch = pytest.importorskip("torch")

TOL = 1e-12


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def random_net(seed: int, activation: str) -> tuple[MLP, list[list[float]], list[float]]:
    rng = random.Random(seed)
    random.seed(seed)
    sizes = [rng.randint(2, 6) for _ in range(rng.randint(1, 3))] + [1]
    nin = rng.randint(2, 5)
    model = MLP(nin, sizes, activation=activation)
    for p in model.parameters():  # biases too, and a scale that saturates some tanh units
        p.data = rng.gauss(0, 1.5)
    X = [[rng.gauss(0, 1) for _ in range(nin)] for _ in range(rng.randint(3, 9))]
    y = [rng.choice([-1.0, 1.0]) for _ in X]
    return model, X, y


def torch_truth(model: MLP, X: list, y: list, alpha: float) -> tuple[list, list, list]:
    """PyTorch float64: each layer's outputs and their grads, and each weight matrix's grad."""
    Ws = [
        torch.tensor(
            [[w.data for w in n.w] for n in L.neurons], dtype=torch.float64, requires_grad=True
        )
        for L in model.layers
    ]
    bs = [
        torch.tensor([n.b.data for n in L.neurons], dtype=torch.float64, requires_grad=True)
        for L in model.layers
    ]
    h = torch.tensor(X, dtype=torch.float64)
    outs = []
    for i, (W, b) in enumerate(zip(Ws, bs)):
        act = model.layers[i].neurons[0].activation
        z = h @ W.T + b
        h = {"tanh": torch.tanh, "relu": torch.relu, "linear": lambda t: t}[act](z)
        h.retain_grad()
        outs.append(h)
    yt = torch.tensor(y, dtype=torch.float64)
    loss = torch.relu(1 - yt * h[:, 0]).mean()
    loss = loss + alpha * sum((W * W).sum() + (b * b).sum() for W, b in zip(Ws, bs))
    loss.backward()
    return (
        [o.detach().numpy() for o in outs],
        [o.grad.numpy() for o in outs],
        [W.grad.numpy() for W in Ws],
    )


def np_hist(x: np.ndarray) -> tuple[list, list]:
    counts, edges = np.histogram(x, bins=health.BINS)
    return counts.tolist(), edges.tolist()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_every_statistic_equals_numpy_and_torch(seed: int, activation: str) -> None:
    model, X, y = random_net(seed, activation)
    acts, act_grads, w_grads = torch_truth(model, X, y, 1e-3)
    before = [np.array([[w.data for w in n.w] for n in L.neurons]) for L in model.layers]
    opt = optim.Adam(model.parameters(), lr=0.05)
    monitor = health.Monitor(model, alpha=1e-3)
    step = train.Step(model, "hinge", 1e-3)
    with monitor.recording():
        step(X, y)
    monitor.read_grads()
    opt.step()
    h = monitor.read_update(0)
    assert h.step == 0 and len(h.layers) == len(h.weights) == len(model.layers)
    for i, (lay, w) in enumerate(zip(h.layers, h.weights)):
        a, g, W0 = acts[i], act_grads[i], before[i]
        W1 = np.array([[p.data for p in n.w] for n in model.layers[i].neurons])
        assert lay.recorded and lay.activation == model.layers[i].neurons[0].activation
        assert close(lay.act_mean, a.mean()) and close(lay.act_std, a.std())
        assert close(lay.grad_mean, g.mean()) and close(lay.grad_std, g.std())
        counts, edges = np_hist(a)
        assert lay.act_hist.counts == counts
        assert all(close(u, v) for u, v in zip(lay.act_hist.edges, edges))
        assert lay.grad_hist.counts == np_hist(g)[0]
        if lay.activation == "tanh":
            assert lay.saturated == pytest.approx((np.abs(a) > 0.97).mean(), abs=0)
            assert lay.dead is None
        elif lay.activation == "relu":
            assert lay.dead_units == (a == 0).all(axis=0).tolist()
            assert lay.dead == (a == 0).all(axis=0).mean()
            assert lay.saturated is None
        assert w.shape == W0.shape
        assert close(w.data_std, W0.std()) and close(w.grad_mean, w_grads[i].mean())
        assert close(w.grad_data, w_grads[i].std() / W0.std())
        assert close(w.update_data, np.log10((W1 - W0).std() / W0.std()))
        assert w.grad_hist.counts == np_hist(w_grads[i])[0]
        # the grads were zeroed before backward: the batch explains every bias grad
        assert lay.stale_grad is not None and lay.stale_grad < 1e-12


def test_histogram_is_numpys_on_awkward_data() -> None:
    rng = np.random.default_rng(0)
    for x in (
        rng.normal(size=1000),
        rng.uniform(-1, 1, 37),
        np.array([0.1, 0.2, 0.3] * 5),
        np.array([2.5] * 4),
        np.linspace(-1, 1, 41),
        rng.normal(size=50) * 1e-9,
    ):
        ours = health.histogram(x.tolist())
        counts, edges = np.histogram(x, bins=health.BINS)
        assert ours.counts == counts.tolist()
        assert ours.edges == pytest.approx(edges.tolist(), rel=1e-15, abs=1e-300)
    assert health.std([1.0, 2.0, 3.0, 4.0]) == np.std([1.0, 2.0, 3.0, 4.0])


def test_recording_changes_nothing_and_fit_keeps_the_health() -> None:
    X, y = data.moons(40, 0.1, 3)

    def run(keep: bool) -> train.History:
        random.seed(3)
        model = MLP(2, [8, 8, 1])
        opt = optim.SGD(model.parameters(), lr=0.3)
        return train.fit(
            model, X, y, alpha=1e-4, optimizer=opt, steps=5, progress=False, health=keep
        )

    plain, kept = run(False), run(True)
    assert plain.loss == kept.loss and plain.health == []
    assert [s.step for s in kept.health] == list(range(5))
    # the layer outputs recorded are the batch's: one row per sample, one column per unit
    assert kept.health[0].layers[0].act_hist is not None
    assert sum(kept.health[0].layers[0].act_hist.counts) == 40 * 8
    assert "outputs" not in vars(MLP(2, [3, 1]).layers[0])  # the stand-in is gone


def test_update_data_read_before_an_optimiser_that_zeroes_the_grads() -> None:
    # gpt.Adam zeroes the grads in its step: the grads must be read before it
    random.seed(5)
    model = gpt.GPT(vocab_size=7, n_layer=1, n_embd=8, n_head=2, block_size=6)
    adam = gpt.Adam(model.parameters(), steps=10)
    monitor = health.Monitor(model)
    with monitor.recording():
        loss = model.loss([6, 1, 2, 3, 6])
        loss.backward()
    names = [name for name, _, _ in monitor.matrices]
    mats = [np.array([[w.data for w in row] for row in m]) for _, m, _ in monitor.matrices]
    grads = [np.array([[w.grad for w in row] for row in m]) for _, m, _ in monitor.matrices]
    relu = [[v.data for v in row] for row in monitor.layers[0].outs]
    relu_grads = [[v.grad for v in row] for row in monitor.layers[0].outs]
    monitor.read_grads()
    adam.step()
    h = monitor.read_update(0)
    assert all(p.grad == 0 for p in model.parameters())
    attn = [f"block 1 attn.{w}" for w in ("wq", "wk", "wv", "wo")]
    assert names == ["wte", "wpe", *attn, "block 1 mlp.fc1", "block 1 mlp.fc2", "lm_head"]
    for w, W0, G, (_, m, _) in zip(h.weights, mats, grads, monitor.matrices):
        W1 = np.array([[p.data for p in row] for row in m])
        assert close(w.grad_data, G.std() / W0.std()) and G.std() > 0
        assert close(w.update_data, np.log10((W1 - W0).std() / W0.std()))
    a = np.array(relu)
    assert a.shape == (4, 32) and (a >= 0).all()  # 4 positions, 4 x n_embd ReLUs
    lay = h.layers[0]
    assert lay.name == "block 1 mlp" and lay.dead_units == (a == 0).all(axis=0).tolist()
    assert close(lay.act_std, a.std()) and close(lay.grad_std, np.array(relu_grads).std())
    # the stand-in for gpt.linear is gone: the module's own function again
    assert type(gpt.linear).__name__ == "function"


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_the_jit_step_gives_the_same_health_from_its_arrays(activation: str) -> None:
    from micrograd.train.jit_step import JitStep

    X, y = data.moons(30, 0.1, 2)
    hs = []
    for jit in (False, True):
        random.seed(2)
        model = MLP(2, [6, 5, 1], activation=activation)
        opt = optim.SGD(model.parameters(), lr=0.5)
        step = (JitStep if jit else train.Step)(model, "hinge", 1e-4)
        h = train.fit(
            model,
            X,
            y,
            optimizer=opt,
            steps=4,
            step_fn=step,
            progress=False,
            batch_size=10,
            health=True,
        )
        hs.append(h.health)
    eager, jitted = hs
    assert len(eager) == len(jitted) == 4
    for e, j in zip(eager, jitted):
        for le, lj in zip(e.layers, j.layers):
            assert le.recorded and lj.recorded
            for key in ("act_mean", "act_std", "grad_mean", "grad_std"):
                assert math.isclose(
                    getattr(le, key), getattr(lj, key), rel_tol=1e-12, abs_tol=1e-15
                ), key
            assert le.act_hist.counts == lj.act_hist.counts
            assert le.saturated == lj.saturated and le.dead_units == lj.dead_units
            assert lj.stale_grad is not None and lj.stale_grad < 1e-12
        for we, wj in zip(e.weights, j.weights):
            assert close(we.grad_data, wj.grad_data)
            assert math.isclose(we.update_data, wj.update_data, abs_tol=1e-9)


def test_the_jit_step_reads_a_classifiers_layers_too() -> None:
    # cross-entropy: the jit step runs the model once eagerly (to count its outputs) before
    # its trace; the layers kept are the trace's
    from micrograd.train.jit_step import JitStep

    X, y = data.DATASETS["spiral3"].load(n_samples=30, seed=4)
    hs = []
    for jit in (False, True):
        random.seed(4)
        model = MLP(2, [8, 3], activation="relu")
        opt = optim.SGD(model.parameters(), lr=0.1)
        step = (JitStep if jit else train.Step)(model, "cross_entropy")
        hs.append(
            train.fit(
                model,
                X,
                y,
                "cross_entropy",
                opt,
                steps=2,
                step_fn=step,
                progress=False,
                health=True,
            ).health
        )
    for e, j in zip(*hs):
        assert all(lay.recorded for lay in j.layers)
        assert [close(a.act_std, b.act_std) for a, b in zip(e.layers, j.layers)] == [True, True]
        assert [close(a.grad_std, b.grad_std) for a, b in zip(e.layers, j.layers)] == [True, True]


def test_the_jit_step_without_zero_grad_is_diagnosed_too() -> None:
    from micrograd.train.jit_step import JitStep

    X, y = data.moons(100, 0.1, 1337)
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    opt = optim.SGD(model.parameters(), lr=1.0)
    step = JitStep(model, "hinge", 1e-4, zero_grad=False)
    h = train.fit(model, X, y, optimizer=opt, steps=10, step_fn=step, progress=False, health=True)
    assert "zero_grad" in {d.cause for d in D.diagnose(h.health)}


def test_monitor_refuses_what_it_cannot_read() -> None:
    with pytest.raises(TypeError, match="Monitor reads an nn.MLP or a GPT, got int"):
        health.Monitor(3)
    monitor = health.Monitor(MLP(2, [2, 1]))
    with pytest.raises(RuntimeError, match="read_update before read_grads"):
        monitor.read_update(0)


# ---------------------------------------------------------------- diagnoses


def causes_within(hs: list, steps: int) -> set[str]:
    found: set[str] = set()
    for k in range(min(steps, len(hs))):
        found |= {d.cause for d in D.diagnose(hs[: k + 1])}
    return found


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_broken_preset_is_diagnosed_by_its_cause(name: str) -> None:
    hs = run_broken(name, 50).health
    assert BROKEN[name].cause in causes_within(hs, 50)


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_fix_takes_its_cause_away(name: str) -> None:
    hs = run_broken(name, 50, fixed=True).health
    assert causes_within(hs, 50) == set()


def test_the_moons_demo_is_healthy_at_every_step() -> None:
    assert causes_within(run_moons(100).health, 100) == set()


def test_microgpts_first_200_steps_are_healthy(names_file) -> None:
    assert causes_within(run_microgpt(200), 200) == set()


def test_the_messages_give_the_numbers_and_the_fix() -> None:
    msgs = {d.cause: str(d) for d in D.diagnose(run_broken("saturated_tanh", 5).health)}
    assert (
        msgs["saturated"].startswith("layer 2: ")
        and "% of its tanh units saturated" in msgs["saturated"]
        and "5/3 / √fan_in" in msgs["saturated"]
    )
    lr = D.diagnose(run_moons(3, lr=100.0).health)
    text = [str(d) for d in lr if d.cause == "update_data"][0]
    assert "the learning rate is about 100x too high" in text and "at step 1" in text
    dead = [str(d) for d in D.diagnose(run_broken("dead_relus", 12).health)]
    assert any("of its ReLUs dead since step 1 " in m for m in dead)
    nz = [str(d) for d in D.diagnose(run_broken("no_zero_grad", 10).health)]
    assert any(m.startswith("grads grow every step without zero_grad") for m in nz)


def test_losses_are_untouched_by_the_presets_module() -> None:
    # the healthy moons run is karpathy's demo: its first loss is his
    h = run_moons(1)
    X, y = data.moons(100, 0.1, 1337)
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    total = losses.hinge([model(x) for x in X], y) + losses.l2(model.parameters(), 1e-4)
    assert h.loss[0] == total.data


def test_health_plots_draws_makemores_four_pictures(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from micrograd.viz import health_plots

    hs = run_broken("saturated_tanh", 4)
    fig = health_plots(hs, tmp_path / "health.png")
    assert (tmp_path / "health.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    a1, a2, a3, a4 = fig.axes
    sat = hs.health[-1].layers[1].saturated
    assert any(f"saturated {sat:.0%}" in t.get_text() for t in a1.get_legend().get_texts())
    guide = [line for line in a4.get_lines() if list(line.get_ydata()) == [-3, -3]]
    assert len(guide) == 1  # makemore's guide line
    ud = [line.get_ydata().tolist() for line in a4.get_lines()[:3]]
    assert ud[0] == [s.weights[0].update_data for s in hs.health]
    with pytest.raises(ValueError, match="fit\\(..., health=True\\)"):
        health_plots([])
