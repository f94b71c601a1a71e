"""micrograd.gpt's loss on jit: documents as data, one trace per length, replayed on a batch.

    from micrograd.jit.gpt import JitGPT
    jg = JitGPT(model)                          # model: a micrograd.gpt.GPT
    loss = jg.loss([tok.encode(d) for d in docs])   # the mean of model.loss over the documents
    loss.backward()                             # every parameter's grad, as eager backward() gives
    jg.losses(token_lists)                      # each document's loss, forward only

    source, captured = js_program(model, n)     # the loss of n tokens, as JavaScript
    step = host.compile(gpt_step_source())      # microgpt's training step around such programs

A token chooses an embedding row and a target probability: indexing by data, which no trace can
replay. So each document goes in as one-hot rows (`one_hot`), and `traced_loss`, the model's loss
as a trace can replay it, reads them with `Value.dot`, which gives the same numbers (1.0 * w plus
exact zeros). The documents of one length
share a graph: it is traced once (the jit's program for that shape) and replayed on all of
them. For the static site, `js_program` writes the trace of one length with jit's JavaScript
target, and `gpt_step_source` is the step that runs such programs (gpt_step.js: one word a step,
backward, microgpt's Adam, many steps a call). The softmaxes of a traced loss are not shifted
by their largest logit (a number read from the data), so the losses equal eager's to rounding
(1e-12), not to the bit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from ..engine import Value
from ..gpt import GPT, linear
from . import jit, load_numpy


def one_hot(tokens: Sequence[int], vocab_size: int) -> list[list[float]]:
    """Each token as a row of `vocab_size` numbers, 1.0 at the token and 0.0 elsewhere."""
    return [[1.0 if i == t else 0.0 for i in range(vocab_size)] for t in tokens]


def _softmax(logits: Sequence[Value]) -> list[Value]:
    # gpt.softmax without its shift by the largest logit, a number read from the data
    exps = [v.exp() for v in logits]
    total = Value.sum(exps)
    return [e / total for e in exps]


def _rmsnorm(x: Sequence[Value]) -> list[Value]:
    # gpt.rmsnorm, its / n as * (1 / n): no node of constants alone for the JavaScript target
    scale = (Value.dot(x, x) * (1 / len(x)) + 1e-5) ** -0.5
    return [xi * scale for xi in x]


def forward_from(
    model: GPT,
    x: list[Value],
    keys: list,
    values: list,
    norm: Callable[[Sequence[Value]], list[Value]],
    softmax: Callable[[Sequence[Value]], list[Value]],
    scaled: Callable[[Value], Value],
    weights: list | None = None,
    relus: list | None = None,
) -> list[Value]:
    """`GPT.forward`'s arithmetic from a position's embedding sum `x` (token's row + position's
    row) to its logits, with the pieces given: `norm` (rmsnorm), `softmax` and `scaled` (a head's
    q·k over √head_dim). With gpt.py's own rmsnorm, softmax and ``s / hd**0.5`` it is
    `GPT.forward`, the same numbers to the bit (the GPT view's pictures); `traced_loss` gives the
    traceable ones. `weights`: each layer's attention weights at this position, head after
    head, appended to ``weights[li]`` as plain numbers; `relus`: each block's ReLU outputs,
    appended block by block."""
    sd, hd = model.sd, model.head_dim
    x = norm(x)
    for li in range(model.n_layer):
        x_residual, x = x, norm(x)
        q = linear(x, sd[f"layer{li}.attn_wq"])
        keys[li].append(linear(x, sd[f"layer{li}.attn_wk"]))
        values[li].append(linear(x, sd[f"layer{li}.attn_wv"]))
        x_attn: list[Value] = []
        for hs in range(0, model.n_embd, hd):
            q_h = q[hs : hs + hd]
            attn_weights = softmax([scaled(Value.dot(q_h, k[hs : hs + hd])) for k in keys[li]])
            if weights is not None:
                weights[li].append([w.data for w in attn_weights])
            v_h = [v[hs : hs + hd] for v in values[li]]
            x_attn.extend(Value.dot(attn_weights, v_j) for v_j in zip(*v_h))
        x = [a + b for a, b in zip(linear(x_attn, sd[f"layer{li}.attn_wo"]), x_residual)]
        h = [a.relu() for a in linear(norm(x), sd[f"layer{li}.mlp_fc1"])]
        if relus is not None:
            relus.append(h)
        x = [a + b for a, b in zip(linear(h, sd[f"layer{li}.mlp_fc2"]), x)]
    return linear(x, sd["lm_head"])


def traced_loss(
    model: GPT,
    rows: Sequence[Sequence[Any]],
    keep: list | None = None,
    relus: list | None = None,
) -> Value:
    """`model.loss` of the one-hot `rows` as a trace can replay it: `GPT.forward`'s arithmetic,
    with each token's embedding row and each target's probability picked by a dot with its
    one-hot row (exact zeros added: the same numbers) and the softmaxes not shifted (the same
    function, other last bits: the loss to 1e-12, tests/test_gpt_jit.py). `keep`: each
    position's logits are appended to it (the JavaScript step samples from them). `relus`:
    emptied, then each position's ReLU outputs of each block appended to it, position by
    position, block by block (train.health reads them: `JitGPT(model, relus=True)`)."""
    if relus is not None:
        relus.clear()
    if len(rows) < 2:
        raise ValueError(f"traced_loss: needs at least 2 tokens, got {len(rows)}")
    n, sd, hd = min(model.block_size, len(rows) - 1), model.sd, model.head_dim
    keys, values = [[] for _ in range(model.n_layer)], [[] for _ in range(model.n_layer)]
    losses = []
    for pos_id in range(n):
        tok_emb = [Value.dot(rows[pos_id], column) for column in zip(*sd["wte"])]
        x = [t + p for t, p in zip(tok_emb, sd["wpe"][pos_id])]
        logits = forward_from(
            model, x, keys, values, _rmsnorm, _softmax, lambda s: s * (1 / hd**0.5), relus=relus
        )
        if keep is not None:
            keep.append(logits)
        losses.append(-Value.dot(rows[pos_id + 1], _softmax(logits)).log())
    return (1 / n) * Value.sum(losses)


def check_token(model: GPT, token: object) -> None:
    """A ValueError, as `GPT.forward`'s, for a token that is not an id of the vocabulary."""
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < model.vocab_size:
        raise ValueError(f"GPT: token {token!r:.40} is not in 0..{model.vocab_size - 1}")


class JitGPT:
    """The model's loss (`traced_loss`) compiled by `micrograd.jit`: see the module's
    docstring. `jitted` is the `Jitted` function (its `traces`: how many lengths were traced)."""

    def __init__(self, model: GPT, relus: bool = False) -> None:
        if not isinstance(model, GPT):
            raise TypeError(f"JitGPT: needs a micrograd.gpt.GPT, got {type(model).__name__}")
        self.model = model
        self._relus: list | None = [] if relus else None
        self.jitted = jit(functools.partial(traced_loss, model, relus=self._relus), reduce="sum")
        if relus:  # each program keeps its ReLUs' outputs (`relu_outputs` reads them)
            self.jitted.keep = lambda: [v for h in self._relus or [] for v in h]

    def relu_outputs(self) -> list[tuple[Any, Any]] | None:
        """With `relus`: each block's ReLU outputs in the last call and their grads, two
        (units, positions) arrays a block (one document a call: `NumpyGPT`'s step); None when
        the program kept none."""
        kept = self.jitted.kept()
        if kept is None or not kept[0].size:
            return None
        layers, units = self.model.n_layer, 4 * self.model.n_embd
        if kept[0].shape[0] % (layers * units) or kept[0].shape[1] != 1:
            return None
        values, grads = (a[:, 0].reshape(-1, layers, units) for a in kept)  # (pos, block, unit)
        return [(values[:, li, :].T, grads[:, li, :].T) for li in range(layers)]

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
                check_token(self.model, t)  # a token out of range is named, as eager names it
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
    """`traced_loss` of `n` one-hot tokens traced and written by jit's JavaScript target
    (`js_target.graph_source`: a batch of one word of n tokens, then the loss's gradient; its
    ``keptRows``, each of the first n - 1 positions' logits, row by row, then each position's
    ReLU outputs, block by block: the Health panel reads them), and the weights it
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
    relus: list[list[Value]] = []  # each position's, block by block: the Health panel's
    tokens = one_hot([bos] * n, model.vocab_size)
    trace = record(lambda x: traced_loss(model, x, keep=logits, relus=relus), [tokens])
    graph = Graph(trace, [v for row in logits + relus for v in row])
    index = {id(p): i for i, p in enumerate(model.parameters())}
    # (its steps are kernels shared with the other lengths' programs: js_shared.py)
    return graph_source(graph, shared=True), [index[id(v)] for v in graph.captured]


@functools.lru_cache(maxsize=1)
def gpt_step_source() -> str:
    """The body of a JavaScript function returning the GPT's training step (gpt_step.js's
    `makeGPTStep`), with jit/runtime.js before it (its correctly rounded `powInt`) and
    jit/health.js (the Health panel's statistics of a step: `read`)."""
    from .js_target import health_source, runtime_source

    step = (resources.files(__package__) / "gpt_step.js").read_text("utf-8")
    return f"{runtime_source()}\n{health_source()}\n{step}\nreturn makeGPTStep();\n"


def train(
    model: GPT,
    tokenizer: Any,
    docs: Sequence[str],
    steps: int,
    losses: list[float] | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
    lr: float = 0.01,
) -> list[float]:
    """`micrograd.gpt.train` with each step's loss and grads computed by `JitGPT` (numpy): the
    same documents in the same order, microgpt's Adam; the losses equal eager's to 1e-9
    (tests/test_cli_gpt.py), faster once each word length is traced (benchmarks/bench_gpt.py)."""
    from .. import gpt

    jg = JitGPT(model)
    return gpt.train(
        model, tokenizer, docs, steps, losses, on_step, lr, loss_of=lambda t: jg.loss([t])
    )
