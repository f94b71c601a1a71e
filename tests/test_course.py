"""`micrograd course`: a learner's copies of the notebooks written into a folder (never over a
file already there), without the folded solutions on request, and JupyterLab opened on them,
as a learner starts the course (the page checked in Chromium)."""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from typing import Any

import pytest

from micrograd.commands.cli import main
from tests.conftest import watch_errors
from tests.support.jupyterlab import free_port, hide_jupyterlite_kernel

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb"))


def same_but_setup(copy: str, course: str) -> bool:
    """The copy is the course's notebook, but for its set-up cell: one line, where micrograd
    is installed (no pip, no REPO placeholder)."""
    theirs, ours = json.loads(copy), json.loads(course)
    setup = [i for i, c in enumerate(ours["cells"]) if "setup" in c["metadata"].get("tags", [])]
    assert setup == [1], "the set-up cell is the one below the title"
    line = "".join(theirs["cells"][1]["source"])
    assert line == "import micrograd.check   # set-up", line
    theirs["cells"][1]["source"] = ours["cells"][1]["source"]
    return theirs == ours


def test_the_copies_are_the_courses_and_a_second_run_keeps_a_learners_work(
    tmp_path: pathlib.Path, capsys: Any
) -> None:
    folder = tmp_path / "course"
    assert main(["course", str(folder), "--no-lab"]) == 0
    assert sorted(p.name for p in folder.iterdir()) == NAMES and len(NAMES) == 9
    for name in NAMES:
        assert same_but_setup((folder / name).read_text(), (NOTEBOOKS / name).read_text())
    assert capsys.readouterr().out.splitlines() == [
        f"micrograd course: wrote 9 notebooks into {folder} (solutions folded)"
    ]
    mine = folder / NAMES[0]
    mine.write_text(mine.read_text().replace("def slope(", "def my_slope("))
    (folder / NAMES[1]).unlink()
    assert main(["course", str(folder), "--no-lab"]) == 0
    assert "def my_slope(" in mine.read_text()  # the learner's edit stays
    assert same_but_setup((folder / NAMES[1]).read_text(), (NOTEBOOKS / NAMES[1]).read_text())
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"micrograd course: wrote 1 notebooks into {folder} (solutions folded)"
    assert out[1].startswith(f"micrograd course: kept 8 already in {folder}, never overwritten")
    assert NAMES[0] in out[1] and NAMES[1] not in out[1]


def _words(source: Any) -> list[str]:
    return ("".join(source) if isinstance(source, list) else source).split()


def test_copies_without_solutions_hold_no_solution(tmp_path: pathlib.Path) -> None:
    """No solution cell, and no text promising one: the sentences that speak of solutions are
    gone, every other cell and word is the course's."""
    assert main(["course", str(tmp_path / "out"), "--no-lab", "--no-solutions", "--zip"]) == 0
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        assert sorted(archive.namelist()) == [f"micrograd-course/{n}" for n in NAMES]
        for name in NAMES:  # the archive holds what the folder does, but the full set-up cell
            zipped = json.loads(archive.read(f"micrograd-course/{name}"))
            folder = json.loads((tmp_path / "out" / name).read_text())
            assert "pip" in "".join(zipped["cells"][1]["source"])
            zipped["cells"][1] = folder["cells"][1]
            assert zipped == folder
    promised = 0
    for name in NAMES:
        ours = json.loads((NOTEBOOKS / name).read_text())
        theirs = json.loads((tmp_path / "out" / name).read_text())
        theirs["cells"][1]["source"] = ours["cells"][1]["source"]  # the set-up line (above)
        solutions = [c for c in ours["cells"] if "solution" in c["metadata"].get("tags", [])]
        assert len(solutions) == sum("exercise" in c["metadata"] for c in ours["cells"])
        rest = [c for c in ours["cells"] if c not in solutions]
        assert len(theirs["cells"]) == len(rest)
        for mine, handed in zip(rest, theirs["cells"]):
            if mine["cell_type"] == "code" or "solution" not in json.dumps(mine).lower():
                assert handed == mine
                continue
            promised += 1  # a text that spoke of solutions: those words gone, the others kept
            words, kept = _words(mine["source"]), _words(handed["source"])
            assert kept and len(kept) < len(words)
            assert "solution" not in " ".join(kept).lower()
            it = iter(words)
            assert all(w in it for w in kept), "the words kept are the course's, in order"
        assert "solution" not in json.dumps(theirs).lower()
    assert promised >= 2  # notebook 1's "a solution below it, folded" and notebook 2's


