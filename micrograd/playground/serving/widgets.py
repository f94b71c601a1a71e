"""The playground in a notebook cell: `explore(L)`, `train(...)` and `gpt(...)` as widgets.

    from micrograd.engine import Value
    from micrograd.widgets import explore, train

    a = Value(2.0, label='a'); b = Value(-3.0, label='b'); c = Value(10.0, label='c')
    f = Value(-2.0, label='f')
    L = (a*b + c)*f; L.label = 'L'
    explore(L)                  # Forward pass, Backward step, Backward pass, Reset, Gradient
                                # step, set a leaf, the numerical derivative, the engine's code
    train(dataset='circles', hidden=[8, 8])   # the Train view, with the settings its URL takes

Each widget is the playground's own view: its HTML, CSS and JavaScript are the page's files
(package data in micrograd/playground/static, joined into the widget's module here; nothing
comes from a CDN), in a shadow root of their own. The kernel answers the view's actions with
the same view objects the web server uses (`micrograd.playground.views.Tab`), through the
widget's messages, and trains a playing Train view on one thread of the kernel (on its asyncio
loop where there are no threads: Pyodide, in the course's JupyterLite app). `explore(L)`
works on your graph itself: after Backward pass in the widget, `a.grad` in the notebook is 6.

They need `anywidget` (``pip install "micrograd-plus[widgets]"``), the widget convention that
JupyterLab 4, Notebook 7, VS Code, Colab and marimo render.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from ...engine import Value
from ..errors import ViewError
from ..gpt.gpt_view import settings_from
from ..training.train_settings import Settings
from ..views import Tab
from . import pages
from .messages import MessageHost

try:
    import anywidget
    import traitlets
except ImportError as exc:  # one line saying what to install, not a traceback from inside
    raise ImportError(
        'micrograd.widgets needs anywidget: pip install "micrograd-plus[widgets]"'
    ) from exc

WATCH_SECONDS = 15.0  # a playing Train view whose page has not been heard from this long is held


# the `export` before a declaration
_EXPORT = re.compile(r"^export (?=(?:async )?function |const |let |class )", re.M)


def _joined(entry: str) -> str:
    """The widget's one module: `entry` and every page module it imports (each after the ones it
    imports), joined, with their imports and `export`s taken out (anywidget loads one module,
    which cannot import the files beside it). No bundler: the same files, in one scope (the
    linter's test checks that no two of them declare a name twice there)."""
    order = pages.imports_of(entry)
    texts = [_EXPORT.sub("", pages.IMPORT.sub("", pages.static_text(n))) for n in order]
    return "\n".join(f"// ---- static/{name}\n{text}" for name, text in zip(order, texts))


_ESM = _joined("widget.js")


def _sheets(view: str) -> tuple[str, ...]:
    """The view's stylesheets (widget.css: JupyterLab's light or dark theme, the widget's alone)."""
    return ("style.css", f"{view}/{view}.css", "widget.css")


_runner: Any = None
_runner_lock = threading.Lock()


def _shared_runner() -> Any:
    """The kernel's one training thread, shared by every Train widget (a fair share each)."""
    global _runner
    with _runner_lock:
        if _runner is None:
            from ..training.train_thread import Runner

            _runner = Runner(name="micrograd-widgets")
        return _runner


class PlaygroundWidget(anywidget.AnyWidget):
    """A playground view (`view`: "explorer" or "train") over `tab`, in a notebook."""

    _esm = _ESM
    _view = traitlets.Unicode("explorer").tag(sync=True)
    _page_html = traitlets.Unicode("").tag(sync=True)
    _page_css = traitlets.Unicode("").tag(sync=True)

    def __init__(self, view: str, tab: Tab, **kwargs: Any) -> None:
        super().__init__(
            _view=view,
            _page_html=pages.markup(view),
            _page_css="\n".join(pages.static_text(name) for name in _sheets(view)),
            **kwargs,
        )
        self.tab = tab
        self.host = MessageHost(tab)
        self._lock = threading.Lock()  # the kernel's thread and the training thread both send
        if view in ("train", "gpt"):
            getattr(tab, view).on_trainer = self._run
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A message from the view (on the kernel's thread): answered at once."""
        with self._lock:
            for reply in self.host.receive(content):
                self.send(reply)
        if isinstance(content, dict) and content.get("view") in ("train", "gpt"):
            _shared_runner().wake()  # e.g. Play

    def _run(self, trainer: Any) -> None:
        """The Train view made its trainer: it trains on the kernel's training thread while it
        plays and somebody looks."""
        _shared_runner().add(
            trainer, on_frame=self._push, watched=lambda: self.host.watched(WATCH_SECONDS)
        )

    def _push(self) -> None:
        """A new frame (on the training thread): to the view, if it wants frames."""
        with self._lock:
            for message in self.host.frames():
                self.send(message)

    def close(self) -> None:
        """The widget is gone: its training stops."""
        self.tab.close()
        super().close()


def explore(
    root: Any,
    params: Sequence[Value] | None = None,
    *,
    title: str = "",
    layout: str = "auto",
    predict: bool = False,
) -> PlaygroundWidget:
    """The explorer on the graph of `root`, a Value built in the notebook: Forward pass, Backward
    step (the chain rule at one node, with its numbers), Backward pass, Reset, Gradient step,
    setting a leaf (with the numerical derivative next to its grad), the engine's code under
    each step. A gradient step moves `params` (default: every leaf with a label). `layout`:
    "auto" (Graphviz's dot when installed), "dot" or "layered".

    `root` may be a Value of your own class (the lecture's shape: data, grad, _prev, _op, label,
    _backward): each Backward step then runs your `_backward`, and a node whose local derivative
    is not its op's slope (by central differences) is marked red, with the numbers.

    ``predict=True`` starts with Predict each grad on: each Backward step asks you for every grad
    it writes (``your c.grad``) before it shows it, and names the mistake a wrong number
    suggests; Hint, Show me. On your own Value, your `_backward` decides what is right."""
    tab = Tab()
    name = getattr(root, "label", "") or "the output"
    try:
        tab.explorer.show(
            root,
            title=title or f"the graph of {name}, built in this notebook",
            params=params,
            layout=layout,
        )
    except ViewError as exc:  # what the page would say, as the notebook's one line
        raise ValueError(f"explore: {exc.message}") from None
    if not isinstance(predict, bool):
        raise TypeError(f"explore: predict is True or False, got {predict!r}")
    tab.call("explorer", "predict", {"on": predict})
    return PlaygroundWidget("explorer", tab)


def train(**settings: Any) -> PlaygroundWidget:
    """The Train view: an MLP learning live, with the settings its page's URL takes (dataset,
    points, noise, hidden, activation, loss, optimizer, lr, momentum, l2, l1, batch, seed,
    zero_grad, data_seed, test, features). Press Play in it; it trains in the kernel."""
    try:
        chosen = Settings.from_dict(settings)
    except ValueError as exc:
        raise ValueError(f"train: {exc}") from None
    tab = Tab()
    tab.train.settings = chosen
    widget = PlaygroundWidget("train", tab)
    tab.train.start()  # the run made now, so that it trains on the kernel's training thread
    return widget


def gpt(**settings: Any) -> PlaygroundWidget:
    """The GPT view: microgpt's GPT learning live, with the settings its page's URL takes (data:
    "names", "builtin" or "own" with words, one a line; n_embd, n_head, n_layer, block_size, lr,
    temperature, steps, seed). Press Play in it; it trains in the kernel."""
    tab = Tab()
    try:
        tab.gpt.settings, tab.gpt.page = settings_from(settings)
    except ViewError as exc:
        raise ValueError(f"gpt: {exc.message}") from None
    widget = PlaygroundWidget("gpt", tab)
    tab.gpt.start()  # the run made now, so that it trains on the kernel's training thread
    return widget


__all__ = ["explore", "train", "gpt", "PlaygroundWidget"]
