"""The learner's own engine, for their training step: the classes the step's code names
(`Value(0.0)`, `Value(yt)`), the MLP its notebook defines, and the lecture's MLP built from any
Value class, so `check(train_step=...)` never runs a learner's step on a foreign engine."""

from __future__ import annotations

import random
import types
from collections.abc import Callable
from typing import Any

from ..engine import Value
from ..nn import MLP


def class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def named_classes(fn: Callable[..., Any]) -> dict[str, type]:
    """The classes the step's code names (in itself, its nested functions and generator
    expressions), found in its closure and its module's globals."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    names: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        names.update(c.co_freevars)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    scope = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return {n: scope[n] for n in sorted(names) if isinstance(scope.get(n), type)}


def learners_value(named: dict[str, type]) -> type | None:
    """The learner's Value class among those the step names: one whose instances have data,
    grad and _prev (micrograd's own counts too: then micrograd's MLP is the engine)."""
    for cls in named.values():
        if cls is Value:
            return Value
        if all(hasattr(cls, a) for a in ("backward",)) and not issubclass(cls, BaseException):
            try:
                v = cls(1.0)
            except Exception:  # not a Value class after all: whatever it raised
                continue
            if all(hasattr(v, a) for a in ("data", "grad", "_prev")):
                return cls
    return None


def learners_mlp(fn: Callable[..., Any]) -> type | None:
    """The MLP class of the step's own module (a notebook's MLP), if it is not micrograd's."""
    cls = getattr(fn, "__globals__", {}).get("MLP")
    if isinstance(cls, type) and cls is not MLP and not cls.__module__.startswith("micrograd"):
        return cls
    return None


class LectureMLP:
    """The lecture's MLP, tanh throughout, built from any Value class: what a learner's step
    runs on when their engine is known but their MLP is not. Weights and biases U(-1, 1)."""

    def __init__(self, V: type, nin: int, nouts: list[int]) -> None:
        sizes = [nin, *nouts]
        self.layers = [
            [
                ([V(random.uniform(-1, 1)) for _ in range(a)], V(random.uniform(-1, 1)))
                for _ in range(b)
            ]
            for a, b in zip(sizes, sizes[1:])
        ]

    def __call__(self, x: list[Any]) -> Any:
        for layer in self.layers:
            outs = []
            for w, b in layer:
                act = b
                for wi, xi in zip(w, x):
                    act = act + wi * xi
                outs.append(act.tanh())
            x = outs
        return x[0] if len(x) == 1 else x

    def parameters(self) -> list[Any]:
        return [p for layer in self.layers for w, b in layer for p in (*w, b)]

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0
