"""A small neural-network library on top of `Value`: Module, Neuron, Layer, MLP.

karpathy's micrograd `nn.py`, with his defaults (ReLU hidden layers, a linear output, weights drawn
from ``random.uniform(-1, 1)`` in the same order, bias 0) so a seeded run reproduces his demo, plus:
a choice of activation (``MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')`` is the
lecture's all-tanh net), a fused neuron (one `Value.dot` node instead of 2n; ``fused=False`` draws
the lecture's unfused graph), and clear errors for inputs of the wrong size. An `MLP` checks its
constructor arguments and describes them (`config`), which is what `micrograd.io` saves, loads
and exports (nn imports nothing above the engine).
"""

from __future__ import annotations

import numbers
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .core.registry import array_module, by_method
from .engine import OPS, Operand, OpInfo, Value

# The ops a neuron may use as its activation, keyed by op name: the title a neuron's repr shows
# (ReLUNeuron(3)) and what it computes, as the training page shows it. Every activation a Neuron
# or MLP takes is one of these ops, or linear (tests/test_op_tables.py holds it to the registry).
ACTIVATION_OPS: dict[str, tuple[str, str]] = {
    "ReLU": ("ReLU", "max(0, x)"),
    "tanh": ("Tanh", "(e²ˣ − 1)/(e²ˣ + 1)"),
    "sigmoid": ("Sigmoid", "1/(1 + e⁻ˣ)"),
    "abs": ("Abs", "|x|"),
    "softplus": ("Softplus", "log(1 + eˣ)"),
}


@dataclass(frozen=True)
class Activation:
    """A neuron's nonlinearity: the Value method, and the same function for numpy (its op's
    forward rule, from the engine's registry, so there is one definition of each)."""

    name: str  # as MLP(..., activation=name) takes it: the Value method's name
    title: str  # how a neuron's repr names it: ReLUNeuron(3)
    equation: str  # what it computes, as the training page shows it: 'max(0, x)'
    apply: Callable[[Value], Value] | None  # the Value method; None: linear (the identity)

    @property
    def op(self) -> OpInfo | None:
        """The engine op this activation is (None for linear)."""
        return None if self.apply is None else by_method(self.name)

    def numpy(self, np: Any, a: Any) -> Any:
        """The activation of every entry of the array `a` (`np` is numpy): the op's own forward
        rule, the same numbers as the Value method gives."""
        op = self.op
        return a if op is None else op.forward(_array_module(np), a)  # type: ignore[misc]


_ARRAY_MODULES: dict[int, Any] = {}


def _array_module(np: Any) -> Any:
    if id(np) not in _ARRAY_MODULES:
        _ARRAY_MODULES[id(np)] = array_module(np)
    return _ARRAY_MODULES[id(np)]


class _Activations(Mapping):
    """Every activation by name, read live from `ACTIVATION_OPS` and the op registry (one
    added later is found too), and 'linear', the identity."""

    def _all(self) -> dict[str, Activation]:
        acts = {}
        for kind, (title, equation) in ACTIVATION_OPS.items():
            method = OPS[kind].method
            name = method.__name__  # apply: the method as Value has it (core/fast.py's, if any)
            acts[name] = Activation(name, title, equation, getattr(Value, name))
        acts["linear"] = Activation("linear", "Linear", "x", None)
        return acts

    def __getitem__(self, name: str) -> Activation:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


# Every activation a Neuron or MLP takes, by name (the Value method's): Neuron, its repr,
# io.to_torch, the plots, the demo's --activation and the playground's menu all read this map.
ACTIVATIONS: Mapping[str, Activation] = _Activations()


def _activation(name: str | None) -> str:
    name = "linear" if name is None else name
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}")
    return name


def _count(n: object, who: str, name: str, what: str) -> int:
    # Any integer type (numpy's included) is fine; a float or a string is a mistake worth naming.
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{who} needs a whole number of {what}, got {name}={n!r}")
    if n < 1:
        raise ValueError(f"{who} needs a positive number of {what}, got {name}={n!r}")
    return int(n)


