"""save/load: bit-identical round trips, symmetric checks, errors naming the file; to_torch."""

from __future__ import annotations

import json
import math
import os
import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from micrograd.io import load, save, to_torch
from micrograd.nn import ACTIVATIONS, MLP, Layer, Neuron

X = [[0.3, -1.2, 2.0], [1.0, 0.5, -0.25], [-2.0, 0.0, 0.7]]


def outputs(model: MLP, xs: list = X) -> list[list[float]]:
    return [[o.data for o in model.outputs(x)] for x in xs]


@pytest.mark.parametrize(
    "kw",
    [
        dict(nouts=[4, 4, 1]),
        dict(nouts=[5, 2], activation="tanh", out_activation="sigmoid"),
        dict(nouts=[3], fused=False),
        dict(nouts=[4, 4, 1], activation="tanh", out_activation="tanh"),
        dict(nouts=[2], activation="sigmoid"),  # no hidden layer: the activation is kept anyway
    ],
    ids=str,
)
def test_round_trip_is_exact(tmp_path, kw: dict) -> None:
    random.seed(0)
    model = MLP(3, **kw)
    for p in model.parameters():  # awkward floats: repr must round-trip them all
        p.data = random.uniform(-1, 1) / 3 + 1e-17
    path = tmp_path / "m.json"
    save(model, path)
    loaded = load(path)
    assert [p.data for p in loaded.parameters()] == [p.data for p in model.parameters()]
    assert outputs(loaded) == outputs(model)
    assert repr(loaded) == repr(model)
    assert loaded.config() == model.config()


def test_file_is_readable_json(tmp_path) -> None:
    random.seed(1)
    model = MLP(2, [3, 1])
    save(model, tmp_path / "m.json")
    d = json.loads((tmp_path / "m.json").read_text())
    assert d["format"] == "micrograd-mlp" and d["version"] == 1
    assert (d["nin"], d["nouts"], d["activation"], d["out_activation"], d["fused"]) == (
        2,
        [3, 1],
        "relu",
        "linear",
        True,
    )
    assert d["weights"] == [p.data for p in model.parameters()]
    assert len(d["weights"]) == 13


def test_config_rebuilds_the_shape() -> None:
    model = MLP(3, [4, 2], activation="tanh", out_activation=None, fused=False)
    assert model.config() == dict(
        nin=3, nouts=[4, 2], activation="tanh", out_activation="linear", fused=False
    )
    assert repr(MLP(**model.config())) == repr(model)
    model.config()["nouts"].append(9)  # a copy: changing it changes nothing
    assert model.config()["nouts"] == [4, 2]


def test_load_does_not_consume_random(tmp_path) -> None:
    save(MLP(2, [3, 1]), tmp_path / "m.json")
    random.seed(5)
    expected = random.random()
    random.seed(5)
    load(tmp_path / "m.json")
    assert random.random() == expected


def test_failed_save_leaves_old_file_intact(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.json"
    save(MLP(2, [3, 1]), path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)  # fails after part of the file is written
    with pytest.raises(OSError, match="No space left") as info:
        save(MLP(2, [3, 1]), path)
    assert str(path) in str(info.value) and ".tmp" not in str(info.value)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]  # no temporary file left behind


