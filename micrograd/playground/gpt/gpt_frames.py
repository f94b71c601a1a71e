"""What the GPT view draws of a run, computed from the model itself: `sample_words`,
`attention`, `embedding_2d`, the loss's running mean (`RunningMean`), and the word lists a
learner may give it (`word_list`).

    attention(model, tokenizer, "emma")   # each layer's and head's position × position weights
    embedding_2d(model, tokenizer)        # each character's embedding on its first two PCs
    word_list("emma\\nolivia\\n")           # the words, or a ValueError naming the one refused
    sample_words(model, tok, 0.5, uniforms(7, 20, model.block_size))   # 20 words' tokens

The samples are drawn from a table of uniform numbers, one per word and position (`uniforms`),
so that an engine that runs the model elsewhere (the site's JavaScript step) draws the same
words from the same table. The attention weights come from `forward_keeping_weights`: the model's
forward pass (`GPT.forward`) step by step, keeping each attention softmax's numbers, held to the
model's own logits and softmaxes bit for bit by tests/test_gpt_view.py.
The principal components are pure Python (no numpy on the engine's
side): the covariance of the token embeddings (`wte`'s rows), its top eigenvectors by power
iteration sped up by squaring.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Sequence
from operator import mul
from typing import Any

from ...engine import Value
from ...gpt import GPT, Tokenizer, rmsnorm, softmax
from ...jit.gpt import forward_from

MAX_WORDS = 2_000  # words a learner may paste
MAX_CHARS = 15  # characters a word may have (the page's largest block size, 16, reads 15)
MAX_VOCAB = 64  # different characters in all
PUNCTUATION = "-'."  # besides letters and digits
BOS = "."  # how the page writes the token that starts (and ends) a word, as makemore does
DEFAULT_WORD = "emma"
SQUARINGS = 10  # the covariance to the 1024th power: the top direction by 0.99¹⁰²⁴ ≈ 3e-5 at worst


# ------------------------------------------------------------------ the words


def check_char(ch: str, where: str) -> None:
    """A ValueError naming `ch` unless it is a letter, a digit or one of PUNCTUATION (Latin
    script: up to U+024F), the characters a word may have."""
    if (ch.isalnum() or ch in PUNCTUATION) and ord(ch) <= 0x24F:
        return
    raise ValueError(
        f"{where}: the character {ch!r} (U+{ord(ch):04X}) is not allowed; words are letters, "
        f"digits and {' '.join(PUNCTUATION)}"
    )


def check_word(word: str, where: str) -> str:
    """`word` itself if it has 1 to MAX_CHARS allowed characters; else a ValueError naming it."""
    if not 1 <= len(word) <= MAX_CHARS:
        raise ValueError(
            f"{where}: {word[:40]!r} has {len(word)} characters; a word has 1 to {MAX_CHARS}"
        )
    for ch in word:
        check_char(ch, f"{where} ({word!r})")
    return word


def check_fits(words: Sequence[str], block_size: int, where: str, flag: str = "") -> None:
    """A word of n characters is read at n + 1 positions (the start token, then each character,
    each predicting the next, the last the end): a ValueError names the longest word longer than
    `block_size` reads whole (the first of them) and the block size that reads it (and so every
    word), rather than training on its beginning. The one rule the command and the page (the
    server's, the site's and the notebook widget's) share for words and the block size."""
    limit = block_size - 1
    word = max(words, key=len, default="")
    if len(word) > limit:
        raise ValueError(
            f"{where}: {word[:40]!r} has {len(word)} characters; a block size of {block_size} "
            f"reads words of at most {limit} ({flag or 'a block size of'} {len(word) + 1} "
            "reads it)"
        )


def word_list(text: object) -> tuple[str, ...]:
    """The words of `text`, one a line (blank lines and the spaces around a word left out): at
    most MAX_WORDS, each 1 to MAX_CHARS letters, digits or PUNCTUATION, MAX_VOCAB different
    characters in all. A ValueError names the first word, line and character refused."""
    if not isinstance(text, str):
        raise ValueError(f"the words must be text, one a line, got {type(text).__name__}")
    words = []
    for n, line in enumerate(text.splitlines(), 1):
        word = line.strip()
        if word:
            words.append(check_word(word, f"line {n}"))
        if len(words) > MAX_WORDS:
            raise ValueError(f"more than {MAX_WORDS} words (line {n}); paste at most {MAX_WORDS}")
    if not words:
        raise ValueError("no words: paste a list of words, one a line")
    chars = sorted(set("".join(words)))
    if len(chars) > MAX_VOCAB:
        raise ValueError(
            f"the words have {len(chars)} different characters; at most {MAX_VOCAB} "
            f"(the {MAX_VOCAB + 1}th is {chars[MAX_VOCAB]!r})"
        )
    return tuple(words)


def default_word(tokenizer: Tokenizer, docs: Sequence[str]) -> str:
    """ "emma" when the vocabulary has its letters, else the first word (whole: the words fit
    the block, `check_fits`)."""
    return DEFAULT_WORD if set(DEFAULT_WORD) <= set(tokenizer.chars) else docs[0]


def check_attention_word(word: object, tokenizer: Tokenizer, block_size: int) -> str:
    """`word` if the model can read it: 1 to MAX_CHARS characters of its vocabulary, and whole
    within `block_size` (`check_fits`)."""
    if not isinstance(word, str):
        raise ValueError(f"the attention word must be text, got {type(word).__name__}")
    check_word(word, "the attention word")
    check_fits([word], block_size, "the attention word", "Block size")
    for ch in word:
        if ch not in tokenizer.chars:
            raise ValueError(
                f"the attention word {word!r}: {ch!r} is not in the words' characters "
                f"({''.join(tokenizer.chars)})"
            )
    return word


# ------------------------------------------------------------------ samples


def uniforms(seed: int, n: int, block: int) -> list[list[float]]:
    """The numbers `random.Random(seed)` gives first, `n` rows of `block` (as many as `n` words
    can use): `sample_words` reads them in order, one a draw, as `micrograd.gpt.sample` reads
    ``rng.random()`` (the same seed, the same words as ``sample(..., rng=Random(seed))``)."""
    rng = random.Random(seed)
    return [[rng.random() for _ in range(block)] for _ in range(n)]


def pick(weights: Sequence[float], u: float) -> int:
    """The index `random.choices(range(len(weights)), weights)` draws when its `random()` gives
    `u`: the first whose running total passes u times the whole."""
    cum = list(itertools.accumulate(weights))
    return bisect.bisect(cum, u * cum[-1], 0, len(cum) - 1)


def sample_words(
    model: GPT, tokenizer: Tokenizer, temperature: float, table: Sequence[Sequence[float]]
) -> list[list[int]]:
    """A word for each row of `table` (`uniforms`), as `micrograd.gpt.sample` draws it: from the
    start token, each next one `pick`ed from softmax(logits / temperature) with the table's next
    number (row after row: a word goes on where the one before stopped, as sample's draws go on
    in its random stream), until the start token comes back or the block is full. Each word's
    tokens: ``sample(model, tokenizer, n, temperature, rng=random.Random(seed))``'s, for the
    table ``uniforms(seed, n, model.block_size)``."""
    numbers = iter([u for row in table for u in row])
    out = []
    for _ in table:
        keys, values = [[] for _ in range(model.n_layer)], [[] for _ in range(model.n_layer)]
        token, word = tokenizer.bos, []
        for pos in range(model.block_size):
            logits = model.forward(token, pos, keys, values)
            probs = softmax([lg / temperature for lg in logits])
            u = next(numbers, None)
            if u is None:
                raise ValueError("sample_words: the table has too few numbers for its words")
            token = pick([p.data for p in probs], u)
            if token == tokenizer.bos:
                break
            word.append(token)
        out.append(word)
    return out


# ------------------------------------------------------------------ attention


def forward_keeping_weights(
    model: GPT, token_id: int, pos_id: int, keys: list, values: list, weights: list
) -> list[Value]:
    """`model.forward(token_id, pos_id, keys, values)`, the same logits to the bit, and each
    layer's attention weights at this position, head after head, appended to ``weights[li]`` as
    plain numbers (the picture's rows): jit's `forward_from` with gpt.py's own rmsnorm and
    softmax (gpt.py keeps no hooks for pictures)."""
    if not (0 <= token_id < model.vocab_size and 0 <= pos_id < model.block_size):
        raise ValueError(f"attention: token {token_id} at position {pos_id} is not the model's")
    sd, hd = model.sd, model.head_dim
    x = [t + p for t, p in zip(sd["wte"][token_id], sd["wpe"][pos_id])]
    return forward_from(model, x, keys, values, rmsnorm, softmax, lambda s: s / hd**0.5, weights)


def attention(model: GPT, tokenizer: Tokenizer, word: str) -> dict[str, Any]:
    """The model's attention on `word` as it reads it (the start token, then its characters; a
    word longer than the block reads is refused, `check_fits`): ``maps[layer][head][i]`` is
    position i's softmax over positions 0..i (a causal triangle: row i has i + 1 weights
    summing to 1); ``labels`` are the positions' characters (BOS for the start). From the same
    forward pass, each position's last step (the explorer steps through its loss,
    −log softmax(logits)[target]): ``logits[i]``, the model's `vocab_size` logits there,
    ``targets[i]``, the id of the character that follows (BOS after the last), and ``vocab``,
    each id's character as the page writes it."""
    check_fits([word], model.block_size, "attention")
    ids = tokenizer.encode(word)
    tokens = ids[:-1]
    keys, values = [[] for _ in range(model.n_layer)], [[] for _ in range(model.n_layer)]
    weights: list[list[list[float]]] = [[] for _ in range(model.n_layer)]
    logits = [
        [z.data for z in forward_keeping_weights(model, token, pos, keys, values, weights)]
        for pos, token in enumerate(tokens)
    ]
    n, h = len(tokens), model.n_head
    maps = [[[layer[i * h + j] for i in range(n)] for j in range(h)] for layer in weights]
    return {
        "word": word,
        "labels": [BOS, *word[: n - 1]],
        "maps": maps,
        "logits": logits,
        "targets": ids[1 : n + 1],
        "vocab": [*tokenizer.chars, BOS],
    }


# ------------------------------------------------------------------ embeddings in 2D


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    cols = list(zip(*b))  # (map with mul: a third of a generator's time, the same sums)
    return [[sum(map(mul, row, col)) for col in cols] for row in a]


def _apply(m: list[list[float]], v: list[float]) -> list[float]:
    return [math.fsum(map(mul, row, v)) for row in m]


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in v))
    return [x / norm for x in v] if norm > 0 else v


