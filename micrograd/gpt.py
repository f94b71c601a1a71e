"""A GPT on micrograd's Values: Karpathy's microgpt (2026), on `nn`'s Module and the fused ops.

Read it after nn.py, top to bottom, in microgpt's order: the documents, a tokenizer, the
parameters, the model, the optimiser, the training loop and sampling.

    from micrograd.gpt import microgpt, sample
    model, tokenizer, losses = microgpt(steps=1000)   # makemore's names, seed 42
    print(sample(model, tokenizer))                   # 20 new names, at temperature 0.5

`microgpt()` is his recipe exactly (the names shuffled after ``random.seed(seed)``, every
parameter drawn by ``random.gauss(0, 0.08)`` in his order, one document a step, his Adam with a
linearly decaying learning rate), so its losses are his script's and `sample()` afterwards draws
his names. The model is a `Module`: `parameters()`, `zero_grad()`, ``loss(tokens).backward()``.
A linear layer is one `Value.dot` node per output (the chain of ``*`` and ``+`` nodes his
``sum(w * x)`` builds, as one node, the same bits), so the graph of a step stays small.

A token is an int, or, for `micrograd.jit`, a one-hot row (a list of `vocab_size` numbers or
Values): the embedding's row is then ``Value.dot(one_hot, column)``, which adds exact zeros to
the row's own number, so the token is data a trace can replay on a batch of documents.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Union

from .engine import Value
from .nn import Module

Token = Union[int, Sequence[Any]]  # an id, or a one-hot row of vocab_size numbers or Values


# ---------------------------------------------------------------- the tokenizer


class Tokenizer:
    """Characters to ids and back: each character of the documents is an id (in sorted order),
    and one more id, `bos`, marks where a document begins and ends."""

    def __init__(self, docs: Sequence[str]) -> None:
        docs = _documents(docs, "Tokenizer")
        self.chars = sorted(set("".join(docs)))
        self.bos = len(self.chars)
        self.vocab_size = len(self.chars) + 1
        self._ids = {ch: i for i, ch in enumerate(self.chars)}

    def encode(self, text: str) -> list[int]:
        """``[bos, id, id, ..., bos]``: a ValueError names a character the documents lack."""
        if not isinstance(text, str):
            raise TypeError(f"Tokenizer.encode: text must be a str, got {text!r:.60}")
        for ch in text:
            if ch not in self._ids:
                raise ValueError(f"Tokenizer.encode: {ch!r} is not in the vocabulary ({text!r})")
        return [self.bos, *(self._ids[ch] for ch in text), self.bos]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids` (`bos` marks no character: it is left out)."""
        out = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.vocab_size:
                raise ValueError(f"Tokenizer.decode: {i!r} is no id of this vocabulary")
            if i != self.bos:
                out.append(self.chars[i])
        return "".join(out)

    def __repr__(self) -> str:
        return f"Tokenizer({''.join(self.chars)!r}, vocab_size={self.vocab_size})"


def _documents(docs: object, who: str) -> list[str]:
    if isinstance(docs, str) or not hasattr(docs, "__iter__"):
        raise TypeError(f"{who}: docs must be a list of strings, got {docs!r:.60}")
    docs = list(docs)  # type: ignore[call-overload]
    for d in docs:
        if not isinstance(d, str):
            raise TypeError(f"{who}: every document must be a str, got {d!r:.60}")
    if not docs:
        raise ValueError(f"{who}: docs is empty; give at least one document")
    return docs


# ---------------------------------------------------------------- the parameters and the parts


class Linear(Module):
    """``y = W x`` without a bias: `nout` rows of `nin` weights, each drawn by
    ``random.gauss(0, std)``, row after row (microgpt's `matrix`). An output is one dot node."""

    def __init__(self, nin: int, nout: int, std: float = 0.08) -> None:
        self.w = [[Value(random.gauss(0, std)) for _ in range(nin)] for _ in range(nout)]

    def __call__(self, x: Sequence[Value]) -> list[Value]:
        return [Value.dot(row, x) for row in self.w]

    def parameters(self) -> list[Value]:
        return [p for row in self.w for p in row]


class Embedding(Linear):
    """A table of `n` vectors of `dim` numbers: row i is token (or position) i's vector."""

    def __init__(self, n: int, dim: int, std: float = 0.08) -> None:
        super().__init__(dim, n, std)

    def __call__(self, token: Token) -> list[Value]:  # type: ignore[override]
        if isinstance(token, int):
            return self.w[token]
        # a one-hot row picks the row as a dot with each column: 1.0 * w + exact zeros
        return [Value.dot(token, column) for column in zip(*self.w)]


