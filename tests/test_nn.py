"""Module, Neuron, Layer, MLP: karpathy's defaults and init order, activations, fused == unfused."""

from __future__ import annotations

import ast
import math
import pathlib
import random

import pytest
import torch

from micrograd import MLP, Layer, Module, Neuron, Value
from tests.support.lecture import torch_layers


def test_parameter_count_of_the_lecture_mlp() -> None:
    assert len(MLP(3, [4, 4, 1]).parameters()) == 41
    assert len(MLP(2, [16, 16, 1]).parameters()) == 337


def test_weights_drawn_like_karpathys_micrograd() -> None:
    random.seed(1337)
    expected = [
        [random.uniform(-1, 1) for _ in range(n_in)] for n_in in [2] * 16 + [16] * 16 + [16]
    ]
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    neurons = [n for layer in model.layers for n in layer.neurons]
    assert [[w.data for w in n.w] for n in neurons] == expected
    assert all(n.b.data == 0.0 for n in neurons)


def test_defaults_relu_hidden_linear_output() -> None:
    model = MLP(2, [3, 1])
    assert repr(model) == (
        "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)], "
        "Layer of [LinearNeuron(3)]]"
    )
    tanh = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
    assert "TanhNeuron(4)" in repr(tanh)
    assert repr(Neuron(2, nonlin=False)) == "LinearNeuron(2)"


def test_layer_returns_a_value_for_one_neuron_and_outputs_always_a_list() -> None:
    layer = Layer(2, 1)
    assert isinstance(layer([1.0, 2.0]), Value)
    assert isinstance(layer.outputs([1.0, 2.0]), list)
    assert len(Layer(2, 3)([1.0, 2.0])) == 3
    model = MLP(2, [1, 2])  # a one-neuron hidden layer still feeds the next layer a list
    assert len(model([1.0, 2.0])) == 2 and len(model.outputs([1.0, 2.0])) == 2


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear", None])
def test_mlp_matches_pytorch(activation) -> None:
    random.seed(3)
    model = MLP(3, [5, 4, 2], activation=activation, out_activation="sigmoid")
    act = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid}.get(
        activation or "linear", lambda t: t
    )
    for layer in model.layers:  # nonzero biases, so the test sees them
        for n in layer.neurons:
            n.b.data += 0.1
    params = torch_layers(model)
    x = [0.5, -1.2, 2.0]
    out = model(x)
    loss = out[0] * 2 + out[1]
    loss.backward()
    h = torch.tensor(x, dtype=torch.float64)
    for i, (W, B) in enumerate(params):
        h = h @ W.T + B
        h = torch.sigmoid(h) if i == len(params) - 1 else act(h)
    tloss = h[0] * 2 + h[1]
    tloss.backward()
    assert math.isclose(loss.data, tloss.item(), rel_tol=1e-12)
    for layer, (W, B) in zip(model.layers, params):
        for j, n in enumerate(layer.neurons):
            for k, w in enumerate(n.w):
                assert math.isclose(w.grad, W.grad[j, k].item(), rel_tol=1e-9, abs_tol=1e-15)
            assert math.isclose(n.b.grad, B.grad[j].item(), rel_tol=1e-9, abs_tol=1e-15)


def test_fused_and_unfused_neurons_agree_bit_for_bit() -> None:
    random.seed(5)
    fused = MLP(3, [4, 4, 1], activation="tanh")
    random.seed(5)
    plain = MLP(3, [4, 4, 1], activation="tanh", fused=False)
    x = [2.0, 3.0, -1.0]
    a, b = fused(x), plain(x)
    a.backward()
    b.backward()
    assert a.data == b.data
    assert [p.grad for p in fused.parameters()] == [p.grad for p in plain.parameters()]
    assert a._op == "dot" and b._op == "+"


def test_zero_grad() -> None:
    model = MLP(2, [3, 1])
    model([1.0, 2.0]).backward()
    assert any(p.grad for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())
    assert Module().parameters() == []


