"""save/load round trips bit for bit, fails safely and clearly; to_torch computes the same."""

from __future__ import annotations

import json
import os
import random

import pytest
import torch

from micrograd import io
from micrograd.nn import MLP

X = [[0.3, -1.2, 2.0], [1.0, 0.5, -0.25], [-2.0, 0.0, 0.7]]


def outputs(model: MLP) -> list[list[float]]:
    return [[o.data for o in model.outputs(x)] for x in X]


@pytest.mark.parametrize(
    "kw",
    [
        dict(nouts=[4, 4, 1]),
        dict(nouts=[5, 2], activation="tanh", out_activation="sigmoid"),
        dict(nouts=[3], fused=False),
        dict(nouts=[4, 4, 1], activation="tanh", out_activation="tanh"),
    ],
    ids=str,
)
def test_round_trip_is_exact(tmp_path, kw: dict) -> None:
    random.seed(0)
    model = MLP(3, **kw)
    for p in model.parameters():  # awkward floats: repr must round-trip them all
        p.data = random.uniform(-1, 1) / 3 + 1e-17
    path = tmp_path / "m.json"
    model.save(path)
    loaded = MLP.load(path)
    assert [p.data for p in loaded.parameters()] == [p.data for p in model.parameters()]
    assert outputs(loaded) == outputs(model)
    assert repr(loaded) == repr(model)
    assert io.architecture(loaded) == io.architecture(model)


def test_file_is_readable_json(tmp_path) -> None:
    random.seed(1)
    model = MLP(2, [3, 1])
    model.save(tmp_path / "m.json")
    d = json.loads((tmp_path / "m.json").read_text())
    assert d["format"] == "micrograd-mlp" and d["version"] == 1
    assert (d["nin"], d["nouts"], d["activation"], d["out_activation"], d["fused"]) == (
        2, [3, 1], "relu", "linear", True,
    )
    assert len(d["weights"]) == len(model.parameters()) == 13


def test_load_does_not_consume_random(tmp_path) -> None:
    MLP(2, [3, 1]).save(tmp_path / "m.json")
    random.seed(5)
    expected = random.random()
    random.seed(5)
    MLP.load(tmp_path / "m.json")
    assert random.random() == expected


def test_failed_save_leaves_old_file_intact(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.json"
    old = MLP(2, [3, 1])
    old.save(path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "fsync", boom)  # fails after part of the file is written
    with pytest.raises(OSError, match="disk full"):
        MLP(2, [3, 1]).save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]  # no temporary file left behind


def test_failed_replace_leaves_old_file_intact(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.json"
    MLP(2, [3, 1]).save(path)
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        MLP(2, [3, 1]).save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]


def good() -> dict:
    random.seed(2)
    return io.to_dict(MLP(2, [3, 1]))


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", "bad JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({**good(), "format": "keras"}), "format"),
        (json.dumps({**good(), "version": 99}), "version 99"),
        (json.dumps({k: v for k, v in good().items() if k != "nouts"}), "missing field 'nouts'"),
        (json.dumps({**good(), "weights": good()["weights"][:-1]}), "wrong number of weights: 12"),
        (json.dumps({**good(), "weights": ["x"] * 13}), "weight 0 is not a number"),
        (json.dumps({**good(), "weights": [True] * 13}), "weight 0 is not a number"),
        (json.dumps({**good(), "nin": 0}), "nin"),
        (json.dumps({**good(), "nouts": [3, "1"]}), "nouts"),
        (json.dumps({**good(), "activation": "gelu"}), "unknown activation 'gelu'"),
        (json.dumps({**good(), "fused": "yes"}), "fused"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path, text: str, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        MLP.load(path)
    assert "bad.json" in str(info.value)


def test_missing_file_is_file_not_found(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        MLP.load(tmp_path / "nope.json")


def test_save_rejects_what_it_cannot_describe(tmp_path) -> None:
    from micrograd.nn import Neuron

    with pytest.raises(TypeError, match="MLP"):
        Neuron(2).save(tmp_path / "n.json")
    model = MLP(2, [3, 3, 1])
    model.layers[0].neurons[0].activation = "tanh"
    with pytest.raises(ValueError, match="changed after construction"):
        model.save(tmp_path / "m.json")


@pytest.mark.parametrize(
    "kw",
    [
        dict(nouts=[16, 16, 1]),
        dict(nouts=[4, 4, 1], activation="tanh", out_activation="tanh"),
        dict(nouts=[5, 3], activation="sigmoid", out_activation="sigmoid"),
        dict(nouts=[2], fused=False),
    ],
    ids=str,
)
def test_to_torch_same_outputs(kw: dict) -> None:
    random.seed(4)
    model = MLP(3, **kw)
    net = model.to_torch()
    assert isinstance(net, torch.nn.Sequential)
    assert all(p.dtype == torch.float64 for p in net.parameters())
    got = net(torch.tensor(X, dtype=torch.float64)).tolist()
    for row_ours, row_torch in zip(outputs(model), got):
        assert row_ours == pytest.approx(row_torch, rel=1e-12, abs=1e-12)
    assert sum(p.numel() for p in net.parameters()) == len(model.parameters())


def test_edge_cases_are_clear_errors(tmp_path) -> None:
    import math

    import pytest

    from micrograd import MLP

    model = MLP(2, [3, 1])
    model.parameters()[4].data = math.nan
    with pytest.raises(ValueError, match="weight 4 is nan"):
        model.save(tmp_path / "m.json")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        MLP(2, [1]).save(tmp_path / "no" / "m.json")
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"format": "\xe9"}')
    with pytest.raises(ValueError, match="not UTF-8"):
        MLP.load(bad)
    good = tmp_path / "big.json"
    MLP(1, [1]).save(good)
    good.write_text(good.read_text().replace("0.0\n", "1" + "0" * 400 + "\n"))
    with pytest.raises(ValueError, match="too large for a float"):
        MLP.load(good)
