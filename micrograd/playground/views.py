"""The playground's views as plain objects: JSON-ready dicts in, JSON-ready dicts out.

One learner's playground is a `Tab`: an explorer (`ExplorerView`) and a Train view (`TrainView`).
Every transport calls the same entry, ``tab.call(view, action, body) -> dict``, and shows what
it returns; a refusal is a `ViewError` with its one-line reason (and the HTTP status a web
transport answers with). `Tab.call` refuses, before any action sees it, a number no float can
hold (a 400-digit integer, which Python's json reads as an int) or one that is not finite,
wherever it is in the body. The transports are thin and live elsewhere:

* the web server (`server.py`): ``POST api/<view>/<action>`` with the body as JSON; a tab per
  browser tab; the Train view's frames as Server-Sent Events;
* the notebook widget (`micrograd.widgets`): the widget's messages, one Tab per widget;
* the static site's Web Worker (`micrograd site`, on Pyodide): ``postMessage``, one Tab a page.

A Train view trains only when its transport asks it to: ``tab.train.advance(seconds)`` runs
steps for at most that long while it is playing and says whether it published a frame (a thread
in the server and in the kernel, a timer in the worker calls it). Nothing here knows which
transport it runs under, starts a thread, or touches the network.

Actions (each takes a JSON object, `{}` when it needs nothing):

    explorer: examples, load {program, layout}, state, forward, step, backward, reset,
              set {node, value}, role {node, role: "param"|"data"}, nudge {node}, descend {lr},
              point {from: <train's point>, nearest: true|false}, PredictActions
    train:    options, state, config {settings}, control {action, ...}, points {added},
              pick {index}, weight {layer, neuron, input, value}, bias {layer, neuron, value},
              view {grads, graph, neuron, read}, model, frames, point
    gpt:      options, state, config {settings}, control {action, ...}, attention {word},
              model, frames (gpt_view.py)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..engine import Value
from ..expr import ARITY, ProgramError
from ..viz import GraphTooLargeError
from . import keepsake
from .errors import ViewError
from .explore.explorer import DEFAULT_PROGRAM, EXAMPLES, MAX_PROGRAM_CHARS, Explorer
from .explore.foreign import explorer_for, looks_like_a_value
from .explore.predict import PredictActions
from .explore.walkthrough import MAX_NODES, Walkthrough
from .gpt.gpt_view import READS as GPT_READS
from .gpt.gpt_view import GPTView
from .limits import numbers_fit
from .training.run_view import RunView
from .training.train_frames import KEEP, read
from .training.train_health import health_action, presets_menu
from .training.train_point import point_payload, point_root, zero_loss
from .training.train_settings import Settings, options
from .training.trainer import Trainer

# The actions that only read: a web transport may answer them to a GET.
READS = frozenset(
    {
        ("explorer", "examples"),
        ("explorer", "state"),
        ("train", "options"),
        ("train", "state"),
        ("train", "model"),
        ("train", "frames"),
        *(("gpt", action) for action in GPT_READS),
    }
)

LAYOUTS = ("auto", "dot", "layered")

# Each view's page in static/, named as the site and the server's URLs name it; the page's own
# modules and stylesheet are in the folder of the view's name (static/train/train.css, ...).
PAGES = {"explorer": "index.html", "train": "train.html", "gpt": "gpt.html"}


def _object(body: object) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ViewError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body


def _layout_of(body: dict[str, Any]) -> str:
    engine = body.get("layout", "auto")
    if engine not in LAYOUTS:
        raise ViewError(f"layout must be 'auto', 'dot' or 'layered', got {str(engine)[:40]!r}")
    return engine


# ------------------------------------------------------------------ the explorer


class ExplorerView(PredictActions):
    """The backprop explorer of one tab: a graph (from a program, a notebook's Value, or the Train
    view's chosen point) and how far its passes have gone (`explorer.Explorer`)."""

    ACTIONS = (
        "examples",
        "load",
        "state",
        "forward",
        "step",
        "backward",
        "reset",
        "set",
        "role",
        "nudge",
        "descend",
        "point",
        *PredictActions.ACTIONS,
    )

    def __init__(self) -> None:
        self.explorer: Walkthrough | None = None
        self.built_from: tuple[str, dict[str, Any]] | None = None  # the action and body it was

    def _current(self) -> Walkthrough:
        if self.explorer is None:
            raise ViewError("no expression yet: build a graph first", 409)
        return self.explorer

    def _editable(self) -> Explorer:
        """The explorer, for an action that moves its leaves: a graph of micrograd's own Values
        (a learner's own Value class is changed in their notebook: the answer says so)."""
        ex = self._current()
        if not isinstance(ex, Explorer):
            raise ViewError(ex.stepper.fixed)
        return ex

    def examples(self, body: dict[str, Any]) -> dict[str, Any]:
        functions = [_signature(name, n) for name, n in ARITY.items()]
        return {"examples": EXAMPLES, "default": DEFAULT_PROGRAM, "functions": functions}

    def load(self, body: dict[str, Any]) -> dict[str, Any]:
        program = body.get("program")
        if not isinstance(program, str):
            raise ViewError("the expression must be text")
        if len(program) > MAX_PROGRAM_CHARS:
            raise ViewError(
                f"the expression is {len(program)} characters; at most "
                f"{MAX_PROGRAM_CHARS} are allowed"
            )
        if not program.strip():
            raise ViewError("the expression is empty: write assignments like `a = 2.0; b = a*a`")
        engine = _layout_of(body)
        try:
            self.explorer = _built(lambda: Explorer(program, engine))
        except ProgramError as exc:  # its hint is written under the page's box already
            raise ViewError(str(exc)) from None
        self.built_from = ("load", {"layout": engine})  # (its program: explorer.program)
        return self.explorer.state(with_drawing=True)

    def show(
        self,
        root: Any,
        title: str = "",
        params: Sequence[Value] | None = None,
        layout: str = "auto",
    ) -> dict[str, Any]:
        """The explorer on a graph built in Python (a notebook's `L`), not from a program: every
        leaf can be set; a gradient step moves `params` (default: every named leaf). `root` may
        also be a learner's own Value class (`foreign.ForeignExplorer`): stepped by their
        `_backward`, each node's rule checked."""
        if not isinstance(root, Value) and not looks_like_a_value(root):
            raise TypeError(
                f"explore: expected a Value (micrograd's, or your own with data, grad "
                f"and _prev), got {type(root).__name__}"
            )
        if layout not in LAYOUTS:
            raise ValueError(f"explore: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self.explorer = _built(lambda: explorer_for(root, layout, title, params))
        self.built_from = None  # a notebook's graph: nothing a request could build again
        return self.explorer.state(with_drawing=True)

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._current().state(with_drawing=True)

    def forward(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.forward()
        return ex.state()

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.step()
        return ex.state()

    def backward(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.backward()
        return ex.state()

    def reset(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._current()
        ex.reset()
        return ex.state()

    def set(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._editable()
        ex.set_leaf(body.get("node"), body.get("value"))
        return ex.state(with_drawing=True)

    def role(self, body: dict[str, Any]) -> dict[str, Any]:
        """Make a leaf a parameter or data: ``{"node": id, "role": "param" | "data"}``."""
        ex = self._editable()
        ex.set_role(body.get("node"), body.get("role"))
        return ex.state()

    def nudge(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._editable()
        ex.nudge = ex.nudge_at(ex.leaf(body.get("node")))
        return ex.state()

    def descend(self, body: dict[str, Any]) -> dict[str, Any]:
        ex = self._editable()
        ex.descend(body.get("lr"))
        return ex.state(with_drawing=True)

    def point(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Train view's chosen point (what its `point` action gave) as a graph to step
        through: that point's loss through a copy of the network, weights included. With
        ``"nearest": true``, the point the Train view found nearest to it whose loss is not 0.
        A point whose loss is 0 comes with a notice saying why every grad is 0, and offering
        the nearest point whose loss is not."""
        engine = _layout_of(body)
        payload = body.get("from")
        if payload is None:
            raise ViewError(
                "no point from the Train view: open the Train view, choose a point, then its graph",
                409,
            )
        if body.get("nearest") and isinstance(payload, dict):
            other = payload.get("nearest")
            if not isinstance(other, dict):
                raise ViewError("the Train view found no point whose loss is not 0")
            payload = {
                **payload,
                **{k: other.get(k) for k in ("index", "point", "x", "target")},
                "nearest": None,
            }
        try:
            root, params, title = point_root(payload)
        except (ValueError, TypeError) as exc:
            raise ViewError(f"the Train view's point cannot be read: {exc}") from None
        try:
            self.explorer = Explorer(None, engine, root=root, title=title, tunable=params)
        except GraphTooLargeError:
            raise ViewError(
                f"this network's graph for one point has more than {MAX_NODES} values, more "
                f"than the explorer shows: try fewer or smaller hidden layers in the Train view"
            ) from None
        if root.data == 0.0:
            self.explorer.notice = zero_loss(self.explorer.topo, payload)
        self.built_from = ("point", body)
        return self.explorer.state(with_drawing=True)


def _built(make: Callable[[], Walkthrough]) -> Walkthrough:
    try:
        return make()
    except GraphTooLargeError:
        raise ViewError(
            f"the graph has more than {MAX_NODES} nodes; the explorer shows at most "
            f"{MAX_NODES}: explore a part of it (one neuron's output, say)"
        ) from None
    except RuntimeError as exc:  # layout="dot" without Graphviz
        raise ViewError(str(exc)) from None


def _signature(name: str, arity: int) -> str:
    """How the page lists a function of the language: tanh(x), maximum(a, b)."""
    return f"{name}({'x' if arity == 1 else ', '.join('abcd'[:arity])})"


# ------------------------------------------------------------------ the Train view


class TrainView(RunView):
    """The Train view of one tab: a `Trainer` (made on first use, default settings) and the
    cursor its transport reads frames with."""

    ACTIONS = (
        "options",
        "state",
        "config",
        "control",
        "points",
        "pick",
        "weight",
        "bias",
        "view",
        "model",
        "frames",
        "point",
        "health",
    )
    VIEW_KEYS = ("grads", "graph", "neuron", "read")
    CONTROLS = (*RunView.CONTROLS, "speed")
    MAX_STEPS_A_CALL = 1000

    def __init__(
        self, jit: bool = True, settings: Settings | None = None, fps: float = 20.0
    ) -> None:
        super().__init__(jit, fps)
        self.settings = settings  # what the first trainer starts with (None: the defaults)

    def new_trainer(self) -> Trainer:
        return Trainer(self.settings, use_jit=self.jit, fps=self.fps)

    def _answer(self) -> dict[str, Any]:
        tr = self.trainer
        return {"meta": tr.meta(), "frame": tr.latest()}

    def options(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**options(), "health_presets": presets_menu()}

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._answer()

    def config(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start over with these settings (keys left out: the defaults)."""
        settings = _checked(lambda: Settings.from_dict(body))
        if self.started:
            self.trainer.configure(settings)
        else:  # the first settings: the run starts with them (nothing "started over")
            self.settings = settings
        return self._answer()

    def control(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("action") == "speed":
            tr = self.trainer
            _checked(lambda: tr.set_speed(body.get("value")))
            return self._answer()
        return super().control(body)

    def points(self, body: dict[str, Any]) -> dict[str, Any]:
        """Replace the learner's points: ``{"added": [[x, y, class], ...]}`` ([] clears them)."""
        if "added" not in body:
            raise ViewError('send {"added": [[x, y, class], ...]}')
        tr = self.trainer
        _checked(lambda: tr.set_points(body["added"]))
        return self._answer()

    def pick(self, body: dict[str, Any]) -> dict[str, Any]:
        tr = self.trainer
        _checked(lambda: tr.choose(body.get("index")))
        return self._answer()

    def weight(self, body: dict[str, Any]) -> dict[str, Any]:
        """Set one weight: ``{"layer": l, "neuron": j, "input": i, "value": w}`` (a link's)."""
        tr = self.trainer
        if body.get("input") is None:
            raise ViewError(
                "weight needs the link's input (a whole number); a bias is set with the bias action"
            )
        _checked(
            lambda: tr.set_weight(
                body.get("layer"), body.get("neuron"), body.get("input"), body.get("value")
            )
        )
        return self._answer()

    def bias(self, body: dict[str, Any]) -> dict[str, Any]:
        """Set one bias: ``{"layer": l, "neuron": j, "value": b}`` (a neuron's small square)."""
        tr = self.trainer
        _checked(
            lambda: tr.set_weight(body.get("layer"), body.get("neuron"), None, body.get("value"))
        )
        return self._answer()

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the page shows (frames then hold that and no more): ``{"grads": bool, "graph":
        bool, "neuron": k or null, "read": [layer, neuron, input or null] or null}``, any of
        them. Answers with the exact numbers of the parameter read (frames bring the rest: a
        hovered link is a small answer, not a frame of every heat map)."""
        unknown = sorted(set(body) - set(self.VIEW_KEYS))
        if unknown:
            raise ViewError(f"view takes {', '.join(self.VIEW_KEYS)}; not {unknown[0][:40]!r}")
        tr = self.trainer
        _checked(lambda: tr.view(**{k: body.get(k, KEEP) for k in self.VIEW_KEYS}))
        return {"read": read(tr.mlp, tr.mlp.shown.read)}

    def health(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Health panel: ``{"open": bool}``, ``{"preset": name}`` (a network broken on
        purpose, from step 0) or ``{"fix": true}`` (train_health.health_action)."""
        tr = self.trainer
        _checked(lambda: health_action(tr, body))
        return self._answer()

    def point(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chosen point as the explorer's `point` action takes it (JSON: it may travel
        from one page to another)."""
        try:
            return point_payload(self.trainer)
        except ValueError as e:  # diverged weights
            raise ViewError(str(e), 409) from None


def _checked(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (ValueError, TypeError) as e:
        raise ViewError(str(e)) from None


# ------------------------------------------------------------------ a tab


class Tab:
    """One learner's playground: its explorer, its Train view and its GPT view, and the one entry
    point every transport calls (`call`)."""

    def __init__(self, jit: bool = True, fps: float = 20.0) -> None:
        self.explorer = ExplorerView()
        self.train = TrainView(jit=jit, fps=fps)
        self.gpt = GPTView(jit=jit, fps=fps)  # (the tab's engine, passed through)
        self._views: dict[str, Any] = {"explorer": self.explorer, "train": self.train}
        self._views["gpt"] = self.gpt

    def call(self, view: str, action: str, body: object = None) -> dict[str, Any]:
        """Run `action` of `view` with `body` (a JSON object, or None) and return its answer (a
        JSON-ready dict). Raises ViewError for anything the learner can fix."""
        target = self._views.get(view)
        if target is None:
            raise ViewError(f"no view {str(view)[:40]!r}; the views are explorer, train, gpt", 404)
        if action not in target.ACTIONS:
            raise ViewError(f"the {view} view has no action {str(action)[:40]!r}", 404)
        numbers_fit(body)
        answer = getattr(target, action)(_object(body))
        if view in ("train", "gpt") and (view, action) not in READS:
            target.held = True  # the page set it up or acted on it (not only looked)
        return answer

    def close(self) -> None:
        """The tab is gone: stop its training."""
        self.train.close()
        self.gpt.close()

    def holds(self) -> list[str]:
        """The views that hold what a learner made: "explorer" once a graph is built, "train"
        once an action set up or changed the run (a run only looked at, by its event stream or
        its state, holds the defaults, not the page's): a page holding either that the server
        does not sends it again."""
        held = ["explorer"] if self.explorer.explorer is not None else []
        return held + [v for v in ("train", "gpt") if self._views[v].held]

    def keepsake(self) -> dict[str, Any]:
        """A small record of what the learner made here, to make the tab again from
        (`keepsake.take`): what a web server that must make room keeps instead of the tab."""
        return keepsake.take(self)

    def restore(self, kept: dict[str, Any]) -> None:
        """Make this (new) tab what `keepsake` recorded."""
        keepsake.restore(self, kept)
