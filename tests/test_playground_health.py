"""The Train view's Health panel through its JSON API (issue 58 item 3): the presets diagnosed
by cause within their first 50 steps, "Fix it" silent, the healthy runs silent, on each engine
(the server's jit, the eager one, the site's JavaScript); the numbers the library's; and health
read only while the panel is open (and then sub-sampled)."""

from __future__ import annotations

import math
import shutil

import pytest

from micrograd.playground.errors import ViewError
from micrograd.playground.training.train_health import BUDGET, DEMO, EVERY_STEP, PRESETS
from micrograd.playground.views import TrainView
from micrograd.train.health_presets import BROKEN, run_broken

# numpy's jit, the eager engine, and the site's: the step in JavaScript (here on Node.js), the
# steps read in Python (engines.JavaScriptEngine._read_step)
HAS_NODE = shutil.which("node") is not None or shutil.which("nodejs") is not None
ENGINES = [
    True,
    False,
    pytest.param(
        "javascript", marks=pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
    ),
]


def causes(answer: dict) -> set[str]:
    return {d["cause"] for d in answer["frame"]["health"]["diagnoses"]}


def opened(jit: bool) -> TrainView:
    v = TrainView(jit=jit)
    v.health({"open": True})
    return v


@pytest.mark.parametrize("jit", ENGINES)
@pytest.mark.parametrize("name", PRESETS)
def test_each_preset_is_diagnosed_within_50_steps_and_its_fix_is_silent(name, jit):
    v = opened(jit)
    a = v.health({"preset": name})
    assert a["frame"]["step"] == 0 and a["frame"]["health"]["preset"] == name
    seen = set()
    for _ in range(50):
        seen |= causes(v.control({"action": "step"}))
    assert BROKEN[name].cause in seen, (name, seen)
    a = v.health({"fix": True})
    assert a["frame"]["step"] == 0 and a["frame"]["health"]["fixed"] is True
    for k in range(50):
        a = v.control({"action": "step"})
        assert causes(a) == set(), (name, k, a["frame"]["health"]["diagnoses"])
    assert a["frame"]["error"] is None and a["frame"]["health"]["step"] >= EVERY_STEP


@pytest.mark.parametrize("jit", ENGINES)
@pytest.mark.parametrize("settings", [{}, DEMO], ids=["view default", "moons demo"])
def test_the_healthy_runs_are_silent(settings, jit):
    v = opened(jit)
    v.config(settings)
    for k in range(60):
        a = v.control({"action": "step"})
        h = a["frame"]["health"]
        assert h["diagnoses"] == [], (k, h["diagnoses"])
    assert h["step"] >= EVERY_STEP and all(lay["recorded"] for lay in h["layers"])


@pytest.mark.parametrize("jit", ENGINES)
def test_the_panel_shows_the_librarys_numbers(jit):
    """A preset's first step in the view (the moons demo's data, seed and net) against
    `health_presets.run_broken`'s own first step: the same network, the same statistics."""
    v = opened(jit)
    v.health({"preset": "saturated_tanh"})
    h = v.control({"action": "step"})["frame"]["health"]
    want = run_broken("saturated_tanh", steps=1).health[0]
    assert [lay["name"] for lay in h["layers"]] == [lay.name for lay in want.layers]
    for got, lay in zip(h["layers"], want.layers):
        assert got["saturated"] == lay.saturated
        assert got["std"] == pytest.approx(lay.act_std, rel=1e-5)
        # counts: a value on a bin's edge may fall on either side of it through another engine
        assert sum(abs(a - b) for a, b in zip(got["counts"], lay.act_hist.counts)) <= 2
    assert h["weights"] == [w.name for w in want.weights]
    k, uds = h["lines"][0]
    assert k == 0
    assert uds == pytest.approx([w.update_data for w in want.weights], abs=5e-4)  # 3 decimals
    assert any(lay["saturated"] > 0.5 for lay in h["layers"])


