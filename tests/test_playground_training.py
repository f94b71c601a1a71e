"""The training view's trainer, without a server: settings, steps, frames, threads, the graph."""

from __future__ import annotations

import base64
import json
import math
import random
import time

import pytest

from micrograd import MLP, Value, data, losses
from micrograd.io import load, to_torch
from micrograd.playground.training import engines as engines_module
from micrograd.playground.training import train_frames as TF
from micrograd.playground.training import train_settings as T
from micrograd.playground.training.train_pacer import Pacer
from micrograd.playground.training.train_settings import Settings
from micrograd.playground.training.trainer import Trainer

np = pytest.importorskip("numpy")


def wait_until(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def unbyte(b64):
    return [b / 127.5 - 1.0 for b in base64.b64decode(b64)]


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"hidden": [8, 0]}, "hidden layer 2 needs 1 to 32 neurons, got 0"),
        ({"hidden": [4] * 40}, "at most 6 hidden layers, got 40"),
        ({"hidden": "8,x"}, "hidden layer 2 needs 1 to 32 neurons, got 'x'"),
        ({"lr": float("nan")}, "Learning rate must be a finite number > 0 and ≤ 10, got nan"),
        ({"lr": "nan"}, "Learning rate must be a finite number > 0 and ≤ 10, got nan"),
        (
            {"lr": " 1e400"},
            "Learning rate must be a finite number > 0 and ≤ 10, got 1e400 (too "
            "large: no number beyond about ±1.8e308 exists here)",
        ),
        ({"lr": "-inf"}, "Learning rate must be a finite number > 0 and ≤ 10, got -inf"),
        ({"lr": 0}, "Learning rate must be a finite number > 0"),
        ({"lr": -0.1}, "got -0.1"),
        ({"lr": "fast"}, "Learning rate must be a number, got 'fast'"),
        ({"lr": None}, "Learning rate must be a number, got None"),
        ({"lr": True}, "Learning rate must be a number, got True"),
        ({"dataset": "mnist"}, "unknown Dataset 'mnist'; choose one of moons, circles"),
        ({"points": 10_000}, "Points must be a whole number from 4 to 500, got 10000"),
        ({"added": [[0.0, 0.0, 1]] * 10_000}, "at most 300 added points, got 10000"),
        ({"added": [[0.0, 0.0, 2]]}, "Added points must be a whole number from 0 to 1, got 2"),
        ({"added": [[1e9, 0.0, 1]]}, "Added points must be a finite number"),
        ({"added": [[0.0, 1]]}, "an added point is [x, y, class]"),
        ({"dataset": "spiral3"}, "the Hinge (SVM) loss separates 2 classes"),
        ({"dataset": "lecture", "added": [[0, 0, 1]]}, "points can be added to the 2-D sets"),
        ({"activation": "gelu"}, "unknown Activation 'gelu'"),
        ({"optimizer": "lbfgs"}, "unknown Optimizer 'lbfgs'"),
        ({"noise": -1}, "Noise must be a finite number ≥ 0 and ≤ 1, got -1.0"),
        ({"batch": 2.5}, "Batch size must be a whole number from 0 to 800, got 2.5"),
        ({"colour": "red"}, "unknown setting(s) 'colour'; the settings are dataset, points, "),
        (
            {"hiden": [8]},
            "unknown setting(s) 'hiden' (did you mean 'hidden'?); the settings are "
            "dataset, points, noise, hidden, ",
        ),
        ({"hidden": True}, "Hidden layers must be a list of neuron counts, got True"),
    ],
)
def test_bad_settings_are_refused_with_the_controls_name(bad, words):
    with pytest.raises(ValueError) as e:
        Settings.from_dict(bad)
    assert words in str(e.value)


def test_one_hidden_layer_may_be_written_as_its_size():
    assert Settings.from_dict({"hidden": 8}).hidden == (8,)  # train(hidden=8)
    assert Settings.from_dict({"hidden": [8]}).hidden == (8,)


def test_settings_round_trip_and_strings_from_a_url():
    s = Settings.from_dict(
        {
            "dataset": "spiral3",
            "loss": "cross_entropy",
            "hidden": "16, 8",
            "lr": "0.03",
            "points": "150",
            "added": [[0.5, -0.25, 2]],
        }
    )
    assert s.hidden == (16, 8) and s.lr == 0.03 and s.points == 150 and s.outputs == 3
    assert Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert Settings.from_dict({"hidden": ""}).hidden == ()  # a linear model is allowed


