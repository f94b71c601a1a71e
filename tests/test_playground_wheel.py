"""A wheel built from this tree, installed in a fresh virtual environment, serves the playground:
the page's HTML, CSS and JavaScript are really package data, not files that only exist in a
checkout. Offline: the wheel is built without build isolation and installed with --no-deps."""

from __future__ import annotations

import pathlib
import subprocess
import textwrap
import zipfile

import pytest

from .support.building import REPO, clean_env, fresh_venv

_STATIC = REPO / "micrograd" / "playground" / "static"  # its files and its pages' folders'
STATIC = sorted(p.relative_to(_STATIC).as_posix() for p in _STATIC.rglob("*") if p.is_file())

pytest.importorskip("build", reason="the test group's 'build' package builds the wheel")


@pytest.mark.slow
def test_an_installed_wheel_serves_the_playground(
    tmp_path: pathlib.Path, built_dist: dict[str, pathlib.Path]
) -> None:
    wheel = built_dist["wheel"]
    env = clean_env()
    names = zipfile.ZipFile(wheel).namelist()
    # the course's notebooks, and the Jupyter config enabling micrograd's proxy redirect
    assert "micrograd/notebooks/01_derivatives_and_value.ipynb" in names
    assert any(
        n.endswith(".data/data/etc/jupyter/jupyter_server_config.d/micrograd.json") for n in names
    ), names
    for name in STATIC:
        assert f"micrograd/playground/static/{name}" in names, name

    venv = tmp_path / "venv"
    python = fresh_venv(venv)
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]

    # In the fresh venv, away from the checkout: start the server, fetch every static file and
    # build a graph through the API.
    script = textwrap.dedent(f"""
        import json, pathlib, urllib.request
        import micrograd.playground as pg
        assert pathlib.Path(pg.__file__).is_relative_to({str(venv)!r}), pg.__file__
        handle = pg.serve()
        try:
            page = urllib.request.urlopen(handle.url, timeout=10).read().decode()
            assert "Expression" in page and "static/explorer/explorer.js" in page
            for name in {STATIC!r}:
                body = urllib.request.urlopen(handle.url + "static/" + name, timeout=10).read()
                assert len(body) > 100, name
            req = urllib.request.Request(
                handle.url + "api/explorer/load",
                data=json.dumps({{"program": "a = 2.0; b = -3.0; e = a*b"}}).encode(),
                headers={{"Content-Type": "application/json", "X-Session": "wheel-test-1"}})
            state = json.loads(urllib.request.urlopen(req, timeout=30).read())
            assert len(state["drawing"]["nodes"]) == 4, state
        finally:
            handle.stop()
        print("served", len({STATIC!r}), "files")
    """)
    run = subprocess.run(
        [str(python), "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"served {len(STATIC)} files" in run.stdout
