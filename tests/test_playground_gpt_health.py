"""The GPT view's Health panel through its JSON API (issue 58 item 3): the presets that apply to
microgpt (Dead ReLUs, Learning rate too high) diagnosed by cause within their first 50 steps,
"Fix it" silent, microgpt's healthy run silent, on each GPT engine (eager, numpy's jit, the
site's JavaScript, here on Node.js); the numbers the library's (`health.Monitor` on the same
GPT); health carried only while the panel is open; "No zero_grad" not offered (his Adam zeroes
the grads in its step)."""

from __future__ import annotations

import math
import shutil

import pytest

from micrograd import gpt
from micrograd.playground.errors import ViewError
from micrograd.playground.gpt.gpt_view import GPTView
from micrograd.playground.gpt.train_gpt import WORDS
from micrograd.playground.training.train_health import EVERY_STEP, GPT_PRESETS
from micrograd.train.health import Monitor
from micrograd.train.health_presets import BROKEN_GPT, apply_gpt_init

HAS_NODE = shutil.which("node") is not None or shutil.which("nodejs") is not None
ENGINES = [
    False,
    "numpy",
    pytest.param(
        "javascript", marks=pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
    ),
]


def causes(answer: dict) -> set[str]:
    return {d["cause"] for d in answer["frame"]["health"]["diagnoses"]}


def opened(jit: bool | str, words: str = "builtin") -> GPTView:
    v = GPTView(jit=jit)
    v.config({"data": words})
    v.health({"open": True})
    return v


def test_the_gpt_presets_are_those_that_apply_to_microgpt() -> None:
    menu = GPTView(jit=False).options({})["health_presets"]
    assert [p["name"] for p in menu] == ["dead_relus", "lr_too_high"]
    assert [p["cause"] for p in menu] == ["dead", "update_data"]
    # no tanh in a GPT; and his Adam zeroes the grads itself: no zero_grad to forget
    assert "no_zero_grad" not in GPT_PRESETS and "saturated_tanh" not in GPT_PRESETS
    params = gpt.GPT(5, 1, 8, 2, 4).parameters()
    params[0].grad = 1.0
    gpt.Adam(params, 10).step()
    assert all(p.grad == 0.0 for p in params)


@pytest.mark.parametrize("jit", ENGINES)
@pytest.mark.parametrize("name", GPT_PRESETS)
def test_each_gpt_preset_is_diagnosed_within_50_steps_and_its_fix_is_silent(name, jit):
    v = opened(jit)
    a = v.health({"preset": name})
    assert a["frame"]["step"] == 0 and a["frame"]["health"]["preset"] == name
    assert list(v.trainer.kind.docs) != [] and set(v.trainer.kind.docs) == set(WORDS)
    seen = set()
    for _ in range(50):
        a = v.control({"action": "step"})
        seen |= causes(a)
        if BROKEN_GPT[name].cause in seen or a["frame"]["error"]:
            break
    assert BROKEN_GPT[name].cause in seen, (name, seen)
    said = [d["message"] for d in a["frame"]["health"]["diagnoses"]]
    if name == "dead_relus":  # a GPT has no biases: the fix named is the weights' signs
        assert "both signs" in said[0] and "biases start negative" not in said[0], said
    a = v.health({"fix": True})
    assert a["frame"]["step"] == 0 and a["frame"]["health"]["fixed"] is True
    assert a["meta"]["settings"]["lr"] == 0.01
    for k in range(30):
        a = v.control({"action": "step"})
        assert causes(a) == set(), (name, k, a["frame"]["health"]["diagnoses"])
    h = a["frame"]["health"]
    assert a["frame"]["error"] is None and h["step"] >= EVERY_STEP
    assert h["layers"][0]["name"] == "block 1 mlp" and h["layers"][0]["activation"] == "relu"


@pytest.mark.parametrize("jit", ENGINES)
def test_microgpts_healthy_run_is_silent(jit, monkeypatch):
    v = opened(jit)
    for k in range(60):
        a = v.control({"action": "step"})
        h = a["frame"]["health"]
        assert h["diagnoses"] == [], (k, h["diagnoses"])
    assert h["step"] >= EVERY_STEP and all(lay["recorded"] for lay in h["layers"])
    assert len(h["weights"]) == 9  # wte, wpe, the block's 6, lm_head: each its update:data line


