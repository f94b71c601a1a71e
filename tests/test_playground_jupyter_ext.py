"""micrograd's Jupyter server extension, in a real Jupyter server (no JupyterLab, no browser):
it leaves the server's routes as the server and the other extensions made them (it used to move
its own route ahead of jupyter-server-proxy's: `rules.insert(0, rules.pop(-2))`), and gives
jupyter-server-proxy its rewrite after any the user set. tests/test_playground_proxy.py runs it
behind the proxy in JupyterLab and Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from micrograd.playground.serving import jupyter

pytest.importorskip("jupyter_server_proxy", reason="pip install -e . --group test installs it")
serverapp = pytest.importorskip("jupyter_server.serverapp")


def started(tmp_path: Any, extensions: dict[str, bool], **config: Any) -> Any:
    """A ServerApp initialised (its extensions linked and loaded), never listening."""
    from traitlets.config import Config

    tmp_path.mkdir(parents=True, exist_ok=True)
    config.setdefault("ServerApp", {})["jpserver_extensions"] = extensions
    app = serverapp.ServerApp(config=Config(config))
    app.initialize(
        [
            f"--ServerApp.root_dir={tmp_path}",
            "--ServerApp.open_browser=False",
            "--ServerApp.port=0",
        ],
        find_extensions=False,
        new_httpserver=False,
    )
    return app


def routes(app: Any) -> list[str]:
    """The server's rules in order, each host rule's paths."""
    out = []
    for rule in app.web_app.default_router.rules:
        target = getattr(rule.target, "rules", None) or []
        out.append([getattr(r.matcher, "regex", r.matcher).pattern for r in target])
    return out


@pytest.fixture(autouse=True)
def _fresh_singleton(tmp_path, monkeypatch) -> Any:
    import signal

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    # a ServerApp initialised in this process takes SIGTERM and SIGUSR1 for itself: given back
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGUSR1)}
    yield
    serverapp.ServerApp.clear_instance()
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


def test_the_extension_moves_no_route_and_adds_none(tmp_path) -> None:
    proxy_only = {"jupyter_server_proxy": True}
    without = routes(started(tmp_path / "a", proxy_only))
    serverapp.ServerApp.clear_instance()
    both = {**proxy_only, "micrograd.playground.serving.jupyter": True}
    app = started(tmp_path / "b", both)
    assert routes(app) == without
    # the proxy's port route answers /proxy/PORT with our rewrite in its handler's settings
    (proxy_rule,) = [
        r
        for rule in app.web_app.default_router.rules
        for r in (getattr(rule.target, "rules", None) or [])
        if r.matcher.regex.pattern.endswith(r"/proxy/(\d+)(/.*|)$")
    ]
    assert proxy_rule.target_kwargs["rewrite_response"] == [jupyter.add_slash]


def test_the_users_own_rewrites_come_first(tmp_path) -> None:
    def mine(response: Any) -> None:
        pass  # a user's rewrite: left in place, ours after it

    both = {"jupyter_server_proxy": True, "micrograd.playground.serving.jupyter": True}
    app = started(tmp_path / "a", both, ServerProxy={"non_service_rewrite_response": mine})
    (kwargs,) = {
        id(r.target_kwargs["rewrite_response"]): r.target_kwargs
        for rule in app.web_app.default_router.rules
        for r in (getattr(rule.target, "rules", None) or [])
        if "rewrite_response" in (r.target_kwargs or {})
    }.values()
    assert kwargs["rewrite_response"] == [mine, jupyter.add_slash]


class Request:
    def __init__(self, path: str, query: str = "", method: str = "GET") -> None:
        self.path, self.query, self.method = path, query, method


class Response:
    code, headers, body = 200, {"Content-Type": "text/html"}, b"<html>"


def test_the_rewrite_adds_the_slash_and_nothing_else() -> None:
    r = Response()
    jupyter.add_slash(r, Request("/user/ada/proxy/8000", "token=x"), "")
    assert (r.code, dict(r.headers), r.body) == (302, {"Location": "./8000/?token=x"}, b"")
    for request, path in ((Request("/proxy/8000/"), "/"), (Request("/proxy/8000/a"), "/a")):
        r = Response()
        jupyter.add_slash(r, request, path)
        assert (r.code, r.body) == (200, b"<html>")
    r = Response()
    jupyter.add_slash(r, Request("/proxy/8000", method="POST"), "")  # a form's answer: kept
    assert r.code == 200
