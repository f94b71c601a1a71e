"""The micrograd playground: the backprop explorer and the Train view, driven by the real engine.

    from micrograd.playground import serve
    pg = serve()            # a background thread; pg.url is the page, e.g. http://127.0.0.1:54321/
    pg.stop()

or from a shell: ``micrograd playground`` (``--port N --host H --no-browser --no-jit``).
The views (`views.py`: `Tab`, with `ExplorerView` over `explore/` and `TrainView` and `GPTView`
over `training/` and `gpt/`) are plain objects, JSON in and JSON out; three transports
(`serving/`) reach them with the same pages (`static/`): the web server (`serving/server.py`,
standard library only), the notebook widget (`serving/widgets.py`, imported as
`micrograd.widgets`) and the static site's Web Worker (`serving/worker.py`, `micrograd site`).
Each room's `__init__.py` says what it owns and what it may import; at the top, beside the
views, are what every room shares: `errors` (ViewError), `limits` (a request's sizes) and
`keepsake` (what makes a dropped tab again).
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
    "serve": ".serving.server",
    "Playground": ".serving.server",
    "Request": ".serving.web",
    "Session": ".serving.web",
    "HTTPError": ".serving.web",
    "EventStream": ".serving.web",
}


def __getattr__(name: str) -> Any:
    if name in _WEB:
        return getattr(importlib.import_module(_WEB[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
