"""microgpt's training loop, written again in our words, for any scalar `Value` class.

The model and loop are those of karpathy's microgpt.py (n_layer=1, n_embd=16, n_head=4,
block_size=16, a vocabulary of 26 letters and a boundary token, one document a step): token and
position embeddings, rmsnorm, multi-head causal attention with a KV cache, a ReLU MLP of 4*n_embd,
residuals, lm_head, softmax cross-entropy, and Adam on the parameters' `.data`. makemore's names
are not in this repository: the documents are generated name-like words (`documents()`), which
changes what is learned, not what a step costs.

`MinimalValue` is the lecture-style Value of his file's shape, our own writing: `__slots__`, local
derivatives stored at forward, a recursive topological sort. `steps(Value, n)` runs the loop on
any class with `data`, `grad`, `+ * ** exp log relu` and `backward()`, and gives each step's loss.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator

N_LAYER, N_EMBD, N_HEAD, BLOCK = 1, 16, 4, 16
HEAD = N_EMBD // N_HEAD
LETTERS = "abcdefghijklmnopqrstuvwxyz"
BOS = len(LETTERS)  # the boundary token: a document starts and ends with it
VOCAB = len(LETTERS) + 1


class MinimalValue:
    """A scalar that stores, at forward, d self / d child for each child (his class's shape)."""

    __slots__ = ("data", "grad", "_prev", "_local")

    def __init__(self, data: float, prev: tuple = (), local: tuple = ()) -> None:
        self.data, self.grad, self._prev, self._local = data, 0, prev, local

    def __add__(self, other: object) -> MinimalValue:
        o = other if isinstance(other, MinimalValue) else MinimalValue(other)
        return MinimalValue(self.data + o.data, (self, o), (1, 1))

    def __mul__(self, other: object) -> MinimalValue:
        o = other if isinstance(other, MinimalValue) else MinimalValue(other)
        return MinimalValue(self.data * o.data, (self, o), (o.data, self.data))

    def __pow__(self, k: float) -> MinimalValue:
        return MinimalValue(self.data**k, (self,), (k * self.data ** (k - 1),))

    def exp(self) -> MinimalValue:
        e = math.exp(self.data)
        return MinimalValue(e, (self,), (e,))

    def log(self) -> MinimalValue:
        return MinimalValue(math.log(self.data), (self,), (1 / self.data,))

    def relu(self) -> MinimalValue:
        return MinimalValue(max(0, self.data), (self,), (float(self.data > 0),))

    def __neg__(self) -> MinimalValue:
        return self * -1

    def __radd__(self, other: object) -> MinimalValue:
        return self + other

    def __sub__(self, other: object) -> MinimalValue:
        return self + (-other)  # type: ignore[operator]

    def __rmul__(self, other: object) -> MinimalValue:
        return self * other

    def __truediv__(self, other: object) -> MinimalValue:
        return self * other**-1  # type: ignore[operator]

    def backward(self) -> None:
        order, seen = [], set()

        def visit(v: MinimalValue) -> None:
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    visit(child)
                order.append(v)

        visit(self)
        self.grad = 1
        for v in reversed(order):
            for child, local in zip(v._prev, v._local):
                child.grad += local * v.grad


def documents(count: int = 32_000, seed: int = 42) -> list[str]:
    """`count` lowercase name-like words of 3 to 9 letters, the same for a seed."""
    rng = random.Random(seed)
    return ["".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 9))) for _ in range(count)]


def steps(Value: type, n: int, seed: int = 42) -> Iterator[float]:
    """Train microgpt on `Value` for `n` steps; yield each step's loss after its update."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))  # the recursive sorts
    rng = random.Random(seed)
    docs = documents()
    rng.shuffle(docs)

    def matrix(rows: int, cols: int) -> list[list]:
        return [[Value(rng.gauss(0, 0.08)) for _ in range(cols)] for _ in range(rows)]

    w = {"wte": matrix(VOCAB, N_EMBD), "wpe": matrix(BLOCK, N_EMBD)}
    for i in range(N_LAYER):
        for name in ("q", "k", "v", "o"):
            w[f"{i}.{name}"] = matrix(N_EMBD, N_EMBD)
        w[f"{i}.up"] = matrix(4 * N_EMBD, N_EMBD)
        w[f"{i}.down"] = matrix(N_EMBD, 4 * N_EMBD)
    w["head"] = matrix(VOCAB, N_EMBD)
    params = [p for m in w.values() for row in m for p in row]

    def linear(x: list, m: list[list]) -> list:
        return [sum(a * b for a, b in zip(row, x)) for row in m]

    def softmax(xs: list) -> list:
        top = max(x.data for x in xs)
        es = [(x - top).exp() for x in xs]
        total = sum(es)
        return [e / total for e in es]

    def rmsnorm(xs: list) -> list:
        scale = (sum(x * x for x in xs) / len(xs) + 1e-5) ** -0.5
        return [x * scale for x in xs]

    def forward(token: int, pos: int, keys: list, values: list) -> list:
        x = rmsnorm([t + p for t, p in zip(w["wte"][token], w["wpe"][pos])])
        for i in range(N_LAYER):
            skip = x
            x = rmsnorm(x)
            q, k, v = (linear(x, w[f"{i}.{n}"]) for n in "qkv")
            keys[i].append(k)
            values[i].append(v)
            heads, ks = [], keys[i]
            for h in range(0, N_EMBD, HEAD):
                qh = q[h : h + HEAD]
                scores = [sum(qh[j] * kt[h + j] for j in range(HEAD)) / HEAD**0.5 for kt in ks]
                att = softmax(scores)
                heads += [
                    sum(att[t] * vt[h + j] for t, vt in enumerate(values[i])) for j in range(HEAD)
                ]
            x = [a + b for a, b in zip(linear(heads, w[f"{i}.o"]), skip)]
            skip = x
            x = [a.relu() for a in linear(rmsnorm(x), w[f"{i}.up"])]
            x = [a + b for a, b in zip(linear(x, w[f"{i}.down"]), skip)]
        return linear(x, w["head"])

    lr, beta1, beta2, eps = 0.01, 0.85, 0.99, 1e-8
    m1, m2 = [0.0] * len(params), [0.0] * len(params)
    for step in range(n):
        doc = docs[step % len(docs)]
        tokens = [BOS, *(LETTERS.index(c) for c in doc), BOS]
        length = min(BLOCK, len(tokens) - 1)
        keys, values = [[] for _ in range(N_LAYER)], [[] for _ in range(N_LAYER)]
        losses = []
        for pos in range(length):
            probs = softmax(forward(tokens[pos], pos, keys, values))
            losses.append(-probs[tokens[pos + 1]].log())
        loss = (1 / length) * sum(losses)
        loss.backward()
        rate = lr * (1 - step / max(n, 1000))
        for i, p in enumerate(params):
            m1[i] = beta1 * m1[i] + (1 - beta1) * p.grad
            m2[i] = beta2 * m2[i] + (1 - beta2) * p.grad**2
            m_hat = m1[i] / (1 - beta1 ** (step + 1))
            v_hat = m2[i] / (1 - beta2 ** (step + 1))
            p.data -= rate * m_hat / (v_hat**0.5 + eps)
            p.grad = 0
        yield loss.data


def timed(Value: type, n: int, clock: Callable[[], float]) -> tuple[list[float], list[float]]:
    """(seconds of each step, loss of each step) for `n` steps on `Value`."""
    times, losses = [], []
    t0 = clock()
    for loss in steps(Value, n):
        t1 = clock()
        times.append(t1 - t0)
        losses.append(loss)
        t0 = t1
    return times, losses
