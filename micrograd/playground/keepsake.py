"""A tab's keepsake: the few KB that make a learner's playground tab again after the web server
dropped it to make room for other tabs (`web.Sessions`): the explorer's program as it is now
(a leaf's edit is written into it) or the Train view's point it was built from, and the Train
view's settings, weights, step and whether it plays. `take(tab)` records it; `restore(tab,
kept)` makes a new `views.Tab` what it recorded. Plain JSON-ready data: no view object is kept.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import ViewError
from .training.train_settings import Settings


def take(tab: Any) -> dict[str, Any]:
    """What makes `tab` (a `views.Tab`) again: ``{"explorer": ..., "train": ...}``, each None
    when that view holds nothing yet."""
    return {"explorer": _explorer(tab.explorer), "train": _train(tab.train)}


def restore(tab: Any, kept: dict[str, Any]) -> None:
    """Make a new `tab` what `take` recorded."""
    if kept.get("train") is not None:
        _restore_train(tab.train, kept["train"])
    if kept.get("explorer") is not None:
        action, body = kept["explorer"]["action"], kept["explorer"]["body"]
        try:
            getattr(tab.explorer, action)(body)
        except ViewError as exc:  # it built before; a refusal now (Graphviz gone): empty
            print(
                f"micrograd playground: a tab's explorer was not made again: {exc.message}",
                file=sys.stderr,
            )


def _explorer(view: Any) -> dict[str, Any] | None:
    if view.explorer is None or view.built_from is None:
        return None  # nothing built, or a notebook's graph (no request builds it again)
    action, body = view.built_from
    if action == "load":
        body = {**body, "program": view.explorer.program}
    return {"action": action, "body": body}


def _train(view: Any) -> dict[str, Any] | None:
    if not view.started:
        return None
    tr = view.trainer
    with tr.lock:
        tr.mlp.engine.sync()  # the weights, where the engine keeps them
        return {
            "settings": tr.settings.to_dict(),
            "step": tr.step_no,
            "playing": tr.playing,
            "weights": [p.data for p in tr.model.parameters()],
        }


def _restore_train(view: Any, kept: dict[str, Any]) -> None:
    """The run from its weights at its step (its curve starts there; the optimiser's momentum
    starts again)."""
    view.settings = Settings.from_dict(kept["settings"])
    tr = view.trainer
    with tr.lock:
        for p, w in zip(tr.model.parameters(), kept["weights"]):
            p.data = w
        tr.step_no = kept["step"]
        tr.publish()  # its first frame: this run's weights at this step
    view.held = True
    if kept["playing"]:
        tr.play()
