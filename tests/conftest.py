"""The suite's tiers, and fixtures for the playground's tests.

Tiers (markers, registered in pyproject.toml): `browser` (drives Chromium), `jupyter` (starts a
notebook kernel, JupyterLab or a JupyterLite build), `sandbox` (runs bubblewrap), `slow` (builds
a wheel or a site, or trains for long). `make test-fast` runs the tests that carry none of them;
`make test` runs all. A test gets its tiers from the fixtures it uses (`FIXTURE_TIERS`: `page`
brings `browser`) or from a marker written on it. So that the fast tier never silently grows, a
test without the marker that starts Chromium, a kernel or bubblewrap fails at that moment,
naming the marker to add (`_tier_guard`).

* `playground_server`: a running playground (`micrograd.playground.serve` on 127.0.0.1, a free
  port), shared by the whole session; `playground` is its URL, e.g. ``http://127.0.0.1:54321/``.
* `browser` (one per test module) and `page` (a fresh browser context per test, 1280×800):
  Playwright driving Debian's Chromium (`/usr/lib/chromium/chromium`, installed by
  `scripts/ensure-chromium`; Playwright's own browser download is not used). Where no Chromium
  can be found the browser tests are skipped with the reason, except under CI (``CI`` set), where
  that is a failure.
* `screenshot(page, name)`: saves ``tests/screenshots/<name>.png`` (git-ignored) and returns
  its path. Look at them.

Playwright's synchronous API keeps an asyncio loop alive while it runs, which breaks
`asyncio.run` (and nbclient) in later tests; so the browser is started and stopped per module,
not per session (about a second each).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest

TIERS = ("browser", "jupyter", "sandbox", "slow")
# The tiers a fixture brings to every test that uses it (directly or through another fixture).
FIXTURE_TIERS: dict[str, tuple[str, ...]] = {
    "browser": ("browser",),
    "page": ("browser",),
    "phone": ("browser",),
    "graded": ("jupyter", "sandbox"),  # test_grade.py: a class graded in bubblewrap
    "built": ("jupyter", "slow"),  # test_course_site.py: a JupyterLite build
    "proxied": ("jupyter",),  # test_playground_proxy.py: JupyterLab behind its proxy
    "site_folder": ("slow",),  # test_site_browser.py: the static site, Pyodide and all
    "lab": ("jupyter",),  # test_widgets.py: JupyterLab
}
# what a `python -m` that starts a kernel, JupyterLab or grading's runner names
JUPYTER_MODULES = ("ipykernel_launcher", "ipykernel", "jupyterlab", "micrograd.grading.runner")
SCREENSHOTS = pathlib.Path(__file__).resolve().parent / "screenshots"
CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser")


def chromium_path() -> str | None:
    """Debian's Chromium (or $MICROGRAD_CHROMIUM, or a chromium/chrome on PATH), else None."""
    candidates = [os.environ.get("MICROGRAD_CHROMIUM", ""), *CHROMIUM_PATHS]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the browser tests)")
    pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for tier in {t for name in used & FIXTURE_TIERS.keys() for t in FIXTURE_TIERS[name]}:
            item.add_marker(getattr(pytest.mark, tier))


def _needs(argv: Any) -> str | None:
    """The tier a command needs: `browser` for Chromium, `sandbox` for bubblewrap, `jupyter` for
    a notebook kernel, JupyterLab or `micrograd course` (which opens it), or grading's runner,
    else None. Read from the program and its module (``-m``), never from its other arguments (a
    folder may be named anything)."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        words = str(argv).split()
    else:
        words = [str(a) for a in argv]
    if not words:
        return None
    first = os.path.basename(words[0])
    module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
    if "chrom" in first:
        return "browser"
    if first == "bwrap":
        return "sandbox"
    if first in ("jupyter", "jupyter-lab") or module in JUPYTER_MODULES:
        return "jupyter"
    if module == "micrograd" and words[words.index("-m") + 2 : words.index("-m") + 3] == ["course"]:
        return "jupyter" if "--no-lab" not in words else None
    return None


@pytest.fixture(autouse=True)
def _tier_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test that starts Chromium, a kernel or bubblewrap without carrying its marker."""
    marked = {m.name for m in request.node.iter_markers() if m.name in TIERS}
    if "slow" in marked:
        return  # not in the fast tier: nothing to guard
    import subprocess

    real = subprocess.Popen.__init__

    def guarded(self: Any, args: Any, *rest: Any, **kw: Any) -> None:
        tier = _needs(args)
        if tier and tier not in marked:
            raise RuntimeError(
                f"{request.node.nodeid} starts {tier} work ({args!r:.120}) without "
                f"@pytest.mark.{tier}: mark it, so that `make test-fast` leaves it out"
            )
        real(self, args, *rest, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)