# ------------------------------------------------------------------ data and model


def test_moons_are_karpathys_and_the_initial_weights_are_his():
    tr = Trainer(Settings(hidden=(16, 16)))
    X, y = data.moons(100, 0.1, seed=1337)
    assert tr.mlp.X == X and tr.mlp.labels == [1 if v > 0 else 0 for v in y]
    random.seed(1337)
    his = MLP(2, [16, 16, 1])
    assert [p.data for p in tr.params] == [p.data for p in his.parameters()]


def test_added_points_change_the_data_and_keep_the_weights():
    tr = Trainer()
    tr.step(5)
    before = [p.data for p in tr.params]
    tr.set_points([[0.1, 0.2, 1], [-1.0, 1.5, 0]])
    assert (
        len(tr.mlp.X) == 102
        and tr.mlp.X[-2:] == [[0.1, 0.2], [-1.0, 1.5]]
        and tr.mlp.labels[-2:] == [1, 0]
    )
    assert [p.data for p in tr.params] == before and tr.step_no == 5
    tr.step()
    assert tr.step_no == 6
    with pytest.raises(ValueError, match="at most 300 added points, got 301"):
        tr.set_points([[0.0, 0.0, 1]] * 301)
    assert len(tr.mlp.X) == 102  # nothing lost
    tr.set_points([])
    assert len(tr.mlp.X) == 100


def test_spiral3_has_three_balanced_classes():
    X, y = data.spiral3(100, 0.1)
    assert len(X) == 100 and sorted(set(y)) == [0, 1, 2]
    assert [y.count(k) for k in range(3)] == [34, 33, 33]


# ------------------------------------------------------------------ steps


def batch_loss(tr, model):
    """The trainer's loss recomputed independently: micrograd.losses' batch loss + L2."""
    s = tr.settings
    outs = [model.outputs(x) for x in tr.mlp.X]
    if s.loss == "cross_entropy":
        loss = losses.cross_entropy(outs, tr.mlp.labels)
    else:
        fn = {
            "hinge": losses.hinge,
            "mse": losses.mse,
            "bce": losses.binary_cross_entropy_with_logits,
        }[s.loss]
        loss = fn([o[0] for o in outs], tr.mlp.T)
    return loss + losses.l2(model.parameters(), s.l2)


@pytest.mark.parametrize("use_jit", [True, False])
@pytest.mark.parametrize(
    "settings",
    [
        Settings(),
        Settings(loss="bce", optimizer="adam", lr=0.01, activation="tanh"),
        Settings(loss="mse", dataset="circles", hidden=(4,)),
        Settings(dataset="spiral3", loss="cross_entropy", points=30, hidden=(6,)),
        Settings(dataset="lecture", loss="mse", hidden=(4, 4), activation="tanh"),
        Settings(batch=16, points=50),
    ],
)
@pytest.mark.slow
def test_each_step_is_the_batch_loss_of_micrograd_losses(settings, use_jit):
    tr = Trainer(settings, use_jit=use_jit)
    for _ in range(3):
        # the loss the next step reports, computed beforehand by the batch loss functions
        expected = batch_loss(tr, tr.model).data if not settings.batch else None
        tr.step()
        if expected is not None:
            assert tr.loss == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert tr.step_no == 3 and len(tr.history) == 3


@pytest.mark.slow
def test_jit_and_eager_trainers_agree():
    a, b = Trainer(use_jit=True), Trainer(use_jit=False)
    a.step(10)
    b.step(10)
    for (ka, la, ha, aa), (kb, lb, _hb, ab) in zip(a.history, b.history):
        assert ka == kb and la == pytest.approx(lb, rel=1e-8) and aa == ab and la == ha
    for p, q in zip(a.params, b.params):
        assert p.data == pytest.approx(q.data, rel=1e-8, abs=1e-12)


def test_reset_repeats_the_run_and_new_weights_do_not():
    tr = Trainer(Settings(batch=20))
    tr.step(30)
    first = list(tr.history)
    w0 = [p.data for p in tr.params]
    tr.reset()
    assert tr.step_no == 0 and tr.history == []
    tr.step(30)
    assert tr.history == first  # bit for bit, batches included
    assert [p.data for p in tr.params] == w0
    seed = tr.settings.seed
    tr.new_weights()
    assert tr.settings.seed != seed and tr.step_no == 0
    tr.step(30)
    assert tr.history != first


