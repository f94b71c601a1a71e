"""The GPT's loss on micrograd.jit (micrograd.jit.gpt) against the eager engine: losses and grads
to 1e-12, one trace per length; and the same trace run as JavaScript in Node.js."""

from __future__ import annotations

import random
import shutil

import pytest

from micrograd.engine import Value
from micrograd.gpt import GPT, Adam
from micrograd.jit.gpt import JitGPT, one_hot, traced_loss

np = pytest.importorskip("numpy")


def docs_of_every_length(vocab: int, rng: random.Random) -> list[list[int]]:
    """Token lists of 2 to 18 tokens (past the block of 16: cropped), two of most lengths."""
    return [[rng.randrange(vocab) for _ in range(n)] for n in [*range(2, 19), *range(2, 12)]]


def eager_mean(model: GPT, docs: list[list[int]]) -> Value:
    return (1 / len(docs)) * Value.sum([model.loss(d) for d in docs])


def test_the_traced_loss_is_the_models_loss() -> None:
    """traced_loss (one-hot tokens, unshifted softmaxes) against GPT.loss: the loss and every
    grad to 1e-12, and each position's logits kept (for the JavaScript step's samples)."""
    random.seed(4)
    model = GPT(6, n_layer=2, n_embd=8, n_head=2, block_size=8)
    tokens = [5, 0, 3, 3, 1, 5]
    kept: list = []
    a, b = model.loss(tokens), traced_loss(model, one_hot(tokens, 6), keep=kept)
    assert b.data == pytest.approx(a.data, abs=1e-12, rel=0)
    keys, values = [[], []], [[], []]
    for pos, row in enumerate(kept):
        want = [v.data for v in model.forward(tokens[pos], pos, keys, values)]
        assert [v.data for v in row] == pytest.approx(want, abs=1e-12, rel=0)
    model.zero_grad()
    a.backward()
    ga = [p.grad for p in model.parameters()]
    model.zero_grad()
    b.backward()
    assert max(abs(x - p.grad) for x, p in zip(ga, model.parameters())) < 1e-12
    with pytest.raises(ValueError, match="needs at least 2 tokens"):
        traced_loss(model, one_hot([1], 6))


@pytest.mark.slow
def test_jit_losses_and_grads_equal_eager() -> None:
    rng = random.Random(11)
    random.seed(11)
    model = GPT(7, n_layer=2, n_embd=8, n_head=2)
    jg = JitGPT(model)
    docs = docs_of_every_length(7, rng)
    for _ in range(2):  # the second round after an Adam step: the traces read the new weights
        eager = [model.loss(d).data for d in docs]
        assert jg.losses(docs) == pytest.approx(eager, abs=1e-12, rel=0)
        model.zero_grad()
        eager_mean(model, docs).backward()
        expected = [p.grad for p in model.parameters()]
        model.zero_grad()
        loss = jg.loss(docs)
        assert loss.data == pytest.approx(sum(eager) / len(docs), abs=1e-12, rel=0)
        loss.backward()
        assert max(abs(a - p.grad) for a, p in zip(expected, model.parameters())) < 1e-12
        Adam(model.parameters(), steps=10).step()
    assert jg.jitted.traces == 16  # one per length, 2 to 17 tokens (18 reads as 17)


def test_jit_refuses_what_eager_refuses() -> None:
    random.seed(2)
    jg = JitGPT(GPT(5, n_embd=4, n_head=2))
    with pytest.raises(ValueError, match="token 9 is not in 0..4"):
        jg.loss([[1, 9, 2]])
    with pytest.raises(ValueError, match="document 1 has 1 token"):
        jg.losses([[1, 2], [3]])
    with pytest.raises(TypeError, match="needs a micrograd.gpt.GPT"):
        JitGPT("model")


@pytest.mark.skipif(
    shutil.which("node") is None and shutil.which("nodejs") is None,
    reason="Node.js is not installed (apt install nodejs)",
)
def test_the_trace_runs_as_javascript() -> None:
    from micrograd.jit import js_target

    rng = random.Random(12)
    random.seed(12)
    model = GPT(6, n_embd=8, n_head=2)
    docs = [[rng.randrange(6) for _ in range(7)] for _ in range(5)]
    X = np.array([one_hot(d, 6) for d in docs])
    src, captured = js_target.program_source(lambda x: traced_loss(model, x), [X[0].tolist()])
    host = js_target.NodeHost()
    try:
        run = host.compile(js_target.runner_source(src))
        got = run(
            "run",
            {"B": len(X), "data": X.ravel().tolist(), "captured": [c.data for c in captured]}
            | {"seed": 1.0},
        )
    finally:
        host.close()
    outs = [float(x) for x in got["outs"]]
    assert outs == pytest.approx([model.loss(d).data for d in docs], abs=1e-12, rel=0)
    model.zero_grad()
    Value.sum([model.loss(d) for d in docs]).backward()
    grads = dict(zip(captured, (float(g) for g in got["grads"])))
    # (parameters the trace never reads, the later positions' rows, have no grad there: 0)
    assert max(abs(grads.get(p, 0.0) - p.grad) for p in model.parameters()) < 1e-12
