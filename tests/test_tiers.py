"""The suite's tiers: a test that starts Chromium, a kernel or bubblewrap carries its marker, so
that `make test-fast` (``-m "not browser and not jupyter and not sandbox and not slow"``) never
silently runs one, and a test using the browser fixtures is marked `browser` by the fixture."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import FIXTURE_TIERS, TIERS, _needs

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "tier"),
    [
        (["/usr/bin/bwrap", "--unshare-pid", "python"], "sandbox"),
        (["/usr/lib/chromium/chromium", "--headless"], "browser"),
        ([sys.executable, "-m", "ipykernel_launcher", "-f", "k.json"], "jupyter"),
        ([sys.executable, "-m", "micrograd.grading.runner"], "jupyter"),
        (["jupyter-lab", "--no-browser"], "jupyter"),
        ([sys.executable, "-m", "jupyterlab", "--no-browser"], "jupyter"),
        ([sys.executable, "-m", "micrograd", "course", "/tmp/c", "--no-browser"], "jupyter"),
        ([sys.executable, "-m", "micrograd", "course", "/tmp/c", "--no-lab"], None),
        ([sys.executable, "-m", "micrograd", "demo", "--out", "/tmp/test_jupyterlab_x"], None),
        ([sys.executable, "-m", "micrograd", "demo"], None),
        (["node", "step.js"], None),
        ("echo hello", None),
    ],
)
def test_each_kind_of_command_names_its_tier(argv: list[str] | str, tier: str | None) -> None:
    assert _needs(argv) == tier


def test_the_tiers_are_the_markers_pyproject_registers() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    for tier in TIERS:
        assert f'"{tier}: ' in text, f"{tier} is not registered in pyproject.toml's markers"


def test_an_unmarked_test_that_starts_sandboxed_work_fails_naming_its_marker(tmp_path) -> None:
    """A copy of the suite's conftest over three tests: the unmarked one that starts bubblewrap
    fails with the marker to add; the marked one runs; one using `page` is marked `browser` and
    so left out of the fast tier (never started here)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "tests" / "test_probe.py").write_text(
        textwrap.dedent(
            """
            import subprocess
            import pytest

            def start():
                try:
                    subprocess.Popen(["bwrap", "--version"], stdout=subprocess.DEVNULL).wait()
                except OSError:  # no bubblewrap here (or one that cannot run)
                    pass  # the guard let it through, which is the point

            def test_unmarked():
                start()

            @pytest.mark.sandbox
            def test_marked():
                start()

            def test_in_a_browser(page):
                raise AssertionError("a browser test ran in the fast tier")
            """
        )
    )
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n" + "".join(f"    {t}: x\n" for t in TIERS)
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not browser"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert "1 failed, 1 passed, 1 deselected" in out, out
    assert "test_unmarked starts sandbox work" in out, out
    assert "without @pytest.mark.sandbox" in out, out


def test_every_fixture_that_brings_a_tier_exists() -> None:
    """A renamed fixture would silently drop its tests into the fast tier."""
    defined = set()
    for path in (ROOT / "tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                "fixture" in ast.unparse(d) for d in node.decorator_list
            ):
                defined.add(node.name)
    assert FIXTURE_TIERS.keys() <= defined, FIXTURE_TIERS.keys() - defined


def test_a_test_that_leaves_a_thread_a_child_or_a_signal_handler_behind_fails(tmp_path) -> None:
    """A copy of the suite's conftest over tests that each leave one thing behind: each fails at
    its teardown naming what it left; one that ends what it started passes."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert "LEAK_GRACE = 10.0" in conftest
    conftest = conftest.replace("LEAK_GRACE = 10.0", "LEAK_GRACE = 0.5")  # (the probe's pace)
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "tests" / "test_probe.py").write_text(
        textwrap.dedent(
            """
            import signal
            import subprocess
            import threading

            def test_a_thread():
                threading.Thread(target=threading.Event().wait, name="stray", daemon=True).start()

            def test_a_child():
                subprocess.Popen(["sleep", "5"])

            def test_sigint_ignored():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

            def test_a_timer():
                signal.setitimer(signal.ITIMER_REAL, 100.0)

            def test_what_it_started_it_ended():
                done = threading.Event()
                t = threading.Thread(target=done.wait)
                t.start()
                child = subprocess.Popen(["sleep", "0"])
                previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, previous)
                done.set()
                t.join()
                child.wait()
            """
        )
    )
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n" + "".join(f"    {t}: x\n" for t in TIERS)
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert "5 passed, 4 errors" in out, out
    assert "test_a_thread left behind: thread 'stray'" in out, out
    assert "test_a_child left behind: child process " in out and "sleep 5" in out, out
    assert "test_sigint_ignored left behind: SIGINT: " in out and "SIG_IGN" in out, out
    assert "test_a_timer left behind: ITIMER_REAL: False before, True after" in out, out
    assert "test_what_it_started_it_ended" not in out, out
