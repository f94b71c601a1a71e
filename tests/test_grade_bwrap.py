"""The grader where bubblewrap is installed but cannot make a sandbox, as on GitHub's
ubuntu-24.04 runner (AppArmor forbids unprivileged user namespaces): `micrograd grade` says so in
one line naming AppArmor's setting and --no-sandbox, runs nothing, and a warm worker whose sandbox
dies at its start says its last words (not `ValueError: seek of closed file`)."""

from __future__ import annotations

import os
import pathlib
import stat
import sys

import pytest

from micrograd.commands.cli import main
from micrograd.grading import sandbox as grade_sandbox
from micrograd.grading import workers as grade_workers

pytest.importorskip("nbclient")  # `micrograd grade` requires it before anything else
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox is bubblewrap's: Linux"
)
DENIED = "bwrap: setting up uid map: Permission denied"


def failing_bwrap(folder: pathlib.Path) -> pathlib.Path:
    """A `bwrap` that fails as AppArmor makes the real one fail."""
    folder.mkdir()
    script = folder / "bwrap"
    script.write_text(f"#!/bin/sh\necho '{DENIED}' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.sandbox  # it runs a `bwrap` (this one fails at once)
def test_a_bwrap_that_cannot_make_a_namespace_is_named_in_one_line(
    tmp_path, monkeypatch, capsys
) -> None:
    bin_dir = tmp_path / "bin"
    script = failing_bwrap(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert grade_sandbox.bwrap() == str(script)
    ran = tmp_path / "ran.txt"  # a submission that would write it
    nb = tmp_path / "class" / "ada" / "01.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text("{}")  # never read: the grader refuses first
    assert main(["grade", str(tmp_path / "class")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"micrograd grade: error: bubblewrap cannot make a sandbox here ({script}: {DENIED}), so "
        "no submission was run: where AppArmor restricts unprivileged user namespaces (Ubuntu "
        "23.10 and later), sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0 lifts it; "
        "or pass --no-sandbox to run them with your own permissions (they could read and write "
        "your files)"
    ]
    assert not ran.exists() and not (tmp_path / "class" / "grade-results").exists()
    # the flag the line names is the command's
    try:
        main(["grade", "--help"])
    except SystemExit as exc:  # argparse's --help
        assert exc.code == 0
    assert "\n  --no-sandbox " in capsys.readouterr().out


@pytest.mark.sandbox
def test_a_working_bwrap_is_no_refusal() -> None:
    if grade_sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    assert grade_sandbox.refusal() is None  # it ran once, and made its namespaces


def test_a_warm_worker_whose_sandbox_dies_at_its_start_says_why(monkeypatch) -> None:
    # the worker's command as a bwrap refused by AppArmor: its one line is the run's outcome
    monkeypatch.setattr(
        grade_sandbox,
        "command",
        lambda folder, use, module: ["sh", "-c", f"echo '{DENIED}' >&2; exit 1"],
    )
    worker = grade_workers.Worker(use_bwrap=True, uid=None)
    try:
        notebook = {"cells": [{"cell_type": "code", "source": "1", "metadata": {}}]}
        outcomes, end = worker.run(notebook, {}, [30.0])
    finally:
        worker.close()
    assert end == "killed"
    assert outcomes[-1] == {
        "state": "dead",
        "line": f"the sandbox did not start: {DENIED} (micrograd grade --no-sandbox runs "
        "without it)",
    }
