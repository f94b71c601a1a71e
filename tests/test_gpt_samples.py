"""The GPT view's samples: `gpt_frames.sample_words` draws as `micrograd.gpt.sample` does
(random.choices on softmax(logits / temperature)) from a table of uniform numbers, and the site's
JavaScript engine (gpt_step.js's `sample`, run by Node.js as the worker runs it) draws the same
words from the same table and weights, from the logits its training programs keep."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator

import pytest

from micrograd.gpt import prepare, sample
from micrograd.playground.gpt.gpt_frames import pick, sample_words, uniforms
from micrograd.playground.gpt.train_gpt import SAMPLES, GPTKind, GPTSettings

HAS_NODE = shutil.which("node") is not None or shutil.which("nodejs") is not None
WORDS = ("emma", "ava", "olivia", "mia", "zoe", "isabel", "abigail")  # (SMALL's block holds 7)
SMALL = {"n_embd": 8, "n_head": 2, "block_size": 8}


class Fed(random.Random):
    """A Random whose random() gives the numbers it was fed, in order."""

    def __init__(self, numbers: list[float]) -> None:
        super().__init__(0)
        self.numbers: Iterator[float] = iter(numbers)

    def random(self) -> float:
        return next(self.numbers)


def test_pick_is_the_draw_random_choices_makes() -> None:
    for seed in range(300):
        rng = random.Random(seed)
        n = rng.randint(1, 30)
        weights = [rng.random() ** 4 * (rng.random() < 0.8) for _ in range(n)]
        weights[rng.randrange(n)] += 0.1  # (at least one above 0)
        want = random.Random(seed + 1000).choices(range(n), weights)[0]
        assert pick(weights, random.Random(seed + 1000).random()) == want
    assert pick([0.0, 1.0, 0.0], 0.0) == 1  # a weight of 0 is never drawn
    assert pick([0.5, 0.5], 0.999999) == 1


@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_sample_words_draws_what_microgpts_sample_draws(temperature: float) -> None:
    _, tok, model = prepare(list(WORDS), seed=3)
    table = uniforms(11, 8, model.block_size)
    got = sample_words(model, tok, temperature, table)
    flat = [u for row in table for u in row]
    assert sample(model, tok, 8, temperature, rng=Fed(flat)) == [tok.decode(w) for w in got]
    # the page's samples at a seed are sample()'s at that seed: the words, not only the draw
    want = sample(model, tok, 8, temperature, rng=random.Random(11))
    assert [tok.decode(w) for w in got] == want
    assert len(set(want)) > 1  # (not one word over and over)


@pytest.mark.skipif(not HAS_NODE, reason="Node.js is not installed")
@pytest.mark.parametrize("temperature", [0.3, 1.0, 2.5])
def test_the_javascript_engine_draws_the_words_python_draws(temperature: float) -> None:
    kind = GPTKind(GPTSettings(docs=WORDS, steps=200, **SMALL), "javascript")
    block = kind.model.block_size
    assert block + 1 not in kind.engine.lengths  # its first sample loads the longest program
    for _ in range(3):
        kind.train(0.2, lambda: True)
        kind.sync()  # (the model's Values: the engine's weights)
        table = uniforms(kind.adam.t, SAMPLES, block)
        js = kind.engine.sample(temperature, table)
        assert js == sample_words(kind.model, kind.tokenizer, temperature, table)
        assert block + 1 in kind.engine.lengths
    # and a frame's samples are those
    frame = kind.frame(playing=False)
    table = uniforms(kind.adam.t, SAMPLES, block)
    want = sample_words(kind.model, kind.tokenizer, kind.settings.temperature, table)
    assert frame["samples"] == [kind.tokenizer.decode(w) for w in want]
    assert frame["samples"] == sample(
        kind.model,
        kind.tokenizer,
        SAMPLES,
        kind.settings.temperature,
        rng=random.Random(kind.adam.t),
    )
