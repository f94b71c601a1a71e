"""Sharing the playground with a class: `--host 0.0.0.0 --token T` prints the URLs students open
(the machine's name and addresses, token included), and the host-name URL works in Chromium;
without the token a request is refused; two playgrounds on two ports keep their own tokens;
tabs past the session cap: an idle one makes room, one watching its training never does, and
when every one does, the new tab is told so in one line (and the console once)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from micrograd.playground import serve
from micrograd.playground.serving.web import Sessions, SessionsFull
from tests.conftest import watch_errors

REPO = Path(__file__).resolve().parents[1]


def get(url: str, session: str = "", headers: dict[str, str] | None = None) -> tuple[int, Any]:
    h = {"X-Session": session} if session else {}
    req = urllib.request.Request(url, headers={**h, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_the_command_prints_the_urls_students_open_and_the_host_name_one_works(
    browser: Any, screenshot: Any
):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "micrograd",
            "playground",
            "--no-browser",
            "--port",
            "0",
            "--host",
            "0.0.0.0",
            "--token",
            "class-of-30-token",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert "serving http://" in lines[0] and "other machines open it at" in lines[1], lines
        name_url = lines[2].strip()
        port = int(re.search(r":(\d+)/", name_url).group(1))
        assert name_url == f"http://{socket.gethostname()}:{port}/?token=class-of-30-token"
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(name_url)  # by the machine's name, as a student's browser opens it
        page.wait_for_selector("body[data-ready='1']")
        page.get_by_role("button", name="Backward pass").click()
        page.wait_for_function(
            "() => document.querySelector('#status').textContent.includes('done')"
        )
        screenshot(page, "shared-by-host-name")
        context.close()
        assert not errors, errors
        bare = name_url.split("?")[0]
        status, answer = get(bare + "api/explorer/examples", "no-token-tab-1")
        assert status == 403 and "needs its token" in answer["error"]
        assert get(bare, headers={"Host": "evil.example:80"})[0] == 403  # no token, any Host
        status, _ = get(name_url, headers={"Host": "evil.example:80"})
        assert status == 200  # the token is what counts, as in Jupyter
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    finally:
        proc.kill()


def test_two_playgrounds_on_two_ports_keep_their_own_tokens(browser: Any) -> None:
    with serve(port=0, token="first-token-1") as one, serve(port=0, token="second-token") as two:
        context = browser.new_context()
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(one.url)
        page.wait_for_selector("body[data-ready='1']")
        page.goto(two.url)
        page.wait_for_selector("body[data-ready='1']")
        # both cookies are kept (cookies ignore ports: one name for both would be overwritten)
        names = {c["name"]: c["value"] for c in context.cookies()}
        assert names[f"micrograd_playground_token_{one.port}"] == "first-token-1"
        assert names[f"micrograd_playground_token_{two.port}"] == "second-token"
        page.goto(one.url.split("?")[0])  # no token in the URL: the cookie carries it
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#status").text_content().startswith("Graph built")
        context.close()
        assert not errors, errors


@pytest.mark.slow
def test_past_the_cap_an_idle_tab_makes_room_and_a_watching_one_never_does() -> None:
    now = [0.0]
    closed: list[str] = []
    sessions = Sessions(limit=3, clock=lambda: now[0])
    for sid in ("tab-a-0000", "tab-b-0000", "tab-c-0000"):
        now[0] += 1
        sessions.get(sid).on_close.append(lambda sid=sid: closed.append(sid))
    sessions.get("tab-a-0000").streams = 1  # a is watching its training (and was seen last)
    sessions.get("tab-b-0000").streams = 1
    now[0] += 1
    sessions.get("tab-d-0000")  # c is the one not watching: it goes, though b was seen earlier
    assert closed == ["tab-c-0000"] and len(sessions) == 3
    sessions.get("tab-d-0000").streams = 1
    with pytest.raises(SessionsFull, match="--max-sessions is 3"):
        sessions.get("tab-e-0000")
    assert len(sessions) == 3 and closed == ["tab-c-0000"]  # nobody watching was dropped


@pytest.mark.slow
def test_a_full_playground_says_so_in_one_line() -> None:
    with serve(port=0, max_sessions=2) as pg:
        streams = []
        for sid in ("watching-1", "watching-2"):
            r = urllib.request.urlopen(pg.url + f"api/train/stream?session={sid}", timeout=30)
            r.readline()
            streams.append(r)
        try:
            status, answer = get(pg.url + "api/train/options", "third-tab-1")
            assert status == 503 and "--max-sessions" in answer["error"]
            assert "\n" not in answer["error"]
        finally:
            for r in streams:
                r.close()
    with pytest.raises(ValueError, match="max_sessions"):
        serve(port=0, max_sessions=0)
