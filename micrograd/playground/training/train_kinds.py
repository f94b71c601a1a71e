"""What a Train run trains: the model-kind interface a `Trainer` runs, whatever the model.

A `Trainer` (trainer.py) is the run (steps, loss, curve, errors), its pacer and its frames; the
model, its data and how a step is taken belong to a *model kind*, which answers `ModelKind`:

* `rebuild(settings)`: new data and a new model (the same settings: the same initial weights);
  `live(settings)`: a change of the settings in `LIVE`, applied to the running model;
* `train(seconds, playing)`: one step (or, an engine that runs elsewhere, as many as fit in
  `seconds` while `playing()`), as ``[(loss, accuracy or None), ...]``; `weights_finite()`;
* `meta()` (what changes only with the settings) and `frame(playing)` (the kind's part of a
  frame: the run adds its step, loss and accuracy); `frame_seconds(fps)`; `model_json()`.

`MLPKind` (train_mlp.py) is the Train view's MLP on points and `GPTKind` (train_gpt.py)
microgpt's GPT on words; a kind's settings are a frozen dataclass with `to_dict()` and a `seed`
(New weights draws another). `MLPRun` is what the MLP's engines and pictures read of it
(engines.py, train_frames.py), and `Shown` what the page shows of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...nn import MLP, Module
from ...optim import Optimizer
from .train_settings import Settings

Frame = dict[str, Any]


class ModelKind(Protocol):
    """What a `Trainer` asks of the model it trains (see the module docstring)."""

    name: str  # "mlp"
    LIVE: frozenset[str]  # settings applied to the running model (others rebuild it)
    LABELS: dict[str, str]  # each setting's name on the page, for what a change says
    settings: Any  # the kind's own frozen dataclass, with to_dict() and a seed
    config_id: int  # the page's data and model: a new number at each change
    model: Module
    params: list

    def rebuild(self, settings: Any) -> None: ...

    def live(self, settings: Any) -> None: ...

    def train(
        self, seconds: float, playing: Callable[[], bool]
    ) -> list[tuple[float, float | None]]: ...

    def weights_finite(self) -> bool: ...

    def frame_seconds(self, fps: float) -> float: ...

    def meta(self) -> Frame: ...

    def frame(self, playing: bool) -> Frame: ...

    def model_json(self) -> str: ...


@dataclass
class Shown:
    """What the page shows, so that a frame holds that and no more (see `Trainer.view`)."""

    grads: bool = False  # the links draw ∂L/∂w (else only the weights)
    graph: bool = True  # the chosen point's graph is on screen: its numbers, every frame
    neuron: int | None = None  # the hidden neuron the big plot shows (counted over all layers)
    read: tuple[int, int, int | None] | None = None  # (layer, neuron, input or None: the bias)


class MLPRun(Protocol):
    """What the MLP's engines and pictures read of its run (`train_mlp.MLPKind` answers it)."""

    settings: Settings
    model: MLP
    params: list
    opt: Optimizer
    X: list[list[float]]  # the points
    labels: list[Any]  # their classes (or target values)
    inputs: list[list[float]]  # what the network is given of each
    T: list[Any]  # their targets, as the loss takes them
    train_idx: list[int]
    test_idx: list[int]
    extent: tuple[float, float, float, float]
    grid_side: int
    heat_side: int
    box: int
    pick: int
    shown: Shown
    config_id: int
    health: Any  # train_health.HealthTap
    graph_nodes: list
    graph_layout: dict[str, Any]
    graph_kept: tuple | None
    engine: Any  # its `engines.Engine` (engines.py reads this module)

    def grid_of(self, side: int) -> list[list[float]]: ...

    def full_batch(self) -> bool: ...

    def put_back(self, batches: list[list[int]]) -> None: ...

    def test_metrics(self) -> tuple[float, float | None] | None: ...

    def next_batch(self) -> Sequence[int] | None: ...