def test_interrupted_save_leaves_old_file_intact(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.json"
    save(MLP(2, [3, 1]), path)
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        save(MLP(2, [3, 1]), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]


def test_save_errors_name_the_users_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"the folder .* does not exist: .*no/m\.json"):
        save(MLP(2, [1]), tmp_path / "no" / "m.json")
    (tmp_path / "d.json").mkdir()
    with pytest.raises(IsADirectoryError, match=r"it is a folder: .*d\.json"):
        save(MLP(2, [1]), tmp_path / "d.json")
    model = MLP(2, [3, 1])
    model.parameters()[4].data = math.nan
    with pytest.raises(ValueError, match=r"cannot save .*m\.json: weight 4 is nan"):
        save(model, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


def good() -> dict:
    random.seed(2)
    model = MLP(2, [3, 1])
    return {
        "format": "micrograd-mlp",
        "version": 1,
        **model.config(),
        "weights": [p.data for p in model.parameters()],
    }


def with_weight(text: str) -> str:
    """good()'s file with its first weight written as `text`, verbatim."""
    d = good()
    d["weights"][0] = 12345.5
    return json.dumps(d).replace("12345.5", text)


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", "bad JSON"),
        ("[1, 2]", "JSON object"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
        ('{"a": ' * 50000 + "1" + "}" * 50000, "nested too deeply"),
        (json.dumps({**good(), "format": "keras"}), "format"),
        (json.dumps({**good(), "version": 99}), "version 99"),
        (json.dumps({**good(), "version": True}), "version True"),
        (json.dumps({**good(), "version": 1.0}), "version 1.0"),
        (json.dumps({k: v for k, v in good().items() if k != "nouts"}), "missing field 'nouts'"),
        (json.dumps({**good(), "comment": "hi"}), "unknown field 'comment'"),
        (json.dumps(good())[:-1] + ', "nin": 2}', "field 'nin' appears twice"),
        (json.dumps({**good(), "weights": good()["weights"][:-1]}), "wrong number of weights: 12"),
        (json.dumps({**good(), "weights": ["x"] * 13}), "weight 0 is not a number"),
        (json.dumps({**good(), "weights": [True] * 13}), "weight 0 is not a number"),
        (json.dumps({**good(), "nin": 0}), "nin"),
        (json.dumps({**good(), "nin": 2.0}), "nin"),
        (json.dumps({**good(), "nouts": [3, "1"]}), "nouts"),
        (json.dumps({**good(), "activation": "gelu"}), "unknown activation 'gelu'"),
        (json.dumps({**good(), "activation": None}), "activation must be a name"),
        (json.dumps({**good(), "fused": "yes"}), "fused"),
        (json.dumps({**good(), "fused": 0}), "fused must be true or false, got 0"),
        (with_weight("NaN"), "NaN is not a number a model file can hold"),
        (with_weight("Infinity"), "Infinity is not a number"),
        (with_weight("-Infinity"), "-Infinity is not a number"),
        (with_weight("1e999"), "1e999 is too large for a float"),
        (with_weight("1" + "0" * 309), "weight 0 is too large for a float: 1000"),
        (with_weight("1" * 5000), r"\(5000 digits\) is too large for a float"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path, text: str, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: not a valid micrograd model file: ")


def test_long_but_ordinary_numbers_load(tmp_path) -> None:
    path = tmp_path / "long.json"
    path.write_text(with_weight("0." + "1" * 5000))
    assert load(path).parameters()[0].data == float("0." + "1" * 5000)
    path.write_text(with_weight("1e-400"))  # underflows to 0.0, as save's 0.0 reads
    assert load(path).parameters()[0].data == 0.0


def test_latin1_and_missing_files(tmp_path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"format": "\xe9"}')
    with pytest.raises(ValueError, match="latin1.json: .*not UTF-8"):
        load(bad)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.json")


def test_only_an_mlp_saves_or_exports(tmp_path) -> None:
    for module in (Neuron(2), Layer(2, 3)):
        with pytest.raises(
            TypeError, match=r"only an MLP or a GPT can be saved.* got a (Neuron|Layer)"
        ):
            save(module, tmp_path / "n.json")
        with pytest.raises(TypeError, match="to_torch: only an MLP or a GPT"):
            to_torch(module)
    assert not (tmp_path / "n.json").exists()
    model = MLP(2, [3, 3, 1])
    model.layers[0].neurons[0].activation = "tanh"
    with pytest.raises(ValueError, match="changed after construction"):
        save(model, tmp_path / "m.json")
    model = MLP(2, [3, 1])
    model.layers.append(Layer(1, 2))
    with pytest.raises(ValueError, match="changed after construction"):
        model.config()


@pytest.mark.parametrize(
    "args, kw, error, match",
    [
        ((2, [3, 1]), dict(fused=0), TypeError, "fused must be True or False, got 0"),
        ((2, [3, 1]), dict(fused="yes"), TypeError, "fused"),
        ((2, [3, 1]), dict(activation=1), TypeError, "activation must be a name"),
        ((2, [3, 1]), dict(out_activation=["relu"]), TypeError, "out_activation must be a name"),
        ((2, "31"), {}, TypeError, "nouts as a list of layer sizes"),
        ((2, 3), {}, TypeError, "nouts as a list of layer sizes"),
        ((2, [3, 1.0]), {}, TypeError, r"nouts\[1\]=1.0"),
        ((2, [3, 0]), {}, ValueError, r"nouts\[1\]=0"),
        ((2.0, [3, 1]), {}, TypeError, "MLP needs a whole number of inputs, got nin=2.0"),
        ((0, [3, 1]), {}, ValueError, "nin=0"),
    ],
)
def test_constructor_checks_what_load_checks(args, kw, error, match) -> None:
    with pytest.raises(error, match=match):
        MLP(*args, **kw)


# ---------------------------------------------------------------- the symmetry, as properties

FIXTURE = [HealthCheck.function_scoped_fixture]  # tmp_path is reused: each example overwrites
ACTS = st.sampled_from([*ACTIVATIONS, None])
WEIGHT = st.floats(allow_nan=False, allow_infinity=False)
MODEL = st.fixed_dictionaries(
    {
        "nin": st.integers(1, 4),
        "nouts": st.lists(st.integers(1, 4), min_size=1, max_size=3),
        "activation": ACTS,
        "out_activation": ACTS,
        "fused": st.booleans(),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE)
@given(kw=MODEL, data=st.data())
def test_any_mlp_that_can_be_built_loads_back_bit_identical(tmp_path, kw, data) -> None:
    model = MLP(**kw)
    weights = data.draw(
        st.lists(WEIGHT, min_size=len(model.parameters()), max_size=len(model.parameters()))
    )
    for p, w in zip(model.parameters(), weights):
        p.data = w
    path = tmp_path / "m.json"
    save(model, path)
    loaded = load(path)
    assert [p.data for p in loaded.parameters()] == weights
    assert [math.copysign(1, p.data) for p in loaded.parameters()] == [
        math.copysign(1, w) for w in weights
    ]  # -0.0 stays -0.0
    xs = [data.draw(st.lists(st.floats(-3, 3), min_size=kw["nin"], max_size=kw["nin"]))]
    try:
        want = outputs(model, xs)
    except (OverflowError, ValueError, ZeroDivisionError) as e:  # huge weights: same error
        with pytest.raises(type(e)):
            outputs(loaded, xs)
    else:
        got = outputs(loaded, xs)
        assert [[repr(v) for v in row] for row in got] == [[repr(v) for v in row] for row in want]


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.floats(),
    st.text(max_size=3),
    st.lists(st.integers(-1, 4), max_size=3),
    st.sampled_from(["relu", "tanh", "linear", "gelu"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=FIXTURE)
@given(
    field=st.sampled_from(
        [
            "format",
            "version",
            "nin",
            "nouts",
            "activation",
            "out_activation",
            "fused",
            "weights",
            "extra",
            "drop",
        ]
    ),
    value=ODD,
    weight=st.one_of(st.floats(), st.integers(), st.text(max_size=2)),
)
@pytest.mark.slow
def test_every_file_load_accepts_save_could_have_written(tmp_path, field, value, weight) -> None:
    d = good()
    if field == "drop":
        del d["nin"]
    else:
        d[field] = value
    if isinstance(d.get("weights"), list) and d["weights"]:
        d["weights"][0] = weight
    path = tmp_path / "f.json"
    path.write_text(json.dumps(d))  # NaN and inf are written as NaN / Infinity
    try:
        model = load(path)
    except ValueError as e:
        assert str(e).startswith(f"{path}: not a valid micrograd model file: ")
        return
    again = tmp_path / "again.json"
    save(model, again)
    assert json.loads(again.read_text()) == json.loads(path.read_text())


@pytest.mark.parametrize(
    "kw",
    [
        dict(nouts=[16, 16, 1]),
        dict(nouts=[4, 4, 1], activation="tanh", out_activation="tanh"),
        dict(nouts=[5, 3], activation="sigmoid", out_activation="sigmoid"),
        dict(nouts=[2], fused=False),
        *[dict(nouts=[4, 2], activation=a, out_activation=a) for a in ACTIVATIONS],
    ],
    ids=str,
)
def test_to_torch_same_outputs(kw: dict) -> None:
    random.seed(4)
    model = MLP(3, **kw)
    net = to_torch(model)
    assert isinstance(net, torch.nn.Sequential)
    assert all(p.dtype == torch.float64 for p in net.parameters())
    got = net(torch.tensor(X, dtype=torch.float64)).tolist()
    for row_ours, row_torch in zip(outputs(model), got):
        assert row_ours == pytest.approx(row_torch, rel=1e-12, abs=1e-12)
    assert sum(p.numel() for p in net.parameters()) == len(model.parameters())


def test_an_integer_weight_a_float_cannot_hold_is_refused(tmp_path) -> None:
    # Found by the property test above: 2**53 + 1 would load as 2**53, and save could not write it.
    d = good()
    d["weights"][0] = 2**53 + 1
    path = tmp_path / "f.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"weight 0 is an integer a float cannot hold exactly"):
        load(path)
    d["weights"][0] = 2**53  # exact: fine
    path.write_text(json.dumps(d))
    assert load(path).parameters()[0].data == 2.0**53
