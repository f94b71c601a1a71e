"""micrograd: a scalar autograd engine and a tiny neural-network library, for learning backprop.

    from micrograd import Value
    a, b = Value(2.0, label='a'), Value(-3.0, label='b')
    L = (a * b + 10.0) * -2.0
    L.backward()           # a.grad == 6.0, b.grad == -4.0

Public API:
    Value               a scalar that remembers how it was computed (micrograd.engine)
    grad                gradients returned instead of stored; create_graph=True for 2nd order
    Module, Neuron, Layer, MLP                                          (micrograd.nn)
    gradcheck, numerical_grad          central finite differences (micrograd.gradcheck)
                        (micrograd.gradcheck is the function, as torch.autograd.gradcheck is;
                        its module's other names: from micrograd.gradcheck import analytic_grad)
    jit                 trace per-sample code once, replay it on a batch (micrograd.jit)
    micrograd.viz       trace, draw_dot, render_text: see the computation graph
    check               what is wrong with your own Value / Neuron / Layer / MLP (micrograd.check)
"""

import importlib
from typing import Any

from . import jit  # the module, callable; it imports numpy only when jit() is first called
from .engine import Value, grad
from .gradcheck import gradcheck, numerical_grad
from .nn import MLP, Layer, Module, Neuron

__all__ = [
    "Value",
    "grad",
    "gradcheck",
    "numerical_grad",
    "Module",
    "Neuron",
    "Layer",
    "MLP",
    "jit",
    "check",
]

# Loaded on first use: the learner checker is half of the package's import time, and most
# programs never call it. `micrograd.check(...)` and `from micrograd import check` still work.
_LAZY = ("check",)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.2.0"  # the one place: pyproject.toml reads it (dynamic version)
