"""Karpathy's microgpt (2026) on micrograd's Values, in his order: a tokenizer, the parameters,
the model, his Adam, training, sampling. Read it after nn.py; docs/gpt.md maps his lines to these.
    model, tokenizer, losses = microgpt(steps=1000)   # makemore's names, seed 42: his losses
    print(sample(model, tokenizer))                   # his 20 names, at temperature 0.5
His ``sum(w * x ...)`` is ``Value.dot(w, x)`` here: the same additions in order, one node not 2n."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .data import names
from .engine import Value
from .nn import Module


class Tokenizer:
    """Characters to ids and back: each character an id (sorted); `bos` marks a document's ends."""

    def __init__(self, docs: Sequence[str]) -> None:
        if isinstance(docs, str) or not all(isinstance(d, str) for d in docs):
            raise TypeError(f"Tokenizer: every document must be a str, got docs={docs!r:.60}")
        if not docs:
            raise ValueError("Tokenizer: docs is empty; give at least one document")
        self.chars = sorted(set("".join(docs)))
        self.bos, self.vocab_size = len(self.chars), len(self.chars) + 1  # bos: the last id
        self._ids = {ch: i for i, ch in enumerate(self.chars)}

    def encode(self, text: str) -> list[int]:
        """``[bos, id, id, ..., bos]``: a ValueError names a character the documents lack."""
        for ch in text if isinstance(text, str) else [text]:
            if ch not in self._ids:
                raise ValueError(f"Tokenizer.encode: {ch!r} is not in the vocabulary ({text!r})")
        return [self.bos, *(self._ids[ch] for ch in text), self.bos]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids` (`bos` marks no character: it is left out)."""
        ids = [_check_id("Tokenizer.decode: id", i, self.vocab_size) for i in ids]
        return "".join(self.chars[i] for i in ids if i != self.bos)


def matrix(nout: int, nin: int, std: float = 0.08) -> list[list[Value]]:
    """`nout` rows of `nin` weights, each drawn by ``random.gauss(0, std)``, row after row."""
    return [[Value(random.gauss(0, std)) for _ in range(nin)] for _ in range(nout)]


def linear(x: Sequence[Value], w: list[list[Value]]) -> list[Value]:
    """``W x``: one output per row of `w`, sum(wi * xi for wi, xi in zip(row, x))."""
    return [Value.dot(w_row, x) for w_row in w]


def softmax(logits: Sequence[Value]) -> list[Value]:
    """exp(l) / sum(exp(l)), the largest logit (a number) taken off first: exp cannot overflow."""
    max_val = max(v.data for v in logits)
    exps = [(v - max_val).exp() for v in logits]
    total = Value.sum(exps)
    return [e / total for e in exps]


def rmsnorm(x: Sequence[Value]) -> list[Value]:
    """x / sqrt(mean(x²) + 1e-5): the vector back to a root mean square of about 1."""
    ms = Value.dot(x, x) / len(x)  # sum(xi * xi) / n
    scale = (ms + 1e-5) ** -0.5
    return [xi * scale for xi in x]


LAYER = ("attn_wq", "attn_wk", "attn_wv", "attn_wo", "mlp_fc1", "mlp_fc2")  # layer{i}.<name>
SIZES = ("vocab_size", "n_layer", "n_embd", "n_head", "block_size")  # GPT's arguments


class GPT(Module):
    """GPT-2 as microgpt simplifies it (RMSNorm, no bias, ReLU); `sd`: his state_dict, names."""

    def __init__(
        self,
        vocab_size: int,
        n_layer: int = 1,
        n_embd: int = 16,
        n_head: int = 4,
        block_size: int = 16,
    ) -> None:
        for name, n in zip(SIZES, (vocab_size, n_layer, n_embd, n_head, block_size)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"GPT: {name} must be a positive int, got {n!r}")
        if n_embd % n_head:
            raise ValueError(f"GPT: n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.vocab_size, self.n_layer, self.n_embd = vocab_size, n_layer, n_embd
        self.n_head, self.block_size, self.head_dim = n_head, block_size, n_embd // n_head
        V, E = vocab_size, n_embd  # wte: a row per token, wpe: per position, lm_head: a logit each
        sd = self.sd = {"wte": matrix(V, E), "wpe": matrix(block_size, E)}
        sd["lm_head"] = matrix(V, E)
        for i in range(n_layer):
            for name, (nout, nin) in zip(LAYER, [(E, E)] * 4 + [(4 * E, E), (E, 4 * E)]):
                sd[f"layer{i}.{name}"] = matrix(nout, nin)

    def config(self) -> dict[str, int]:
        """The constructor arguments: ``GPT(**model.config())`` has this shape."""
        return {k: getattr(self, k) for k in SIZES}

    def parameters(self) -> list[Value]:
        return [p for mat in self.sd.values() for row in mat for p in row]

    def forward(self, token_id: int, pos_id: int, keys: list, values: list) -> list[Value]:
        """microgpt's `gpt()`: the next token's logits. ``keys[li]``, ``values[li]``: layer li's
        vectors of the positions before; this one's are appended (empty at a document's start)."""
        _check_id("GPT: token", token_id, self.vocab_size)
        _check_id("GPT: position", pos_id, self.block_size)
        sd, hd = self.sd, self.head_dim
        x = [t + p for t, p in zip(sd["wte"][token_id], sd["wpe"][pos_id])]
        x = rmsnorm(x)  # (not redundant: the residual path below skips the layers' norms)
        for li in range(self.n_layer):
            # 1) multi-head attention: each head h (a slice of head_dim numbers) scores the query
            # against every key so far (q·k/√head_dim), softmax, then sums the values so weighted
            x_residual = x
            x = rmsnorm(x)
            q = linear(x, sd[f"layer{li}.attn_wq"])
            keys[li].append(linear(x, sd[f"layer{li}.attn_wk"]))
            values[li].append(linear(x, sd[f"layer{li}.attn_wv"]))
            x_attn: list[Value] = []
            for h in range(self.n_head):
                hs = h * hd
                q_h = q[hs : hs + hd]
                k_h = [k[hs : hs + hd] for k in keys[li]]
                v_h = [v[hs : hs + hd] for v in values[li]]
                attn_logits = [Value.dot(q_h, k_t) / hd**0.5 for k_t in k_h]  # sum(q*k)/√d
                attn_weights = softmax(attn_logits)
                # output j: sum(attn_weights[t] * v_h[t][j] for each position t)
                x_attn.extend(Value.dot(attn_weights, v_j) for v_j in zip(*v_h))
            x = linear(x_attn, sd[f"layer{li}.attn_wo"])
            x = [a + b for a, b in zip(x, x_residual)]  # the residual: x's grad adds both paths
            # 2) the MLP: two linear layers, four times wider inside, a ReLU between
            x_residual = x
            x = rmsnorm(x)
            x = [h.relu() for h in linear(x, sd[f"layer{li}.mlp_fc1"])]
            x = linear(x, sd[f"layer{li}.mlp_fc2"])
            x = [a + b for a, b in zip(x, x_residual)]
        return linear(x, sd["lm_head"])

    def loss(self, tokens: Sequence[int]) -> Value:
        """The mean cross-entropy of each next token, -log probs[target], over the first
        n = min(block_size, len(tokens) - 1) positions, as microgpt's training loop computes it."""
        if len(tokens) < 2:
            raise ValueError(f"GPT.loss: needs at least 2 tokens, got {len(tokens)}")
        n = min(self.block_size, len(tokens) - 1)
        keys, values = [[] for _ in range(self.n_layer)], [[] for _ in range(self.n_layer)]
        losses = []
        for pos_id in range(n):
            token_id, target_id = tokens[pos_id], tokens[pos_id + 1]
            probs = softmax(self.forward(token_id, pos_id, keys, values))
            losses.append(-probs[_check_id("GPT: token", target_id, self.vocab_size)].log())
        return (1 / n) * Value.sum(losses)  # Value.sum: his sum(losses), one node


def _check_id(what: str, i: object, n: int) -> int:
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        raise ValueError(f"{what} {i!r:.40} is not in 0..{n - 1}")
    return i


class Adam:
    """microgpt's Adam (optim.Adam is PyTorch's: other last bits), `lr` decaying to 0 by `steps`."""

    betas, eps = (0.85, 0.99), 1e-8  # his beta1, beta2, eps_adam

    def __init__(self, params: list[Value], steps: int, lr: float = 0.01) -> None:
        self.params, self.steps, self.lr = params, steps, lr
        self.m, self.v, self.t = [0.0] * len(params), [0.0] * len(params), 0  # moments, steps

    def step(self) -> None:
        (b1, b2), m, v = self.betas, self.m, self.v
        lr = self.lr * (1 - self.t / self.steps)
        self.t += 1
        for i, p in enumerate(self.params):
            m[i] = b1 * m[i] + (1 - b1) * p.grad
            v[i] = b2 * v[i] + (1 - b2) * p.grad**2
            m_hat = m[i] / (1 - b1**self.t)
            v_hat = v[i] / (1 - b2**self.t)
            p.data -= lr * m_hat / (v_hat**0.5 + self.eps)
            p.grad = 0.0  # zero_grad: backward() adds into the leaves


def prepare(docs: Sequence[str] | None = None, seed: int = 42, **sizes: int) -> tuple:
    """His start: random.seed(seed), docs (his names if None) shuffled, tokenizer, GPT(**sizes)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"microgpt: seed must be an int, got {seed!r}")
    docs = names() if docs is None else docs
    tokenizer, docs = Tokenizer(docs), list(docs)  # (its checks: a list of strings)
    random.seed(seed)  # the global stream, as his script: sample() afterwards draws his names
    random.shuffle(docs)  # (the tokenizer's ids are sorted: the order does not change them)
    return docs, tokenizer, GPT(tokenizer.vocab_size, **sizes)


def train(
    model: GPT,
    tokenizer: Tokenizer,
    docs: Sequence[str],
    steps: int,
    losses: list[float] | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
    lr: float = 0.01,
    loss_of: Callable[[list[int]], Value] | None = None,
) -> list[float]:
    """`steps` steps, a document each: loss, backward(), Adam; each loss to `losses`, `on_step`.
    `loss_of`: a document's tokens -> its loss (model.loss unless given another)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"microgpt: steps must be a positive int, got {steps!r}")
    losses, adam = [] if losses is None else losses, Adam(model.parameters(), steps, lr)
    loss_of = model.loss if loss_of is None else loss_of
    for step in range(steps):
        loss = loss_of(tokenizer.encode(docs[step % len(docs)]))
        loss.backward()  # the chain rule, from the loss back to every parameter
        adam.step()  # (and zero_grad)
        losses.append(loss.data)
        if on_step is not None:
            on_step(step + 1, steps, loss.data)
    return losses


def microgpt(docs: Sequence[str] | None = None, steps: int = 1000, seed: int = 42) -> tuple:
    """`prepare`, then `train`: (model, tokenizer, losses). Makemore's names, seed 42, 1000 steps:
    his script's losses (step 1: 3.3659669475848504, step 1000: 2.6496944697407585)."""
    docs, tokenizer, model = prepare(docs, seed)
    return model, tokenizer, train(model, tokenizer, docs, steps)


def sample(
    model: GPT,
    tokenizer: Tokenizer,
    n: int = 20,
    temperature: float = 0.5,
    rng: random.Random | None = None,
) -> list[str]:
    """`n` new documents: from `bos`, each token drawn from softmax(logits / temperature) by
    ``random.choices`` (`rng`'s, else the global stream's) until `bos` or the block's end."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"sample: n must be an int >= 0, got {n!r}")
    if type(temperature) not in (int, float) or not 0 < temperature < float("inf"):
        raise ValueError(f"sample: temperature must be a finite number > 0, got {temperature!r}")
    if model.vocab_size != (V := tokenizer.vocab_size):
        raise ValueError(f"sample: a model of {model.vocab_size} tokens, a tokenizer of {V}")
    out = []
    for _ in range(n):
        keys, values = [[] for _ in range(model.n_layer)], [[] for _ in range(model.n_layer)]
        token_id, text = tokenizer.bos, []
        for pos_id in range(model.block_size):
            logits = model.forward(token_id, pos_id, keys, values)
            probs = softmax([lg / temperature for lg in logits])
            token_id = (rng or random).choices(range(V), weights=[p.data for p in probs])[0]
            if token_id == tokenizer.bos:
                break
            text.append(token_id)
        out.append(tokenizer.decode(text))
    return out