def principal_components(rows: Sequence[Sequence[float]], k: int = 2) -> list[list[float]]:
    """The top `k` eigenvectors of the rows' covariance (unit length, each signed so that its
    largest entry is positive): power iteration on the covariance raised to the 2¹⁰th power by
    squaring (each squaring doubles how fast the top direction wins), then on the covariance
    itself until it settles; each next one with the ones before taken out (deflation)."""
    n, d = len(rows), len(rows[0])
    mean = [math.fsum(col) / n for col in zip(*rows)]
    x = [[a - m for a, m in zip(r, mean)] for r in rows]
    cov = [[math.fsum(r[i] * r[j] for r in x) / max(n - 1, 1) for j in range(d)] for i in range(d)]
    start = random.Random(0)  # a fixed start: the same picture for the same weights
    comps: list[list[float]] = []
    for _ in range(min(k, d)):
        m = cov
        for _ in range(SQUARINGS):
            m = _matmul(m, m)
            top = max(abs(a) for row in m for a in row) or 1.0
            m = [[a / top for a in row] for row in m]  # (scaled: no overflow, no underflow)
        v = _unit(_apply(m, [start.gauss(0, 1) for _ in range(d)]))
        for _ in range(100):
            w = _unit(_apply(cov, v))
            done = max(abs(a - b) for a, b in zip(w, v)) < 1e-15
            v = w
            if done:
                break
        big = max(v, key=abs)
        v = [a if big >= 0 else -a for a in v]
        comps.append(v)
        lam = math.fsum(a * b for a, b in zip(v, _apply(cov, v)))
        cov = [[cov[i][j] - lam * v[i] * v[j] for j in range(d)] for i in range(d)]
    return comps


