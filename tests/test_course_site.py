"""The course in the browser (`micrograd site`'s ``course/``, a JupyterLite app): what the build
writes (every shipped wheel pinned and in the app's own Pyodide lock, nothing that falls back to
PyPI, the link from the pages, ``--no-course``, missing build tools in one line), and the app in
Chromium with every request outside the site aborted: the REPL runs the README's ten lines, and
each notebook opens with an idle kernel and runs top to bottom with its solutions typed in.

The site is built once for the session, shared with test_site_browser.py (conftest's `built_site`;
the wheels and Pyodide come from the cache after the first build)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import pathlib
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from micrograd.commands.cli import main
from micrograd.core import setup_cell
from micrograd.site import course_app as course_site
from micrograd.site import course_start, course_wheels
from micrograd.site import static_site as site

from .conftest import _unavailable, watch_errors, with_names
from .support.serving import served

ROOT = pathlib.Path(__file__).resolve().parents[1]
START_MS = 300_000  # a kernel's start in a browser: seconds; minutes on a loaded machine
RUN_MS = 600_000


def _build(out: pathlib.Path, *extra: str) -> tuple[int, str, str]:
    said, err = io.StringIO(), io.StringIO()
    with with_names(), contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        status = main(["site", str(out), *extra])
    return status, said.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def built(built_site: tuple[pathlib.Path, dict[str, Any]]) -> pathlib.Path:
    """The site with its course, built by the command as a user runs it: the www root (the site
    is its s/). Built once for the session (conftest's `built_site`)."""
    if course_site.tools_missing():
        _unavailable(course_site.TOOLS_MISSING)
    root, did = built_site
    status, said, err = did["status"], did["out"], did["err"]
    if status != 0 and "npm is needed" in err:
        _unavailable(err.strip() + " (scripts/ensure-npm installs it)")
    assert status == 0, said + err
    assert "course" not in err and (root / "s" / "course" / "lab" / "index.html").is_file(), said
    return root


# ------------------------------------------------------------------ the build


@pytest.mark.slow
def test_every_shipped_wheel_is_pinned_and_in_the_apps_own_lock(built: pathlib.Path) -> None:
    course = built / "s" / "course"
    wheels_dir = course / course_site.WHEELS_DIR
    lock = json.loads((wheels_dir / "pyodide-lock.json").read_text())
    kernel = {n for n in course_site.WHEELS if n not in course_site.NOT_IN_KERNEL}
    own = set(course_site.KERNEL_OWN)  # piplite, ipykernel, pyodide-kernel
    assert set(lock["packages"]) == kernel | own | {site.DIST_NAME}  # numpy is not looked for
    for name, entry in lock["packages"].items():
        data = (wheels_dir / entry["file_name"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name  # Pyodide checks it
        if name in own:  # jupyterlite-pyodide-kernel's own file, as its build copied it
            theirs = course / course_site.KERNEL_PYPI / entry["file_name"]
            assert theirs.read_bytes() == data, name
        elif name != site.DIST_NAME:  # PyPI's file, as pinned
            assert course_site.WHEELS[name] == (entry["file_name"], entry["sha256"])
        for dep in entry["depends"]:
            assert dep in lock["packages"], (name, dep)
    wheels = sorted(p.name for p in wheels_dir.glob("*.whl"))
    assert wheels == sorted(e["file_name"] for e in lock["packages"].values())
    mg = lock["packages"][site.DIST_NAME]
    assert mg["imports"] == ["micrograd"] and mg["file_name"] == site.package_wheel()[0]
    # what the kernel's worker installs one by one (micropip, then piplite) unless it is among
    # the packages loaded at its start: read from the worker the app ships
    worker = (course / course_site.KERNEL_PYPI).parent
    code = "".join(p.read_text() for p in worker.glob("*.worker.*.js"))
    installs = re.findall(r'for\(let \w+ of\[((?:"[\w-]+",?)+)\]\)\w+\.includes', code)
    assert installs, "the kernel's worker no longer lists what it installs"
    wanted = {"micropip", "piplite"} | {
        n for found in installs for n in re.findall(r"[\w-]+", found)
    }
    assert wanted <= set(course_site.PRELOAD) <= set(lock["packages"]), wanted


# What the site with its course may weigh on disk: the site's own 21.1 MB (Pyodide, Python's
# saved start, the pages; README), the course's JupyterLab, widgets and wheels (about 24 MB) and
# its kernel's saved start (15.0 MB, and site-packages' files beside it, 4.4 MB). A second Pyodide
# (13.5 MB), as the course shipped until issue 43, or source maps, do not fit.
SITE_WITH_COURSE_MB = 66


@pytest.mark.slow
def test_one_pyodide_for_the_site_and_its_course_and_nothing_unloaded(
    built: pathlib.Path,
) -> None:
    root = built / "s"
    files = [p for p in root.rglob("*") if p.is_file()]
    for core in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide.asm.mjs"):
        copies = [p.relative_to(root).as_posix() for p in files if p.name == core]
        assert copies == [f"pyodide/{core}"], copies  # the site's, and no other
    # the kernel starts the site's Pyodide, through the app's kernel.js (config-utils.js turns ./
    # into the app's root), which imports it from ../pyodide/
    config = json.loads((root / "course" / "jupyter-lite.json").read_text())
    kernel = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"
    ]
    url = urllib.parse.urljoin("http://host/s/course/", kernel["pyodideUrl"][2:])
    assert url == "http://host/s/course/kernel.js"
    imported = re.findall(
        r'^import .* from "([^"]+)";$', (root / "course" / "kernel.js").read_text(), re.M
    )
    assert imported == ["../pyodide/pyodide.mjs", "../pyodide/pyodide.asm.mjs"], imported
    for rel in imported:
        assert (root / "course" / rel).resolve() == (root / "pyodide" / rel[11:]).resolve()
        assert (root / "pyodide" / rel[11:]).is_file()
    # the kernel's saved start, where kernel.js finds it: Pyodide's snapshot, gzipped
    memory_url = urllib.parse.urljoin(
        "http://host/s/course/", kernel["loadPyodideOptions"]["memoryURL"]
    )
    assert memory_url == f"http://host/s/course/{course_site.KERNEL_MEMORY}"
    memory = gzip.decompress((root / "course" / course_site.KERNEL_MEMORY).read_bytes())
    assert memory[:4] == (1886286592).to_bytes(4, "little")  # Pyodide's snapshot's magic number
    lock_url = urllib.parse.urljoin(
        "http://host/s/course/", kernel["loadPyodideOptions"]["lockFileURL"]
    )
    assert lock_url == f"http://host/s/course/{course_site.WHEELS_DIR}/pyodide-lock.json"
    assert not [p for p in files if p.suffix == ".map"]  # no source maps
    fonts = [p.name for p in files if p.suffix in (".eot", ".ttf") or p.name.startswith("fa-")]
    assert fonts and all(f.endswith((".woff2", ".woff")) for f in fonts), fonts
    size = sum(p.stat().st_size for p in files)
    assert size <= SITE_WITH_COURSE_MB * 1e6, f"{size / 1e6:.1f} MB"


def test_the_app_loads_micrograd_and_never_falls_back_to_pypi(built: pathlib.Path) -> None:
    course = built / "s" / "course"
    config = json.loads((course / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["disablePyPIFallback"] is True
    assert kernel["pyodideUrl"] == "./kernel.js"  # the app's, which starts the site's Pyodide
    assert {site.DIST_NAME, "anywidget"} <= set(kernel["loadPyodideOptions"]["packages"])
    names = sorted(e["name"] for e in config["federated_extensions"])
    assert names == [
        "@jupyter-widgets/jupyterlab-manager",
        "@jupyterlite/pyodide-kernel-extension",
        "anywidget",
    ]
    listed = json.loads((course / "api" / "contents" / "all.json").read_text())["content"]
    assert sorted(f["name"] for f in listed) == [f"{n}.ipynb" for n in course_site.NOTEBOOKS]
    for name in course_site.NOTEBOOKS:  # the learner's notebook, on the app's kernel
        nb = json.loads((course / "files" / f"{name}.ipynb").read_text())
        ours = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        # but for the set-up cell, one line here (micrograd is loaded), and the title's last
        # line, where work is kept
        assert nb["cells"][1]["source"] == setup_cell.INSTALLED_SETUP
        assert nb["cells"][0]["source"].endswith(course_site.KEPT)
        assert "".join(nb["cells"][0]["source"]).startswith("".join(ours["cells"][0]["source"]))
        assert nb["cells"][2:] == ours["cells"][2:] and len(nb["cells"]) == len(ours["cells"])
        assert nb["metadata"]["kernelspec"]["name"] == "python"
    # no address outside the folder in what the app's pages and config load
    for rel in ("jupyter-lite.json", "repl/jupyter-lite.json", "lab/jupyter-lite.json"):
        assert "://" not in (course / rel).read_text(), rel


def test_the_pages_link_the_course(built: pathlib.Path) -> None:
    for page in ("index.html", "train.html"):
        html = (built / "s" / page).read_text()
        assert (
            '<a href="course/start.html" title="Learn: the course in your browser">Learn'
            '<span class="course-more">: the course in your browser</span></a></nav>'
        ) in html
        assert course_site.LINK_STYLE in html


def test_the_start_page_lists_the_chapters_in_order(built: pathlib.Path) -> None:
    import html.parser

    class Links(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.links: list[tuple[str, str]] = []
            self.text: list[str] = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag == "a":
                self.links.append((dict(attrs)["href"], ""))

        def handle_data(self, data: str) -> None:
            self.text.append(data)
            if self.links:
                self.links[-1] = (self.links[-1][0], self.links[-1][1] + data)

    page = Links()
    page.feed((built / "s" / "course" / "start.html").read_text())
    opens = [(h, t) for h, t in page.links if h.startswith("notebooks/index.html?path=")]
    assert [h.split("=", 1)[1] for h, _ in opens] == [f"{n}.ipynb" for n in course_site.NOTEBOOKS]
    labs = [h for h, _ in page.links if h.startswith("lab/index.html?path=")]
    assert labs == [f"lab/index.html?path={n}.ipynb" for n in course_site.NOTEBOOKS]
    for i, ((_, text), name) in enumerate(zip(opens, course_site.NOTEBOOKS), 1):
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        title = "".join(nb["cells"][0]["source"]).splitlines()[0].lstrip("# ").replace("`", "")
        title = re.sub(r"^\d+\. ", "", title)
        # numbered in order, 1 to 8, the appendix (file 06) as chapter 6: nothing looks missing
        assert text.startswith(f"{i}. {title}"), (text, title)  # the title, then one line
        assert ("Start here" in text) == (name == course_site.NOTEBOOKS[0])
        (does,) = [c.does for c in course_start.CHAPTERS if c.name == name]
        assert text.endswith(does) and len(does) > 60  # what the learner does in it
    assert "".join(page.text).count("Start here") == 1 and "Start here" in opens[0][1]
    assert "kept in this browser" in "".join(page.text)


def test_a_chapter_is_one_entry_of_the_start_pages_list(tmp_path: pathlib.Path) -> None:
    """The chapters numbered 1, 2, ... in order (the appendix, file 06, as chapter 6); a new
    chapter (a 10_...) added as one entry: listed last, numbered 10, with its line; the course's
    notebooks are read from the same list."""
    chapters = course_start.CHAPTERS
    assert course_site.NOTEBOOKS == tuple(c.name for c in chapters)
    assert [c.number for c in chapters] == [str(i) for i in range(1, len(chapters) + 1)]
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for c in chapters:
        (folder / f"{c.name}.ipynb").write_bytes(
            (ROOT / "notebooks" / f"{c.name}.ipynb").read_bytes()
        )
    ten = {"cells": [{"cell_type": "markdown", "source": ["# 10. Batch norm\n"]}]}
    (folder / "10_batch_norm.ipynb").write_text(json.dumps(ten))
    entry = course_start.Chapter("10_batch_norm", "10", "Normalize a layer's pre-activations.")
    page = course_start.start_page(folder, "t", (*chapters, entry)).decode()
    items = re.findall(r'<span class="title">([^<]*)</span>', page)
    assert len(items) == len(chapters) + 1
    assert items[5].startswith("6. Appendix: second derivatives")
    assert items[8] == "9. Why isn&#x27;t it learning?" and items[9] == "10. Batch norm"
    assert 'href="notebooks/index.html?path=10_batch_norm.ipynb"' in page
    assert "Normalize a layer&#x27;s pre-activations." in page  # (html-escaped)


@pytest.mark.slow
def test_no_course_builds_the_site_alone(tmp_path: pathlib.Path) -> None:
    status, said, err = _build(tmp_path / "s", "--no-course")
    if status != 0 and "npm is needed" in err:
        _unavailable(err.strip())
    assert status == 0, said + err
    assert not (tmp_path / "s" / "course").exists()
    assert course_site.LINK_TEXT not in (tmp_path / "s" / "index.html").read_text()


@pytest.mark.slow
def test_missing_build_tools_are_one_line_and_the_site_is_still_written(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        course_site.importlib.util,
        "find_spec",
        lambda name: None if name == "jupyterlite_core" else True,
    )
    status, said, err = _build(tmp_path / "s")
    if status != 0 and "npm is needed" in err:
        _unavailable(err.strip())
    assert status == 0, said + err
    assert course_site.TOOLS_MISSING in said.splitlines()
    assert 'pip install "micrograd-plus[site]"' in course_site.TOOLS_MISSING
    assert not (tmp_path / "s" / "course").exists()
    assert course_site.LINK_TEXT not in (tmp_path / "s" / "index.html").read_text()


def test_a_wheel_install_has_the_notebooks_and_the_extra_brings_the_build_tools(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed from a wheel, micrograd/notebooks holds the course (package data) and no
    clone is around it: the course is built from there. The `site` extra names every module
    the build needs (jupyter lite build asks for jupyter-server), and a missing one is said."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    import micrograd

    root = pathlib.Path(__file__).resolve().parents[1]
    wheel = tmp_path / "site-packages" / "micrograd"
    (wheel / "notebooks").mkdir(parents=True)
    for name in course_site.NOTEBOOKS:
        (wheel / "notebooks" / f"{name}.ipynb").write_text("{}")
    monkeypatch.setattr(micrograd, "__file__", str(wheel / "__init__.py"))
    assert course_site.notebooks_folder() == wheel / "notebooks"
    (wheel / "notebooks" / f"{course_site.NOTEBOOKS[0]}.ipynb").unlink()
    assert course_site.notebooks_folder() is None
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", req, maxsplit=1)[0].replace("-", "_") for req in extra["site"]}
    assert set(course_site.TOOLS) <= names
    assert "jupyter_server" in course_site.TOOLS
    monkeypatch.setattr(
        course_site.importlib.util,
        "find_spec",
        lambda name: None if name == "jupyter_server" else True,
    )
    assert course_site.tools_missing() == course_site.TOOLS_MISSING


def test_a_cached_wheel_that_does_not_match_is_fetched_again_and_checked(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "six"
    file_name, _ = course_site.WHEELS[name]
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / file_name).write_bytes(b"not the wheel")
    calls = []

    def fake_pip(cmd: list[str], **kw: Any) -> Any:  # PyPI answering with another file
        calls.append(cmd)
        pathlib.Path(cmd[cmd.index("-d") + 1], file_name).write_bytes(b"another wheel")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(course_wheels.subprocess, "run", fake_pip)
    lines: list[str] = []
    with pytest.raises(site.SiteError, match=rf"PyPI's {re.escape(file_name)} is not the one"):
        course_wheels.wheel(name, tmp_path, lines.append)
    assert lines == [
        f"{tmp_path / 'wheels' / file_name} does not match its sha256; fetching it again"
    ]
    assert calls and calls[0][-1] == "six==1.17.0" and "--no-deps" in calls[0]
    assert (tmp_path / "wheels" / file_name).read_bytes() == b"not the wheel"  # not cached


# ------------------------------------------------------------------ in Chromium


@pytest.fixture(scope="module")
def course_url(built: pathlib.Path) -> Iterator[str]:
    with served(built) as url:
        yield f"{url}s/"


class App:
    """A fresh browser context that aborts every request outside the site."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.set_default_timeout(30_000)
        self.aborted: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.errors = watch_errors(self.page)
        # a kernel started without the learner's files (JupyterLite says so in a warning): its
        # %%writefile my_value.py would be gone for the next notebook (course_app.DRIVE_GATE)
        self.undriven: list[str] = []
        self.page.on(
            "console",
            lambda m: self.undriven.append(self.page.url) if "NOT be synced" in m.text else None,
        )

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.base):
            route.continue_()
        else:
            self.aborted.append(route.request.url)
            route.abort()

    def close(self) -> None:
        self.context.close()
        assert not self.aborted, f"requests outside the site: {self.aborted}"
        assert not self.errors, f"JavaScript errors on the page: {self.errors}"
        assert not self.undriven, f"kernels without the learner's files (/drive): {self.undriven}"


@pytest.fixture
def app(browser: Any, course_url: str) -> Iterator[App]:
    a = App(browser, course_url)
    yield a
    a.close()


def _ten_lines() -> str:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Ten lines", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "L.backward()" in block
    return block


def _run_in_console(page: Any, code: str) -> str:
    """Type `code` into the REPL's prompt and run it, as Shift+Enter does; what it printed (and
    its error, if any)."""
    return page.evaluate(
        """async (code) => {
        const console_ = window.jupyterapp.shell.currentWidget.console;
        console_.promptCell.model.sharedModel.setSource(code);
        await console_.execute(true);
        const cell = console_.cells.get(console_.cells.length - 1);
        return cell.model.outputs.toJSON().map(o => o.output_type === 'error'
            ? o.ename + ': ' + o.evalue : [].concat(o.text || '').join('')).join('');
    }""",
        code,
    )


# A learner's Value at notebook 2's ops exercise: each op's _backward written, no backward() yet,
# and + assigning its gradients (=) where it must add (+=).
ASSIGNING_ADD = """
class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op
        self._backward = lambda: None
    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad = 1.0 * out.grad
            other.grad = 1.0 * out.grad
        out._backward = _backward
        return out
    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out
"""


def test_the_repl_runs_the_ten_lines_explores_checks_and_trains(app: App, screenshot: Any) -> None:
    code = _ten_lines()
    page = app.page
    said_by_kernel: list[str] = []
    page.on("worker", lambda w: w.on("console", lambda m: said_by_kernel.append(m.text)))
    page.goto(app.base + "course/repl/index.html?code=" + urllib.parse.quote(code))
    out = page.locator(".jp-OutputArea-output").filter(has_text="-8.0")
    out.first.wait_for(timeout=START_MS)
    want = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()  # CPython's own answer
    assert want.split()[1] == "6.0"  # a.grad
    assert out.first.text_content().strip() == want
    screenshot(page, "course-repl")
    # the kernel's Python was restored from the memory the build saved (course_memory.py), not
    # started afresh: it holds micrograd.check, which that build imported and nothing here has;
    # micrograd.widgets, below, was not imported at build time and imports from its files
    said = _run_in_console(page, "import sys\nprint('micrograd.check' in sys.modules)")
    assert said.strip() == "True", said
    # and no package unpacked again (Pyodide's loadPackage says "Loading a, b, ..." as it does)
    assert not [m for m in said_by_kernel if m.startswith("Loading ")], said_by_kernel
    # makemore's names, in the site's wheel: no download, no upload
    said = _run_in_console(page, "from micrograd.data import names\nprint(len(names()))")
    assert said.strip() == "32033", said

    # explore(L) draws the graph; its Backward pass gives a.grad 6.0000 (from zero grads)
    said = _run_in_console(
        page,
        "for v in (a, b, c, f): v.grad = 0.0\nfrom micrograd.widgets import explore\nexplore(L)",
    )
    assert "Error" not in said, said
    widget = page.locator(".micrograd-widget")
    page.wait_for_function(
        "() => (document.querySelector('.micrograd-widget') || {dataset: {}})"
        ".dataset.ready === '1'",
        timeout=RUN_MS,
    )
    widget.get_by_role("button", name="Backward pass").click()
    page.wait_for_function("""() => document.querySelector('.micrograd-widget').shadowRoot
                              .querySelector('#status').textContent.includes('done')""")
    a = widget.locator("g.node.value[data-name='a'] text.grad")
    assert "6.0000" in a.text_content()
    screenshot(page, "course-repl-explore")

    # check() on a learner's Value whose + assigns: named, = for +=
    said = _run_in_console(
        page, ASSIGNING_ADD + "\nfrom micrograd import check\nprint(check(Value).problems[0])"
    )
    assert said.startswith("+: for out = a + b"), said
    assert "does _backward assign (=) instead of accumulating (+=)?" in said, said

    # train(): Pyodide has no threads; the widget steps on the kernel's loop and reaches 100%
    said = _run_in_console(page, "from micrograd.widgets import train\ntrain(dataset='moons')")
    assert "Error" not in said, said
    trainer = widget.nth(1)
    page.wait_for_function(
        "() => document.querySelectorAll('.micrograd-widget').length === 2 && "
        "document.querySelectorAll('.micrograd-widget')[1].dataset.ready === "
        "'1'",
        timeout=RUN_MS,
    )
    trainer.scroll_into_view_if_needed()
    trainer.get_by_role("button", name="Play").click()
    trainer.locator("#acc-text").filter(has_text="accuracy 100.0%").wait_for(timeout=RUN_MS)
    trainer.get_by_role("button", name="Pause").click()
    trainer.get_by_role("button", name="Play").wait_for()
    screenshot(page, "course-repl-train")


def _solutions(name: str) -> dict[int, str]:
    from .test_notebooks import _exercises, _nb, _solution_code

    nb = _nb(name)
    return {i: _solution_code(nb, i) for i in _exercises(nb).values()}


RUN_CELLS = """async ({fills}) => {
    // each code cell in order, the exercises with their solutions typed in, in the notebook's
    // own kernel; what each printed, and its error if any
    const panel = window.jupyterapp.shell.currentWidget;
    const kernel = panel.sessionContext.session.kernel;
    const out = [];
    for (const [i, cell] of panel.content.widgets.entries()) {
        if (cell.model.type !== 'code') continue;
        if (fills[i] !== undefined) cell.model.sharedModel.setSource(fills[i]);
        const future = kernel.requestExecute({code: cell.model.sharedModel.getSource()});
        const errors = [], text = [];
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === 'error')
                errors.push(msg.content.ename + ': ' + msg.content.evalue);
            if (msg.header.msg_type === 'stream') text.push(msg.content.text);
        };
        const reply = await future.done;
        out.push({i, status: reply.content.status, errors, text: text.join('')});
        if (reply.content.status !== 'ok') break;
    }
    return out;
}"""
KERNEL_IDLE = """(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && w.context.path === path && k.status === 'idle' && w.content.widgets.length > 0;
}"""


RUNNING = """async () => {  // the paths of the documents with a kernel running
    const sessions = window.jupyterapp.serviceManager.sessions;
    await sessions.refreshRunning();
    return [...sessions.running()].map(s => s.path);
}"""


def test_each_notebook_runs_in_the_app_with_its_solutions_typed_in(app: App) -> None:
    """In one browser (notebook 3 reads the my_value.py notebook 2 writes), in order, each in
    the single-document view the start page opens. The suite's one run of notebook 8's 200
    steps and of notebook 9's 15, the notebooks exactly as given: test_notebooks' runs train
    them less (its SHORTER). (Not JupyterLab's lab/: it reopens the notebooks open when
    it was last left, each with a kernel of its own, and a close just before leaving is not
    saved in time: notebook 4 then started four Pyodides at once.)"""
    from .test_notebooks import SHORTER, TRAINED

    page = app.page
    missing: list[str] = []  # every file the app asks for is in the site (no 404 icons)
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    for name in course_site.NOTEBOOKS:
        if name != course_site.NOTEBOOKS[0]:  # left unchanged: the solutions were the test's
            page.evaluate(
                "() => { window.jupyterapp.shell.currentWidget.context.model.dirty = false; }"
            )
        page.goto(app.base + f"course/notebooks/index.html?path={name}.ipynb")
        page.wait_for_function(KERNEL_IDLE, arg=f"{name}.ipynb", timeout=START_MS)
        assert page.evaluate(RUNNING) == [f"{name}.ipynb"]  # its kernel, and no other
        fills = {str(i): code for i, code in _solutions(name).items()}
        ran = page.evaluate(RUN_CELLS, {"fills": fills})
        failed = [r for r in ran if r["status"] != "ok"]
        assert not failed, f"{name}: cell {failed[0]['i']}: {failed[0]['errors']}"
        printed = "".join(r["text"] for r in ran)
        at = printed.find("Traceback")
        assert at < 0, f"{name}: {printed[max(0, at - 300) : at + 1500]}"
        n_code = sum(
            1
            for c in json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
            if c["cell_type"] == "code"
        )
        assert len(ran) == n_code, name  # top to bottom
        if name == "04_moons_demo":  # karpathy's result, on micrograd.data's moons
            assert "step 99 loss 0.0109783701354" in printed, printed[-500:]
        if name in SHORTER:  # the whole training, which test_notebooks' runs shorten
            assert TRAINED[name][1] in printed, printed[-600:]
    assert not missing, missing


RUN_CELL = """async ([i, source]) => {  // as a learner does: the cell selected, then Run
    const panel = window.jupyterapp.shell.currentWidget;
    if (source !== null) panel.content.widgets[i].model.sharedModel.setSource(source);
    panel.content.activeCellIndex = i;
    await window.jupyterapp.commands.execute('notebook:run-cell');
    const out = panel.content.widgets[i].node.querySelector('.jp-Cell-outputWrapper');
    return out ? out.innerText : '';  // (a markdown cell has none)
}"""
CELL_INDEX = """([key, value]) => window.jupyterapp.shell.currentWidget.content.widgets.findIndex(
    c => c.model.getMetadata(key) === value)"""


@pytest.mark.parametrize("size", [(1280, 900), (390, 844)], ids=["laptop", "phone"])
def test_learn_opens_the_start_page_then_notebook_1_alone(
    browser: Any, course_url: str, screenshot: Any, size: tuple[int, int]
) -> None:
    """Learn → the start page → "Start here": notebook 1 in the single-document view, its title
    first and its set-up one line; a wrong then a right slope show a diagnosis (no traceback)
    and a ✓ line; the work is saved within seconds and a reload keeps it."""
    app = App(browser, course_url)
    app.context.close()  # (its 1280×800 context; this one is the size asked)
    app.context = browser.new_context(
        viewport={"width": size[0], "height": size[1]}, has_touch=size[0] < 500
    )
    app.context.set_default_timeout(30_000)
    app.context.route("**/*", app._route)
    page = app.page = app.context.new_page()
    app.errors = watch_errors(page)
    name = f"{course_site.NOTEBOOKS[0]}.ipynb"
    try:
        page.goto(app.base + "index.html")
        page.get_by_role("link", name=re.compile("^Learn")).first.click()
        page.wait_for_url("**/course/start.html")
        screenshot(page, f"course-start-{size[0]}", full_page=True)
        page.get_by_role("link", name=re.compile("Start here")).click()
        page.wait_for_url(f"**/course/notebooks/index.html?path={name}")
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
        screenshot(page, f"course-notebook-1-{size[0]}")
        cells = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
            .slice(0, 2).map(c => [c.model.type, c.model.sharedModel.getSource()])""")
        assert cells[0][0] == "markdown" and cells[0][1].startswith("# 1. ")
        assert cells[1] == ["code", setup_cell.INSTALLED_SETUP]
        if size[0] < 500:  # a phone: no sidebar, nothing wider than the screen, Run touch-sized
            run = page.locator('.jp-Toolbar .jp-ToolbarButtonComponent[title^="Run"]').first
            box = run.bounding_box()
            assert box["width"] >= 44 and box["height"] >= 44, box
            assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
            _a_phone_reads_the_notebook(page, size[0])
            _widgets_fit_a_phone(page, size[0], screenshot)
            return  # the rest is the same on a phone
        exercise = page.evaluate(CELL_INDEX, ["exercise", "slope"])
        checks = page.evaluate(CELL_INDEX, ["checks", "slope"])
        for i in range(exercise):
            page.evaluate(RUN_CELL, [i, None])
        half = "def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)"
        page.evaluate(RUN_CELL, [exercise, half])
        wrong = page.evaluate(RUN_CELL, [checks, None])
        assert "✗ slope(f, 3.0) should be close to 14" in wrong and "Traceback" not in wrong
        assert "AssertionError" not in wrong and "File " not in wrong, wrong
        right = "def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / h"
        page.evaluate(RUN_CELL, [exercise, right])
        said = page.evaluate(RUN_CELL, [checks, None])
        assert said.rstrip().endswith("✓ slope is right: 14, -22 and 0, to 3 decimals"), said
        screenshot(page, "course-notebook-1-right-1280")
        # saved as the learner works: the autosave, in seconds, then a reload keeps the answer
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
        page.reload()
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
        kept = page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model"
            ".sharedModel.getSource()",
            exercise,
        )
        assert kept == right
        # notebook 2's by-hand grads: w2.grad = x2.data is right only where x2 = 0; the check
        # runs the learner's cell again at a second point, in the browser's kernel too
        name = f"{course_site.NOTEBOOKS[1]}.ipynb"
        page.goto(app.base + f"course/notebooks/index.html?path={name}")
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
        exercise = page.evaluate(CELL_INDEX, ["exercise", "by_hand"])
        checks = page.evaluate(CELL_INDEX, ["checks", "by_hand"])
        for i in range(exercise):
            page.evaluate(RUN_CELL, [i, None])
        solution = _solutions(course_site.NOTEBOOKS[1])[exercise]
        wrong = solution.replace("w2.grad = x2.data * x2w2.grad", "w2.grad = x2.data")
        assert wrong != solution
        page.evaluate(RUN_CELL, [exercise, wrong])
        said = page.evaluate(RUN_CELL, [checks, None])
        assert "Traceback" not in said and "AssertionError" not in said, said
        assert said.rstrip().splitlines()[-1].startswith("✗ at a second point (x1 = 1.5000")
        assert "that is ∂x2w2/∂w2 alone: the chain rule multiplies it by x2w2.grad" in said
        page.evaluate(RUN_CELL, [exercise, solution])
        said = page.evaluate(RUN_CELL, [checks, None])
        assert said.rstrip().endswith(
            "✓ all 10 grads right, at the lecture's numbers and at a second point"
        ), said
    finally:
        app.close()


READABLE = """() => {  // what a phone shows of the notebook
    const title = document.querySelector('#jp-title h1');
    const box = title ? title.getBoundingClientRect() : null;
    const badge = document.querySelector('.jp-NotebookTrustedStatus');
    const badgeBox = badge ? badge.getBoundingClientRect() : null;
    const cut = [];  // code lines that run past their cell's input area
    for (const line of document.querySelectorAll('.jp-Notebook .jp-CodeCell .cm-line')) {
        const area = line.closest('.jp-InputArea-editor').getBoundingClientRect();
        if (line.getBoundingClientRect().right > area.right + 1) cut.push(line.textContent);
    }
    return {
        title: title && box.width > 0 && box.bottom > 0 ? title.textContent : null,
        titleRight: box ? box.right : null,
        badgeLines: badgeBox && badgeBox.width > 0
            ? Math.round(badgeBox.height / parseFloat(getComputedStyle(badge).lineHeight)) : 0,
        cut,
    };
}"""


def _a_phone_reads_the_notebook(page: Any, width: int) -> None:
    """At a phone's width: the notebook's name on top, the trust badge gone (it means nothing
    to a learner) or on one line, each code line wrapped inside its cell, not cut at the edge."""
    seen = page.evaluate(READABLE)
    assert seen["title"] == course_site.NOTEBOOKS[0], seen
    assert seen["titleRight"] <= width, seen
    assert seen["badgeLines"] <= 1, seen
    assert not seen["cut"], seen["cut"][:3]


OUTPUTS_RIGHT = """() => Math.max(...[...document.querySelectorAll('.jp-OutputArea-output')]
    .map(e => e.getBoundingClientRect().right))"""


def _widgets_fit_a_phone(page: Any, width: int, screenshot: Any) -> None:
    """Notebook 2 at a phone's width, run down to its first explorer: the Value graph
    (draw_dot) and the explorer widget fit the screen (a graph scrolls inside its own box), and
    the page never scrolls sideways."""
    name = f"{course_site.NOTEBOOKS[1]}.ipynb"
    page.goto(page.url.split("/course/", 1)[0] + f"/course/notebooks/index.html?path={name}")
    page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
    cells = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .map(c => [c.model.type, c.model.sharedModel.getSource()])""")
    explorer = next(i for i, (kind, src) in enumerate(cells) if "explore(" in src)
    graph = next(i for i, (kind, src) in enumerate(cells) if "draw_dot(" in src)
    assert graph < explorer
    for i, (kind, _) in enumerate(cells[: explorer + 1]):
        if kind == "code":
            page.evaluate(RUN_CELL, [i, None])
    cell = page.locator(".jp-Notebook .jp-Cell").nth(explorer)
    backward = cell.get_by_role("button", name="Backward pass")
    backward.wait_for()
    cell.scroll_into_view_if_needed()
    screenshot(page, f"course-notebook-2-explore-{width}")
    drawn = page.locator(".jp-Notebook .jp-Cell").nth(graph).locator(".jp-OutputArea-output")
    assert drawn.locator("img, svg").count() >= 1  # the Value graph, drawn
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(OUTPUTS_RIGHT) <= width, "an output wider than the phone's screen"
    assert backward.bounding_box()["x"] + backward.bounding_box()["width"] <= width


RUN_ALL = """async () => {  // Run → Run All Cells, as a learner picks it; until it stops
    await window.jupyterapp.commands.execute('notebook:run-all-cells');
    await new Promise((done) => setTimeout(done, 500));
    const notebook = window.jupyterapp.shell.currentWidget.content;
    const cell = notebook.widgets[notebook.activeCellIndex];
    const box = cell.node.getBoundingClientRect();
    const view = notebook.node.getBoundingClientRect();
    return {
        active: notebook.activeCellIndex,
        shown: box.bottom > view.top && box.top < view.bottom,
        out: (cell.node.querySelector('.jp-Cell-outputWrapper') || {innerText: ''}).innerText,
    };
}"""


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["laptop", "phone"])
def test_run_all_stops_at_an_unfilled_exercise_and_shows_its_line(
    browser: Any, course_url: str, screenshot: Any, size: tuple[int, int]
) -> None:
    """Notebook 1 as it comes, Run All: it stops at the first check (slope's exercise still
    holds its `...`), and the page shows that cell, its one red line, not the notebook's end."""
    app = App(browser, course_url)
    app.context.close()
    app.context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    app.context.set_default_timeout(30_000)
    app.context.route("**/*", app._route)
    page = app.page = app.context.new_page()
    app.errors = watch_errors(page)
    name = f"{course_site.NOTEBOOKS[0]}.ipynb"
    try:
        page.goto(app.base + f"course/notebooks/index.html?path={name}")
        page.wait_for_function(KERNEL_IDLE, arg=name, timeout=START_MS)
        checks = page.evaluate(CELL_INDEX, ["checks", "slope"])
        stopped = page.evaluate(RUN_ALL)
        screenshot(page, f"course-run-all-stopped-{size[0]}")
        assert stopped["active"] == checks, stopped
        assert stopped["shown"], stopped
        assert stopped["out"].strip() == (
            "✗ not attempted: slope still has `...` (how much f moves when x moves by h, "
            "divided by h): replace each `...` with your code, run that cell, then this one"
        ), stopped
    finally:
        app.close()


def test_work_is_saved_in_seconds(built: pathlib.Path) -> None:
    settings = json.loads((built / "s" / "course" / "jupyter-lite.json").read_text())
    overrides = settings["jupyter-config-data"]["settingsOverrides"]
    interval = overrides["@jupyterlab/docmanager-extension:plugin"]["autosaveInterval"]
    assert interval == course_site.AUTOSAVE_SECONDS <= 5  # JupyterLab's own is 120
    assert f"saved every {interval} seconds" in course_site.KEPT


def test_without_its_saved_start_the_kernel_starts_afresh_and_says_why(app: App) -> None:
    page = app.page
    warnings: list[str] = []
    page.on("worker", lambda w: w.on("console", lambda m: warnings.append(m.text)))
    # the saved start missing from the host: the REPL runs all the same
    app.context.route(f"**/{course_site.KERNEL_MEMORY}", lambda r: r.fulfill(status=404))
    page.goto(app.base + "course/repl/index.html?code=" + urllib.parse.quote("print(6 * 7)"))
    page.locator(".jp-OutputArea-output").filter(has_text="42").first.wait_for(timeout=START_MS)
    said = _run_in_console(page, "import sys\nprint('micrograd.check' in sys.modules)")
    assert said.strip() == "False", said  # started afresh: nothing imported before the cell
    url = app.base + "course/" + course_site.KERNEL_MEMORY
    assert (
        "micrograd: the course's Python starts afresh, its saved start could not be used: "
        f"{url} could not be loaded (HTTP 404)"
    ) in warnings, warnings


def _naming_no_saved_start(route: Any) -> None:
    """jupyter-lite.json as a build that saved no start writes it (course_app: no Node.js, or a
    Pyodide without its snapshot calls): the kernel's options name no memory."""
    response = route.fetch()
    config = response.json()
    plugins = config.get("jupyter-config-data", {}).get("litePluginSettings", {})
    options = plugins.get(course_site.KERNEL_SETTINGS, {}).get("loadPyodideOptions", {})
    options.pop("memoryURL", None)
    options.pop("filesURL", None)
    route.fulfill(response=response, json=config)


def test_a_course_built_without_a_saved_start_starts_its_kernel_afresh(app: App) -> None:
    page = app.page
    warnings: list[str] = []
    page.on("worker", lambda w: w.on("console", lambda m: warnings.append(m.text)))
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    app.context.route("**/jupyter-lite.json", _naming_no_saved_start)
    page.goto(app.base + "course/repl/index.html?code=" + urllib.parse.quote("print(6 * 7)"))
    page.locator(".jp-OutputArea-output").filter(has_text="42").first.wait_for(timeout=START_MS)
    said = _run_in_console(page, "import sys\nprint('micrograd.check' in sys.modules)")
    assert said.strip() == "False", said  # started afresh: nothing imported before the cell
    assert not [u for u in asked if u.endswith(course_site.KERNEL_MEMORY)], asked
    assert not [w for w in warnings if "afresh" in w], warnings  # nothing failed: none to say


def test_without_nodejs_the_kernel_starts_afresh_and_says_so(monkeypatch: Any) -> None:
    from micrograd.site import course_memory

    monkeypatch.setattr(site.shutil, "which", lambda name: None)
    lines: list[str] = []
    assert course_memory.kernel_memory({}, {}, lines.append) is None
    assert lines == [
        "no Node.js here: the course's Python start is not saved (its kernel starts afresh)"
    ]


def _fake_node(tmp_path: pathlib.Path, said: str) -> str:
    node = tmp_path / "node"  # a Node.js that fails as a broken Pyodide would
    node.write_text(f"#!/bin/sh\necho '{said}' >&2\necho 'Node.js v22' >&2\nexit 1\n")
    node.chmod(0o755)
    return str(node)


def test_a_failing_nodejs_is_one_line(monkeypatch: Any, tmp_path: pathlib.Path) -> None:
    from micrograd.site import course_memory

    node = _fake_node(tmp_path, "Error: Snapshot build id mismatch")
    monkeypatch.setattr(site.shutil, "which", lambda name: node)
    with pytest.raises(site.SiteError) as err:
        course_memory.kernel_memory({"pyodide.mjs": b""}, {"a.whl": b""}, print)
    assert str(err.value) == (
        "saving the course's Python start in Node.js failed: Error: Snapshot build id mismatch"
    )


@pytest.mark.parametrize("call", ["_makeSnapshot", "makeMemorySnapshot"])
def test_a_pyodide_without_its_snapshot_calls_leaves_the_kernels_start_out_in_one_line(
    monkeypatch: Any, tmp_path: pathlib.Path, call: str
) -> None:
    # (what static_site.SNAPSHOT_JS throws when a Pyodide lacks a call): no error, no saved
    # start; the app then names none, and the kernel starts afresh (the test above, in a browser)
    from micrograd.site import course_memory

    node = _fake_node(tmp_path, f"Error: this Pyodide lacks {call}")
    monkeypatch.setattr(site.shutil, "which", lambda name: node)
    lines: list[str] = []
    assert course_memory.kernel_memory({"pyodide.mjs": b""}, {"a.whl": b""}, lines.append) is None
    assert lines == [
        f"Pyodide {site.PYODIDE_VERSION} lacks {call}: the course's Python start is not saved "
        "(its kernel starts afresh)"
    ]


# The course's kernel.js in Node.js, restoring the memory the build saved (as the browser's
# worker does), then the collector run, as a learner's first cell that makes many objects runs
# it: whatever a deallocator raises there (sys.unraisablehook: "Exception ignored while calling
# deallocator ...") is printed, as is anything still open.
RESTORE_IN_NODE = """
const [kernel, base] = process.argv.slice(-2);
const { loadPyodide } = await import(kernel);
const py = await loadPyodide({
  memoryURL: `${base}course/static/wheels/kernel-memory.gz`,
  filesURL: `${base}course/static/wheels/kernel-files.gz`,
});
console.log(py.runPython(`
import gc, json, sys, zipfile
said = []
sys.unraisablehook = lambda u: said.append(f"{u.exc_type.__name__}: {u.exc_value} ({u.object!r})")
restored = 'micrograd.check' in sys.modules
gc.collect()
left = [repr(o) for o in gc.get_objects() if isinstance(o, zipfile.ZipFile) and o.fp is not None]
json.dumps({'restored': restored, 'said': said, 'open': left})
`));
"""


def _kernel_js_for_node(built: pathlib.Path, tmp: pathlib.Path) -> str:
    """The app's kernel.js, its Pyodide found by path (Node.js's Pyodide reads its files by
    path, not by file: URL): the URL of that copy."""
    pyodide = built / "s" / "pyodide"
    src = (built / "s" / "course" / course_site.KERNEL_JS).read_text()
    index = 'new URL("../pyodide/", import.meta.url).href'
    assert src.count(index) == 1 and src.count('from "../pyodide/') == 2
    src = src.replace(index, json.dumps(f"{pyodide}/"))
    src = src.replace('from "../pyodide/', f'from "{pyodide.as_uri()}/')
    (tmp / "kernel.mjs").write_text(src)
    return (tmp / "kernel.mjs").as_uri()


@pytest.mark.slow
def test_a_restored_kernel_has_nothing_open_and_collects_without_a_word(
    built: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """Every fresh browser kernel printed `ZipFile.__del__ … OSError: [Errno 8] Bad file
    descriptor` at its first collection: importlib.metadata's cache held python314.zip open
    when the memory was saved (course_memory.CLOSE)."""
    import shutil

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        _unavailable("Node.js is needed to restore the course's kernel outside a browser")
    kernel = _kernel_js_for_node(built, tmp_path)
    with served(built) as url:
        done = subprocess.run(
            [node, "--input-type=module", "-e", RESTORE_IN_NODE, kernel, f"{url}s/"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"restored": True, "said": [], "open": []}, seen
