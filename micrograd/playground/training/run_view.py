"""`RunView`: what a view that holds a training run answers its tab and transports, whatever it
trains (views.TrainView the MLP, gpt_view.GPTView the GPT).

    view.start()                   # the run's `Trainer`, made on first use (`new_trainer`)
    view.advance(seconds)          # a playing run trains: True if a frame was published
    view.cursor()                  # a reader of its frames
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import ViewError
from .train_publish import FrameCursor
from .trainer import Trainer


class RunView:
    """One tab's run: a `Trainer` made by `new_trainer` on first use (and again once closed),
    and the cursor its transport reads frames with."""

    def __init__(self, jit: bool | str = True, fps: float = 20.0) -> None:
        self.jit = jit  # the tab's engine, passed through to the Trainer (its use_jit)
        self.fps = fps  # frames a second while playing, at most (`Trainer`'s fps)
        self._trainer: Trainer | None = None
        self._cursor: FrameCursor | None = None
        self.on_trainer: Callable[[Trainer], None] | None = None  # a transport's hook
        self.held = False  # an action set up or changed the run (see views.Tab.holds)

    CONTROLS: tuple[str, ...] = ("play", "pause", "step", "reset", "new_weights")
    MAX_STEPS_A_CALL = 100  # Step's "steps", at most

    def new_trainer(self) -> Trainer:
        raise NotImplementedError

    def _answer(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def trainer(self) -> Trainer:
        """This tab's trainer, made on first use."""
        if self._trainer is None or self._trainer.closed:
            self._trainer = self.new_trainer()
            self._cursor = None
            if self.on_trainer is not None:
                self.on_trainer(self._trainer)
        return self._trainer

    def start(self) -> Trainer:
        """Make the trainer now (it is otherwise made by the first action)."""
        return self.trainer

    @property
    def started(self) -> bool:
        return self._trainer is not None and not self._trainer.closed

    @property
    def playing(self) -> bool:
        return self.started and self.trainer.playing

    def advance(self, seconds: float, apart: bool = False) -> bool:
        """Train for at most `seconds` while playing; True if a frame was published (`apart`:
        see `Trainer.advance`)."""
        return self.started and self.trainer.advance(seconds, apart)

    def cursor(self) -> FrameCursor:
        """A new reader of this view's frames (each reader gets the curve it has not had)."""
        return FrameCursor(self.trainer)

    def close(self) -> None:
        if self._trainer is not None:
            self._trainer.close()

    def model(self, body: dict[str, Any]) -> dict[str, Any]:
        """The model as `micrograd.io.save` writes it (`micrograd.io.load` reads it back)."""
        try:
            return json.loads(self.trainer.model_json())
        except ValueError as e:  # e.g. diverged weights: JSON cannot hold them
            raise ViewError(str(e), 409) from None

    def frames(self, body: dict[str, Any]) -> dict[str, Any]:
        """The newest frame this view's own reader has not had yet (``{"frame": None}`` if
        none): for a transport that asks rather than being sent frames."""
        if self._cursor is None or self._cursor.trainer is not self.trainer:
            self._cursor = self.cursor()
        return {"frame": self._cursor.next()}

    def control(self, body: dict[str, Any]) -> dict[str, Any]:
        """``{"action": one of CONTROLS, "steps": n}`` (steps: Step's, 1 by default)."""
        action = body.get("action")
        if action not in self.CONTROLS:
            raise ViewError(
                f"unknown action {str(action)[:40]!r}; one of {', '.join(self.CONTROLS)}"
            )
        tr = self.trainer
        if action == "step":
            steps, most = body.get("steps", 1), self.MAX_STEPS_A_CALL
            if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= most:
                raise ViewError(
                    f"steps must be a whole number from 1 to {most}, got {str(steps)[:40]!r}"
                )
            tr.step(steps)
        else:
            getattr(tr, action)()
        return self._answer()
