"""The JSON file format of a saved `MLP` (``model.save(path)``, ``MLP.load(path)``).

`torch_sequential` builds the PyTorch twin of an MLP for ``MLP.to_torch()``.

The file is plain JSON a learner can open: the constructor arguments (``nin``, ``nouts``,
``activation``, ``out_activation``, ``fused``) and the weights in `model.parameters()` order, as
floats written with `repr` (which round-trips exactly, so a loaded model computes bit-identical
outputs). It is written with `atomic_write`. `read` checks everything `save` guarantees, so a file
is accepted exactly when `save` could have written it; anything else is a ValueError naming the
file and what is wrong. This module knows the format only; `nn.MLP` builds the model.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

from .atomic import atomic_write

FORMAT = "micrograd-mlp"
VERSION = 1
FIELDS = ("format", "version", "nin", "nouts", "activation", "out_activation", "fused", "weights")


def save(path: str | os.PathLike, config: dict[str, Any], weights: list[float]) -> None:
    """Write a model file: `config` (an MLP's constructor arguments) and its finite `weights`."""
    d = {"format": FORMAT, "version": VERSION, **config, "weights": weights}
    atomic_write(path, json.dumps(d, indent=1, allow_nan=False) + "\n")


def bad_file(path: object, why: str) -> ValueError:
    """The error for a file that is not a valid model file."""
    return ValueError(f"{os.fspath(path)}: not a valid micrograd model file: {why}")  # type: ignore[call-overload]


class _Refused(Exception):
    """Raised from inside the JSON parser: the file holds something `save` never writes."""


def _no_constant(name: str) -> float:
    raise _Refused(f"{name} is not a number a model file can hold (save never writes it)")


def _int(text: str) -> int:
    if len(text) > 400:  # beyond any float: do not let int() parse thousands of digits
        raise _Refused(f"the number {text[:20]}... ({len(text)} digits) is too large for a float")
    return int(text)


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise _Refused(f"the number {text[:40]} is too large for a float")
    return x


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = [k for k, _ in pairs]
        raise _Refused(f"field {next(k for k in seen if seen.count(k) > 1)!r} appears twice")
    return d


def _positive_int(x: object) -> bool:
    return type(x) is int and x >= 1


def read(path: str | os.PathLike) -> tuple[dict[str, Any], list[float]]:
    """A model file's constructor arguments and weights, checked. ValueError for a bad file."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad_file(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        d = json.loads(
            text,
            parse_constant=_no_constant,
            parse_int=_int,
            parse_float=_float,
            object_pairs_hook=_object,
        )
    except _Refused as e:
        raise bad_file(path, str(e)) from None
    except json.JSONDecodeError as e:
        raise bad_file(path, f"bad JSON ({e})") from None
    except RecursionError:
        raise bad_file(path, "JSON nested too deeply (a model file is one flat object)") from None
    except ValueError as e:  # anything else the parser meets
        raise bad_file(path, f"bad JSON ({e})") from None
    return _check(d, path)


def _check(d: object, path: str) -> tuple[dict[str, Any], list[float]]:
    if not isinstance(d, dict):
        raise bad_file(path, f"expected a JSON object, got {type(d).__name__}")
    for key in FIELDS:
        if key not in d:
            raise bad_file(path, f"missing field {key!r}")
    extra = [k for k in d if k not in FIELDS]
    if extra:
        raise bad_file(path, f"unknown field {extra[0]!r}")
    if d["format"] != FORMAT:
        raise bad_file(path, f"format is {d['format']!r}, expected {FORMAT!r}")
    if type(d["version"]) is not int or d["version"] != VERSION:
        raise bad_file(path, f"version {d['version']!r} is not supported (this reads {VERSION})")
    nin, nouts, weights = d["nin"], d["nouts"], d["weights"]
    if not _positive_int(nin):
        raise bad_file(path, f"nin must be a positive integer, got {nin!r}")
    if not isinstance(nouts, list) or not nouts or not all(_positive_int(n) for n in nouts):
        raise bad_file(path, f"nouts must be a non-empty list of positive integers, got {nouts!r}")
    for key in ("activation", "out_activation"):
        if not isinstance(d[key], str):
            raise bad_file(path, f"{key} must be a name like 'relu', got {d[key]!r}")
    if not isinstance(d["fused"], bool):
        raise bad_file(path, f"fused must be true or false, got {d['fused']!r}")
    if not isinstance(weights, list):
        raise bad_file(path, f"weights must be a list, got {type(weights).__name__}")
    sizes = [nin, *nouts]
    expected = sum((sizes[i] + 1) * sizes[i + 1] for i in range(len(nouts)))
    if len(weights) != expected:
        raise bad_file(
            path,
            f"wrong number of weights: {len(weights)}, but an MLP({nin}, {nouts}) has {expected}",
        )
    floats = []
    for i, w in enumerate(weights):
        if type(w) not in (int, float):
            raise bad_file(path, f"weight {i} is not a number: {w!r}")
        try:
            x = float(w)
        except OverflowError:
            raise bad_file(path, f"weight {i} is too large for a float: {w!r}") from None
        if type(w) is int and x != w:  # save writes floats: it could never have written this
            raise bad_file(path, f"weight {i} is an integer a float cannot hold exactly: {w!r}")
        floats.append(x)
    config = {k: d[k] for k in ("nin", "nouts", "activation", "out_activation", "fused")}
    return config, floats


def torch_sequential(layers: list[tuple[list[list[float]], list[float], Callable]]) -> Any:
    """A float64 `torch.nn.Sequential` of Linear layers (weights W, row j = neuron j; biases b),
    each followed by its activation's module: ``(W, b, module)`` per layer, where
    ``module(torch)`` makes it (None: linear; `nn.Activation.torch_module`)."""
    try:
        import torch
    except ImportError:
        raise ImportError('to_torch needs PyTorch: pip install -e ".[export]"') from None
    f64 = torch.float64  # torch.tensor of Python floats is float32 unless told
    modules: list[Any] = []
    for W, b, module in layers:
        linear = torch.nn.Linear(len(W[0]), len(W), dtype=f64)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(W, dtype=f64))
            linear.bias.copy_(torch.tensor(b, dtype=f64))
        modules.append(linear)
        act = module(torch)
        if act is not None:
            modules.append(act)
    return torch.nn.Sequential(*modules)