@pytest.mark.slow
def test_moons_reaches_100_percent_and_spiral3_above_90():
    tr = Trainer()
    for _ in range(40):
        tr.step(10)
        if tr.accuracy == 1.0:
            break
    assert tr.accuracy == 1.0 and tr.step_no <= 400
    tr = Trainer(
        Settings(
            dataset="spiral3", loss="cross_entropy", hidden=(16, 16), optimizer="adam", lr=0.03
        )
    )
    tr.step(600)
    assert tr.accuracy > 0.9


def test_divergence_stops_with_a_message():
    tr = Trainer(Settings(loss="mse", lr=10.0, optimizer="sgd", momentum=0.99))
    tr.step(200)
    assert tr.error and "lower the Learning rate" in tr.error
    n = tr.step_no
    tr.step()
    assert tr.step_no == n  # stays stopped until Reset
    tr.reset()
    assert tr.error is None


@pytest.mark.slow
def test_after_divergence_the_points_graph_says_why_it_has_no_numbers():
    tr = Trainer(Settings(loss="mse", lr=5.0), use_jit=False)
    tr.step(200)
    assert tr.error
    graph = tr.frame()["graph"]
    # the chosen point's forward pass overflows too: no numbers, and a note that says why
    with pytest.raises(OverflowError) as info:
        losses.mse([tr.model(tr.mlp.inputs[tr.mlp.pick])], [tr.mlp.T[tr.mlp.pick]], reduction="sum")
    assert graph["data"] == graph["grad"] == []
    assert graph["note"] == (
        f"No numbers for this point: its forward pass fails ({info.value}), "
        f"as the weights diverged. Lower the Learning rate and press Reset."
    )
    tr.reset()
    assert len(tr.frame()["graph"]["data"]) == len(tr.meta()["graph"]["nodes"])


# ------------------------------------------------------------------ frames


@pytest.mark.parametrize("use_jit", [True, False, "javascript"])
@pytest.mark.slow
def test_the_frame_is_what_the_model_computes(use_jit):
    tr = Trainer(Settings(hidden=(5, 3), activation="tanh"), use_jit=use_jit)
    tr.step(20)
    f = tr.frame()
    json.dumps(f, allow_nan=False)  # the page gets plain JSON
    assert f["step"] == 20 and f["loss"] == pytest.approx(tr.loss, rel=1e-5)
    side = tr.mlp.grid_side
    assert side == (T.GRID if use_jit else T.EAGER_GRID) and T.GRID >= 64
    scores = unbyte(f["grid"]["b64"])
    assert len(scores) == side * side
    rng = random.Random(0)
    for cell in rng.sample(range(side * side), 40):
        x = tr.mlp.grid[cell]
        s = tr.model(x).data
        assert scores[cell] == pytest.approx(math.tanh(s), abs=1 / 127)
    # heat maps: neuron j of hidden layer l over the heat maps' grid (as many cells a side as
    # the neuron's square has pixels), scaled by its largest |value|, which the frame sends
    heat = [unbyte(h) for h in f["heat"]]
    assert len(heat) == 8 == len(f["heat_scale"])
    hs = tr.mlp.heat_side
    assert hs == (min(tr.mlp.box, T.GRID // 2) if use_jit else side) and len(heat[0]) == hs * hs
    x0, x1, y0, y1 = tr.mlp.extent
    acts = []
    for r in range(hs):
        for c in range(hs):  # each cell's centre, row 0 at the top
            x = [x0 + (x1 - x0) * (c + 0.5) / hs, y1 - (y1 - y0) * (r + 0.5) / hs]
            h1 = tr.model.layers[0].outputs(x)
            h2 = tr.model.layers[1].outputs(h1)
            acts.append([v.data for v in h1 + h2])
    for j in range(8):
        col = [a[j] for a in acts]
        scale = max(abs(v) for v in col)
        assert f["heat_scale"][j] == pytest.approx(scale, rel=1e-5)
        assert heat[j] == pytest.approx([v / scale for v in col], abs=1 / 127)
    # every parameter's link: w / LINK_SCALE as a byte, in model.parameters() order
    links = unbyte(f["links"])
    assert len(links) == len(tr.params) == 2 * 5 + 5 + 5 * 3 + 3 + 3 + 1
    for got, p in zip(links, tr.params):
        assert got == pytest.approx(max(-1.0, min(1.0, p.data / TF.LINK_SCALE)), abs=1 / 127)
    assert f["grads"] is None and f["read"] is None  # nobody asked for them


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "linear", "tanh"])
@pytest.mark.parametrize("hidden", [(5, 3), (32, 32)], ids=["javascript", "kernel"])
@pytest.mark.slow
def test_the_javascript_engines_pictures_are_the_models_for_every_activation(activation, hidden):
    # (a ReLU network's pictures called a helper the step's program kept to itself: the site's
    # frame failed with "$max is not defined")
    tr = Trainer(Settings(hidden=hidden, activation=activation), use_jit="javascript")
    tr.step(5)
    f = tr.frame()
    tr.mlp.engine.sync()
    scores = unbyte(f["grid"]["b64"])
    for cell in random.Random(2).sample(range(len(scores)), 30):
        s = tr.model(tr.mlp.grid[cell]).data
        assert scores[cell] == pytest.approx(math.tanh(s), abs=1 / 127)
    assert len(f["heat"]) == sum(hidden)


