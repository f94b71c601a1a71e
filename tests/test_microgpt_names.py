"""microgpt()'s whole run on makemore's names, against the figures microgpt.py prints: every
loss it shows to the bit, and the 20 names it samples after 1,000 steps."""

from __future__ import annotations

import random

import pytest

from micrograd.gpt import microgpt, sample

from .test_gpt import HIS_LOSSES

HIS_LATER = {100: 3.366930921178914, 1000: 2.6496944697407585}
HIS_SAMPLES = (
    "kamon ann karai jaire vialan karia yeran anna areli kaina konna keylen liole alerin "
    "earan lenne kana lara alela anton"
).split()


@pytest.mark.slow
def test_his_thousand_steps_and_his_twenty_names(names_file) -> None:
    model, tokenizer, losses = microgpt()  # makemore's names, seed 42, 1,000 steps
    assert len(losses) == 1000
    for step, loss in {**HIS_LOSSES, **HIS_LATER}.items():
        assert losses[step - 1] == loss, step
    assert sample(model, tokenizer, 20, 0.5) == HIS_SAMPLES  # the global stream, as his script
    random.seed()
