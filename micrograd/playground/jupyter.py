"""A Jupyter server extension: behind Jupyter's proxy, ``/proxy/PORT`` (no trailing slash)
redirects to ``/proxy/PORT/``.

jupyter-server-proxy serves ``/proxy/8000`` and ``/proxy/8000/`` alike, and the playground cannot
tell them apart (both reach it as ``/``); but in the browser, the page's relative URLs
(``static/style.css``) resolve against ``/proxy/`` in the first: an unstyled, dead page. This
handler answers that one path with a redirect, ahead of the proxy's own route. Installed with the
package (``etc/jupyter/jupyter_server_config.d/micrograd.json`` enables it); it does nothing else.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "micrograd.playground.jupyter"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from tornado import web

    class AddSlash(JupyterHandler):
        @web.authenticated
        def get(self, port: str) -> None:
            query = f"?{self.request.query}" if self.request.query else ""
            self.redirect(url_path_join(self.base_url, "proxy", port) + "/" + query)

    app = server_app.web_app
    app.add_handlers(".*$", [(url_path_join(app.settings["base_url"], r"/proxy/(\d+)"), AddSlash)])
    # add_handlers puts a host's rules just before the catch-all, after every extension loaded
    # earlier (jupyter-server-proxy's /proxy/(\d+)(/.*|) would answer first): move ours first.
    rules = app.default_router.rules
    rules.insert(0, rules.pop(-2))
