"""A real JupyterLab (PyPI `jupyterlab`) for the browser tests: started in a folder of the test's,
on a free loopback port with a token, its settings and runtime files in that folder, the news
prompt off. `notebook(cells)` writes a notebook there; `open_and_run(page, name)` opens it in
Chromium and runs all its cells (Run > Run All Cells, as a learner does)."""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    def __init__(self, root: pathlib.Path, port: int, token: str) -> None:
        self.root, self.port, self.token = root, port, token
        self.url = f"http://127.0.0.1:{port}/"

    def notebook(self, name: str, cells: Sequence[str]) -> str:
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "source": c,
                    "outputs": [],
                    "execution_count": None,
                }
                for c in cells
            ],
            "metadata": {
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.root / name).write_text(json.dumps(nb))
        return name

    def open_and_run(self, page: Any, name: str) -> None:
        # The notebook's kernel, started first through the REST API: the page then finds it
        # running (rather than maybe asking which kernel to start).
        req = urllib.request.Request(
            f"{self.url}api/sessions?token={self.token}",
            method="POST",
            data=json.dumps(
                {"path": name, "type": "notebook", "name": name, "kernel": {"name": "python3"}}
            ).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=60).close()
        # A workspace of its own: JupyterLab reopens nothing of an earlier test's notebooks
        # (their widgets and kernel indicators would be on the page too).
        workspace = pathlib.Path(name).stem
        page.goto(f"{self.url}lab/workspaces/{workspace}/tree/{name}?token={self.token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        # The kernel idle, and no dialog over the notebook for a second: JupyterLab may still ask
        # which kernel to use (then: the Python one), and a click under a dialog does nothing.
        dialog = page.locator(".jp-Dialog")
        calm_since, deadline = None, time.monotonic() + 60
        while True:
            if dialog.count():
                calm_since = None
                choose = dialog.get_by_role("button", name="Select", exact=True)
                if choose.count():
                    choose.click()
            elif page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count():
                calm_since = calm_since or time.monotonic()
                if time.monotonic() - calm_since > 1.0:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("the notebook's kernel did not become idle within 60 s")
            page.wait_for_timeout(100)
        # Run All, and see that it took. On a loaded machine JupyterLab may still ask which
        # kernel to use after that calm second (its dialog then takes the click, and no cell
        # ran: the test waited its whole limit for outputs that never came), or miss the click
        # as the menu closes. So: a cell started, else the kernel's dialog answered (Select)
        # and Run All again; any other dialog fails at once, in its own words.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            self._answer_kernel_dialog(page)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            started = time.monotonic()
            while time.monotonic() - started < 30:
                if page.evaluate(STARTED):
                    return
                if dialog.count():
                    break  # answered (or reported) at the top of the loop, then Run All again
                page.wait_for_timeout(200)
        raise TimeoutError(f"Run All Cells ran no cell within 3 minutes: {self.cells(page)}")

    def _answer_kernel_dialog(self, page: Any) -> None:
        """JupyterLab's question which kernel to use: the Python one (Select). Another dialog
        over the notebook: an AssertionError with its text."""
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            return
        choose = dialog.get_by_role("button", name="Select", exact=True)
        if not choose.count():
            raise AssertionError(f"JupyterLab shows a dialog: {dialog.first.inner_text()[:300]!r}")
        choose.click()
        dialog.first.wait_for(state="detached", timeout=30_000)

    def cells(self, page: Any) -> str:
        """What the notebook on the page shows, for a failure's message: each code cell's
        prompt ([ ], [*] running or queued, [3] done) and the start of any error it shows."""
        return page.evaluate(CELLS)

    def wait_for(self, page: Any, expression: str, timeout: float) -> None:
        """`page.wait_for_function(expression)`, failing with what the cells show (a cell that
        raised is named, rather than a bare time-out)."""
        try:
            page.wait_for_function(expression, polling=200, timeout=timeout)
        except PlaywrightTimeout:
            shown = self.cells(page)
            raise AssertionError(f"{expression} not within {timeout / 1000:g} s: {shown}") from None


# Some code cell's prompt is no longer "[ ]:" (it runs, waits to, or has run).
STARTED = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .some(p => /\\[[*0-9]/.test(p.textContent))"""
CELLS = """() => [...document.querySelectorAll('.jp-CodeCell')].map((c, i) => {
    const prompt = (c.querySelector('.jp-InputArea-prompt') || {}).textContent || '?';
    const err = c.querySelector('.jp-OutputArea-output[data-mime-type*="error"], ' +
                                '.jp-OutputArea-output[data-mime-type*="stderr"]');
    return `cell ${i} ${prompt.trim()}` + (err ? ` ${err.textContent.slice(0, 300)}` : '');
}).join('; ')"""


def hide_jupyterlite_kernel(data: pathlib.Path) -> None:
    """JupyterLite's kernel extension (the extra [site], for the course's build, installed beside
    JupyterLab) is for JupyterLite only: JupyterLab cannot load it and logs an error. A
    package.json of that name without a build, in `data` (put first on JUPYTER_PATH), is found
    instead, and JupyterLab skips it."""
    stub = data / "labextensions" / "@jupyterlite" / "pyodide-kernel-extension"
    stub.mkdir(parents=True, exist_ok=True)
    (stub / "package.json").write_text(
        '{"name": "@jupyterlite/pyodide-kernel-extension", "version": "0.0.0", "jupyterlab": {}}'
    )


@contextmanager
def jupyterlab(folder: pathlib.Path, extra_args: Sequence[str] = ()) -> Iterator[Lab]:
    """A running JupyterLab serving `folder`/root; stopped (and its kernels) at the end."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("JupyterLab is not installed (CI must run the notebook widget tests)")
        pytest.skip("JupyterLab is not installed (pip install -e . --group test)")
    root = folder / "root"
    root.mkdir(parents=True, exist_ok=True)
    settings = folder / "settings" / "@jupyterlab"
    for ext, name, text in (
        ("apputils-extension", "notification", '{"fetchNews": "false"}'),  # no news prompt
        # every cell in the page, not only those in view
        ("notebook-extension", "tracker", '{"windowingMode": "none"}'),
    ):
        (settings / ext).mkdir(parents=True, exist_ok=True)
        (settings / ext / f"{name}.jupyterlab-settings").write_text(text)
    hide_jupyterlite_kernel(folder / "data")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(folder / "config"),
        "JUPYTER_PATH": str(folder / "data"),  # hide_jupyterlite_kernel's
        "JUPYTERLAB_SETTINGS_DIR": str(folder / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(folder / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
        "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2]),
    }
    log = open(folder / "jupyterlab.log", "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *extra_args,
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5
                )
                break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(
                        "JupyterLab did not start: "
                        + (folder / "jupyterlab.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.25)
        yield Lab(root, port, token)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
