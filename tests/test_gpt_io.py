"""A GPT saved, loaded and exported: bit-identical round trips, refused files, and to_torch's
module against the model's own logits and backward()."""

from __future__ import annotations

import json
import random

import pytest
import torch

from micrograd.gpt import GPT, Tokenizer, microgpt, sample
from micrograd.io import dumps, load, load_gpt, loads, save, to_torch
from micrograd.nn import MLP
from tests.support.gpt import logits_of


def random_gpt(seed: int, **shape: int) -> GPT:
    random.seed(seed)
    model = GPT(9, **shape)
    for p in model.parameters():  # awkward floats: repr must round-trip them all
        p.data = random.uniform(-1, 1) / 3 + 1e-17
    return model


@pytest.mark.parametrize("shape", [dict(), dict(n_layer=2, n_embd=8, n_head=2, block_size=5)])
def test_save_then_load_is_exact(tmp_path, shape: dict) -> None:
    model = random_gpt(1, **shape)
    path = tmp_path / "gpt.json"
    save(model, path)
    state = random.getstate()
    back = load(path)
    assert random.getstate() == state  # loading draws weights, then puts the caller's stream back
    assert isinstance(back, GPT) and back.config() == model.config()
    assert [p.data for p in back.parameters()] == [p.data for p in model.parameters()]
    tokens = [8, 1, 2, 3, 8][: model.block_size]
    assert [v.data for v in logits_of(back, tokens)[-1]] == [
        v.data for v in logits_of(model, tokens)[-1]
    ]
    assert json.loads(path.read_text())["format"] == "micrograd-gpt"


def test_bad_gpt_files_are_named() -> None:
    d = json.loads(dumps(random_gpt(2, n_embd=4, n_head=2, block_size=3)))
    cases = [
        ({**d, "weights": d["weights"][:-1]}, "wrong number of weights"),
        ({**d, "n_head": 3}, "n_embd \\(4\\) must be a multiple of n_head \\(3\\)"),
        ({**d, "n_layer": 0}, "n_layer must be a positive integer, got 0"),
        ({**d, "extra": 1}, "unknown field 'extra'"),
        ({k: v for k, v in d.items() if k != "block_size"}, "missing field 'block_size'"),
        ({**d, "weights": [*d["weights"][:-1], "x"]}, "weight 275 is not a number"),
    ]
    for bad, message in cases:
        with pytest.raises(
            ValueError, match="f.json: not a valid micrograd model file: " + message
        ):
            loads(json.dumps(bad), "f.json")


WORDS = ["emma", "olivia", "ava", "zoe", "lu"]


def test_a_saved_gpt_carries_its_tokenizer_and_samples_without_the_words(tmp_path) -> None:
    model, tok, _ = microgpt(docs=WORDS, steps=2, seed=5)
    path = tmp_path / "m.json"
    save(model, path, tok)
    d = json.loads(path.read_text())
    assert d["version"] == 2 and d["chars"] == "".join(tok.chars) == "aeilmouvz"
    back, back_tok = load_gpt(path)
    assert back_tok.chars == tok.chars and back_tok.vocab_size == tok.vocab_size
    assert [p.data for p in back.parameters()] == [p.data for p in model.parameters()]
    assert sample(back, back_tok, 8, rng=random.Random(3)) == sample(
        model, tok, 8, rng=random.Random(3)
    )
    old_caller = load(path)  # io.load as before: the model alone
    assert isinstance(old_caller, GPT) and old_caller.config() == model.config()


def test_an_older_gpt_file_loads_without_a_tokenizer(tmp_path) -> None:
    model = random_gpt(4, n_embd=4, n_head=2)
    path = tmp_path / "old.json"
    save(model, path)  # no tokenizer: the format as before (version 1, no chars)
    assert json.loads(path.read_text())["version"] == 1
    back, tok = load_gpt(path)
    assert tok is None and [p.data for p in back.parameters()] == [
        p.data for p in model.parameters()
    ]


def test_gpt_files_that_load_gpt_refuses(tmp_path) -> None:
    mlp = tmp_path / "mlp.json"
    save(MLP(2, [2, 1]), mlp)
    with pytest.raises(
        ValueError, match="mlp.json: not a valid micrograd model file: it holds an MLP, not a GPT"
    ):
        load_gpt(mlp)
    tok = Tokenizer(["abcdefgh"])
    d = json.loads(dumps(random_gpt(2, n_embd=4, n_head=2, block_size=3), tokenizer=tok))
    cases = [
        ({**d, "version": 3}, "version 3 is newer than this micrograd reads \\(up to 2\\)"),
        ({**d, "chars": "abcdefg"}, "chars has 7 characters; vocab_size 9 needs 8"),
        ({**d, "chars": "bacdefgh"}, "chars must be a string of sorted distinct characters"),
        ({**d, "chars": 5}, "chars must be a string"),
        ({k: v for k, v in d.items() if k != "chars"}, "missing field 'chars'"),
        ({**d, "version": 1}, "unknown field 'chars'"),
    ]
    for bad, message in cases:
        with pytest.raises(
            ValueError, match="f.json: not a valid micrograd model file: " + message
        ):
            loads(json.dumps(bad), "f.json")
    with pytest.raises(ValueError, match="its tokenizer has 2 tokens, the GPT 9"):
        dumps(random_gpt(2, n_embd=4, n_head=2), tokenizer=Tokenizer(["a"]))


def test_a_diverged_gpt_is_not_saved() -> None:
    model = random_gpt(3, n_embd=4, n_head=2)
    model.parameters()[5].data = float("nan")
    with pytest.raises(ValueError, match="weight 5 is nan"):
        dumps(model)


@pytest.mark.parametrize(
    "shape", [dict(), pytest.param(dict(n_layer=2, n_embd=12, n_head=3), marks=pytest.mark.slow)]
)
def test_to_torch_gives_the_same_logits_and_grads(shape: dict) -> None:
    model = random_gpt(4, **shape)
    twin = to_torch(model)
    assert isinstance(twin, torch.nn.Module)
    rng = random.Random(5)
    batch = []
    for T in range(1, 17):
        tokens = [rng.randrange(9) for _ in range(T)]
        logits = twin(torch.tensor(tokens))
        assert logits.dtype == torch.float64 and logits.shape == (T, 9)
        ours = [[v.data for v in row] for row in logits_of(model, tokens)]
        assert torch.allclose(
            logits.detach(), torch.tensor(ours, dtype=torch.float64), rtol=0, atol=1e-9
        )
        if T == 16:
            batch = tokens
        if T < 2:
            continue
        model.zero_grad()
        loss = model.loss(tokens)
        loss.backward()
        twin.zero_grad()
        ref = torch.nn.functional.cross_entropy(
            twin(torch.tensor(tokens[:-1])), torch.tensor(tokens[1:])
        )
        ref.backward()
        assert ref.item() == pytest.approx(loss.data, abs=1e-9, rel=0)
        grads = torch.cat([p.grad.flatten() for p in twin.parameters()]).tolist()
        assert len(grads) == len(model.parameters())
        assert max(abs(g - p.grad) for g, p in zip(grads, model.parameters())) < 1e-9
    two = twin(torch.tensor([batch, batch[::-1]]))  # a batch of sequences: (B, T) -> (B, T, V)
    assert two.shape == (2, 16, 9)
    assert torch.allclose(two[0], twin(torch.tensor(batch)), rtol=0, atol=1e-12)


def test_to_torch_refuses_other_things() -> None:
    with pytest.raises(TypeError, match="only an MLP or a GPT can be exported, got a list"):
        to_torch([])