def embedding_2d(model: GPT, tokenizer: Tokenizer) -> dict[str, Any]:
    """Each token's embedding (a row of `wte`) projected on the rows' first two principal
    components (centred): ``{"labels": [...], "xy": [[x, y], ...]}``, BOS for the start token."""
    rows = [[p.data for p in row] for row in model.sd["wte"]]
    mean = [math.fsum(col) / len(rows) for col in zip(*rows)]
    comps = principal_components(rows, 2)
    xy = [
        [math.fsum((a - m) * c for a, m, c in zip(r, mean, comp)) for comp in comps] for r in rows
    ]
    return {"labels": [*tokenizer.chars, BOS], "xy": xy}


# ------------------------------------------------------------------ the loss's running mean


class RunningMean:
    """The mean of the last `window` steps' losses, after each step; `series(n)` the means at
    most `n` of them, evenly spaced (the last always), as ``[[step, mean], ...]``."""

    def __init__(self, window: int = 50) -> None:
        self.window = window
        self.losses: list[float] = []
        self.means: list[float] = []

    def add(self, loss: float) -> float:
        self.losses.append(loss)
        last = self.losses[-self.window :]
        self.means.append(math.fsum(last) / len(last))
        return self.means[-1]

    @property
    def mean(self) -> float | None:
        return self.means[-1] if self.means else None

    def series(self, n: int = 400) -> list[list[float]]:
        stride = max(1, math.ceil(len(self.means) / n))
        picked = list(range(0, len(self.means), stride))
        if self.means and picked[-1] != len(self.means) - 1:
            picked.append(len(self.means) - 1)
        return [[i + 1, self.means[i]] for i in picked]