def test_the_javascript_engine_makes_the_links_bytes_as_python_does():
    # A frame of the JavaScript engine reads no weight back into Python: its links and
    # gradients' bytes are made where the weights are, the same bytes as Python makes them.
    tr = Trainer(Settings(hidden=(5, 3), activation="tanh"), use_jit="javascript")
    tr.view(grads=True, graph=False)
    tr.step(20)
    f = tr.frame()
    tr.mlp.engine.sync()  # now the model's Values: what Python would make the bytes of
    assert f["links"] == TF.link_bytes([p.data for p in tr.params])
    want, top = TF.grad_bytes([p.grad for p in tr.params])
    assert f["grad_max"] == TF.short(top) and top > 0
    # (the same rule; the browser's log10 and C's may part in the last bit)
    assert unbyte(f["grads"]) == pytest.approx(unbyte(want), abs=1 / 127)


@pytest.mark.slow
def test_three_classes_paint_the_argmax():
    tr = Trainer(Settings(dataset="spiral3", loss="cross_entropy", hidden=(8,)))
    tr.step(30)
    g = tr.frame()["grid"]
    cls = list(base64.b64decode(g["cls"]))
    for cell in random.Random(1).sample(range(len(cls)), 30):
        zs = [v.data for v in tr.model.outputs(tr.mlp.grid[cell])]
        assert cls[cell] == max(range(3), key=zs.__getitem__)


def test_the_chosen_points_graph_matches_torch():
    torch = pytest.importorskip("torch")
    tr = Trainer(Settings(hidden=(4, 3)))
    tr.step(15)
    tr.choose(7)
    meta, f = tr.meta(), tr.frame()
    nodes = meta["graph"]["nodes"]
    by = {n["label"]: i for i, n in enumerate(nodes)}
    assert {"x₁", "x₂", "a1.1", "h1.4", "h2.3", "s", "loss"} <= set(by)
    # inputs, w·x+b and tanh per hidden neuron, s, and the hinge term's 3 nodes (*, +, relu):
    # no weights, no constants, so it stays small enough to read
    assert len(nodes) == 2 + 2 * 4 + 2 * 3 + 1 + 3
    x, y = tr.mlp.X[7], tr.mlp.T[7]
    net = to_torch(tr.model)
    xt = torch.tensor([x], dtype=torch.float64, requires_grad=True)
    h1 = net[1](net[0](xt))
    h1.retain_grad()
    s = net[4](net[3](net[2](h1)))
    s.retain_grad()
    loss = torch.relu(1 - y * s).sum()
    loss.backward()
    d, g = f["graph"]["data"], f["graph"]["grad"]
    assert d[by["loss"]] == pytest.approx(loss.item(), rel=1e-5, abs=1e-9)
    assert d[by["s"]] == pytest.approx(s.item(), rel=1e-5)
    assert g[by["s"]] == pytest.approx(s.grad.item(), rel=1e-5)
    for i in range(2):
        assert d[by[f"x{'₁₂'[i]}"]] == pytest.approx(x[i], rel=1e-5)
        assert g[by[f"x{'₁₂'[i]}"]] == pytest.approx(xt.grad[0, i].item(), rel=1e-5, abs=1e-9)
    for j in range(4):
        assert d[by[f"h1.{j + 1}"]] == pytest.approx(h1[0, j].item(), rel=1e-5, abs=1e-9)
        assert g[by[f"h1.{j + 1}"]] == pytest.approx(h1.grad[0, j].item(), rel=1e-5, abs=1e-9)
    # laid out once: positions do not move as it trains
    pos = meta["graph"]["pos"]
    tr.step(5)
    assert tr.meta()["graph"]["pos"] == pos
    boxes = [(px, py) for px, py in pos]
    assert len(set(boxes)) == len(boxes)


