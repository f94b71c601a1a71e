"""Fixtures shared by several test files: the lecture's L = (a*b + c)*f graph, the golden text
view of it (also printed in the README), and an MLP's weights as PyTorch tensors."""

from __future__ import annotations

from micrograd.engine import Value
from micrograd.nn import MLP


def build_L() -> tuple[Value, Value, Value, Value, Value, Value, Value]:
    """a, b, c, d, e, f, L with the lecture's labels; L = (a*b + c) * f, before backward()."""
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    c = Value(10.0, label="c")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    f = Value(-2.0, label="f")
    L = d * f
    L.label = "L"
    return a, b, c, d, e, f, L


GOLDEN_L = """\
L | data -8.0000 | grad 1.0000 | prev { * [d f] }
--------------------------------------------------
d | data 4.0000 | grad -2.0000 | prev { + [e c] }
f | data -2.0000 | grad 4.0000
--------------------------------------------------
e | data -6.0000 | grad -2.0000 | prev { * [a b] }
c | data 10.0000 | grad -2.0000
--------------------------------------------------
a | data 2.0000 | grad 6.0000
b | data -3.0000 | grad -4.0000
--------------------------------------------------
"""


def torch_layers(model: MLP) -> list:
    """(W, B) float64 leaf tensors per layer, holding `model`'s current weights and biases."""
    import torch

    def leaf(data: list) -> torch.Tensor:
        return torch.tensor(data, dtype=torch.float64, requires_grad=True)

    return [
        (
            leaf([[w.data for w in n.w] for n in layer.neurons]),
            leaf([n.b.data for n in layer.neurons]),
        )
        for layer in model.layers
    ]
