"""What a Train run trains: the model-kind interface a `Trainer` runs, whatever the model.

A `Trainer` (trainer.py) is the run (steps, loss, curve, errors), its pacer and its frames; the
model, its data and how a step is taken belong to a *model kind*, which answers `ModelKind`:

* `rebuild(settings)`: new data and a new model (the same settings: the same initial weights);
  `live(settings)`: a change of the settings in `LIVE`, applied to the running model;
* `train(seconds, playing)`: one step (or, an engine that runs elsewhere, as many as fit in
  `seconds` while `playing()`), as ``[(loss, accuracy or None), ...]``; `weights_finite()`;
* `meta()` (what changes only with the settings) and `frame(playing)` (the kind's part of a
  frame: the run adds its step, loss and accuracy); `frame_seconds(fps)`; `model_json()`.

`MLPKind` (train_mlp.py) is the Train view's MLP on points; a kind's settings are a frozen
dataclass with `to_dict()` and a `seed` (New weights draws another).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..nn import Module

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
