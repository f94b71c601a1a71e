"""Saving, loading and exporting an `MLP` or a `GPT`: ``save(model, path)``, ``load(path)``, the
same as text (``dumps(model)``, ``loads(text)``), and ``to_torch(model)``, its PyTorch twin.

    from micrograd.io import load, save, to_torch
    save(model, 'moons.json')       # atomic: a failed save leaves the old file as it was
    model = load('moons.json')      # bit-identical weights

`nn` knows nothing of this module (the library core imports nothing above it): this module builds
the model from its constructor arguments, `MLP(**config)`.

The file is plain JSON a learner can open: the constructor arguments (an MLP's ``nin``,
``nouts``, ``activation``, ``out_activation``, ``fused``; a GPT's ``vocab_size``, ``n_layer``,
``n_embd``, ``n_head``, ``block_size``) and the weights in `model.parameters()` order, as
floats written with `repr` (which round-trips exactly, so a loaded model computes bit-identical
outputs). It is written with `atomic_write`. `load` checks everything `save` guarantees, so a file
is accepted exactly when `save` could have written it; anything else is a ValueError naming the
file and what is wrong. `load` reads at most `MAX_FILE_BYTES` (8 MiB, a network of about 400,000
weights; building it takes about 60 times the file's size in memory): a larger file, or a device
that never ends (/dev/zero), is refused before it is read.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

from .core.atomic import atomic_write
from .gpt import GPT, LAYER, Tokenizer
from .nn import ACTIVATIONS, MLP

FORMAT = "micrograd-mlp"
VERSION = 1
MAX_FILE_BYTES = 8 * 1024 * 1024  # what `load` reads at most (see above)
FIELDS = ("format", "version", "nin", "nouts", "activation", "out_activation", "fused", "weights")
GPT_FORMAT = "micrograd-gpt"  # a GPT's file: its constructor arguments (GPT_SIZES) and weights
GPT_SIZES = ("vocab_size", "n_layer", "n_embd", "n_head", "block_size")
GPT_VERSION = 2  # version 2 adds "chars", its tokenizer's characters (1: none, still read)


def dumps(model: MLP | GPT, what: str = "the model", tokenizer: Tokenizer | None = None) -> str:
    """The model as the text of a model file: constructor arguments and weights, as JSON; a GPT
    with its `tokenizer`, its characters too (``"chars"``, version 2), so that `load_gpt` gives
    both back and the model samples without its word list.

    A ValueError if a weight is NaN or infinite (JSON has no such numbers; training diverged?)."""
    if not isinstance(model, (MLP, GPT)):
        raise TypeError(
            f"only an MLP or a GPT can be saved: its constructor arguments describe it, got a "
            f"{type(model).__name__}; wrap your layers in an MLP"
        )
    weights = [p.data for p in model.parameters()]
    for i, w in enumerate(weights):
        if not math.isfinite(w):  # refuse rather than write a file load would refuse
            raise ValueError(f"cannot save {what}: weight {i} is {w!r} (training diverged?)")
    kind = FORMAT if isinstance(model, MLP) else GPT_FORMAT
    d = {"format": kind, "version": VERSION, **model.config(), "weights": weights}
    if tokenizer is not None:
        if not isinstance(model, GPT) or not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"cannot save {what}: a tokenizer goes with a GPT, as a Tokenizer")
        if tokenizer.vocab_size != model.vocab_size:
            raise ValueError(
                f"cannot save {what}: its tokenizer has {tokenizer.vocab_size} tokens, the GPT "
                f"{model.vocab_size}"
            )
        del d["weights"]  # (then after the characters: the file reads sizes, chars, weights)
        d = {**d, "version": GPT_VERSION, "chars": "".join(tokenizer.chars), "weights": weights}
    return json.dumps(d, indent=1, allow_nan=False) + "\n"


def save(model: MLP | GPT, path: str | os.PathLike, tokenizer: Tokenizer | None = None) -> None:
    """Write `model` (a GPT with its `tokenizer`, if given) to `path` as JSON, atomically:
    ``load(path)`` reads it back with bit-identical weights. A ValueError if a weight is NaN or
    infinite; an OSError naming `path` if it cannot be written (the old file, if any, is left as
    it was)."""
    atomic_write(path, dumps(model, os.fspath(path), tokenizer))


def load(path: str | os.PathLike) -> MLP | GPT:
    """The MLP or GPT saved at `path`. Any problem with the file's contents is a ValueError naming
    `path` and what is wrong; a file that cannot be read at all is the OSError `open` raises
    (FileNotFoundError, PermissionError, ...), which names it too."""
    return loads(_read(path), os.fspath(path))


def load_gpt(path: str | os.PathLike) -> tuple[GPT, Tokenizer | None]:
    """The GPT saved at `path` and, from the same file, its tokenizer: ``(model, tokenizer)``. A
    file saved before GPT files carried their characters gives ``(model, None)``: build its
    tokenizer from the word list it was trained on, ``Tokenizer(docs)``. A file that holds no GPT
    (an MLP's) is a ValueError saying so in one line, as is any other bad file."""
    path = os.fspath(path)
    model, chars = _load(_read(path), path)
    if not isinstance(model, GPT):
        raise bad_file(path, "it holds an MLP, not a GPT")
    return model, None if chars is None else Tokenizer([chars])


def _read(path: str | os.PathLike) -> str:
    path = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size  # a regular file's size: refused before reading it
        if size > MAX_FILE_BYTES:
            raise bad_file(
                path,
                f"it is {size:,} bytes; a model file is at most "
                f"{MAX_FILE_BYTES:,} (micrograd.io.MAX_FILE_BYTES)",
            )
        raw = f.read(MAX_FILE_BYTES + 1)  # a pipe or a device has no size: read no more
    if len(raw) > MAX_FILE_BYTES:
        raise bad_file(
            path,
            f"it is more than {MAX_FILE_BYTES:,} bytes, the most a model file "
            f"may be (micrograd.io.MAX_FILE_BYTES)",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad_file(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    return text


def loads(text: str, what: str = "the model text") -> MLP | GPT:
    """The model of a model file's text (as `dumps` writes it); ValueError naming `what` if bad."""
    return _load(text, what)[0]


def _load(text: str, what: str) -> tuple[MLP | GPT, str | None]:
    config, weights = _parse(text, what)
    chars = config.pop("chars", None)
    state = random.getstate()  # building draws random weights: leave the caller's stream
    try:
        model = GPT(**config) if "vocab_size" in config else MLP(**config)
    except (TypeError, ValueError) as e:
        raise bad_file(what, str(e)) from None
    finally:
        random.setstate(state)
    for p, w in zip(model.parameters(), weights):
        p.data = w
    return model, chars


# PyTorch's module for each activation op, keyed by op name (`torch` is the torch module): what
# `to_torch` puts after a layer's Linear. tests/test_op_tables.py holds it to nn.ACTIVATION_OPS.
TORCH_MODULES: dict[str, Callable[[Any], Any]] = {
    "ReLU": lambda torch: torch.nn.ReLU(),
    "tanh": lambda torch: torch.nn.Tanh(),
    "sigmoid": lambda torch: torch.nn.Sigmoid(),
    "abs": lambda torch: torch_module(torch, "Abs", torch.abs),
    "softplus": lambda torch: torch.nn.Softplus(threshold=40.0),  # x itself past 40, as ours
}

_MODULE_CLASSES: dict[tuple[Any, str], Any] = {}


def torch_module(torch: Any, name: str, fn: Callable[[Any], Any]) -> Any:
    """A `torch.nn.Module` called `name` applying `fn`, for an op PyTorch has no module for."""
    cls = _MODULE_CLASSES.get((torch, name))
    if cls is None:
        forward = lambda self, x: fn(x)  # noqa: E731
        cls = type(name, (torch.nn.Module,), {"forward": forward, "__module__": __name__})
        _MODULE_CLASSES[(torch, name)] = cls
    return cls()


def to_torch(model: MLP | GPT) -> Any:
    """A float64 `torch.nn.Module` computing the same function as `model` (needs PyTorch).

    An MLP's is a `torch.nn.Sequential`: Linear layers hold the weights (row j of a layer's
    weight matrix is neuron j's `w`), each followed by the torch module of its activation. A
    GPT's maps a LongTensor of tokens (..., T) to logits (..., T, vocab_size) (see `TorchGPT`).
    """
    if not isinstance(model, (MLP, GPT)):
        raise TypeError(
            f"to_torch: only an MLP or a GPT can be exported, got a {type(model).__name__}"
        )
    try:
        import torch
    except ImportError:
        raise ImportError('to_torch needs PyTorch: pip install "micrograd-plus[export]"') from None
    if isinstance(model, GPT):
        return _torch_gpt(torch, model)
    c = model.config()
    f64 = torch.float64  # torch.tensor of Python floats is float32 unless told
    modules: list[Any] = []
    for i, layer in enumerate(model.layers):
        W = [[w.data for w in n.w] for n in layer.neurons]
        linear = torch.nn.Linear(len(W[0]), len(W), dtype=f64)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(W, dtype=f64))
            linear.bias.copy_(torch.tensor([n.b.data for n in layer.neurons], dtype=f64))
        modules.append(linear)
        last = i == len(model.layers) - 1
        op = ACTIVATIONS[c["out_activation"] if last else c["activation"]].op
        if op is not None:  # (linear: none)
            modules.append(TORCH_MODULES[op.name](torch))
    return torch.nn.Sequential(*modules)


def _torch_gpt(torch: Any, model: GPT) -> Any:
    """The GPT as a torch module whose parameters are its matrices (microgpt's names, one
    `torch.nn.Linear` without bias each), in float64: whole sequences at once, causal by a mask."""
    nn, f64 = torch.nn, torch.float64

    def linear(rows: list) -> Any:
        lin = nn.Linear(len(rows[0]), len(rows), bias=False, dtype=f64)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor([[w.data for w in r] for r in rows], dtype=f64))
        return lin

    def norm(x: Any) -> Any:
        return x * ((x * x).mean(-1, keepdim=True) + 1e-5) ** -0.5

    class TorchGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.n_head = model.n_head
            sd = model.sd
            self.wte = nn.Parameter(linear(sd["wte"]).weight.detach().clone())
            self.wpe = nn.Parameter(linear(sd["wpe"]).weight.detach().clone())
            self.lm_head = linear(sd["lm_head"])
            self.layers = nn.ModuleList()
            names = ("wq", "wk", "wv", "wo", "fc1", "fc2")  # gpt.LAYER's, in its order
            for i in range(model.n_layer):
                parts = [sd[f"layer{i}.{name}"] for name in LAYER]
                self.layers.append(nn.ModuleDict({n: linear(p) for n, p in zip(names, parts)}))

        def forward(self, tokens: Any) -> Any:
            T = tokens.shape[-1]
            x = norm(self.wte[tokens] + self.wpe[:T])
            causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            for layer in self.layers:
                h = norm(x)
                q, k, v = (layer[n](h) for n in ("wq", "wk", "wv"))
                d = q.shape[-1] // self.n_head
                q, k, v = (a.unflatten(-1, (self.n_head, d)).transpose(-2, -3) for a in (q, k, v))
                scores = (q @ k.transpose(-1, -2)) / d**0.5
                att = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
                x = x + layer["wo"](att.transpose(-2, -3).flatten(-2))
                x = x + layer["fc2"](torch.relu(layer["fc1"](norm(x))))
            return self.lm_head(x)

    return TorchGPT()


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


def _parse(text: str, path: str) -> tuple[dict[str, Any], list[float]]:
    """A model file's constructor arguments and weights, checked. ValueError for a bad file."""
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


def _fields(d: dict, path: str, fields: Sequence[str]) -> None:
    """`d` has every one of `fields` and nothing else, else bad_file naming the first amiss."""
    for key in fields:
        if key not in d:
            raise bad_file(path, f"missing field {key!r}")
    extra = [k for k in d if k not in fields]
    if extra:
        raise bad_file(path, f"unknown field {extra[0]!r}")


def _check(d: object, path: str) -> tuple[dict[str, Any], list[float]]:
    if not isinstance(d, dict):
        raise bad_file(path, f"expected a JSON object, got {type(d).__name__}")
    if d.get("format") == GPT_FORMAT:
        return _check_gpt(d, path)
    _fields(d, path, FIELDS)
    if d["format"] != FORMAT:
        raise bad_file(path, f"format is {d['format']!r}, expected {FORMAT!r}")
    _version(d, path, VERSION)
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
    config = {k: d[k] for k in ("nin", "nouts", "activation", "out_activation", "fused")}
    return config, _weights(weights, path)


def _version(d: dict, path: str, newest: int) -> int:
    v = d.get("version")
    if type(v) is int and v > newest:
        raise bad_file(
            path, f"version {v} is newer than this micrograd reads (up to {newest}): upgrade it"
        )
    if type(v) is not int or v < 1:
        raise bad_file(path, f"version {v!r} is not supported (this reads 1 to {newest})")
    return v


def _check_gpt(d: dict, path: str) -> tuple[dict[str, Any], list[float]]:
    version = _version(d, path, GPT_VERSION)
    fields = ("format", "version", *GPT_SIZES, *(("chars",) if version >= 2 else ()), "weights")
    _fields(d, path, fields)
    for key in GPT_SIZES:
        if not _positive_int(d[key]) or d[key] > 100_000:
            raise bad_file(path, f"{key} must be a positive integer, got {d[key]!r}")
    V, L, E, H, B = (d[k] for k in GPT_SIZES)
    if E % H:
        raise bad_file(path, f"n_embd ({E}) must be a multiple of n_head ({H})")
    weights = d["weights"]
    if not isinstance(weights, list):
        raise bad_file(path, f"weights must be a list, got {type(weights).__name__}")
    expected = (2 * V + B) * E + L * 12 * E * E
    if len(weights) != expected:
        raise bad_file(
            path, f"wrong number of weights: {len(weights)}, but this GPT has {expected}"
        )
    config = {k: d[k] for k in GPT_SIZES}
    if version >= 2:
        chars = d["chars"]
        if not isinstance(chars, str) or list(chars) != sorted(set(chars)):
            raise bad_file(
                path, f"chars must be a string of sorted distinct characters: {chars!r:.60}"
            )
        if len(chars) + 1 != V:
            raise bad_file(path, f"chars has {len(chars)} characters; vocab_size {V} needs {V - 1}")
        config["chars"] = chars
    return config, _weights(weights, path)


def _weights(weights: list, path: str) -> list[float]:
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
    return floats