class Module:
    """Anything with parameters: `parameters()` lists them, `zero_grad()` resets their grads;
    as in PyTorch, `named_parameters()` names them, `state_dict()` / `load_state_dict()` save
    and restore their numbers."""

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        return []

    def named_parameters(self) -> list[tuple[str, Value]]:
        """(name, parameter) for each of `parameters()`, in its order (a parameter listed twice,
        once), named as PyTorch names them: the attributes and list indices that lead to it,
        joined by dots. ``MLP(2, [3, 1])``: 'layers.0.neurons.1.w.0' is the first weight of the
        second neuron of the first layer, 'layers.0.neurons.1.b' its bias; one name per number,
        since a micrograd parameter is one number (docs/pytorch.md)."""
        names = _parameter_names(self)
        named, seen = [], set()
        for i, p in enumerate(self.parameters()):
            if p in seen:
                continue
            seen.add(p)
            if id(p) not in names:
                raise TypeError(
                    f"named_parameters: parameter {i} of {type(self).__name__} ({p!r}) is not "
                    f"found under its attributes (a Value, a Module, or a list, tuple or dict "
                    f"of them), so it has no name"
                )
            named.append((names[id(p)], p))
        return named

    def state_dict(self) -> dict[str, float]:
        """Every parameter's number by its name (`named_parameters`): what `load_state_dict`
        puts back. Plain floats: ``json.dump(model.state_dict(), f)`` saves it."""
        return {name: p.data for name, p in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Set each parameter's number from `state` (a `state_dict()`: name -> number or Value).
        Strict (the default): every name must be there and no other, else a ValueError naming
        them, and nothing is changed; a value that is not one finite number is refused by name.
        ``strict=False`` loads the names both have. Returns the missing and unexpected names."""
        if not isinstance(state, Mapping):
            raise TypeError(
                f"load_state_dict needs a mapping of names to numbers (a state_dict()), "
                f"got {type(state).__name__}"
            )
        params = dict(self.named_parameters())
        missing = [k for k in params if k not in state]
        unexpected = [str(k) for k in state if k not in params]
        if strict and (missing or unexpected):
            why = [f"missing keys {_few(missing)}"] if missing else []
            why += [f"unexpected keys {_few(unexpected)}"] if unexpected else []
            raise ValueError(
                f"load_state_dict for {type(self).__name__}: {'; '.join(why)} (another "
                f"model's shape? strict=False loads the names both have)"
            )
        numbers = {k: _state_number(k, state[k]) for k in params if k in state}
        for k, x in numbers.items():  # every number checked first: nothing half loaded
            params[k].data = x
        return IncompatibleKeys(missing, unexpected)


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict` did not match, as PyTorch's: names the model has that `state`
    lacks, and names in `state` the model has not."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def _parameter_names(module: Module) -> dict[int, str]:
    """id(Value) -> its dotted name, for every Value under `module`'s attributes (through
    Modules, lists, tuples and dicts); the first path that reaches a Value names it."""
    names: dict[int, str] = {}
    seen: set[int] = set()
    todo: list[tuple[str, object]] = [("", module)]
    while todo:
        path, obj = todo.pop()
        if isinstance(obj, Value):
            names.setdefault(id(obj), path)
            continue
        if id(obj) in seen:
            continue
        if isinstance(obj, Module):
            items: list[tuple[object, object]] = list(vars(obj).items())
        elif isinstance(obj, (list, tuple)):
            items = list(enumerate(obj))
        elif isinstance(obj, dict):
            items = list(obj.items())
        else:
            continue
        seen.add(id(obj))
        for key, child in reversed(items):  # (a stack: the first attribute is named first)
            todo.append((f"{path}.{key}" if path else str(key), child))
    return names


def _few(keys: list[str], shown: int = 3) -> str:
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more


def _state_number(key: str, x: object) -> float:
    """A state_dict's entry as a parameter's number: a finite real number, or a Value's."""
    number = x.data if isinstance(x, Value) else x
    if isinstance(number, bool) or not isinstance(number, numbers.Real):
        raise TypeError(
            f"load_state_dict: {key!r} must be one number (a micrograd parameter is one "
            f"number), got {type(x).__name__} {x!r:.60}"
        )
    number = float(number)
    if number - number != 0.0:  # NaN or ±inf
        raise ValueError(f"load_state_dict: {key!r} must be a finite number, got {number!r}")
    return number


class Neuron(Module):
    """activation(w · x + b): `nin` weights drawn uniformly from [-1, 1], bias 0.

    `nonlin=False` (karpathy's flag) makes it linear; otherwise `activation` picks the nonlinearity.
    `fused=True` computes w · x + b as one `Value.dot` node; `fused=False` builds the lecture's
    chain of `*` and `+` nodes (same numbers, a bigger picture).
    """

    def __init__(
        self, nin: int, nonlin: bool = True, activation: str = "relu", fused: bool = True
    ) -> None:
        nin = _count(nin, "Neuron", "nin", "inputs")
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin
        self.activation = activation if nonlin else "linear"
        self.fused = fused

    @property
    def activation(self) -> str:
        """The activation's name, a key of `ACTIVATIONS`."""
        return self._activation

    @activation.setter
    def activation(self, name: str) -> None:
        self._activation = _activation(name)
        self._apply = ACTIVATIONS[self._activation].apply  # looked up once, not per call

    def __call__(self, x: Sequence[Operand]) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"{self!r} expects {len(self.w)} inputs, got {len(x)}")
        if self.fused:
            act = Value.dot(self.w, x, self.b)
        else:
            act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        apply = self._apply
        return act if apply is None else apply(act)

    def parameters(self) -> list[Value]:
        return self.w + [self.b]

    def __repr__(self) -> str:
        return f"{ACTIVATIONS[self.activation].title}Neuron({len(self.w)})"