class RMSNorm(Module):
    """x / sqrt(mean(x²) + 1e-5): every vector back to a root mean square of about 1."""

    def __call__(self, x: Sequence[Value]) -> list[Value]:
        # x used twice in one node: its grad adds up, 2x. (* 1/n, a plain number, rather than
        # / n: the same bits as microgpt's / for his sizes, and no node of constants alone,
        # which jit's JavaScript target would have to compute apart)
        ms = Value.dot(x, x) * (1 / len(x))
        scale = (ms + 1e-5) ** -0.5
        return [xi * scale for xi in x]


def softmax(logits: Sequence[Value], shift: bool = True) -> list[Value]:
    """exp(l) / Σ exp(l). `shift` subtracts the largest logit first, read as a plain number (a
    constant: the result is the same function), so that exp never overflows; a traced loss
    leaves it out, since the largest logit is data."""
    if shift:
        top = max(v.data for v in logits)
        logits = [v - top for v in logits]
    exps = [v.exp() for v in logits]
    total = Value.sum(exps)
    return [e / total for e in exps]


class Attention(Module):
    """Causal multi-head self-attention: each position's query meets the keys of itself and the
    positions before it (the `cache`), and mixes their values by the softmax of the scores."""

    def __init__(self, n_embd: int, n_head: int) -> None:
        self.n_head, self.head_dim = n_head, n_embd // n_head
        self.wq, self.wk = Linear(n_embd, n_embd), Linear(n_embd, n_embd)
        self.wv, self.wo = Linear(n_embd, n_embd), Linear(n_embd, n_embd)

    def __call__(self, x: list[Value], cache: dict[str, list], shift: bool = True) -> list[Value]:
        q = self.wq(x)
        cache["keys"].append(self.wk(x))  # the KV cache: what later positions attend to
        cache["values"].append(self.wv(x))
        d = self.head_dim
        out: list[Value] = []
        for h in range(0, self.n_head * d, d):
            qh = q[h : h + d]
            scores = [Value.dot(qh, k[h : h + d]) * (1 / d**0.5) for k in cache["keys"]]
            weights = softmax(scores, shift)
            if "weights" in cache:  # a reader's (the playground's Attention map): each row
                cache["weights"].append([w.data for w in weights])
            vs = [v[h : h + d] for v in cache["values"]]
            out.extend(Value.dot(weights, [v[j] for v in vs]) for j in range(d))
        return self.wo(out)

    def parameters(self) -> list[Value]:
        return [p for m in (self.wq, self.wk, self.wv, self.wo) for p in m.parameters()]


class MLP(Module):
    """Two linear layers with a ReLU between, four times wider inside."""

    def __init__(self, n_embd: int) -> None:
        self.fc1, self.fc2 = Linear(n_embd, 4 * n_embd), Linear(4 * n_embd, n_embd)

    def __call__(self, x: list[Value]) -> list[Value]:
        return self.fc2([h.relu() for h in self.fc1(x)])

    def parameters(self) -> list[Value]:
        return self.fc1.parameters() + self.fc2.parameters()


class Block(Module):
    """One transformer layer: attention, then the MLP, each on the normalised input and added
    back to it (the residual: x is used twice, so its grad is the sum of both paths')."""

    def __init__(self, n_embd: int, n_head: int) -> None:
        self.norm = RMSNorm()
        self.attn, self.mlp = Attention(n_embd, n_head), MLP(n_embd)

    def __call__(self, x: list[Value], cache: dict[str, list], shift: bool = True) -> list[Value]:
        x = [a + b for a, b in zip(self.attn(self.norm(x), cache, shift), x)]
        return [a + b for a, b in zip(self.mlp(self.norm(x)), x)]

    def parameters(self) -> list[Value]:
        return self.attn.parameters() + self.mlp.parameters()


# ---------------------------------------------------------------- the model


