"""The linters are part of the suite: `pytest` alone also checks style. ruff over the Python;
ESLint (pinned in package.json, installed by `make test`: scripts/ensure-eslint) over every
static JavaScript file, the sources the JavaScript steps are joined from, and over the notebook
widget's module, which joins the pages' modules into one scope."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

from .conftest import _unavailable

ROOT = pathlib.Path(__file__).resolve().parents[1]
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
STATIC = ROOT / "micrograd" / "playground" / "static"


def test_ruff_is_clean() -> None:
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed (pip install -e . --group test)")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "micrograd", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_the_style() -> None:
    # The formatter is the style: no file it would change. `# fmt: skip` is for a table that
    # reads better as typed, and says why on the line above.
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed (pip install -e . --group test)")
    dirs = ["micrograd", "tests", "benchmarks"]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *dirs],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    skips = [
        (path, i)
        for d in dirs
        for path in (ROOT / d).rglob("*.py")
        for i, line in enumerate(path.read_text().splitlines())
        if line.rstrip().endswith("# fmt: skip")
    ]
    assert len(skips) <= 8, f"{len(skips)} `# fmt: skip`: a handful at most"
    for path, i in skips:
        above = path.read_text().splitlines()[i - 1].strip()
        assert above.startswith("#"), f"{path}:{i + 1}: `# fmt: skip` without its reason above"


def _eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if not ESLINT.exists():
        _unavailable("ESLint is not installed (make test installs it: scripts/ensure-eslint)")
    return subprocess.run(
        [str(ESLINT), "--max-warnings", "0", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_eslint_is_clean_over_the_static_javascript() -> None:
    files = sorted(STATIC.rglob("*.js"))  # static/ and its pages' folders
    assert {"common.js", "train.js", "worker.js", "gpt-draw.js"} <= {f.name for f in files}
    result = _eslint(*(str(f.relative_to(ROOT)) for f in files))
    assert result.returncode == 0, result.stdout + result.stderr


def test_eslint_is_clean_over_the_javascript_the_steps_are_made_of() -> None:
    # the sources the JavaScript steps are joined from (no page loads them: js_target.py,
    # train_js.py and gpt.py put them after the generated programs)
    files = [
        *(ROOT / "micrograd" / "jit").glob("*.js"),
        STATIC.parent / "training" / "train_step.js",
        ROOT / "micrograd" / "jit" / "health.js",
    ]
    assert {f.name for f in files} >= {"runtime.js", "gpt_step.js", "train_step.js", "health.js"}
    result = _eslint(*(str(f.relative_to(ROOT)) for f in sorted(files)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_eslint_is_clean_over_the_widgets_joined_module() -> None:
    # the pages' modules in one scope: a name two of them declare would stop the widget loading
    widgets = pytest.importorskip("micrograd.widgets", reason="the widget needs anywidget")
    # (what the widget does not call, the pages' transports, is left unused there)
    result = _eslint(
        "--rule",
        '{"no-unused-vars": "off"}',
        "--stdin",
        "--stdin-filename",
        "micrograd/playground/static/widget-module.js",
        stdin=widgets.PlaygroundWidget._esm,
    )
    assert result.returncode == 0, result.stdout + result.stderr