class Layer(Module):
    """`nout` independent neurons reading the same `nin` inputs.

    Calling it returns a list of `nout` Values, except that a one-neuron layer returns its Value
    alone (karpathy's convenience, so ``MLP(...)(x)`` is a Value); `outputs(x)` always gives a list.
    """

    def __init__(self, nin: int, nout: int, **kwargs: object) -> None:
        nout = _count(nout, "Layer", "nout", "neurons")
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def outputs(self, x: Sequence[Operand]) -> list[Value]:
        # Lift plain numbers once here, not once per neuron.
        x = [xi if isinstance(xi, Value) else Value(xi) for xi in x]
        return [n(x) for n in self.neurons]

    def __call__(self, x: Sequence[Operand]) -> Value | list[Value]:
        out = self.outputs(x)
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: ``MLP(3, [4, 4, 1])`` maps 3 inputs through layers of 4, 4 and 1.

    Hidden layers use `activation` (default ReLU, as in karpathy's micrograd); the last layer uses
    `out_activation` (default linear). ``MLP(3, [4, 4, 1], activation='tanh',
    out_activation='tanh')`` is the lecture's network. `fused=False` builds unfused neurons.
    Every argument is checked here, so any MLP that can be built can be saved and loaded back.
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        activation: str | None = "relu",
        out_activation: str | None = None,
        fused: bool = True,
    ) -> None:
        nin = _count(nin, "MLP", "nin", "inputs")
        if isinstance(nouts, (str, bytes)) or not hasattr(nouts, "__iter__"):
            raise TypeError(f"MLP needs nouts as a list of layer sizes like [4, 1], got {nouts!r}")
        nouts = [_count(n, "MLP", f"nouts[{i}]", "neurons") for i, n in enumerate(nouts)]
        if not nouts:
            raise ValueError("MLP needs at least one layer size in nouts, got []")
        for name, act in (("activation", activation), ("out_activation", out_activation)):
            if act is not None and not isinstance(act, str):
                raise TypeError(f"MLP: {name} must be a name like 'relu' or None, got {act!r}")
        if not isinstance(fused, bool):
            raise TypeError(f"MLP: fused must be True or False, got {fused!r}")
        hidden, last = _activation(activation), _activation(out_activation)
        self._config: dict[str, Any] = {
            "nin": nin,
            "nouts": nouts,
            "activation": hidden,
            "out_activation": last,
            "fused": fused,
        }
        sz = [nin] + nouts
        self.layers = [
            Layer(sz[i], sz[i + 1], activation=last if i == len(nouts) - 1 else hidden, fused=fused)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Operand]) -> Value | list[Value]:
        out = self.outputs(x)
        return out[0] if len(out) == 1 else out

    def outputs(self, x: Sequence[Operand]) -> list[Value]:
        """The last layer's outputs, always as a list."""
        for layer in self.layers[:-1]:
            x = layer.outputs(x)
        return self.layers[-1].outputs(x)

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"

    def config(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this MLP's shape: ``MLP(**m.config())``.

        A ValueError if its layers or neurons were swapped or changed after construction, since
        then no constructor call describes it.
        """
        c = self._config
        sizes = [c["nin"], *c["nouts"]]
        for i, layer in enumerate(self.layers if len(self.layers) == len(c["nouts"]) else [None]):
            act = c["out_activation"] if i == len(c["nouts"]) - 1 else c["activation"]
            if (
                layer is None
                or len(layer.neurons) != sizes[i + 1]
                or any(
                    len(n.w) != sizes[i] or n.activation != act or n.fused is not c["fused"]
                    for n in layer.neurons
                )
            ):
                raise ValueError(
                    "this MLP is no longer described by its constructor arguments "
                    f"(MLP({c['nin']}, {c['nouts']}, ...)): its layers or neurons were changed "
                    "after construction"
                )
        return {**c, "nouts": list(c["nouts"])}
