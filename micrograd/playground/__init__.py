"""The micrograd playground: a local web page driven by the real engine.

    from micrograd.playground import serve
    pg = serve()            # a background thread; pg.url is the page, e.g. http://127.0.0.1:54321/
    pg.stop()

or from a shell: ``micrograd playground`` (``--port N --host H --no-browser --no-jit``).
Views: the backprop explorer (`explorer.py`, the page `static/index.html`) and the training view
(`train_routes.py`, `static/train.html`). The server (`server.py`) uses only the standard library.
"""

from .server import Playground, serve
from .web import EventStream, HTTPError, Request, Session

__all__ = ["serve", "Playground", "Request", "Session", "HTTPError", "EventStream"]
