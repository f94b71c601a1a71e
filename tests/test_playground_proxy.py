"""The playground behind Jupyter's proxy: a real jupyter-server-proxy (PyPI), in a real
JupyterLab, serving the playground under ``/proxy/PORT/``, opened in Chromium. Every URL the
pages use is relative, so the explorer builds its graph and the Train view trains (its frames
stream through the proxy); and inside a JupyterHub the hub's name is accepted as Host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.playground import serve
from tests.conftest import OWNED, fixture_owns, watch_errors
from tests.support.jupyterlab import jupyterlab

pytest.importorskip("jupyter_server_proxy", reason="pip install -e . --group test installs it")


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: Any) -> Any:
    pg = fixture_owns(serve(port=0))
    try:
        # micrograd's Jupyter extension (a wheel enables it; an editable install cannot)
        with jupyterlab(
            tmp_path_factory.mktemp("proxy"),
            ["--ServerApp.jpserver_extensions=micrograd.playground.serving.jupyter=True"],
        ) as lab:
            yield lab, pg
    finally:
        pg.stop()
        OWNED.remove(pg)


def test_the_playground_works_under_jupyters_proxy(
    proxied: Any, browser: Any, screenshot: Any
) -> None:
    lab, pg = proxied
    base = f"{lab.url}proxy/{pg.port}/"
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors = watch_errors(page)
    paths: list[str] = []
    page.on("request", lambda r: paths.append(r.url))
    try:
        page.goto(f"{base}?token={lab.token}")  # Jupyter's token: its proxy needs the login
        page.wait_for_selector("body[data-ready='1']")
        page.get_by_role("button", name="Backward pass").click()
        page.wait_for_function(
            "() => document.querySelector('#status').textContent.includes('done')"
        )
        grads = page.locator("#graph-svg g.node.value").evaluate_all(
            "els => Object.fromEntries(els.map(g => [g.dataset.name, Number(g.dataset.grad)]))"
        )
        x1, x2 = Value(2.0), Value(0.0)
        w1, w2, b = Value(-3.0), Value(1.0), Value(6.8813735870195432)
        o = (x1 * w1 + x2 * w2 + b).tanh()
        o.backward()
        assert [grads[k] for k in ("x1", "w1", "x2", "w2", "o")] == [
            x1.grad,
            w1.grad,
            x2.grad,
            w2.grad,
            1.0,
        ]
        page.get_by_role("link", name="Train").click()
        page.wait_for_function("() => window.trainView && window.trainView.frame()")
        page.get_by_role("button", name="Play").click()
        page.get_by_text("accuracy 100.0%").wait_for(timeout=120_000)
        page.get_by_role("button", name="Pause").click()
        drawn = page.evaluate("window.trainView.drawn()")
        assert drawn > 1  # frames streamed through the proxy as it trained
        screenshot(page, "train-behind-jupyter-proxy")
        api = [u for u in paths if "/api/" in u]
        assert api and all(u.startswith(base + "api/") for u in api), api[:5]
        assert not [u for u in paths if not u.startswith(lab.url) and not u.startswith("data:")]
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.slow
def test_without_the_trailing_slash_the_proxy_redirects(proxied: Any) -> None:
    """/proxy/PORT and /proxy/PORT/ reach the playground alike, but the page's relative URLs
    resolve against /proxy/ in the first: micrograd's Jupyter extension adds the slash."""
    lab, pg = proxied

    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None  # see the redirect itself, not where it leads

    opener = urllib.request.build_opener(Keep)
    asked = f"{lab.url}proxy/{pg.port}?token={lab.token}"
    with pytest.raises(urllib.error.HTTPError) as answer:
        opener.open(asked, timeout=30)
    assert answer.value.code in (301, 302)
    # relative (./PORT/), so that it holds behind any prefix: read as the browser reads it
    location = answer.value.headers["Location"]
    assert urllib.parse.urljoin(asked, location) == f"{lab.url}proxy/{pg.port}/?token={lab.token}"
    with urllib.request.urlopen(f"{lab.url}proxy/{pg.port}?token={lab.token}", timeout=30) as r:
        assert r.url == f"{lab.url}proxy/{pg.port}/?token={lab.token}"
        assert b'href="static/style.css"' in r.read()


def test_inside_a_jupyterhub_the_hubs_name_is_accepted() -> None:
    # JupyterHub's proxy passes on the Host the browser sent (the hub's own name); its browser is
    # on another machine, so a rebinding page cannot reach this loopback: any name is accepted.
    script = """
import json, urllib.request, urllib.error
from micrograd.playground import serve
with serve(port=0) as pg:
    req = urllib.request.Request(pg.url + "api/train/options",
                                 headers={"Host": "hub.example.org", "X-Session": "hub-user-1"})
    try:
        print(urllib.request.urlopen(req, timeout=30).status)
    except urllib.error.HTTPError as e:
        print(e.code)
"""
    root = os.path.dirname(os.path.dirname(__file__))
    for env, expected in (({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"}, "200"), ({}, "403")):
        run = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            cwd=root,
            timeout=60,
            env={
                **{k: v for k, v in os.environ.items() if k != "JUPYTERHUB_SERVICE_PREFIX"},
                **env,
            },
        )
        assert run.stdout.strip() == expected, (env, run.stdout, run.stderr[-500:])


@pytest.mark.slow
def test_an_event_stream_is_chunked_so_proxies_pass_it_on() -> None:
    # A proxy built on tornado (jupyter-server-proxy) holds a body that ends when the connection
    # does until it ends: frames must come as chunks.
    with serve(port=0) as pg:
        req = urllib.request.Request(pg.url + "api/train/stream?session=chunked-stream-1")
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.headers["Transfer-Encoding"] == "chunked"
            first = r.readline()  # urllib undoes the chunking, as a browser does
            while not first.startswith(b"data: "):
                first = r.readline()
            assert json.loads(first[6:])["type"] == "frame"
