"""micrograd.gpt's loss on jit: documents as data, one trace per length, replayed on a batch.

    from micrograd.jit.gpt import JitGPT
    jg = JitGPT(model)                          # model: a micrograd.gpt.GPT
    loss = jg.loss([tok.encode(d) for d in docs])   # the mean of model.loss over the documents
    loss.backward()                             # every parameter's grad, as eager backward() gives
    jg.losses(token_lists)                      # each document's loss, forward only

    source, captured = js_program(model, n)     # the loss of n tokens, as JavaScript
    step = host.compile(gpt_step_source())      # microgpt's training step around such programs

A token chooses an embedding row and a target probability: indexing by data, which no trace can
replay. So each document goes in as one-hot rows (`gpt.one_hot`), and the model reads them with
`Value.dot`, which gives the same numbers (1.0 * w plus exact zeros). The documents of one length
share a graph: it is traced once (the jit's program for that shape) and replayed on all of
them. For the static site, `js_program` writes the trace of one length with jit's JavaScript
target, and `gpt_step_source` is the step that runs such programs (gpt_step.js: one word a step,
backward, microgpt's Adam, many steps a call). The softmaxes of a traced loss are not shifted
by their largest logit (a number read from the data), so the losses equal eager's to rounding
(1e-12), not to the bit.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Any

from ..engine import Value
from ..gpt import GPT, one_hot
from . import jit, load_numpy


class JitGPT:
    """`model.loss` compiled by `micrograd.jit`: see the module's docstring. `jitted` is the
    `Jitted` function (its `traces`: how many lengths were traced)."""

    def __init__(self, model: GPT) -> None:
        if not isinstance(model, GPT):
            raise TypeError(f"JitGPT: needs a micrograd.gpt.GPT, got {type(model).__name__}")
        self.model = model
        self.jitted = jit(model.loss, reduce="sum")

    def _groups(self, docs: Sequence[Sequence[int]]) -> dict[int, list[int]]:
        """The documents' indices by length, each cropped as the loss reads it."""
        if not docs:
            raise ValueError("JitGPT: no documents")
        groups: dict[int, list[int]] = {}
        for i, tokens in enumerate(docs):
            n = len(tokens[: self.model.block_size + 1])
            if n < 2:
                raise ValueError(f"JitGPT: document {i} has {n} token(s); a loss needs 2")
            groups.setdefault(n, []).append(i)
        return groups

    def _batch(self, docs: Sequence[Sequence[int]], idx: list[int]) -> Any:
        np = load_numpy()
        cut = self.model.block_size + 1
        for i in idx:
            for t in docs[i][:cut]:
                self.model.check_token(t)  # a token out of range is named, as eager names it
        rows = [one_hot(list(docs[i][:cut]), self.model.vocab_size) for i in idx]
        return np.array(rows, dtype=float)

    def batch(self, docs: Sequence[Sequence[int]]) -> Any:
        """The documents, all read as the same number of tokens, as the array `jitted` takes."""
        groups = self._groups(docs)
        if len(groups) != 1:
            raise ValueError(f"JitGPT.batch: documents of {len(groups)} lengths; one at a time")
        return self._batch(docs, next(iter(groups.values())))

    def loss(self, docs: Sequence[Sequence[int]]) -> Value:
        """The mean of the documents' losses, one Value: backward() fills the parameters' grads."""
        parts = [self.jitted(self._batch(docs, idx)) for idx in self._groups(docs).values()]
        return (1 / len(docs)) * Value.sum(parts)

    def losses(self, docs: Sequence[Sequence[int]]) -> list[float]:
        """Each document's loss, in the order given (forward only)."""
        out = [0.0] * len(docs)
        for idx in self._groups(docs).values():
            for i, x in zip(idx, self.jitted.outputs(self._batch(docs, idx)).tolist()):
                out[i] = x
        return out


def js_program(model: GPT, n: int) -> tuple[str, list[int]]:
    """`model.loss` of `n` one-hot tokens traced and written by jit's JavaScript target
    (`js_target.graph_source`: a batch of one word of n tokens, then the loss's gradient; its
    ``keptRows``, each of the first n - 1 positions' logits, row by row), and the weights it
    reads, as their indices in `model.parameters()`. The text depends on the model's shape
    alone (another model of that shape reads its own weights by the same indices)."""
    from .js_target import graph_source
    from .plan import Graph
    from .tracing import record

    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= model.block_size + 1:
        raise ValueError(
            f"js_program: a word is read as 2 to {model.block_size + 1} tokens, got {n!r}"
        )
    bos = model.vocab_size - 1  # (any tokens: the trace reads them as data)
    logits: list[list[Value]] = []  # each position's, kept: the step samples from them
    tokens = one_hot([bos] * n, model.vocab_size)
    trace = record(lambda x: model.loss(x, keep=logits), [tokens])
    graph = Graph(trace, [v for row in logits for v in row])
    index = {id(p): i for i, p in enumerate(model.parameters())}
    # (its steps are kernels shared with the other lengths' programs: js_shared.py)
    return graph_source(graph, shared=True), [index[id(v)] for v in graph.captured]


@functools.lru_cache(maxsize=1)
def gpt_step_source() -> str:
    """The body of a JavaScript function returning the GPT's training step (gpt_step.js's
    `makeGPTStep`), with jit/runtime.js before it (its correctly rounded `powInt`)."""
    from .js_target import runtime_source

    step = (resources.files(__package__) / "gpt_step.js").read_text("utf-8")
    return f"{runtime_source()}\n{step}\nreturn makeGPTStep();\n"
