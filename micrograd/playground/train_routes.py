"""The playground's training view: train a small MLP live, on the real engine, one tab at a time.

This module is the view's HTTP routes (`ROUTES`, joined into the server's table by `server.py`;
the handlers see only `web`, so there is no import circle). The work is done by
`trainer.Trainer` (one tab's run and its training thread), `train_settings` (settings, data sets,
per-sample losses, all checked) and `train_frames` (the decision regions, neuron heat maps and
one point's graph, computed by the model). A bad setting is a ValueError naming the page's
control and the value; the routes send it back as a 400 with that one line.

Routes (the tab's session id in the X-Session header, or ?session= for the event stream):
    GET  /api/train/options   menus and limits for the page's controls
    GET  /api/train/state     {"meta", "frame"}: the tab's run as it is
    POST /api/train/config    settings (keys left out: the defaults) -> start over with them
    POST /api/train/control   {"action": play|pause|step|reset|new_weights|speed, ...}
    POST /api/train/points    {"added": [[x, y, class], ...]}: the learner's points ([] clears)
    POST /api/train/pick      {"index": i}: show point i's graph
    POST /api/train/weight    {"layer", "neuron", "input", "value"}: set one weight (a link)
    GET  /api/train/model     the model as micrograd.io.save writes it (io.load reads it)
    GET  /api/train/stream    Server-Sent Events: a frame whenever one is published
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from .train_settings import Settings, options
from .trainer import Trainer
from .web import EventStream, HTTPError

__all__ = ["ROUTES", "Settings", "Trainer"]

def _trainer(req: Any) -> Trainer:
    """This tab's trainer, made on its first request (default settings)."""
    session = req.session
    with session.lock:
        tr = session.state.get("train")
        if tr is None or tr.closed:
            tr = Trainer(use_jit=bool(req.options.get("jit", True)))
            session.state["train"] = tr
            session.on_close.append(tr.close)
    tr.touch()
    return tr


def _body(req: Any) -> dict[str, Any]:
    if not isinstance(req.body, dict):
        raise HTTPError(400, "send a JSON object")
    return req.body


def _answer(tr: Trainer) -> dict[str, Any]:
    return {"meta": tr.meta(), "frame": tr.latest()}


def _checked(fn: Callable[[], None]) -> None:
    try:
        fn()
    except (ValueError, TypeError) as e:
        raise HTTPError(400, str(e)) from None


def api_options(req: Any) -> dict[str, Any]:
    return options()


def api_state(req: Any) -> dict[str, Any]:
    return _answer(_trainer(req))


def api_config(req: Any) -> dict[str, Any]:
    """Start over with these settings (keys left out: the defaults); 400 names a bad one."""
    body = _body(req)
    tr = _trainer(req)
    try:
        settings = Settings.from_dict(body)
    except ValueError as e:
        raise HTTPError(400, str(e)) from None
    tr.configure(settings)
    return _answer(tr)


CONTROLS = ("play", "pause", "step", "reset", "new_weights", "speed")


def api_control(req: Any) -> dict[str, Any]:
    body = _body(req)
    action = body.get("action")
    if action not in CONTROLS:
        raise HTTPError(400, f"unknown action {action!r}; one of {', '.join(CONTROLS)}")
    tr = _trainer(req)
    if action == "speed":
        _checked(lambda: tr.set_speed(body.get("value")))
    elif action == "step":
        steps = body.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 1000:
            raise HTTPError(400, f"steps must be a whole number from 1 to 1000, got {steps!r}")
        tr.step(steps)
    else:
        getattr(tr, action)()
    return _answer(tr)


def api_points(req: Any) -> dict[str, Any]:
    """Replace the learner's points: ``{"added": [[x, y, class], ...]}`` ([] clears them)."""
    body = _body(req)
    if "added" not in body:
        raise HTTPError(400, 'send {"added": [[x, y, class], ...]}')
    tr = _trainer(req)
    _checked(lambda: tr.set_points(body["added"]))
    return _answer(tr)


def api_pick(req: Any) -> dict[str, Any]:
    """Show the graph of point ``{"index": i}``."""
    body = _body(req)
    tr = _trainer(req)
    _checked(lambda: tr.choose(body.get("index")))
    return _answer(tr)


def api_weight(req: Any) -> dict[str, Any]:
    """Set one weight: ``{"layer": l, "neuron": j, "input": i, "value": w}`` (a link's)."""
    body = _body(req)
    tr = _trainer(req)
    _checked(lambda: tr.set_weight(body.get("layer"), body.get("neuron"), body.get("input"),
                                   body.get("value")))
    return _answer(tr)


def api_model(req: Any) -> dict[str, Any]:
    """The model as `micrograd.io.save` writes it (the page offers it as a file for `load`)."""
    tr = _trainer(req)
    try:
        return json.loads(tr.model_json())
    except ValueError as e:  # e.g. diverged weights: JSON cannot hold them
        raise HTTPError(409, str(e)) from None


def api_stream(req: Any) -> Any:
    """Server-Sent Events: a frame whenever the trainer publishes one."""
    tr = _trainer(req)

    def frames() -> Iterator[dict[str, Any] | None]:
        inner = tr.stream()
        try:
            for item in inner:
                if req.stopping.is_set() or req.session.closed.is_set():
                    return
                yield item
        finally:
            inner.close()  # now, not when collected: the trainer counts its listeners

    return EventStream(frames())


ROUTES: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("GET", "/api/train/options"): api_options,
    ("GET", "/api/train/state"): api_state,
    ("POST", "/api/train/config"): api_config,
    ("POST", "/api/train/control"): api_control,
    ("POST", "/api/train/points"): api_points,
    ("POST", "/api/train/pick"): api_pick,
    ("POST", "/api/train/weight"): api_weight,
    ("GET", "/api/train/model"): api_model,
    ("GET", "/api/train/stream"): api_stream,
}
