"""The micrograd playground: the backprop explorer and the Train view, driven by the real engine.

    from micrograd.playground import serve
    pg = serve()            # a background thread; pg.url is the page, e.g. http://127.0.0.1:54321/
    pg.stop()

or from a shell: ``micrograd playground`` (``--port N --host H --no-browser --no-jit``).
The views (`views.py`: `Tab`, with `ExplorerView` over `explorer.py` and `TrainView` over
`trainer.py`) are plain objects, JSON in and JSON out; three transports reach them with the same
pages (`static/`): this web server (`server.py`, standard library only), the notebook widget
(`widgets.py`, imported as `micrograd.widgets`) and the static site's Web Worker (`micrograd site`).
"""

import importlib
from typing import Any

from .errors import ViewError
from .views import Tab

__all__ = [
    "serve",
    "Playground",
    "Tab",
    "ViewError",
    "Request",
    "Session",
    "HTTPError",
    "EventStream",
]

# The web server's names, imported on first use: the static site's worker imports the views
# alone, and in a browser the HTTP stack (http.server, email, ssl) would add half a second to
# Python's start-up.
_WEB = {
    "serve": ".server",
    "Playground": ".server",
    "Request": ".web",
    "Session": ".web",
    "HTTPError": ".web",
    "EventStream": ".web",
}


def __getattr__(name: str) -> Any:
    if name in _WEB:
        return getattr(importlib.import_module(_WEB[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
