"""Saving and loading an `MLP` as JSON, and exporting it to PyTorch.

    model.save("model.json")           # or io.save(model, path)
    model = MLP.load("model.json")     # or io.load(path)
    net = model.to_torch()             # a float64 torch.nn.Sequential giving the same outputs

The file is plain JSON a learner can open: the architecture (``nin``, ``nouts``, ``activation``,
``out_activation``, ``fused``) and the weights in `model.parameters()` order. Floats are written
with `repr`, which round-trips exactly, so a loaded model computes bit-identical outputs. Saving is
atomic (a temporary file in the same directory, then `os.replace`), so a save that fails half way
leaves any previous file intact. A file that is not one of ours, or does not fit its own
architecture, is a `ValueError` saying what is wrong.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import random
import tempfile
from typing import Any

from .nn import ACTIVATIONS, MLP, Module

FORMAT = "micrograd-mlp"
VERSION = 1


def architecture(model: MLP) -> dict[str, Any]:
    """The constructor arguments that rebuild `model`'s shape (read from its layers)."""
    if not isinstance(model, MLP):
        raise TypeError(f"save/to_torch support MLP models, got {type(model).__name__}")
    layers = model.layers
    first = layers[0].neurons[0]
    hidden = {n.activation for layer in layers[:-1] for n in layer.neurons}
    out = {n.activation for n in layers[-1].neurons}
    fused = {n.fused for layer in layers for n in layer.neurons}
    if len(hidden) > 1 or len(out) > 1 or len(fused) > 1:
        raise ValueError(
            "cannot describe this MLP by its constructor arguments: its neurons were changed "
            f"after construction (hidden activations {sorted(hidden)}, output {sorted(out)})"
        )
    return {
        "nin": len(first.w),
        "nouts": [len(layer.neurons) for layer in layers],
        "activation": hidden.pop() if hidden else "relu",
        "out_activation": out.pop(),
        "fused": fused.pop(),
    }


def to_dict(model: MLP) -> dict[str, Any]:
    for i, p in enumerate(model.parameters()):
        if not math.isfinite(p.data):  # JSON has no NaN or inf: refuse rather than write non-JSON
            raise ValueError(f"cannot save: weight {i} is {p.data!r} (training diverged?)")
    return {
        "format": FORMAT,
        "version": VERSION,
        **architecture(model),
        "weights": [p.data for p in model.parameters()],
    }


def save(model: Module, path: str | os.PathLike) -> None:
    """Write `model` to `path` as JSON, atomically: the old file survives a failed save."""
    text = json.dumps(to_dict(model), indent=1)  # type: ignore[arg-type]
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot save {path}: the folder {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".micrograd-", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; give it a normal file's mode
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _bad(path: object, why: str) -> ValueError:
    return ValueError(f"{path}: not a valid micrograd model file: {why}")


def from_dict(d: object, where: object = "model") -> MLP:
    """Rebuild an MLP from `to_dict`'s output, checking every field."""
    if not isinstance(d, dict):
        raise _bad(where, f"expected a JSON object, got {type(d).__name__}")
    if d.get("format") != FORMAT:
        raise _bad(where, f"format is {d.get('format')!r}, expected {FORMAT!r}")
    if d.get("version") != VERSION:
        raise _bad(where, f"version {d.get('version')!r} is not supported (this reads {VERSION})")
    for key in ("nin", "nouts", "activation", "out_activation", "fused", "weights"):
        if key not in d:
            raise _bad(where, f"missing field {key!r}")
    nin, nouts, weights = d["nin"], d["nouts"], d["weights"]
    if isinstance(nin, bool) or not isinstance(nin, int) or nin < 1:
        raise _bad(where, f"nin must be a positive integer, got {nin!r}")
    if not isinstance(nouts, list) or not nouts or any(
        isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in nouts
    ):
        raise _bad(where, f"nouts must be a non-empty list of positive integers, got {nouts!r}")
    if not isinstance(d["fused"], bool):
        raise _bad(where, f"fused must be true or false, got {d['fused']!r}")
    if not isinstance(weights, list):
        raise _bad(where, f"weights must be a list, got {type(weights).__name__}")
    sizes = [nin] + nouts
    expected = sum((sizes[i] + 1) * sizes[i + 1] for i in range(len(nouts)))
    if len(weights) != expected:
        raise _bad(
            where,
            f"wrong number of weights: {len(weights)}, but an MLP({nin}, {nouts}) has {expected}",
        )
    for i, w in enumerate(weights):
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            raise _bad(where, f"weight {i} is not a number: {w!r}")
    # Building an MLP draws random weights; keep the caller's random stream untouched.
    state = random.getstate()
    try:
        model = MLP(nin, nouts, d["activation"], d["out_activation"], fused=d["fused"])
    except (TypeError, ValueError) as e:
        raise _bad(where, str(e)) from None
    finally:
        random.setstate(state)
    for i, (p, w) in enumerate(zip(model.parameters(), weights)):
        try:
            p.data = float(w)
        except OverflowError:
            raise _bad(where, f"weight {i} is too large for a float: {w!r}") from None
    return model


def load(path: str | os.PathLike) -> MLP:
    """Read a model written by `save`. A ValueError says what is wrong with a bad file."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _bad(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(path, f"bad JSON ({e})") from None
    return from_dict(d, path)


def to_torch(model: Module) -> Any:
    """A `torch.nn.Sequential` (float64) computing the same function as `model`.

    Linear layers hold the weights (row j of a layer's weight matrix is neuron j's `w`), followed
    by the activation's module (`nn.ACTIVATIONS`) where the MLP has one.
    """
    try:
        import torch
    except ImportError:
        raise ImportError("to_torch needs PyTorch: pip install micrograd-plus[export]") from None
    arch = architecture(model)  # type: ignore[arg-type]
    modules: list[Any] = []
    n = len(model.layers)  # type: ignore[attr-defined]
    for i, layer in enumerate(model.layers):  # type: ignore[attr-defined]
        nin, nout = len(layer.neurons[0].w), len(layer.neurons)
        linear = torch.nn.Linear(nin, nout, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(
                torch.tensor([[w.data for w in nr.w] for nr in layer.neurons], dtype=torch.float64)
            )
            linear.bias.copy_(
                torch.tensor([nr.b.data for nr in layer.neurons], dtype=torch.float64)
            )
        modules.append(linear)
        act = ACTIVATIONS[arch["out_activation"] if i == n - 1 else arch["activation"]]
        module = act.torch_module(torch)
        if module is not None:  # None: linear
            modules.append(module)
    return torch.nn.Sequential(*modules)