@pytest.mark.parametrize("jit", ENGINES)
def test_frames_carry_health_only_while_the_panel_is_open_and_nothing_is_read_shut(jit):
    v = TrainView(jit=jit)
    a = v.control({"action": "step", "steps": 5})
    assert a["frame"]["health"] is None
    tap = v.trainer.mlp.health
    assert len(tap.history) == 0 and tap.lines == []  # shut: no step was read
    a = v.health({"open": True})
    assert a["frame"]["health"]["step"] is None  # nothing read yet: the page says press Step
    a = v.control({"action": "step"})
    assert a["frame"]["health"]["step"] == 6
    a = v.health({"open": False})
    assert a["frame"]["health"] is None


def test_past_the_first_steps_health_is_read_once_a_frame_period(monkeypatch):
    v = opened(True)
    tap = v.trainer.mlp.health
    v.control({"action": "step", "steps": EVERY_STEP})
    assert [k for k, _ in tap.lines] == list(range(EVERY_STEP))  # each of the first steps
    clock = [1000.0]
    monkeypatch.setattr(
        "micrograd.playground.training.train_health.time.monotonic", lambda: clock[0]
    )
    tap.period = 0.05
    tap.restart_clock()  # (the clock's times from here)
    v.control({"action": "step", "steps": 30})  # no time passes: read once, then not again
    assert [k for k, _ in tap.lines][EVERY_STEP:] == [EVERY_STEP]
    clock[0] += 0.06
    v.control({"action": "step", "steps": 30})  # one frame period later: once more
    assert [k for k, _ in tap.lines][EVERY_STEP:] == [EVERY_STEP, EVERY_STEP + 30]
    assert v.trainer.step_no == EVERY_STEP + 60


def test_a_costly_read_waits_longer_than_a_frame(monkeypatch):
    """A read that took 5 ms is followed by none for 5 ms / BUDGET, frames or not."""
    v = opened(True)
    tap = v.trainer.mlp.health
    v.control({"action": "step", "steps": EVERY_STEP})
    clock = [1000.0]

    def monotonic():
        clock[0] += 0.005  # each call 5 ms later: a read (begin to end) takes 5 ms
        return clock[0]

    monkeypatch.setattr("micrograd.playground.training.train_health.time.monotonic", monotonic)
    tap.period = 0.05
    tap.restart_clock()
    v.control({"action": "step", "steps": 100})  # 100 steps, 5 ms of clock each when not read
    read = [k for k, _ in tap.lines][EVERY_STEP:]
    gaps = {b - a for a, b in zip(read, read[1:])}
    # read at t (begin), ended at t + 5 ms; the j-th step after begins at t + 5 ms + j·5 ms: the
    # first at or past t + 5 ms / BUDGET is read (BUDGET 0.05: the 19th)
    assert len(read) >= 2 and gaps == {math.ceil(1 / BUDGET - 1 - 1e-9)}


def test_the_options_list_the_presets():
    menu = TrainView().options({})["health_presets"]
    assert [p["name"] for p in menu] == list(PRESETS)
    assert [p["title"] for p in menu] == [
        "Saturated tanh",
        "Dead ReLUs",
        "Learning rate too high",
        "No zero_grad",
    ]


def test_update_data_lines_are_finite_or_none():
    v = opened(True)
    v.health({"preset": "lr_too_high"})
    h = v.control({"action": "step", "steps": 20})["frame"]["health"]
    assert h["guide"] == -3.0 and len(h["lines"]) >= EVERY_STEP
    for _, uds in h["lines"]:
        assert all(u is None or math.isfinite(u) for u in uds)


@pytest.mark.parametrize(
    "body, words",
    [
        ({"preset": "nope"}, "unknown preset 'nope'"),
        ({"open": "yes"}, "open must be true or false"),
        ({"fix": True}, "no preset to fix"),
        ({"fix": 1}, "fix must be true or false"),
        ({"colour": 1}, "health takes open, preset, fix; not 'colour'"),
    ],
)
def test_bad_health_requests_are_refused_in_one_line(body, words):
    with pytest.raises(ViewError, match=words):
        TrainView().health(body)