def test_model_download_loads_with_MLP_load(tmp_path):
    tr = Trainer()
    tr.step(7)
    p = tmp_path / "m.json"
    p.write_text(tr.model_json())
    m = load(str(p))
    assert [q.data for q in m.parameters()] == [q.data for q in tr.params]
    x = [0.3, -0.2]
    assert m(x).data == tr.model(x).data


# ------------------------------------------------------------------ playing: advance, runner


def test_play_trains_only_when_advanced_and_pause_stops_it():
    tr = Trainer()
    tr.play()
    time.sleep(0.05)
    assert tr.step_no == 0 and tr.playing  # no thread of its own: it trains when asked
    assert tr.due_in() == 0.0
    while tr.step_no <= 20:
        tr.advance(0.01)
    tr.pause()
    n = tr.step_no
    assert not tr.advance(0.05) and tr.step_no == n and not tr.playing
    assert tr.due_in() == math.inf and not tr.latest()["playing"]


def test_a_slowed_run_steps_at_its_speed():
    tr = Trainer()
    now = [100.0]
    tr.pacer.clock = lambda: now[0]  # time stands still but when the test moves it
    tr.set_speed(2.0)  # 2 steps a second: one now, the next half a second later
    tr.play()
    tr.advance(1.0)
    assert tr.step_no == 1 and tr.due_in() == 0.5  # waiting, not training
    tr.advance(1.0)
    assert tr.step_no == 1
    now[0] += 0.5
    assert tr.due_in() == 0.0
    tr.advance(1.0)
    assert tr.step_no == 2


@pytest.mark.slow
def test_frames_are_published_fps_times_a_second_on_a_steady_clock():
    # A frame falls due every 1/fps seconds, counted from when the last one fell due: the step
    # that runs past the due time must not push every later frame back (the site drew 18.8 of
    # its 20 frames a second so), nor may a late run catch up with a burst of frames.
    tr = Trainer(fps=10.0)
    now = [0.0]

    def clock():  # each look at the clock is 7 ms later: the run's own time, not the machine's
        now[0] += 0.007
        return now[0]

    tr.pacer.clock = tr.publisher.clock = clock  # a frame's cost too: a loaded machine's is not
    tr.play()
    published = []
    for _ in range(400):
        if tr.advance(0.02):
            published.append(now[0])
    tr.pause()
    gaps = [b - a for a, b in zip(published, published[1:])]
    seconds = published[-1] - published[0]
    assert seconds > 5 and min(gaps) >= 0.05, gaps  # never two frames at once
    assert (len(published) - 1) / seconds == pytest.approx(10.0, rel=0.02)
    # in any second, fps frames (and the one that opens it)
    assert max(sum(t <= p < t + 1.0 for p in published) for t in published) <= 11


def test_a_costly_frame_leaves_the_steps_as_much_time_as_it_takes():
    now = [0.0]
    steps: list[float] = []
    frames: list[float] = []

    def step(seconds):  # each step takes 5 ms of the run's clock
        now[0] += 0.005
        steps.append(now[0])

    def publish():  # each frame takes 60 ms: more than the 50 ms between frames at 20 fps
        now[0] += 0.06
        pacer.frame_cost = 0.06
        frames.append(now[0])

    pacer = Pacer(step, publish, frame_seconds=lambda: 1 / 20.0, clock=lambda: now[0])
    pacer.play()
    while now[0] < 10.0:
        pacer.advance(0.05)
    in_steps = 0.005 * len(steps)
    assert in_steps >= 0.06 * len(frames) * 0.95  # steps get as much time as frames at least
    assert len(frames) / now[0] == pytest.approx(1 / 0.12, rel=0.1)  # and frames the rest


