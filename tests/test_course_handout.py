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