@pytest.fixture(scope="session")
def playground_server() -> Iterator[Any]:
    from micrograd.playground import serve

    handle = serve(port=0)
    yield handle
    handle.stop()


@pytest.fixture(scope="session")
def playground(playground_server: Any) -> str:
    """The URL of a running playground."""
    return playground_server.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e . --group test)")
    path = chromium_path()
    if path is None:
        _unavailable("Chromium is not installed; run scripts/ensure-chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab (own cookies and sessionStorage, so its own playground session), 1280×800.
    Errors the page's JavaScript throws, and errors it logs to the console, fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(30_000)  # a loaded machine is slow, not wrong
    tab = context.new_page()
    errors = watch_errors(tab)
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A fresh tab the size of a phone (390×844, touch), failing the test on page errors as
    `page` does."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    context.set_default_timeout(30_000)  # a loaded machine is slow, not wrong
    tab = context.new_page()
    errors = watch_errors(tab)
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


# Chromium logs every 4xx answer as a console error; the playground answers a bad setting with a
# 400 and shows its one-line reason on the page, which the tests check. Those are expected.
_EXPECTED = "Failed to load resource: the server responded with a status of 4"


def watch_errors(tab: Any) -> list[str]:
    """The uncaught exceptions and console errors of `tab`, as they happen (a list to assert
    empty): any browser test that makes its own page calls this."""
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))

    def console(msg: Any) -> None:
        if msg.type == "error" and not msg.text.startswith(_EXPECTED):
            errors.append(f"console: {msg.text}")

    tab.on("console", console)
    return errors


@pytest.fixture
def screenshot() -> Callable[[Any, str], pathlib.Path]:
    def save(page: Any, name: str, full_page: bool = False) -> pathlib.Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return save


# ------------------------------------------------------------------ makemore's names.txt
# Never committed: tests read the copy beside the project (../shared/data/names.txt, or the file
# MICROGRAD_NAMES_FILE names where the suite is started: .ci/run and the Makefile set it). No test
# sees the user's names setting, data folder or the internet: the suite's process starts with no
# MICROGRAD_NAMES_FILE, an empty data folder of its own (MICROGRAD_DATA) and a download address
# where nothing listens (the discard port: refused at once). A test that needs the names asks for
# `names_file` (or calls `needs_names`), a failure under CI where the copy is missing, else a skip.


def _shared_names() -> tuple[pathlib.Path | None, str]:
    from micrograd.data import NAMES_ENV, NAMES_SHA256

    root = pathlib.Path(__file__).resolve().parent.parent
    file = pathlib.Path(os.environ.get(NAMES_ENV) or root.parent / "shared/data/names.txt")
    if not file.is_file():
        return None, f"makemore's names.txt is not at {file} (set {NAMES_ENV} to a copy)"
    import hashlib

    if hashlib.sha256(file.read_bytes()).hexdigest() != NAMES_SHA256:
        return None, f"{file} is not makemore's names.txt (its sha256 differs)"
    return file.resolve(), ""


def _hermetic_names() -> None:
    import atexit
    import tempfile

    folder = tempfile.mkdtemp(prefix="micrograd-test-data-")
    atexit.register(shutil.rmtree, folder, True)
    os.environ.pop("MICROGRAD_NAMES_FILE", None)
    os.environ["MICROGRAD_DATA"] = folder
    os.environ["MICROGRAD_NAMES_URL"] = "http://127.0.0.1:9/names.txt"


SHARED_NAMES, _NO_NAMES = _shared_names()
_hermetic_names()


def needs_names() -> pathlib.Path:
    """The shared copy of names.txt, or fail (under CI) / skip (elsewhere) in one line."""
    if SHARED_NAMES is None:
        if os.environ.get("CI"):
            pytest.fail(f"{_NO_NAMES} (CI must run the tests on makemore's names)")
        pytest.skip(_NO_NAMES)
    return SHARED_NAMES


@pytest.fixture
def names_file(monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """makemore's names for this test: MICROGRAD_NAMES_FILE set to the shared copy."""
    path = needs_names()
    monkeypatch.setenv("MICROGRAD_NAMES_FILE", str(path))
    return path


@contextlib.contextmanager
def with_names() -> Iterator[pathlib.Path]:
    """MICROGRAD_NAMES_FILE set to the shared copy while it lasts: for fixtures wider than a test
    (a site built once for a module or the session)."""
    path = needs_names()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MICROGRAD_NAMES_FILE", str(path))
        yield path