@pytest.mark.parametrize("cost", [0.03, 0.05])
@pytest.mark.parametrize("apart", [False, True])
def test_a_turn_apart_either_trains_or_makes_a_frame(apart, cost):
    # The site's worker has one thread: a Pause waits for the turn under way. Apart, a turn
    # trains or publishes, never both, so it waits for the one or the other; frames keep their
    # clock either way.
    now = [0.0]
    log: list[str] = []

    def step(seconds):
        now[0] += 0.004
        log.append("step")
        pacer.stale = True  # (as a run's step does: trained since the last frame)

    def publish():
        now[0] += cost
        pacer.frame_cost = cost
        log.append("frame")
        pacer.stale = False

    pacer = Pacer(step, publish, frame_seconds=lambda: 1 / 20.0, clock=lambda: now[0])
    pacer.play()
    turns = []
    while now[0] < 5.0:
        n = len(log)
        pacer.advance(0.03, apart=apart)
        turns.append(set(log[n:]))
    both = sum(t == {"step", "frame"} for t in turns)
    assert (both == 0) if apart else (both > 20)
    # and never two frames without a step between (a frame that costs more than the time
    # between frames must not take every turn)
    assert "frame,frame" not in ",".join(log)
    assert log.count("frame") / now[0] == pytest.approx(1 / (2 * cost), rel=0.1)


def test_a_cursor_hands_out_frames_with_the_curve_it_has_not_had():
    from micrograd.playground.training.train_publish import FrameCursor

    tr = Trainer()
    frames = FrameCursor(tr)
    first = frames.next()
    assert first["type"] == "frame" and first["step"] == 0 and first["history"] == []
    tr.step(3)
    f = frames.next()
    assert f["step"] == 3 and [h[0] for h in f["history"]] == [0, 1, 2]
    tr.step(2)
    f = frames.next()  # from the last bucket sent on (it may have grown since)
    assert f["step"] == 5 and [h[0] for h in f["history"]] == [2, 3, 4]
    assert frames.next() is None  # nothing new
    tr.reset()
    f = frames.next()
    assert f["history_reset"] and f["step"] == 0
    other = FrameCursor(tr)  # another reader starts from the start of the curve
    assert other.next()["history_reset"]


def test_the_runner_trains_every_playing_trainer_in_turn_and_holds_the_unwatched():
    from micrograd.playground.training.train_thread import Runner

    runner = Runner()
    a, b, c = Trainer(), Trainer(Settings(hidden=(16, 16))), Trainer()
    seen = {"a": 0, "b": 0}
    watched = {"c": True}
    runner.add(a, on_frame=lambda: seen.__setitem__("a", seen["a"] + 1))
    runner.add(b, on_frame=lambda: seen.__setitem__("b", seen["b"] + 1))
    runner.add(c, on_frame=lambda: None, watched=lambda: watched["c"])
    try:
        for tr in (a, b, c):
            tr.play()
        runner.wake()
        # both train and both publish frames: neither waits for the other to pause
        assert wait_until(lambda: min(a.step_no, b.step_no) > 5 and min(seen.values()) > 1)
        watched["c"] = False  # the tab went away: held, still playing (see test_playground_faults)
        assert wait_until(lambda: _still(c)) and c.playing
        a.pause()
        n = a.step_no
        time.sleep(0.1)
        assert a.step_no == n and b.playing
        a.close()
        assert wait_until(lambda: len(runner) == 2)  # a closed trainer is let go
    finally:
        runner.stop()
    assert not runner._thread.is_alive()


def _still(tr: Trainer) -> bool:
    n = tr.step_no
    time.sleep(0.5)
    return tr.step_no == n


def test_value_graph_is_not_shared_between_sessions():
    a, b = Trainer(), Trainer(Settings(seed=5))
    a.step(3)
    assert b.step_no == 0 and [p.data for p in a.params] != [p.data for p in b.params]
    assert isinstance(a.model(a.mlp.X[0]), Value)