class GPT(Module):
    """GPT-2's shape with microgpt's simplifications (RMSNorm, no biases, ReLU): token and
    position embeddings, `n_layer` blocks, and a linear head to one logit per token.

    Parameters are drawn in microgpt's order: wte, wpe, lm_head, then each layer's wq, wk, wv,
    wo, fc1, fc2; `parameters()` lists them in that order.
    """

    def __init__(
        self,
        vocab_size: int,
        n_layer: int = 1,
        n_embd: int = 16,
        n_head: int = 4,
        block_size: int = 16,
    ) -> None:
        sizes = dict(vocab_size=vocab_size, n_layer=n_layer, n_embd=n_embd, n_head=n_head)
        for name, n in (*sizes.items(), ("block_size", block_size)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"GPT: {name} must be a positive int, got {n!r}")
        if n_embd % n_head:
            raise ValueError(f"GPT: n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.vocab_size, self.n_layer, self.n_embd = vocab_size, n_layer, n_embd
        self.n_head, self.block_size = n_head, block_size
        self.wte = Embedding(vocab_size, n_embd)  # token embeddings
        self.wpe = Embedding(block_size, n_embd)  # position embeddings
        self.lm_head = Linear(n_embd, vocab_size)
        self.layers = [Block(n_embd, n_head) for _ in range(n_layer)]
        self.norm = RMSNorm()

    def config(self) -> dict[str, int]:
        """The constructor arguments: ``GPT(**model.config())`` has this shape."""
        return dict(
            vocab_size=self.vocab_size,
            n_layer=self.n_layer,
            n_embd=self.n_embd,
            n_head=self.n_head,
            block_size=self.block_size,
        )

    def parameters(self) -> list[Value]:
        parts = [self.wte, self.wpe, self.lm_head, *self.layers]
        return [p for part in parts for p in part.parameters()]

    def new_cache(self, weights: bool = False) -> list[dict[str, list]]:
        """An empty KV cache: each layer's keys and values of the positions seen so far (and,
        with `weights`, each position's attention weights, head after head, as plain numbers)."""
        cache: list[dict[str, list]] = [{"keys": [], "values": []} for _ in self.layers]
        for layer in cache if weights else ():
            layer["weights"] = []
        return cache

    def step(self, token: Token, pos: int, cache: list[dict], shift: bool = True) -> list[Value]:
        """The logits of the token after `token` at position `pos`, given the earlier positions
        in `cache` (which this position joins)."""
        if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < self.block_size:
            raise ValueError(f"GPT.step: position {pos!r} is not in 0..{self.block_size - 1}")
        x = [t + p for t, p in zip(self.wte(self.check_token(token)), self.wpe(pos))]
        x = self.norm(x)  # (not redundant: the residual path below skips the blocks' norms)
        for block, layer_cache in zip(self.layers, cache):
            x = block(x, layer_cache, shift)
        return self.lm_head(x)

    def logits(self, tokens: Sequence[Token]) -> list[list[Value]]:
        """One list of `vocab_size` logits per position: position t predicts token t + 1."""
        if not 1 <= len(tokens) <= self.block_size:
            raise ValueError(
                f"GPT.logits: {len(tokens)} tokens; this model reads 1 to {self.block_size}"
            )
        cache = self.new_cache()
        shift = all(isinstance(t, int) for t in tokens)
        return [self.step(t, pos, cache, shift) for pos, t in enumerate(tokens)]

    def loss(self, tokens: Sequence[Token], keep: list | None = None) -> Value:
        """The mean cross-entropy of each next token, over the first min(block_size,
        len(tokens) - 1) positions, as microgpt computes it. (`keep`: a list that each
        position's logits are appended to; jit's traced step reads them to sample.)"""
        if len(tokens) < 2:
            raise ValueError(f"GPT.loss: needs at least 2 tokens, got {len(tokens)}")
        n = min(self.block_size, len(tokens) - 1)
        shift = all(isinstance(t, int) for t in tokens)
        losses = []
        every = self.logits(tokens[:n])
        if keep is not None:
            keep.extend(every)
        for logits, target in zip(every, tokens[1 : n + 1]):
            probs = softmax(logits, shift)
            losses.append(-_pick(probs, self.check_token(target)).log())
        return (1 / n) * Value.sum(losses)

    def check_token(self, token: Token) -> Token:
        """`token` itself, if it is an id of the vocabulary or a one-hot row of its size."""
        if isinstance(token, bool) or (isinstance(token, int) and not 0 <= token < self.vocab_size):
            raise ValueError(f"GPT: token {token!r} is not in 0..{self.vocab_size - 1}")
        if not isinstance(token, int) and len(token) != self.vocab_size:
            raise ValueError(
                f"GPT: a one-hot token has {len(token)} entries; the vocabulary {self.vocab_size}"
            )
        return token

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.config().items())
        return f"GPT({args}) with {len(self.parameters())} parameters"


def _pick(values: list[Value], token: Token) -> Value:
    """values[token]; for a one-hot token, the same number as a dot (exact zeros added)."""
    return values[token] if isinstance(token, int) else Value.dot(token, values)


def one_hot(tokens: Sequence[int], vocab_size: int) -> list[list[float]]:
    """Each token as a row of `vocab_size` numbers, 1.0 at the token and 0.0 elsewhere."""
    return [[1.0 if i == t else 0.0 for i in range(vocab_size)] for t in tokens]


# ---------------------------------------------------------------- the optimiser


