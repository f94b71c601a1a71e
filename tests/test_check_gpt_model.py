"""Chapter 8's check of a learner's assembled GPT (micrograd.check.gpt_model): a GPT written as
microgpt writes it, on micrograd's Value and on a learner's lecture Value, passes; each slip in
assembling it is named; the learner's weights, grads and random stream are left as they were."""

from __future__ import annotations

import math
import random

import pytest

from micrograd.check.gpt_model import check_gpt, reference_weights
from micrograd.check.notebook import CheckFailed
from micrograd.engine import Value as Ours
from micrograd.gpt import GPT
from tests.support.gpt import logits_of
from tests.test_check_language import Learners

ENGINES = [pytest.param(Ours, id="micrograd"), pytest.param(Learners, id="lecture")]


def model(V, slip="", n_layer=1, n_embd=8, n_head=2, vocab_size=7, block_size=8):
    """microgpt's state_dict and gpt(), written here apart from micrograd.gpt; `slip` leaves
    one thing out."""
    rng = random.Random(5)

    def matrix(nout, nin):
        return [[V(rng.gauss(0, 0.5)) for _ in range(nin)] for _ in range(nout)]

    sd = {"wte": matrix(vocab_size, n_embd), "wpe": matrix(block_size, n_embd)}
    sd["lm_head"] = matrix(vocab_size, n_embd)
    for i in range(n_layer):
        for name in ("attn_wq", "attn_wk", "attn_wv", "attn_wo"):
            sd[f"layer{i}.{name}"] = matrix(n_embd, n_embd)
        sd[f"layer{i}.mlp_fc1"] = matrix(4 * n_embd, n_embd)
        sd[f"layer{i}.mlp_fc2"] = matrix(n_embd, 4 * n_embd)
    hd = n_embd // n_head

    def linear(x, w):
        out = []
        for row in w:
            acc = row[0] * x[0]
            for a, b in zip(row[1:], x[1:]):
                acc = acc + a * b
            out.append(acc)
        return out

    def rmsnorm(x):
        ms = sum((xi * xi for xi in x), V(0.0)) * (1 / len(x))
        return [xi * (ms + 1e-5) ** -0.5 for xi in x]

    def softmax(xs):
        m = max(v.data for v in xs)
        es = [(v - m).exp() for v in xs]
        total = sum(es[1:], es[0])
        return [e / total for e in es]

    def attention(q, ks, vs):
        w = softmax([sum((a * b for a, b in zip(q, k)), V(0.0)) * (1 / math.sqrt(hd)) for k in ks])
        return [sum((wt * v[j] for wt, v in zip(w, vs)), V(0.0)) for j in range(hd)]

    def gpt(token, pos, keys, values):
        x = [t + p for t, p in zip(sd["wte"][token], sd["wpe"][0 if slip == "wpe" else pos])]
        x = x if slip == "embedding norm" else rmsnorm(x)
        for li in range(n_layer):
            res = x
            x = x if slip == "attention norm" else rmsnorm(x)
            q, k, v = (linear(x, sd[f"layer{li}.attn_w{c}"]) for c in "qkv")
            if slip == "cache":
                keys[li][:], values[li][:] = [k], [v]
            else:
                keys[li].append(k)
                values[li].append(v)
            heads = []
            for h in range(0, n_embd, hd):
                heads += attention(
                    q[h : h + hd],
                    [k[h : h + hd] for k in keys[li]],
                    [v[h : h + hd] for v in values[li]],
                )
            x = heads if slip == "projection" else linear(heads, sd[f"layer{li}.attn_wo"])
            x = x if slip == "residual" else [a + b for a, b in zip(x, res)]
            res = x
            x = [h.relu() for h in linear(rmsnorm(x), sd[f"layer{li}.mlp_fc1"])]
            x = linear(x, sd[f"layer{li}.mlp_fc2"])
            x = x if slip == "mlp residual" else [a + b for a, b in zip(x, res)]
        if slip == "data":
            x = [V(xi.data) for xi in x]  # the graph cut: right numbers, no grads to the blocks
        if slip == "final norm":  # a norm microgpt does not have, before the logits
            x = rmsnorm(x)
        return linear(x, sd["lm_head"])

    return gpt, sd, n_head


@pytest.mark.parametrize("V", ENGINES)
def test_a_right_gpt_passes_and_its_weights_and_grads_come_back(V, capsys) -> None:
    gpt, sd, n_head = model(V)
    sd["wte"][2][3].grad = 0.25
    before = {k: [[(p.data, p.grad) for p in row] for row in m] for k, m in sd.items()}
    state = random.getstate()
    check_gpt(gpt, sd, n_head, V)
    assert random.getstate() == state
    assert {k: [[(p.data, p.grad) for p in row] for row in m] for k, m in sd.items()} == before
    assert capsys.readouterr().out.startswith("✓ gpt is micrograd.gpt's GPT (1 layer, 2 heads)")


