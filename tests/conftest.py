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
    "built_site": ("slow",),  # the site and its course, built once for the session
    "built_dist": ("slow",),  # the wheel and the sdist, built once for the session
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


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal gives it, whatever started the run: a shell's background job (`make
    test &`, `bash .ci/run &`) starts with SIGINT ignored, which Python then keeps, and so would
    every process a test starts; the tests of Ctrl-C (the grader's, `micrograd demo`'s, `micrograd
    gpt`'s) would then wait forever for a signal that never comes."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)  # (pytest-xdist's hook: unknown where it is not loaded)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers a core. Most of a worker's time is spent waiting on a browser, a
    kernel or a server (a third of a core busy, measured over the browser and kernel files), so
    a worker a core left the cores half idle."""
    return 2 * (os.cpu_count() or 1)


# The heavy tests' markers: a test carrying one takes seconds (a browser, a kernel, a build), the
# others milliseconds. Files are run heaviest first (their sum), so that under `--dist loadfile
# --no-loadscope-reorder` no heavy file starts last while the other workers have nothing left.
HEAVY = ("browser", "jupyter", "sandbox", "slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for tier in {t for name in used & FIXTURE_TIERS.keys() for t in FIXTURE_TIERS[name]}:
            item.add_marker(getattr(pytest.mark, tier))
    weight: dict[str, float] = {}
    for item in items:
        heavy = any(item.get_closest_marker(m) for m in HEAVY)
        weight[item.nodeid.split("::")[0]] = weight.get(item.nodeid.split("::")[0], 0) + (
            1.0 if heavy else 0.001
        )
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])  # stable: a file's order kept


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


# ------------------------------------------------------------------ nothing left behind

# Threads a library starts once for the whole process, on first use, and keeps by design: tqdm's
# monitor and IPython's history saver (its shell is the process's one instance: class names); an
# event loop's default executor's workers ("asyncio_0": Playwright's loop, the module's
# browser's, starts one on first need; they end when their loop is closed).
PROCESS_THREADS = ("TMonitor", "HistorySavingThread")
LOOP_THREADS = "asyncio_"
# Playgrounds a module- or session-wide fixture serves (`fixture_owns`): their training thread
# and their request threads (a proxy keeps its connection open) are the fixture's, not a test's.
OWNED: list[Any] = []


def fixture_owns(handle: Any) -> Any:
    """Mark a playground (`serve()`'s handle) as a wide fixture's: the threads it starts while a
    test talks to it are not that test's leak. Returns the handle."""
    OWNED.append(handle)
    return handle


def _owned(thread: Any) -> bool:
    owner = getattr(getattr(thread, "_target", None), "__self__", None)
    return owner is not None and any(owner is h._server or owner is h._server.runner for h in OWNED)


LEAK_GRACE = 10.0  # seconds a thread or a child process may take to finish after its test


def _children() -> set[int]:
    """This process's living children (Linux /proc; elsewhere none are seen). A zombie (exited,
    not yet waited for) holds nothing and is not counted."""
    found: set[int] = set()
    for task in pathlib.Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            found.update(int(pid) for pid in task.read_text().split())
        except OSError:
            continue  # a thread that ended meanwhile
    living = set()
    for pid in found:
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.rpartition(")")[2].split()[0] != "Z":
            living.add(pid)
    return living


def _signal_state() -> dict[str, Any]:
    import signal

    state: dict[str, Any] = {}
    for sig in signal.valid_signals():
        try:
            state[signal.Signals(sig).name] = signal.getsignal(sig)
        except (ValueError, OSError):
            continue  # a real-time signal without a name, or one Python cannot read
    state["blocked"] = sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))
    state["ITIMER_REAL"] = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    return state


def _stop_process_runners() -> None:
    """What the process keeps from first use to its end, ended with each test (a test is such a
    process's life): the notebook widgets' training thread (the kernel's, shared by every Train
    widget) and the Node.js that runs generated JavaScript for the playground's engines."""
    import sys

    widgets = sys.modules.get("micrograd.playground.serving.widgets")
    runner = getattr(widgets, "_runner", None)
    if runner is not None:
        runner.stop()
    engines = sys.modules.get("micrograd.playground.training.engines")
    node = getattr(engines, "_NODE", None)
    if node is not None:
        node.close()