@pytest.mark.parametrize("jit", ENGINES)
def test_the_panel_shows_the_librarys_numbers(jit):
    """The Dead ReLUs preset's first two steps in the view against `health.Monitor` on the
    same GPT (microgpt's build from the view's seed and words, `apply_gpt_init`), stepped by
    gpt.py itself: the same dead share, histogram and update:data, on every engine."""
    v = opened(jit)
    v.health({"preset": "dead_relus"})
    got = [v.control({"action": "step"})["frame"]["health"] for _ in range(2)]
    kind = v.trainer.kind
    docs, tok, model = gpt.prepare(list(WORDS), 42)
    assert docs == kind.docs
    apply_gpt_init(model, negative_relu_inputs=True)
    adam, mon = gpt.Adam(model.parameters(), 1000, lr=0.01), Monitor(model)
    for k in range(2):
        with mon.recording():
            model.loss(tok.encode(docs[k])).backward()
        mon.read_grads()
        adam.step()
        want = mon.read_update(k)
        lay, h = want.layers[0], got[k]
        assert h["step"] == k + 1
        assert h["layers"][0]["dead"] == lay.dead
        assert h["layers"][0]["counts"] == lay.act_hist.counts
        assert h["weights"] == [w.name for w in want.weights]
        step, line = h["lines"][-1]
        assert step == k
        for x, wh in zip(line, want.weights, strict=True):
            if not math.isfinite(wh.update_data):  # no update at all (a dead unit's weights)
                assert x is None, wh.name
            else:  # (3 decimals; the jit engines' arithmetic differs in the last bits)
                assert x == pytest.approx(round(wh.update_data, 3), abs=2e-3), wh.name


def test_health_is_carried_only_while_the_panel_is_open():
    v = GPTView(jit=False)
    v.config({"data": "builtin"})
    a = v.control({"action": "step"})
    assert a["frame"]["health"] is None
    tap = v.trainer.kind.health
    assert tap.steps == 1 and not tap.history  # stepped, not read
    a = v.health({"open": True})
    assert a["frame"]["health"]["step"] is None  # nothing read yet: the page says so
    a = v.control({"action": "step"})
    assert a["frame"]["health"]["step"] == 2
    a = v.health({"open": False})
    assert a["frame"]["health"] is None


@pytest.mark.parametrize(
    "body, words",
    [
        ({"preset": "no_zero_grad"}, "no_zero_grad"),
        ({"preset": "saturated_tanh"}, "saturated_tanh"),
        ({"fix": True}, "no preset to fix"),
        ({"open": "yes"}, "open must be true or false"),
        ({"shut": True}, "'shut'"),
    ],
)
def test_a_bad_health_action_is_refused_in_one_line(body, words):
    v = GPTView(jit=False)
    v.config({"data": "builtin"})
    with pytest.raises(ViewError, match=words) as e:
        v.health(body)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", GPT_PRESETS)
def test_the_librarys_gpt_presets_are_diagnosed_and_their_fix_is_silent(name):
    """`health_presets.run_broken_gpt` (what benchmarks/health_thresholds.py measures), on the
    built-in words: the preset's cause within 50 steps, none with its fix."""
    from micrograd.train.diagnose import diagnose
    from micrograd.train.health_presets import run_broken_gpt

    hs = run_broken_gpt(name, 50, docs=list(WORDS))
    seen = {d.cause for k in range(1, len(hs) + 1) for d in diagnose(hs[max(0, k - 10) : k])}
    assert BROKEN_GPT[name].cause in seen, seen
    hs = run_broken_gpt(name, 30, fixed=True, docs=list(WORDS))
    assert len(hs) == 30
    assert all(not diagnose(hs[max(0, k - 10) : k]) for k in range(1, 31))


def test_the_panel_over_messages_as_the_widget_and_the_site_send_them():
    """The notebook widget and the site's worker speak to the views in messages (MessageHost):
    the GPT view's health action, and its frames carrying the panel's numbers."""
    from micrograd.playground.serving.messages import MessageHost
    from micrograd.playground.views import Tab

    host = MessageHost(Tab(jit=False))

    def ask(action: str, body: dict) -> dict:
        replies = host.receive({"id": 1, "view": "gpt", "action": action, "body": body})
        assert "error" not in replies[0], replies[0]
        return replies[0]["answer"]

    ask("config", {"data": "builtin"})
    assert [p["name"] for p in ask("options", {})["health_presets"]] == list(GPT_PRESETS)
    host.receive({"view": "gpt", "frames": True})
    assert ask("health", {"open": True})["frame"]["health"]["step"] is None
    ask("health", {"preset": "dead_relus"})
    for _ in range(2):
        ask("control", {"action": "step"})
    frames = host.receive({"view": "gpt", "frames": True, "fresh": True})
    health = frames[-1]["frame"]["health"]
    assert health["step"] == 2 and [d["cause"] for d in health["diagnoses"]] == ["dead"]
    replies = host.receive({"id": 2, "view": "gpt", "action": "health", "body": {"fix": 1}})
    assert replies[0]["error"] == "health: fix must be true or false, got '1'"
