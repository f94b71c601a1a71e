"""Two refusals every transport shares, over HTTP and in Chromium:

* a number no float can hold (a 400-digit integer, which Python's json reads as an int) or one
  that is not finite (``1e400`` in JSON reads as inf), anywhere in a request, is a 400 with its
  reason for every action of both views (`views.Tab.call` checks it before any action runs), not
  a 500 from an OverflowError deep inside;
* no other site can frame the playground's pages (``frame-ancestors 'self'``); the page itself
  may; a page on a static host, which sends no such header, declines to run framed by another
  site."""

from __future__ import annotations

import functools
import http.server
import json
import pathlib
import shutil
import threading
import urllib.error
import urllib.request
from importlib import resources
from typing import Any

import pytest

from micrograd.playground import Tab
from micrograd.playground.errors import ViewError
from micrograd.playground.views import ExplorerView, TrainView
from tests.test_playground_cross_site import other_origin  # noqa: F401  (a fixture)

BIG = 10**400  # 401 digits: float(BIG) overflows
HUGE = "1e400"  # a JSON number that reads as inf

# For each action, a body with the big number where that action reads a number (or an id, or
# text), and once nested deep inside what it reads.
BODIES: dict[str, list[dict[str, Any]]] = {
    "explorer": [
        {"program": "a = 2.0", "layout": BIG},
        {"node": "v0", "value": BIG},
        {"node": BIG, "role": "param"},
        {"lr": BIG},
        {"from": {"x": [BIG, 0.0], "model": {"layers": [[BIG]]}}},
    ],
    "train": [
        {"lr": BIG},
        {"action": "step", "steps": BIG},
        {"added": [[BIG, 0.0, 1]]},
        {"index": BIG},
        {"layer": 0, "neuron": 0, "input": 0, "value": BIG},
        {"settings": {"hidden": [BIG]}},
    ],
}
ACTIONS = [("explorer", a) for a in ExplorerView.ACTIONS] + [
    ("train", a) for a in TrainView.ACTIONS
]


def post_raw(url: str, path: str, raw: bytes, session: str) -> tuple[int, Any]:
    req = urllib.request.Request(
        url + path, data=raw, headers={"Content-Type": "application/json", "X-Session": session}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("view, action", ACTIONS, ids=[f"{v}/{a}" for v, a in ACTIONS])
def test_a_number_no_float_holds_is_a_400_with_its_reason_everywhere(
    playground: str, view: str, action: str
) -> None:
    session = f"numbers-{view}-{action}"
    # a graph first, so that no action is refused for coming too early (409) instead
    post_raw(playground, "api/explorer/load", b'{"program": "a = 2.0; b = a*a"}', session)
    for body in BODIES[view]:
        status, answer = post_raw(
            playground, f"api/{view}/{action}", json.dumps(body).encode(), session
        )
        assert status == 400, (body, answer)
        assert "digits, too large" in answer["error"] and "\n" not in answer["error"], answer
    raw = f'{{"value": {HUGE}, "lr": {HUGE}}}'.encode()
    status, answer = post_raw(playground, f"api/{view}/{action}", raw, session)
    assert status == 400 and "numbers must be finite" in answer["error"], answer


def test_the_reason_names_where_the_number_is() -> None:
    tab = Tab()  # the same check for the notebook widget and the static site's worker
    with pytest.raises(ViewError, match=r"^from\.x\[0\] is a whole number of about 401 digits"):
        tab.call("explorer", "point", {"from": {"x": [BIG]}})
    with pytest.raises(ViewError, match=r"^added\[0\]\[1\] is inf"):
        tab.call("train", "points", {"added": [[0.0, float("inf"), 1]]})
    # numbers a float holds are still numbers: 2**1000 is a fine (if large) integer
    tab.call("explorer", "load", {"program": "a = 2.0; b = a*a"})
    with pytest.raises(ViewError, match="between -1e15 and 1e15"):
        tab.call("explorer", "set", {"node": "v1", "value": 2**1000})


# ------------------------------------------------------------------ framing


def test_pages_say_no_other_site_may_frame_them(playground: str) -> None:
    for path in ("", "train", "index.html", "train.html"):
        with urllib.request.urlopen(playground + path, timeout=30) as r:
            csp = r.headers["Content-Security-Policy"]
            assert "frame-ancestors 'self'" in csp, path
            assert r.headers["X-Frame-Options"] == "SAMEORIGIN"


def test_another_site_cannot_frame_the_page_but_the_page_itself_can(
    browser: Any,
    playground: str,
    other_origin: Any,  # noqa: F811
) -> None:
    pages, origin = other_origin
    pages["/frame.html"] = (
        f'<!doctype html><iframe id="f" src="{playground}train" width="800" height="600"></iframe>'
    )
    context = browser.new_context()
    refused: list[str] = []
    try:
        page = context.new_page()
        page.on(
            "console",
            lambda m: (
                refused.append(m.text)
                if "frame-ancestors" in m.text or "X-Frame-Options" in m.text
                else None
            ),
        )
        page.goto(origin + "/frame.html")
        page.wait_for_function("() => document.readyState === 'complete'")
        page.wait_for_timeout(500)
        frame = page.frame_locator("#f")
        # Chromium shows its own error page in the frame: none of the playground's markup is there
        assert frame.locator("body[data-view='train']").count() == 0
        assert refused, "Chromium did not say it refused the frame"
        # the playground's own page may frame itself (and a notebook through the same origin)
        own = context.new_page()
        own.goto(playground)
        own.wait_for_selector("body[data-ready='1']")
        own.evaluate("""() => { const f = document.createElement('iframe');
            f.id = 'self-frame'; f.src = 'train'; document.body.append(f); }""")
        own.frame_locator("#self-frame").locator("body[data-view='train']").wait_for(
            state="attached"
        )
    finally:
        context.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def test_a_page_on_a_static_host_declines_to_run_framed_by_another_site(
    browser: Any,
    other_origin: Any,  # noqa: F811  (the fixture imported above)
    tmp_path: pathlib.Path,
) -> None:
    # A static host (as the static site's) sends no frame-ancestors: the page itself declines,
    # and says so. The folder as a site lays it out: the page, and static/ beside it.
    static = pathlib.Path(str(resources.files("micrograd.playground") / "static"))
    shutil.copyfile(static / "index.html", tmp_path / "index.html")
    (tmp_path / "static").symlink_to(static)
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=host.serve_forever, daemon=True).start()
    pages, origin = other_origin
    url = f"http://127.0.0.1:{host.server_address[1]}/index.html"
    pages["/frame-static.html"] = f'<!doctype html><iframe id="f" src="{url}"></iframe>'
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(origin + "/frame-static.html")
        frame = page.frame_locator("#f")
        boot = frame.locator("#boot")
        boot.wait_for()
        assert "does not run inside another site's page" in boot.text_content()
        assert frame.locator("main").count() == 0
        assert frame.get_by_role("link", name="Open it").get_attribute("target") == "_blank"
    finally:
        context.close()
        host.shutdown()
        host.server_close()
