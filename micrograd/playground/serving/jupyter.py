"""A Jupyter server extension: behind Jupyter's proxy, ``/proxy/PORT`` (no trailing slash)
redirects to ``/proxy/PORT/``.

jupyter-server-proxy serves ``/proxy/8000`` and ``/proxy/8000/`` alike, and the playground cannot
tell them apart (both reach it as ``/``); but in the browser, the page's relative URLs
(``static/style.css``) resolve against ``/proxy/`` in the first: an unstyled, dead page. The
extension adds no route of its own and moves none of Jupyter's: it gives jupyter-server-proxy a
response rewrite (its setting ``ServerProxy.non_service_rewrite_response``, kept with any the
user set) that turns the answer to a proxied path without its slash into a redirect to it with
the slash. Installed with the package (``etc/jupyter/jupyter_server_config.d/micrograd.json``
enables it); it does nothing else, and nothing where jupyter-server-proxy is not installed.
"""

from __future__ import annotations

from typing import Any

SETTING = "non_service_rewrite_response"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "micrograd.playground.serving.jupyter"}]


def add_slash(response: Any, request: Any, path: str) -> None:
    """jupyter-server-proxy's rewrite (it passes the arguments by name): the answer to
    ``.../proxy/PORT`` (the proxied path empty) becomes a redirect to ``.../proxy/PORT/``. The
    Location is relative (``./PORT/``), so it holds behind any prefix (a JupyterHub's ``/user/x``)
    and the proxy leaves it as it is."""
    if path != "" or request.method not in ("GET", "HEAD"):
        return
    from tornado.httputil import HTTPHeaders

    last = request.path.rstrip("/").rsplit("/", 1)[-1]  # "8000" (or "host:8000")
    query = f"?{request.query}" if request.query else ""
    response.code = 302
    response.headers = HTTPHeaders({"Location": f"./{last}/{query}"})
    response.body = b""


def _link_jupyter_server_extension(server_app: Any) -> None:
    """Before any extension loads: add the rewrite to the setting jupyter-server-proxy reads
    when it loads, after the user's own rewrites."""
    section = server_app.config.ServerProxy
    before = section.get(SETTING, ())
    if callable(before):
        before = [before]
    if not isinstance(before, (list, tuple)):
        server_app.log.warning(
            "micrograd.playground.serving.jupyter: ServerProxy.%s is %r, not a function or a list: "
            "left as it is (/proxy/PORT will not redirect to /proxy/PORT/)",
            SETTING,
            before,
        )
        return
    if add_slash not in before:
        section[SETTING] = [*before, add_slash]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Nothing to add when the server loads: the rewrite was given at link time."""
