"""The course's chapter 8: a learner's GPT, assembled from their own parts on their own Value,
held against `micrograd.gpt.GPT` on the same weights.

    from micrograd.check.gpt_model import check_gpt
    check_gpt(gpt, state_dict, n_head, Value)   # ✓ one line, or CheckFailed naming the mistake

The learner's model is microgpt's: a dict `state_dict` of weight matrices (lists of rows of
Values: ``wte``, ``wpe``, ``lm_head``, and ``layer{i}.attn_wq`` .. ``layer{i}.mlp_fc2``), and
``gpt(token_id, pos_id, keys, values)`` → the logits of the next token, appending this position's
key and value of each layer to ``keys[i]`` and ``values[i]``. The check builds a `GPT` of the same
shape (its weights drawn without touching the learner's random stream), copies its weights into
the learner's Values, runs both over one sequence, and compares every position's logits and the
loss (to 1e-9) and, backpropagated with the learner's own `backward()`, every weight's grad (to
1e-6). The learner's weights and grads are put back as they were, whatever the verdict.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from ..gpt import GPT
from ..viz.formatting import format_number as fmt
from .language import GRAD_REL, all_near, cross_entropy_f, near
from .notebook import fail, passed

LAYER = ("attn_wq", "attn_wk", "attn_wv", "attn_wo", "mlp_fc1", "mlp_fc2")
SEQUENCE = 6  # tokens read: 5 positions predict the next


def reference_weights(model: GPT) -> dict[str, list[list[Any]]]:
    """`model`'s weights by microgpt's names: each a matrix, rows of Values (nout x nin)."""
    return dict(model.state_dict)


def _shape(state_dict: Any) -> tuple[int, int, int, int]:
    """(vocab_size, n_embd, block_size, n_layer) read from the learner's weights."""
    if not isinstance(state_dict, dict):
        fail(f"state_dict should be a dict of weight matrices; it is {type(state_dict).__name__}")
    for key in ("wte", "wpe", "lm_head", "layer0.attn_wq"):
        if key not in state_dict:
            fail(
                f"state_dict has no {key!r}: microgpt's names are wte, wpe, lm_head, layer0.attn_wq"
            )
    n_layer = 0
    while f"layer{n_layer}.attn_wq" in state_dict:
        n_layer += 1
    wte = state_dict["wte"]
    return len(wte), len(wte[0]), len(state_dict["wpe"]), n_layer


def _tokens(vocab_size: int, block_size: int) -> list[int]:
    draw = random.Random(8)  # a sequence of its own: the learner's stream is left alone
    n = min(SEQUENCE, block_size + 1)
    return [vocab_size - 1, *(draw.randrange(vocab_size - 1) for _ in range(n - 2)), vocab_size - 1]


def _learner_loss(rows: list[list[Any]], targets: list[int], V: type) -> Any:
    total = None
    for row, t in zip(rows, targets):
        top = max(v.data for v in row)
        term = sum((v - top).exp() for v in row).log() + top - row[t]
        total = term if total is None else total + term
    return total * V(1 / len(rows))


def check_gpt(gpt: Callable[..., Any], state_dict: Any, n_head: int, V: type) -> None:
    """`gpt(token_id, pos_id, keys, values)` on the weights `state_dict`: microgpt's model."""
    vocab_size, n_embd, block_size, n_layer = _shape(state_dict)
    state = random.getstate()
    try:
        ref = GPT(vocab_size, n_layer, n_embd, n_head, block_size)
    finally:
        random.setstate(state)
    theirs, ours = state_dict, reference_weights(ref)
    for key, matrix in ours.items():
        got = theirs.get(key)
        if not isinstance(got, list) or [len(r) for r in got] != [len(r) for r in matrix]:
            rows, cols = len(matrix), len(matrix[0])
            fail(f"state_dict[{key!r}] should be {rows} rows of {cols} Values, as microgpt's")
    mine = [p for key in ours for row in theirs[key] for p in row]
    kept = [(p.data, p.grad) for p in mine]
    try:
        for key, matrix in ours.items():
            for row, ref_row in zip(theirs[key], matrix):
                for p, r in zip(row, ref_row):
                    p.data, p.grad = r.data, 0.0
        _compare(gpt, theirs, ours, ref, V)
    finally:
        for p, (data, grad) in zip(mine, kept):
            p.data, p.grad = data, grad
    passed(
        f"gpt is micrograd.gpt's GPT ({n_layer} layer{'s' * (n_layer > 1)}, {n_head} heads): "
        f"the logits at every position, the loss and every weight's grad"
    )


def _compare(gpt: Callable[..., Any], theirs: dict, ours: dict, ref: GPT, V: type) -> None:
    tokens = _tokens(ref.vocab_size, ref.block_size)
    n = len(tokens) - 1
    keys: list[list] = [[] for _ in range(ref.n_layer)]
    values: list[list] = [[] for _ in range(ref.n_layer)]
    rows = []
    ref_keys, ref_values = [[] for _ in range(ref.n_layer)], [[] for _ in range(ref.n_layer)]
    want = [ref.forward(t, pos, ref_keys, ref_values) for pos, t in enumerate(tokens[:n])]
    for pos in range(n):
        try:
            row = gpt(tokens[pos], pos, keys, values)
        except Exception as e:  # the learner's code: what it raises is the verdict
            fail(f"gpt({tokens[pos]}, {pos}, keys, values) raised {type(e).__name__}: {e}")
        if not isinstance(row, (list, tuple)) or len(row) != ref.vocab_size:
            fail(
                f"gpt should return {ref.vocab_size} logits, one per token; it returned {row!r:.80}"
            )
        got = [float(v.data) for v in row]
        right = [v.data for v in want[pos]]
        if not all_near(got, right):
            i = next(j for j, (a, b) in enumerate(zip(got, right)) if not near(a, b))
            hint = (
                ": the first position is right, so look at what a later one reads: the keys and "
                "values of every position so far (this one's appended to keys[li] and values[li] "
                "before attending), its own position's wpe row"
                if pos
                else ""
            )
            fail(
                f"at position {pos} (token {tokens[pos]}) logit {i} is {fmt(got[i])}; "
                f"micrograd.gpt's, on the same weights, is {fmt(right[i])}{hint}"
            )
        rows.append(row)
    for li in range(ref.n_layer):
        if len(keys[li]) != n or len(values[li]) != n:
            fail(
                f"after {n} positions keys[{li}] holds {len(keys[li])} keys: append one a position"
            )
    loss = _learner_loss(rows, tokens[1:], V)
    ref_loss = ref.loss(tokens)
    want_loss = math.fsum(cross_entropy_f(r, t) for r, t in zip(rows_f(want), tokens[1:])) / n
    if not near(loss.data, ref_loss.data) or not near(loss.data, want_loss):
        fail(f"the loss is {fmt(loss.data)}; micrograd.gpt's is {fmt(ref_loss.data)}")
    loss.backward()
    ref_loss.backward()
    for key, matrix in ours.items():
        for i, (row, ref_row) in enumerate(zip(theirs[key], matrix)):
            for j, (p, r) in enumerate(zip(row, ref_row)):
                if not near(float(p.grad), r.grad, GRAD_REL):
                    fail(
                        f"the logits are right but not the grads: state_dict[{key!r}][{i}][{j}]"
                        f".grad is {fmt(p.grad)}, micrograd.gpt's {fmt(r.grad)}: is every "
                        f"weight used through Value ops (no .data in the model)?"
                    )


def rows_f(rows: list[list[Any]]) -> list[list[float]]:
    return [[v.data for v in row] for row in rows]
