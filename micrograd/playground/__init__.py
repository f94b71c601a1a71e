"""The micrograd playground: a local web page driven by the real engine.

    from micrograd.playground import serve
    pg = serve()            # a background thread; pg.url is the page, e.g. http://127.0.0.1:54321/
    pg.stop()

or from a shell: ``micrograd playground`` (``--port N --host H --no-browser --no-jit``).
Views: the backprop explorer (`explorer.py`, the page `static/index.html`) and the training view
(`training.py`, `static/train.html`). The server (`server.py`) uses only the standard library.
"""

from .api import EventStream, HTTPError, Request, Session
from .server import Playground, serve

__all__ = ["serve", "Playground", "Request", "Session", "HTTPError", "EventStream"]
