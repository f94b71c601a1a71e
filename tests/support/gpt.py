"""What several GPT tests need: each position's logits of a token list, by `GPT.forward`."""

from __future__ import annotations

from micrograd.engine import Value
from micrograd.gpt import GPT


def logits_of(model: GPT, tokens: list[int]) -> list[list[Value]]:
    """Each position's logits, `GPT.forward` position after position (microgpt's loop)."""
    keys, values = [[] for _ in range(model.n_layer)], [[] for _ in range(model.n_layer)]
    return [model.forward(t, pos, keys, values) for pos, t in enumerate(tokens)]
