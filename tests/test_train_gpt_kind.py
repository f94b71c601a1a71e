"""The GPT as a Train run's model kind: the same run, pacer and frames as the MLP's, microgpt's
steps (its losses, bit for bit), samples each frame, the global random left alone."""

from __future__ import annotations

import random

import pytest

from micrograd.gpt import microgpt
from micrograd.playground.gpt.train_gpt import SAMPLES, GPTKind, GPTSettings
from micrograd.playground.training.train_publish import FrameCursor
from micrograd.playground.training.trainer import Trainer

WORDS = ("emma", "olivia", "ava", "mia", "zoe")
STEPS = 12


def gpt_run(**kw) -> Trainer:
    return Trainer(GPTSettings(docs=WORDS, steps=STEPS, **kw), "eager", kind=GPTKind)


def test_each_step_is_microgpts_and_random_is_left_alone():
    random.seed(7)
    before = random.getstate()
    tr = gpt_run()
    losses = []
    for _ in range(STEPS):
        tr.step()
        losses.append(tr.loss)
    assert random.getstate() == before  # the run drew its seed's stream, then put it back
    _, _, want = microgpt(list(WORDS), steps=STEPS, seed=42)
    assert losses == want  # the same arithmetic, in the same order: every bit
    assert tr.step_no == STEPS and [h[0] for h in tr.history] == list(range(STEPS))


def test_a_playing_run_stops_when_its_steps_are_taken():
    tr = gpt_run()
    tr.play()
    while tr.playing:
        tr.advance(0.05)
    assert tr.step_no == STEPS and tr.error is None
    f = tr.latest()
    assert not f["playing"] and f["step"] == STEPS and f["lr"] == 0.0


def test_frames_carry_samples_and_readers_get_them():
    tr = gpt_run()
    tr.step(3)
    cursor = FrameCursor(tr)
    f = cursor.next()
    assert f["full"] and f["step"] == 3 and len(f["samples"]) == SAMPLES
    vocab = set(tr.meta()["vocab"])
    assert vocab == set("".join(WORDS)) and all(set(w) <= vocab for w in f["samples"])
    assert tr.frame()["samples"] == f["samples"]  # the same step: the same words
    assert [h[0] for h in f["history"]] == [0, 1, 2]


def test_the_temperature_applies_to_the_running_model_and_the_size_starts_over():
    tr = gpt_run()
    tr.step(2)
    tr.configure(GPTSettings(docs=WORDS, steps=STEPS, temperature=1.0))
    assert tr.step_no == 2 and tr.change.startswith("Temperature: applied to the running model")
    tr.configure(GPTSettings(docs=WORDS, steps=STEPS, temperature=1.0, n_embd=8))
    assert tr.step_no == 0 and "Embedding size" in tr.change and "started over" in tr.change
    assert len(tr.params) == len(Trainer(tr.settings, kind=GPTKind).params)


def test_the_mlps_edits_are_refused_by_name():
    tr = gpt_run()
    with pytest.raises(TypeError, match="trains a gpt model, not the Train view's MLP"):
        tr.set_points([])


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"docs": ()}, "docs is empty"),
        ({"docs": ("ok", 3)}, "every document must be a str"),
        ({"temperature": 0.0}, "temperature must be > 0"),
        ({"steps": 0}, "steps must be 1 to"),
        ({"lr": float("nan")}, "lr must be > 0"),
    ],
)
def test_bad_settings_are_named(kw, message):
    with pytest.raises((TypeError, ValueError), match=message):
        GPTSettings(**kw)
