"""A class's hand-out, built as a teacher builds it: `micrograd site OUT --no-solutions` ships no
solution anywhere (not in the course's notebooks, not in its listing or start page, not inside a
shipped wheel or archive), and its notebooks are `micrograd course DIR --no-solutions`'s.

Slow: the hand-out is built (the site and its JupyterLite course) from scratch, once, by the
wheel installed in a fresh virtual environment."""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import pathlib
import re
import subprocess
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest

from micrograd.commands.cli import main
from micrograd.core import setup_cell
from micrograd.site import course_app as course_site

from .conftest import _unavailable, with_names
from .support.serving import served

# pytest-timeout's limit above the half hour its notebooks' run may take on a loaded machine
# (its own limits, below, say what hung first)
pytestmark = [pytest.mark.slow, pytest.mark.jupyter, pytest.mark.timeout(2400)]

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
    """Every file under folder, every member of every zip archive (wheels) among them, and every
    gzipped file unpacked (Python's saved memories: the site's and its course kernel's)."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        out[p.relative_to(folder).as_posix()] = data
        if p.suffix == ".gz":
            out[f"{p.relative_to(folder).as_posix()}!gunzipped"] = gzip.decompress(data)
        if p.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(p) as z:
                for m in z.namelist():
                    out[f"{p.relative_to(folder).as_posix()}!{m}"] = z.read(m)
    return out


@pytest.fixture(scope="module")
def handed_out(tmp_path_factory: Any, built_dist: dict[str, pathlib.Path]) -> pathlib.Path:
    """The hand-out as the README says a teacher builds it, away from the clone: the wheel (the
    session's, built once) installed with the `site` extra into a fresh virtual environment
    (not editable: the notebooks are package data), then `micrograd site OUT --no-solutions`.
    Built once: every test of this file reads it."""
    pytest.importorskip("build", reason="the test group's 'build' package builds the wheel")
    if course_site.tools_missing():
        _unavailable(course_site.TOOLS_MISSING)
    from micrograd.site.static_site import default_cache

    from .support.building import clean_env, fresh_venv, venv_bin

    here = tmp_path_factory.mktemp("handout")
    python = fresh_venv(here / "venv")
    with with_names():
        env = clean_env()
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{built_dist['wheel']}[site]"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    away = here / "away"  # no micrograd/ or notebooks/ beside it
    away.mkdir()
    out = away / "s"
    done = subprocess.run(
        [
            str(venv_bin(here / "venv") / "micrograd"),
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
    assert (out / "course" / "lab" / "index.html").is_file(), said
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


def test_the_wheel_with_the_site_extra_builds_the_course(
    handed_out: pathlib.Path, built_dist: dict[str, pathlib.Path]
) -> None:
    """The wheel installed with the `site` extra has every build tool (jupyter-server among
    them), and `micrograd site OUT` builds the course from the installed package's notebooks
    (`handed_out`: the build, away from the clone)."""
    inside = zipfile.ZipFile(built_dist["wheel"]).namelist()
    assert {f"micrograd/notebooks/{n}.ipynb" for n in course_site.NOTEBOOKS} <= set(inside)
    course = handed_out / "course"
    assert (course / "lab" / "index.html").is_file() and (course / course_site.PAGE).is_file()
    listed = json.loads((course / "api" / "contents" / "all.json").read_text())["content"]
    assert sorted(f["name"] for f in listed) == [f"{n}.ipynb" for n in course_site.NOTEBOOKS]
    for name in course_site.NOTEBOOKS:  # the installed package's notebooks, handed out
        nb = json.loads((course / "files" / f"{name}.ipynb").read_text())
        assert nb["cells"][1]["source"] == setup_cell.INSTALLED_SETUP
        assert "solution" not in json.dumps(nb).lower()


@pytest.fixture(scope="module")
def handout_url(handed_out: pathlib.Path) -> Iterator[str]:
    with served(handed_out.parent) as url:
        yield f"{url}{handed_out.name}/"


SLOPE = "def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / h"


@pytest.mark.browser
@pytest.mark.sandbox
def test_download_my_work_is_an_archive_the_grader_takes(
    browser: Any, handout_url: str, tmp_path: pathlib.Path, screenshot: Any
) -> None:
    """A learner, offline in Chromium, fills in notebook 1's first exercise, clicks "Download
    my work" in the notebook's save line (asked their name, once) and again on the start page
    (not asked again): one archive named for them, holding their edit and the other notebooks;
    `micrograd grade` takes it in a class folder as theirs."""
    from micrograd.grading import sandbox as grade_sandbox

    from .test_course_site import CELL_INDEX, KERNEL_IDLE, START_MS, App

    app = App(browser, handout_url)
    page = app.page
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept("Ada Lovelace")))
    name = f"{course_site.NOTEBOOKS[0]}.ipynb"
    klass = tmp_path / "class"
    klass.mkdir()
    try:
        page.goto(handout_url + f"course/notebooks/index.html?path={name}")
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
        exercise = page.evaluate(CELL_INDEX, ["exercise", "slope"])
        page.evaluate(
            "([i, s]) => window.jupyterapp.shell.currentWidget.content.widgets[i].model"
            ".sharedModel.setSource(s)",
            [exercise, SLOPE],
        )
        link = page.locator("a", has_text="Download my work").first
        assert link.get_attribute("href") == course_site.DOWNLOAD_LINK
        with page.expect_download() as got:
            link.click()  # at once: what the autosave has not written yet is in it too
        assert got.value.suggested_filename == "Ada-Lovelace.zip"
        first = tmp_path / "first.zip"
        got.value.save_as(first)
        assert len(asked) == 1 and "Your name" in asked[0]
        page.goto(handout_url + f"course/{course_site.PAGE}")
        button = page.get_by_role("link", name="Download my work")
        box = button.bounding_box()
        assert box and box["height"] >= 44, box
        screenshot(page, "course-start-download-1280")
        with page.expect_download() as got:
            button.click()
        assert got.value.suggested_filename == "Ada-Lovelace.zip" and len(asked) == 1
        got.value.save_as(klass / "Ada-Lovelace.zip")
    finally:
        app.close()
    for archive in (first, klass / "Ada-Lovelace.zip"):
        with zipfile.ZipFile(archive) as z:
            assert z.testzip() is None
            assert sorted(z.namelist()) == [
                f"Ada-Lovelace/{n}.ipynb" for n in course_site.NOTEBOOKS
            ]
            nb = json.loads(z.read(f"Ada-Lovelace/{name}"))
            mine = [c for c in nb["cells"] if c["metadata"].get("exercise") == "slope"]
            assert ["".join(c["source"]) for c in mine] == [SLOPE]
    out = tmp_path / "grades.csv"
    sandbox = [] if grade_sandbox.bwrap() else ["--no-sandbox"]
    said = io.StringIO()
    # each cell's limit given, as test_chapter_7_is_graded_like_the_others gives it: limits
    # from the course's own runs (test_a_bug_in_a_flat_folder_blocks_by_name's) would run all
    # nine of the course's notebooks first, 66 s of CPU against 7 s for the archive's nine
    with contextlib.redirect_stdout(said):
        status = main(["grade", str(klass), "--csv", str(out), "--timeout", "300", *sandbox])
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["learner"] for r in rows} == {"Ada-Lovelace"}, said.getvalue()
    one = {r["exercise"]: r["result"] for r in rows if r["notebook"].startswith("01")}
    assert one["slope"] == "passed", said.getvalue()
    assert {v for k, v in one.items() if k != "slope"} == {"not attempted"}
    assert {r["result"] for r in rows} <= {"passed", "not attempted", "skipped"}, rows
    assert status == 0
