"""The micrograd playground: the backprop explorer and the Train view, driven by the real engine.

    from micrograd.playground import serve
    pg = serve()            # a background thread; pg.url is the page, e.g. http://127.0.0.1:54321/
    pg.stop()

or from a shell: ``micrograd playground`` (``--port N --host H --no-browser --no-jit``).
The views (`views.py`: `Tab`, with `ExplorerView` over `explorer.py` and `TrainView` over
`trainer.py`) are plain objects, JSON in and JSON out; three transports reach them with the same
pages (`static/`): this web server (`server.py`, standard library only), the notebook widget
(`micrograd.widgets`) and the static site's Web Worker (`micrograd site`).
"""

from .errors import ViewError
from .server import Playground, serve
from .views import Tab
from .web import EventStream, HTTPError, Request, Session

__all__ = ["serve", "Playground", "Tab", "ViewError", "Request", "Session", "HTTPError",
           "EventStream"]