def left_behind(
    threads: set[Any], children: set[int], signals: dict[str, Any], grace: float | None = None
) -> list[str]:
    """What is alive now that was not before (threads, child processes; waiting up to `grace`
    seconds for them to end), and every signal handler, blocked signal or timer that changed."""
    import threading
    import time

    _stop_process_runners()
    until = time.monotonic() + (LEAK_GRACE if grace is None else grace)
    # only the threads that would be reported are waited for: a process's own thread, a
    # loop's worker or a wide fixture's playground's thread lives on (a wait for it was
    # LEAK_GRACE seconds lost after each browser test)
    new = [
        t
        for t in threading.enumerate()
        if t not in threads
        and type(t).__name__ not in PROCESS_THREADS
        and not t.name.startswith(LOOP_THREADS)
        and not _owned(t)
    ]
    for t in new:
        t.join(max(0.0, until - time.monotonic()))
    kids = _children() - children
    while kids and time.monotonic() < until:
        time.sleep(0.05)
        kids = _children() - children
    found = [
        f"thread {t.name!r} ({type(t).__name__}, target {getattr(t, '_target', None)!r:.80})"
        for t in new
        if t.is_alive()
    ]
    for pid in sorted(kids):
        try:
            cmd = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue  # it ended just now
        found.append(f"child process {pid}: {cmd.decode(errors='replace')[:120]}")
    now = _signal_state()
    found += [
        f"{name}: {signals.get(name)!r} before, {now.get(name)!r} after"
        for name in sorted(set(signals) | set(now))
        if signals.get(name) != now.get(name)
    ]
    return found


@pytest.fixture(autouse=True)
def _nothing_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a thread or a child process running, or a signal handler, a
    blocked signal or an interval timer changed. Set up after every module- and session-wide
    fixture (pytest sets up wider scopes first) and torn down after the test's own fixtures,
    so what those own is theirs, and what is new after them is the test's."""
    import threading

    threads = set(threading.enumerate())
    children = _children()
    signals = _signal_state()
    yield
    found = left_behind(threads, children, signals)
    if found:
        pytest.fail(f"{request.node.nodeid} left behind: " + "; ".join(found), pytrace=False)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: Any) -> tuple[pathlib.Path, dict[str, Any]]:
    """`micrograd site` (the site and its course), run once for the session by the command as a
    user runs it, into ``<www>/s``, shared by every worker: returns the www folder and what the
    command did (``status``, ``out``, ``err``). test_site_browser.py, test_gpt_site.py and
    test_course_site.py read and serve it (nothing writes into it)."""
    import contextlib
    import io

    from micrograd.commands.cli import main

    from .support.shared_build import built_once

    def build(www: pathlib.Path) -> dict[str, Any]:
        out, err = io.StringIO(), io.StringIO()
        with with_names(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["site", str(www / "s")])  # (makemore's names in the site)
        return {"status": status, "out": out.getvalue(), "err": err.getvalue()}

    return built_once(tmp_path_factory, "www", build)


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory: Any) -> dict[str, pathlib.Path]:
    """This tree's pure wheel and sdist, built once for the session as a release builds them
    (tests/support/building.py), shared by every worker: {'wheel': ., 'sdist': ., 'log': .},
    the last the build's output (stdout, then stderr), a text file."""
    from .support.building import build
    from .support.shared_build import built_once

    def once(folder: pathlib.Path) -> dict[str, Any]:
        log: list[str] = []
        made = {kind: str(path) for kind, path in build(folder, sdist=True, log=log).items()}
        (folder / "build.log").write_text("\n".join(log))
        return {**made, "log": str(folder / "build.log")}

    return {
        kind: pathlib.Path(path)
        for kind, path in built_once(tmp_path_factory, "dist", once)[1].items()
    }


@pytest.fixture(scope="session")
def playground_server() -> Iterator[Any]:
    from micrograd.playground import serve

    handle = fixture_owns(serve(port=0))
    yield handle
    handle.stop()
    OWNED.remove(handle)


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


SUITE_NAMES = "MICROGRAD_SUITE_NAMES_FILE"  # the main process's find, for its workers


def _shared_names() -> tuple[pathlib.Path | None, str]:
    from micrograd.data import NAMES_ENV, NAMES_SHA256

    root = pathlib.Path(__file__).resolve().parent.parent
    given = os.environ.get(NAMES_ENV) or os.environ.get(SUITE_NAMES)
    file = pathlib.Path(given or root.parent / "shared/data/names.txt")
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
    # the copy found is kept for the pytest-xdist workers, started after this ran in the main
    # process (under a name micrograd never reads): they would otherwise look beside the
    # project only, and skip every test on the names in a clone elsewhere (a git worktree)
    if SHARED_NAMES is not None:
        os.environ[SUITE_NAMES] = str(SHARED_NAMES)
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