def test_without_numpy_the_trainer_is_eager(monkeypatch):
    monkeypatch.setattr(engines_module, "numpy_available", lambda: False)
    tr = Trainer(Settings(hidden=(3,)))
    assert not tr.use_jit and tr.mlp.grid_side == T.EAGER_GRID
    tr.step(2)
    assert tr.frame()["step"] == 2
    assert not Trainer(use_jit=True).use_jit  # asking for jit without numpy: eager, not an error


def test_the_loss_curve_looks_the_same_at_any_length():
    # Buckets of 2^k steps with their lowest and highest loss: a spike anywhere survives every
    # merge, and the buckets stay evenly spaced (dropping every second entry did neither).
    from micrograd.playground.training.train_frames import LossCurve

    curve = LossCurve(cap=64)
    spike_at = 777
    for k in range(10_000):
        curve.add(k, 100.0 if k == spike_at else 1.0 / (k + 1), k / 10_000)
    steps = [b[0] for b in curve.buckets]
    width = curve.width
    assert len(steps) <= 64 and steps == list(range(0, 10_000, width))  # evenly spaced
    assert max(hi for _, _, hi, _ in curve.buckets) == 100.0  # the spike is kept
    spiked = next(b for b in curve.buckets if b[0] <= spike_at < b[0] + width)
    assert spiked[2] == 100.0 and spiked[1] == min(
        1.0 / (k + 1) for k in range(spiked[0], spiked[0] + width)
    )
    assert curve.buckets[-1][3] == 9_999 / 10_000  # the accuracy at the last step


def test_optimiser_settings_apply_to_the_running_model_and_the_rest_starts_over():
    from dataclasses import replace

    tr = Trainer(Settings(lr=0.3))
    tr.step(20)
    weights = [p.data for p in tr.params]
    tr.configure(replace(tr.settings, lr=0.01, l2=0.0, momentum=0.5, batch=25))
    assert tr.step_no == 20 and [p.data for p in tr.params] == weights  # the same run goes on
    assert tr.mlp.opt.lr == 0.01 and tr.mlp.opt.momentum == 0.5 and len(tr.history) == 20
    assert tr.change.startswith("Learning rate, Momentum, L2, Batch size: applied to the running")
    tr.step()
    assert tr.step_no == 21 and len(tr.history) == 21  # it goes on from there
    tr.configure(replace(tr.settings, activation="relu"))
    assert tr.step_no == 0 and tr.history == []
    assert tr.change == "Activation: a new model or new data, so training started over"


def test_forgetting_zero_grad_is_the_lectures_bug_and_a_live_setting():
    # Unchecked, each step's gradients add to the last ones. Switching it does not restart.
    from dataclasses import replace

    plain = Settings(optimizer="sgd", momentum=0.0, l2=0.0)
    tr, twin = Trainer(plain), Trainer(plain)
    tr.step(3)
    twin.step(3)
    tr.configure(replace(tr.settings, zero_grad=False))
    assert tr.step_no == 3 and "applied to the running model" in tr.change
    before = [p.grad for p in tr.params]  # step 3's gradients, left in .grad
    tr.step()
    twin.step()  # the same weights, zeroing: step 4's own gradients
    for p, q, b in zip(tr.params, twin.params, before):
        assert p.grad == pytest.approx(b + q.grad, rel=1e-9, abs=1e-12)
    assert any(b != 0 for b in before)
    with pytest.raises(ValueError, match="Zero the grads must be true or false"):
        Settings.from_dict({"zero_grad": "maybe"})
    assert Settings.from_dict({"zero_grad": "false"}).zero_grad is False  # as the URL writes it


def test_a_point_past_the_hinges_margin_says_why_its_grads_are_zero():

    def point_losses(tr):
        return [max(0.0, 1 - t * tr.model.outputs(x)[0].data) for x, t in zip(tr.mlp.X, tr.mlp.T)]

    tr = Trainer(Settings(lr=0.3))
    inside = next(i for i, v in enumerate(point_losses(tr)) if v > 0)  # untrained
    tr.choose(inside)
    assert tr.frame()["graph"]["note"] == ""  # a point with a loss: its grads are the story
    tr.step(150)
    past = point_losses(tr).index(0.0)  # trained: points past the margin
    tr.choose(past)
    f = tr.frame()["graph"]
    assert all(g == 0 for g in f["grad"][:-1]) and "past the margin" in f["note"]
    assert "nothing flows back" in f["note"]