def test_the_sites_course_without_solutions_is_the_same_hand_out(tmp_path, monkeypatch) -> None:
    """`micrograd site OUT --no-solutions` hands its course hook solutions=False, and the app's
    notebooks are then `without_solutions`, as `micrograd course --no-solutions` writes them."""
    from micrograd.commands import course
    from micrograd.grading.graded_notebook import without_solutions
    from micrograd.site import course_app as course_site
    from micrograd.site import static_site as site

    seen: dict[str, Any] = {}

    def build_site(out_dir, cache, log, course, names):
        seen["course"], seen["names"] = course, names
        raise site.SiteError("stopped here: the test looks at the hook only")

    monkeypatch.setattr(site, "build_site", build_site)
    assert main(["site", str(tmp_path / "out"), "--no-solutions"]) == 1
    assert seen["course"].func is course_site.add_course
    assert seen["course"].keywords == {"solutions": False}
    assert main(["site", str(tmp_path / "out")]) == 1
    assert seen["course"].keywords == {"solutions": True} and seen["names"] is True
    assert main(["site", str(tmp_path / "out"), "--no-names"]) == 1 and seen["names"] is False
    for name in NAMES:
        text = (NOTEBOOKS / name).read_text()
        handed = without_solutions(json.loads(text))
        assert json.loads(course.without_solutions(text)) == handed
        assert "solution" not in json.dumps(handed).lower()


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path: pathlib.Path, capsys) -> None:
    (tmp_path / "file").write_text("")
    assert main(["course", str(tmp_path / "file" / "course"), "--no-lab"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("micrograd course: error: ")


@pytest.mark.jupyter
def test_jupyterlab_opens_on_the_copies(
    tmp_path: pathlib.Path, browser: Any, screenshot: Any
) -> None:
    pytest.importorskip("jupyterlab", reason="pip install -e . --group test installs it")
    folder = tmp_path / "micrograd-course"
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_TOKEN": token,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTER_PATH": str(tmp_path / "data"),
    }  # with JupyterLite's kernel hidden
    hide_jupyterlite_kernel(tmp_path / "data")
    log = open(tmp_path / "course.log", "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "micrograd",
            "course",
            str(folder),
            "--no-browser",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its group: JupyterLab too, if it must be killed
    )
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_errors(page)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5
                ).close()
                break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None and time.monotonic() < deadline, (
                    tmp_path / "course.log"
                ).read_text()[-2000:]
                time.sleep(0.25)
        page.goto(f"http://127.0.0.1:{port}/lab/workspaces/course?token={token}")
        items = page.locator(".jp-DirListing-item .jp-DirListing-itemText")
        items.nth(5).wait_for()
        assert sorted(items.all_inner_texts()) == NAMES
        screenshot(page, "course-jupyterlab")
    finally:
        context.close()
        proc.send_signal(signal.SIGINT)  # as Ctrl-C: micrograd stops its JupyterLab
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # micrograd course and its JupyterLab
            proc.wait()
        log.close()
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".ipynb") == NAMES
    said = (tmp_path / "course.log").read_text()
    assert f"micrograd course: wrote 9 notebooks into {folder}" in said
    assert not errors, errors


def test_the_course_extra_brings_jupyterlab_and_the_first_cell_never_does() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = pathlib.Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]

    def names(extra: str) -> set[str]:
        return {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in extras[extra]}

    assert {"jupyterlab", "ipykernel"} <= names("course")
    assert names("lessons") <= names("course")
    assert not names("lessons") & {"jupyterlab", "ipykernel", "notebook", "jupyter"}
    # what the notebooks import (PyTorch stays optional), and nothing else
    assert names("lessons") == {"numpy", "matplotlib", "scikit-learn", "graphviz", "anywidget"}
