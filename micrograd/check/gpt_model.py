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
from .language import GRAD_REL, all_near, attention_f, cross_entropy_f, near, rmsnorm_f
from .notebook import attempted, fail, passed

LAYER = ("attn_wq", "attn_wk", "attn_wv", "attn_wo", "mlp_fc1", "mlp_fc2")
SEQUENCE = 6  # tokens read: 5 positions predict the next


def reference_weights(model: GPT) -> dict[str, list[list[Any]]]:
    """`model`'s weights by microgpt's names: each a matrix, rows of Values (nout x nin)."""
    return dict(model.sd)


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


# ------------------------------------------------------------------ microgpt, in floats

# Each part of the model whose output the check looks for in the learner's graph, and what it
# is, in the exercise's steps (the first one whose output is not there is the one that differs)
PARTS = {
    "embeddings": "x = rmsnorm(wte[token_id] + wpe[pos_id]) (step 1)",
    "attention": (
        "x_residual kept; rmsnorm(x); q, k, v by attn_wq, attn_wk, attn_wv; each head through "
        "attention; the heads side by side through attn_wo; then + x_residual (step 2)"
    ),
    "mlp": "x kept; rmsnorm(x); mlp_fc1; relu; mlp_fc2; then + the kept x (step 3)",
    "logits": "linear(x, lm_head) of the last block's output (step 4)",
}


def _linear_f(x: list[float], w: list[list[float]]) -> list[float]:
    return [math.fsum(a * b for a, b in zip(row, x)) for row in w]


def stages_f(
    weights: dict[str, list[list[float]]],
    tokens: list[int],
    n_layer: int,
    n_head: int,
    norm_embeddings: bool = True,
) -> list[list[tuple[str, str, list[float]]]]:
    """microgpt's forward pass in plain floats, written from its steps (not from
    micrograd.gpt): for each position, each part's output as (name, part, vector), in order.
    `norm_embeddings` False: the slip of step 1 without its rmsnorm."""
    keys: list[list[list[float]]] = [[] for _ in range(n_layer)]
    values: list[list[list[float]]] = [[] for _ in range(n_layer)]
    out = []
    for pos, tok in enumerate(tokens):
        x = [a + b for a, b in zip(weights["wte"][tok], weights["wpe"][pos])]
        x = rmsnorm_f(x) if norm_embeddings else x
        here = [("the embeddings", "embeddings", x)]
        for li in range(n_layer):
            h = rmsnorm_f(x)
            q, k, v = (_linear_f(h, weights[f"layer{li}.attn_w{c}"]) for c in "qkv")
            keys[li].append(k)
            values[li].append(v)
            d = len(q) // n_head
            heads: list[float] = []
            for hh in range(n_head):
                s = slice(hh * d, (hh + 1) * d)
                heads += attention_f(q[s], [kk[s] for kk in keys[li]], [vv[s] for vv in values[li]])
            x = [a + b for a, b in zip(_linear_f(heads, weights[f"layer{li}.attn_wo"]), x)]
            here.append((f"layer {li}'s attention block", "attention", x))
            h = [max(0.0, y) for y in _linear_f(rmsnorm_f(x), weights[f"layer{li}.mlp_fc1"])]
            x = [a + b for a, b in zip(_linear_f(h, weights[f"layer{li}.mlp_fc2"]), x)]
            here.append((f"layer {li}'s MLP block", "mlp", x))
        here.append(("the logits", "logits", _linear_f(x, weights["lm_head"])))
        out.append(here)
    return out


def _graph_values(roots: list[Any], limit: int = 200_000) -> list[float] | None:
    """Every number in the learner's graph under `roots` (each node's data), sorted; None when
    the graph cannot be read (no `_prev`) or is beyond `limit` nodes."""
    seen: set[int] = set()
    stack = list(roots)
    found: list[float] = []
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if len(seen) > limit or not hasattr(v, "_prev"):
            return None
        x = getattr(v, "data", None)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            found.append(float(x))
        stack.extend(getattr(v, "_prev", ()) or ())
    return sorted(found)


def _holds(values: list[float], vector: list[float]) -> bool:
    """Whether each number of `vector` is among `values` (sorted), to 1e-9."""
    import bisect

    for y in vector:
        tol = 1e-9 * max(1.0, abs(y))
        i = bisect.bisect_left(values, y - tol)
        if i == len(values) or values[i] > y + tol:
            return False
    return True


def first_part_that_differs(
    row: list[Any],
    stages: list[tuple[str, str, list[float]]],
    unnormed: list[tuple[str, str, list[float]]] | None = None,
) -> tuple[str, str] | None:
    """The first part (its name, and its kind in PARTS) whose output, worked out in floats,
    is not among the numbers of the learner's graph for this position's logits `row`: judged
    by what the graph computes, however the code is written. None if the graph cannot be read.
    The embeddings' rmsnorm is the one part whose output shows up anyway (the first block's own
    rmsnorm of x is the same vector): `unnormed` (the stages without it) tells them apart."""
    values = _graph_values(row)
    if values is None:
        return None
    for k, (name, kind, vector) in enumerate(stages):
        if kind == "logits" or not _holds(values, vector):
            if k == 1 and unnormed is not None and _holds(values, unnormed[1][2]):
                return stages[0][0], stages[0][1]
            return name, kind
    return None


def check_gpt(gpt: Callable[..., Any], state_dict: Any, n_head: int, V: type) -> None:
    """`gpt(token_id, pos_id, keys, values)` on the weights `state_dict`: microgpt's model."""
    attempted("gpt", gpt)
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
        _compare(gpt, theirs, ours, ref, V, n_head)
    finally:
        for p, (data, grad) in zip(mine, kept):
            p.data, p.grad = data, grad
    passed(
        f"gpt is micrograd.gpt's GPT ({n_layer} layer{'s' * (n_layer > 1)}, {n_head} heads): "
        f"the logits at every position, the loss and every weight's grad"
    )


def _compare(
    gpt: Callable[..., Any], theirs: dict, ours: dict, ref: GPT, V: type, n_head: int
) -> None:
    tokens = _tokens(ref.vocab_size, ref.block_size)
    n = len(tokens) - 1
    keys: list[list] = [[] for _ in range(ref.n_layer)]
    values: list[list] = [[] for _ in range(ref.n_layer)]
    rows = []
    ref_keys, ref_values = [[] for _ in range(ref.n_layer)], [[] for _ in range(ref.n_layer)]
    want = [ref.forward(t, pos, ref_keys, ref_values) for pos, t in enumerate(tokens[:n])]
    floats = {k: [[p.data for p in r] for r in m] for k, m in ours.items()}
    stages = stages_f(floats, tokens[:n], ref.n_layer, n_head)
    unnormed = stages_f(floats, tokens[:n], ref.n_layer, n_head, norm_embeddings=False)
    if not all(all_near(st[-1][2], [v.data for v in w]) for st, w in zip(stages, want)):
        stages = []  # (micrograd.gpt is not microgpt here: no part is named)
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
            part = first_part_that_differs(row, stages[pos], unnormed[pos]) if stages else None
            if part is not None:
                fail(
                    f"at position {pos} (token {tokens[pos]}) the logits are not micrograd.gpt's "
                    f"on the same weights (logit {i}: {fmt(got[i])}, not {fmt(right[i])}); the "
                    f"first part whose output differs is {part[0]}: {PARTS[part[1]]}{hint}"
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
