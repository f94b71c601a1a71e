"""Another web page open in the same browser cannot touch a learner's playground session: a page
served from a second origin (another port of 127.0.0.1) fires 70 <img> GETs with new session ids
(more sessions than the server keeps: each would push out the oldest, the learner's), a form
POST and no-cors fetches with the learner's session id at the playground's routes, and the
learner's training and explorer carry on as they were. Real Chromium, so the browser's own
Origin and Sec-Fetch-Site headers are what the server sees."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

ATTACK = """<!doctype html><html><body><iframe name="sink"></iframe>
<form id="f" method="POST" action="{url}api/train/control" target="sink" enctype="text/plain">
<input name='{{"action":"reset","x":"' value='"}}'></form><script>
const url = {url!r}, s = {session!r};
for (let i = 0; i < 70; i++) {{  // 70 new sessions: more than the server keeps (64)
  const img = new Image();
  img.src = `${{url}}api/train/state?session=${{s}}x${{i}}`;
  document.body.appendChild(img);
}}
const routes = ["api/train/control", "api/train/config", "api/explorer/load", "api/explorer/reset"];
Promise.all(routes.map((r) => fetch(url + r + "?session=" + s, {{method: "POST", mode: "no-cors",
  body: JSON.stringify({{action: "reset", program: "a = 1.0"}})}})
  .then(() => "sent", (e) => "refused: " + e.message)))
  .then((out) => {{ document.getElementById("f").submit(); window.fetched = out; }});
</script></body></html>"""


def _post(url: str, path: str, body: Any, session: str) -> Any:
    """A request as the playground's own page sends it (same origin: no Origin header)."""
    req = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Session": session},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.fixture
def other_origin(playground: str) -> Iterator[Any]:
    """A second web server on another port: its pages are another origin."""
    pages: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = pages.get(self.path, "not here").encode()
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass  # quiet: the test reads what matters from the playground's side

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield pages, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_page_from_another_origin_cannot_touch_the_session(
    browser: Any, playground: str, other_origin: Any
) -> None:
    pages, origin = other_origin
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    learner = context.new_page()
    try:
        learner.goto(playground + "train")
        learner.wait_for_function("() => window.trainView && window.trainView.frame()")
        for _ in range(5):
            learner.get_by_role("button", name="Step", exact=True).click()
        learner.wait_for_function(
            "() => document.querySelector('#step-count').textContent.trim() === 'step 5'"
        )
        session = learner.evaluate("() => sessionStorage.getItem('micrograd-session')")
        # the explorer in the same session, with a graph (as the Explorer tab would make it)
        assert _post(playground, "api/explorer/load", {"program": "a = 2.0; b = a*a"}, session)

        pages["/attack.html"] = ATTACK.format(url=playground, session=session)
        attacker = context.new_page()
        attacker.goto(origin + "/attack.html")
        attacker.wait_for_function("() => window.fetched !== undefined")
        attacker.wait_for_timeout(500)  # the form's answer lands in the iframe
        attacker.close()

        # The learner's explorer still has its graph: the next action is answered, not a 409.
        state = _post(playground, "api/explorer/backward", {}, session)
        assert state["phase"] == "done" and state["values"][state["output"]]["data"] == 4.0
        # ... and its training goes on from step 5, not from a reset.
        learner.get_by_role("button", name="Step", exact=True).click()
        learner.wait_for_function(
            "() => document.querySelector('#step-count').textContent.trim() === 'step 6'"
        )
    finally:
        context.close()