def test_engine_and_nn_import_only_the_standard_library() -> None:
    import sys

    package = pathlib.Path(__file__).resolve().parents[1] / "micrograd"
    for name in ("engine.py", "nn.py", "gradcheck.py", "__init__.py"):
        tree = ast.parse((package / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in sys.stdlib_module_names or root == "__future__", (name, root)


def test_importing_micrograd_imports_no_third_party_package() -> None:
    import subprocess
    import sys

    code = (
        "import sys, micrograd, micrograd.jit\n"
        "heavy = {'numpy', 'torch', 'graphviz', 'matplotlib', 'sklearn', 'tqdm'}\n"
        "heavy &= set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "assert callable(micrograd.jit) and micrograd.jit.jit.__name__ == 'jit'  # the module\n"
    )
    root = pathlib.Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


# ------------------------------------------- named_parameters, state_dict: as a PyTorch user types


def test_named_parameters_name_each_number_by_where_it_sits() -> None:
    random.seed(5)
    model = MLP(2, [3, 1])
    named = model.named_parameters()
    assert [p for _, p in named] == model.parameters()  # the same Values, the same order
    names = [n for n, _ in named]
    assert names[:3] == ["layers.0.neurons.0.w.0", "layers.0.neurons.0.w.1", "layers.0.neurons.0.b"]
    assert names[-1] == "layers.1.neurons.0.b" and len(set(names)) == len(names) == 13
    assert dict(named)["layers.0.neurons.2.w.1"] is model.layers[0].neurons[2].w[1]
    assert Neuron(2).named_parameters()[2][0] == "b" and Module().named_parameters() == []


def test_named_parameters_of_the_gpt_and_of_a_module_of_your_own() -> None:
    from micrograd.gpt import GPT

    model = GPT(vocab_size=5, n_layer=2, n_embd=8, n_head=2, block_size=4)
    named = dict(model.named_parameters())
    assert list(named.values()) == model.parameters()
    assert named["sd.wte.4.7"] is model.sd["wte"][4][7]  # (sd: microgpt's state_dict)
    assert named["sd.layer1.attn_wq.0.3"] is model.sd["layer1.attn_wq"][0][3]
    assert model.state_dict()["sd.lm_head.0.0"] == model.sd["lm_head"][0][0].data

    class Tied(Module):  # one Value listed twice, and a dict of parameters
        def __init__(self) -> None:
            self.shared = Value(1.0)
            self.extra = {"scale": Value(2.0)}

        def parameters(self) -> list[Value]:
            return [self.shared, self.extra["scale"], self.shared]

    assert [n for n, _ in Tied().named_parameters()] == ["shared", "extra.scale"]

    class Hidden(Module):
        def parameters(self) -> list[Value]:
            return [Value(3.0)]  # made on the spot: under no attribute, so it has no name

    with pytest.raises(TypeError, match=r"^named_parameters: parameter 0 of Hidden \(Value"):
        Hidden().named_parameters()


def test_a_state_dict_loaded_gives_the_same_model_and_matches_pytorch() -> None:
    random.seed(7)
    model = MLP(3, [4, 4, 1], activation="tanh")
    state = model.state_dict()
    assert list(state) == [n for n, _ in model.named_parameters()]
    assert all(type(x) is float for x in state.values())
    random.seed(8)
    other = MLP(3, [4, 4, 1], activation="tanh")
    x = [0.5, -1.0, 2.0]
    assert other(x).data != model(x).data
    assert other.load_state_dict(state) == ([], [])  # PyTorch's (missing, unexpected)
    assert other(x).data == model(x).data  # the same bits
    # and PyTorch, given the same numbers, agrees
    out = torch.tensor(x, dtype=torch.float64)
    layers = torch_layers(other)
    for i, (W, B) in enumerate(layers):
        out = W @ out + B
        out = torch.tanh(out) if i < len(layers) - 1 else out  # a linear output layer
    assert math.isclose(out.item(), other(x).data, rel_tol=1e-12)
    values = {k: Value(v) for k, v in state.items()}  # Values are taken by their number
    assert MLP(3, [4, 4, 1], activation="tanh").load_state_dict(values) == ([], [])


def test_load_state_dict_is_strict_by_default_and_changes_nothing_when_it_refuses() -> None:
    random.seed(9)
    small, big = MLP(2, [2, 1]), MLP(3, [2, 1])
    before = [p.data for p in big.parameters()]
    with pytest.raises(ValueError) as raised:
        big.load_state_dict(small.state_dict())  # another model's shape
    message = str(raised.value)
    assert message.startswith("load_state_dict for MLP: missing keys layers.0.neurons.0.w.2, ")
    assert "\n" not in message and "strict=False" in message
    assert [p.data for p in big.parameters()] == before  # nothing half loaded
    state = {**big.state_dict(), "layers.9.neurons.0.b": 1.0}
    with pytest.raises(ValueError, match=r"unexpected keys layers\.9\.neurons\.0\.b"):
        big.load_state_dict(state)
    # strict=False: the names both have, and what was not matched, as PyTorch says it
    state = small.state_dict()
    result = big.load_state_dict(state, strict=False)
    assert result.missing_keys == ["layers.0.neurons.0.w.2", "layers.0.neurons.1.w.2"]
    assert result.unexpected_keys == []
    assert big.layers[1].neurons[0].b.data == state["layers.1.neurons.0.b"]


@pytest.mark.parametrize(
    "bad, error, words",
    [
        ([1.0, 2.0], TypeError, "must be one number"),
        ("0.5", TypeError, "must be one number"),
        (True, TypeError, "must be one number"),
        (math.nan, ValueError, "must be a finite number, got nan"),
        (math.inf, ValueError, "must be a finite number, got inf"),
    ],
)
def test_load_state_dict_refuses_a_value_that_is_not_one_finite_number(bad, error, words) -> None:
    model = MLP(2, [1])
    before = [p.data for p in model.parameters()]
    state = {**model.state_dict(), "layers.0.neurons.0.w.1": bad}
    with pytest.raises(error, match=r"^load_state_dict: 'layers\.0\.neurons\.0\.w\.1' " + words):
        model.load_state_dict(state)
    assert [p.data for p in model.parameters()] == before
    with pytest.raises(TypeError, match="needs a mapping of names to numbers"):
        model.load_state_dict([("layers.0.neurons.0.b", 1.0)])  # type: ignore[arg-type]