def test_two_layers_and_four_heads_pass(capsys) -> None:
    check_gpt(*model(Ours, n_layer=2, n_embd=8, n_head=4)[:3], Ours)
    assert "(2 layers, 4 heads)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "slip, said",
    [
        ("wpe", "at position 1 (token"),
        ("cache", "the keys and values of every position so far"),
        ("residual", "at position 0 (token 6) the logits are not micrograd.gpt's"),
        ("data", "the logits are right but not the grads: state_dict['wte'][1][0].grad"),
    ],
)
def test_each_slip_is_named_and_the_weights_come_back(slip, said) -> None:
    gpt, sd, n_head = model(Learners, slip)
    before = [p.data for m in sd.values() for row in m for p in row]
    with pytest.raises(CheckFailed) as e:
        check_gpt(gpt, sd, n_head, Learners)
    assert said in str(e.value)
    assert [p.data for m in sd.values() for row in m for p in row] == before


def test_a_wrong_state_dict_is_one_line() -> None:
    gpt, sd, n_head = model(Ours)
    del sd["wpe"]
    with pytest.raises(CheckFailed, match="state_dict has no 'wpe'"):
        check_gpt(gpt, sd, n_head, Ours)
    gpt, sd, n_head = model(Ours)
    sd["layer0.mlp_fc1"] = sd["layer0.mlp_fc1"][:5]
    with pytest.raises(CheckFailed, match=r"'layer0.mlp_fc1'\] should be 32 rows of 8 Values"):
        check_gpt(gpt, sd, n_head, Ours)


def test_the_reference_names_every_weight_of_micrograds_gpt() -> None:
    ref = GPT(5, n_layer=2, n_embd=4, n_head=2, block_size=3)
    weights = reference_weights(ref)
    assert [p for m in weights.values() for row in m for p in row] == ref.parameters()


@pytest.mark.parametrize(
    "slip, part",
    [
        ("embedding norm", "the embeddings: x = rmsnorm(wte[token_id] + wpe[pos_id])"),
        ("wpe", "the embeddings: x = rmsnorm(wte[token_id] + wpe[pos_id])"),
        ("attention norm", "layer 0's attention block: x_residual kept; rmsnorm(x)"),
        ("residual", "layer 0's attention block: x_residual kept; rmsnorm(x)"),
        ("projection", "layer 0's attention block: x_residual kept; rmsnorm(x)"),
        ("cache", "layer 0's attention block: x_residual kept; rmsnorm(x)"),
        ("mlp residual", "layer 0's MLP block: x kept; rmsnorm(x); mlp_fc1"),
        ("final norm", "the logits: linear(x, lm_head) of the last block's output"),
    ],
)
@pytest.mark.parametrize("V", ENGINES)
def test_a_part_left_out_is_named_by_the_first_output_that_differs(V, slip, part) -> None:
    """The learner's graph holds each part's output where it is right: the first part of
    microgpt (worked out in floats from its steps) whose output is not there is the one named."""
    gpt, sd, n_head = model(V, slip)
    with pytest.raises(CheckFailed) as e:
        check_gpt(gpt, sd, n_head, V)
    said = str(e.value)
    assert f"the first part whose output differs is {part}" in said, said
    assert said.count("the first part") == 1


def test_microgpt_in_floats_is_micrograds_gpt() -> None:
    """The floats the parts are looked for by: micrograd.gpt's logits at every position, for
    a GPT of two layers and four heads (else no part could be named)."""
    from micrograd.check.gpt_model import stages_f

    ref = GPT(9, n_layer=2, n_embd=8, n_head=4, block_size=6)
    weights = {k: [[p.data for p in r] for r in m] for k, m in reference_weights(ref).items()}
    tokens = [8, 3, 0, 5, 8]
    stages = stages_f(weights, tokens, 2, 4)
    names = [name for name, _, _ in stages[0]]
    assert names == [
        "the embeddings",
        "layer 0's attention block",
        "layer 0's MLP block",
        "layer 1's attention block",
        "layer 1's MLP block",
        "the logits",
    ]
    for here, row in zip(stages, logits_of(ref, tokens)):
        assert here[-1][2] == pytest.approx([v.data for v in row], rel=1e-12, abs=1e-12)


def test_an_unfilled_gpt_is_not_attempted() -> None:
    ns: dict = {"__name__": "__main__"}
    exec(  # as a notebook's cell defines it: in __main__, its source kept by linecache
        compile(
            "def gpt(token_id, pos_id, keys, values):\n    x = ...\n    for li in range(1):\n"
            "        ...\n    return x\n",
            "<cell>",
            "exec",
        ),
        ns,
    )
    _, sd, n_head = model(Ours)
    with pytest.raises(CheckFailed) as e:
        check_gpt(ns["gpt"], sd, n_head, Ours)
    assert str(e.value).startswith("not attempted: gpt still has `...`"), str(e.value)
