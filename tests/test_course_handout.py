"""A class's hand-out, built as a teacher builds it: `micrograd site OUT --no-solutions` ships no
solution anywhere (not in the course's notebooks, not in its listing or start page, not inside a
shipped wheel or archive), and its notebooks are `micrograd course DIR --no-solutions`'s.

Slow: each test builds the course (JupyterLite) from scratch."""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re
import subprocess
import zipfile
from typing import Any

import pytest

from micrograd.commands.cli import main
from micrograd.core import setup_cell
from micrograd.playground import course_site

from .conftest import _unavailable

pytestmark = [pytest.mark.slow, pytest.mark.jupyter]

ROOT = pathlib.Path(__file__).resolve().parents[1]


def solution_code() -> dict[str, list[str]]:
    """Each course notebook's solutions: the code of every cell tagged "solution" (the block
    between ```python and ```), read from the course's own notebooks."""
    found: dict[str, list[str]] = {}
    for name in course_site.NOTEBOOKS:
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        for cell in nb["cells"]:
            if "solution" in cell["metadata"].get("tags", []):
                text = "".join(cell["source"])
                blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
                assert blocks, f"{name}: a solution cell without its code: {text[:80]!r}"
                found.setdefault(name, []).extend(b.strip() for b in blocks)
    return found


def _everything(folder: pathlib.Path) -> dict[str, bytes]:
    """Every file under folder, and every member of every zip archive (wheels) among them."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        out[p.relative_to(folder).as_posix()] = data
        if p.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(p) as z:
                for m in z.namelist():
                    out[f"{p.relative_to(folder).as_posix()}!{m}"] = z.read(m)
    return out


@pytest.fixture(scope="module")
def handed_out(tmp_path_factory: Any) -> pathlib.Path:
    if course_site.tools_missing():
        _unavailable(course_site.TOOLS_MISSING)
    out = tmp_path_factory.mktemp("handout") / "s"
    said, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        status = main(["site", str(out), "--no-solutions"])
    if status != 0 and "npm is needed" in err.getvalue():
        _unavailable(err.getvalue().strip())
    assert status == 0, said.getvalue() + err.getvalue()
    assert (out / "course" / "lab" / "index.html").is_file(), said.getvalue()
    return out


def test_the_sites_course_ships_no_solution_anywhere(
    handed_out: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    solutions = solution_code()
    assert sum(map(len, solutions.values())) >= 10  # the course has them: there is a truth
    course = handed_out / "course"
    # the app's notebooks: no solution cell, no word of one, else the course's own cells
    assert main(["course", str(tmp_path / "copies"), "--no-lab", "--no-solutions"]) == 0
    for name in course_site.NOTEBOOKS:
        shipped = json.loads((course / "files" / f"{name}.ipynb").read_text())
        assert not [c for c in shipped["cells"] if "solution" in c["metadata"].get("tags", [])]
        assert "solution" not in json.dumps(shipped).lower(), name
        copy = json.loads((tmp_path / "copies" / f"{name}.ipynb").read_text())
        # the same hand-out as `micrograd course --no-solutions`, but for the browser's note
        # on where work is kept (the title's last line) and the kernel's name
        assert shipped["cells"][1]["source"] == setup_cell.INSTALLED_SETUP
        assert "".join(shipped["cells"][0]["source"]).startswith(
            "".join(copy["cells"][0]["source"])
        )
        assert shipped["cells"][1:] == copy["cells"][1:], name
    listing = (course / "api" / "contents" / "all.json").read_text()
    assert "solution" not in listing.lower()
    assert "solution" not in (course / course_site.PAGE).read_text().lower()
    # and no solution's code in any file of the whole site, nor inside any wheel or archive
    files = _everything(handed_out)
    assert any("micrograd_plus" in name and name.endswith(".whl") for name in files)
    for name, blocks in solutions.items():
        for code in blocks:
            for form in (code, json.dumps(code)[1:-1]):
                where = [f for f, data in files.items() if form.encode() in data]
                assert not where, f"{name}'s solution {code[:60]!r} is in {where}"


def test_the_wheel_with_the_site_extra_builds_the_course(tmp_path: pathlib.Path) -> None:
    """As the README says to run it, away from the clone: the wheel installed with the `site`
    extra into a fresh virtual environment (not editable: the notebooks are package data) has
    every build tool (jupyter-server among them), and `micrograd site OUT` builds the course."""
    pytest.importorskip("build", reason="the test extra's 'build' package builds the wheel")
    from micrograd.playground.site import default_cache

    from .support.building import build, clean_env, fresh_venv, venv_bin

    wheel = build(tmp_path)["wheel"]
    inside = zipfile.ZipFile(wheel).namelist()
    assert {f"micrograd/notebooks/{n}.ipynb" for n in course_site.NOTEBOOKS} <= set(inside)
    python = fresh_venv(tmp_path / "venv")
    env = clean_env()
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[site]"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    away = tmp_path / "away"  # no micrograd/ or notebooks/ beside it
    away.mkdir()
    out = away / "s"
    done = subprocess.run(
        [
            str(venv_bin(tmp_path / "venv") / "micrograd"),
            "site",
            str(out),
            "--no-solutions",
            "--cache",
            str(default_cache()),  # Pyodide and the course's wheels, as the other builds had them
        ],
        cwd=away,
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    said = done.stdout + done.stderr
    if done.returncode != 0 and "npm is needed" in said:
        _unavailable(said.strip())
    assert done.returncode == 0, said[-3000:]
    assert course_site.TOOLS_MISSING not in said and "left out" not in said, said
    assert "jupyter lite build failed" not in said
    course = out / "course"
    assert (course / "lab" / "index.html").is_file() and (course / course_site.PAGE).is_file()
    listed = json.loads((course / "api" / "contents" / "all.json").read_text())["content"]
    assert sorted(f["name"] for f in listed) == [f"{n}.ipynb" for n in course_site.NOTEBOOKS]
    for name in course_site.NOTEBOOKS:  # the installed package's notebooks, handed out
        nb = json.loads((course / "files" / f"{name}.ipynb").read_text())
        assert nb["cells"][1]["source"] == setup_cell.INSTALLED_SETUP
        assert "solution" not in json.dumps(nb).lower()