class Adam:
    """microgpt's Adam, in his arithmetic: bias-corrected moments ``m / (1 - β₁ᵗ)``,
    ``v / (1 - β₂ᵗ)`` and a learning rate decaying linearly from `lr` to 0 over `steps`.
    (optim.Adam is PyTorch's arithmetic: the same maths, other last bits; his figures to the last
    bit need his.) `step()` updates every parameter, then zeroes its grad."""

    def __init__(
        self,
        params: list[Value],
        steps: int,
        lr: float = 0.01,
        betas: tuple[float, float] = (0.85, 0.99),
        eps: float = 1e-8,
    ) -> None:
        self.params, self.steps, self.lr, self.betas, self.eps = params, steps, lr, betas, eps
        self.m = [0.0] * len(params)  # first moment: a running mean of the grads
        self.v = [0.0] * len(params)  # second moment: of their squares
        self.t = 0

    def step(self) -> None:
        b1, b2 = self.betas
        lr = self.lr * (1 - self.t / self.steps)
        self.t += 1
        m, v = self.m, self.v
        for i, p in enumerate(self.params):
            m[i] = b1 * m[i] + (1 - b1) * p.grad
            v[i] = b2 * v[i] + (1 - b2) * p.grad**2
            m_hat = m[i] / (1 - b1**self.t)
            v_hat = v[i] / (1 - b2**self.t)
            p.data -= lr * m_hat / (v_hat**0.5 + self.eps)
            p.grad = 0.0  # zero_grad: backward() adds into the leaves


# ---------------------------------------------------------------- training and sampling


def prepare(docs: Sequence[str] | None = None, seed: int = 42) -> tuple[list, Tokenizer, GPT]:
    """microgpt's start: ``random.seed(seed)``, the documents shuffled (makemore's names when
    `docs` is None), their tokenizer, and a GPT with freshly drawn parameters."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"microgpt: seed must be an int, got {seed!r}")
    if docs is None:
        from .data import names

        docs = names()
    docs = _documents(docs, "microgpt")
    random.seed(seed)  # the global stream, as his script: sample() afterwards draws his names
    random.shuffle(docs)
    tokenizer = Tokenizer(docs)
    return docs, tokenizer, GPT(tokenizer.vocab_size)


def train(
    model: GPT,
    tokenizer: Tokenizer,
    docs: Sequence[str],
    steps: int,
    losses: list[float] | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> list[float]:
    """`steps` steps of one document each, in order: the loss, backward(), Adam. Each step's loss
    is appended to `losses` (returned) and given to ``on_step(step, steps, loss)``."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"microgpt: steps must be a positive int, got {steps!r}")
    losses = [] if losses is None else losses
    adam = Adam(model.parameters(), steps)
    for step in range(steps):
        loss = model.loss(tokenizer.encode(docs[step % len(docs)]))
        loss.backward()  # the chain rule, from the loss back to every parameter
        adam.step()  # (and zero_grad)
        losses.append(loss.data)
        if on_step is not None:
            on_step(step + 1, steps, loss.data)
    return losses


def microgpt(
    docs: Sequence[str] | None = None, steps: int = 1000, seed: int = 42
) -> tuple[GPT, Tokenizer, list[float]]:
    """Karpathy's microgpt run: `prepare`, then `train`; returns (model, tokenizer, losses).
    With makemore's names, seed 42 and 1000 steps its losses are his script's (step 1:
    3.3659669475848504, step 1000: 2.6496944697407585)."""
    docs, tokenizer, model = prepare(docs, seed)
    return model, tokenizer, train(model, tokenizer, docs, steps)


def sample(
    model: GPT,
    tokenizer: Tokenizer,
    n: int = 20,
    temperature: float = 0.5,
    rng: random.Random | None = None,
) -> list[str]:
    """`n` new documents: from `bos`, draw each next token from softmax(logits / temperature)
    (``random.choices``, from the global stream unless `rng` is given) until `bos` comes back or
    the block is full."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"sample: n must be an int >= 0, got {n!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ValueError(f"sample: temperature must be a number > 0, got {temperature!r}")
    if not 0 < temperature < float("inf"):
        raise ValueError(f"sample: temperature must be a number > 0, got {temperature!r}")
    if model.vocab_size != tokenizer.vocab_size:
        raise ValueError(
            f"sample: the model has {model.vocab_size} tokens, the tokenizer {tokenizer.vocab_size}"
        )
    draw = (rng or random).choices
    ids = range(model.vocab_size)
    out = []
    for _ in range(n):
        cache, token, text = model.new_cache(), tokenizer.bos, []
        for pos in range(model.block_size):
            probs = softmax([lg / temperature for lg in model.step(token, pos, cache)])
            token = draw(ids, weights=[p.data for p in probs])[0]
            if token == tokenizer.bos:
                break
            text.append(token)
        out.append(tokenizer.decode(text))
    return out
