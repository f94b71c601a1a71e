"""The warm worker (`grading/warm_worker.py`), the way `micrograd grade` runs notebooks by default:
the same rows as a Jupyter kernel of their own gives (`grade.ENGINE = "kernel"`) for the same
submissions, right, buggy, crashing, hanging, exiting; and what one notebook leaves behind in
the worker (a process, a file in /tmp, a cell that will not stop) is gone when the next one
runs."""

from __future__ import annotations

import pathlib
import re

import pytest

from micrograd.grading import grade
from micrograd.grading import sandbox as grade_sandbox
from micrograd.grading import workers as grade_workers

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
from tests.test_notebooks import FILLS, _filled  # noqa: E402

N1, N2, N3 = "01_derivatives_and_value", "02_backpropagation", "03_neuron_to_mlp"

pytestmark = pytest.mark.skipif(grade_sandbox.bwrap() is None, reason="bubblewrap is not installed")


def _with(name: str, **changes: str) -> dict[str, str]:
    return {**FILLS[name], **changes}


SUBMISSIONS = {  # learner -> notebook -> answers (benchmarks/bench_grade.py's kinds, and more)
    "right": {N1: FILLS[N1], N2: FILLS[N2], N3: FILLS[N3]},
    "buggy": {
        N1: _with(
            N1,
            slope="def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)",
            value=FILLS[N1]["value"].replace("self.data * other.data", "self.data + other.data"),
            step1="L.grad = 1 / 0",
            step3="e.grad = ...\nc.grad = ...",
        ),
        N3: _with(N3, step=FILLS[N3]["step"].replace("        p.grad = 0\n", "        pass\n")),
    },
    "hangs": {N1: _with(N1, slope="def slope(f, x, h=0.0001):\n    while True:\n        pass")},
    "exits": {
        N1: _with(
            N1,
            value="raise SystemExit(3)",
            step1='import os\nos.write(1, b\'{"cell": 0, "state": "ok"}\\n\')\nL.grad = 1',
            step2="import os\nos._exit(0)",
        )
    },
}


def _grade_all(root: pathlib.Path, engine: str, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setattr(grade, "ENGINE", engine)
    rows = []
    for who, notebooks in SUBMISSIONS.items():
        shared = [("my_value.py", FILLS[N2]["my_value"].split("\n", 1)[1])]
        for name, answers in notebooks.items():
            path = root / who / f"{name}.ipynb"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(_filled(name, answers), path)
            got = grade.grade(path, None, shared, f"{who}/{name}", learner=who, own_folder=True)
            # each engine's limits come from the course's run in it (a kernel's import cells
            # take seconds, a warm worker's none): the same cell, its own number of seconds
            rows += [
                (
                    r.submission,
                    r.exercise,
                    r.result,
                    re.sub(r"within [\d.]+ s", "within N s", r.detail),
                    r.flag,
                )
                for r in got
            ]
    grade_workers.WORKERS.close()
    return rows


@pytest.mark.jupyter
@pytest.mark.sandbox
def test_the_worker_grades_as_a_kernel_does(tmp_path, monkeypatch) -> None:
    by_kernel = _grade_all(tmp_path, "kernel", monkeypatch)
    by_worker = _grade_all(tmp_path, "worker", monkeypatch)
    assert by_worker == by_kernel
    results = {(s, e): r for s, e, r, _, _ in by_worker}
    # the kinds are what they are said to be: not two runs equally broken
    assert {r for (s, _), r in results.items() if s.startswith("right/")} == {"passed"}
    assert results["buggy/" + N1, "value"] == "failed"
    assert results["hangs/" + N1, "slope"] == "timeout"
    assert results["exits/" + N1, "value"] == "error"
    assert results["exits/" + N1, "step2"] == "error"


def _run(*cells: str, timeouts: list[float] | None = None) -> dict[int, dict]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    outcomes, end = grade._run(nb, {}, timeouts or [20.0] * len(cells), True, 0)
    assert end == "done"
    return outcomes


@pytest.mark.sandbox
def test_nothing_of_a_notebook_is_left_for_the_next(monkeypatch) -> None:
    monkeypatch.setattr(grade, "ENGINE", "worker")
    try:
        left = _run(
            "import pathlib, subprocess, sys, os\n"
            "pathlib.Path('/tmp/left.txt').write_text('x')\n"
            "pathlib.Path('mine.txt').write_text('x')\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
            " start_new_session=True)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    import time; time.sleep(300)\n"
            "print([p.pid, pid])\n"
            "leftover = 1\n"
            "sys.modules['leftover_module'] = sys",
            "print('after')",
        )
        assert [left[i]["state"] for i in (0, 1)] == ["ok", "ok"]
        assert left[1]["text"] == "after\n"  # once: not from the forked copy too
        pids = [int(p) for p in re.findall(r"\d+", left[0]["text"])]
        assert len(pids) == 2
        seen = _run(
            "import os\n"
            f"assert not [p for p in {pids} if os.path.exists(f'/proc/{{p}}')]\n"
            "assert not os.path.exists('/tmp/left.txt')\n"
            "assert not os.path.exists('mine.txt')\n"
            "import sys\n"
            "assert 'leftover' not in globals() and 'leftover_module' not in sys.modules\n"
            "assert In == ['', _i1] and get_ipython().execution_count == 2\n"  # its first cell
            "print(os.listdir('.'))",
        )
        assert seen[0]["state"] == "ok", seen[0]
        assert seen[0]["text"] == "[]\n"
    finally:
        grade_workers.WORKERS.close()


@pytest.mark.sandbox
def test_a_cell_that_will_not_stop_ends_its_run_only(monkeypatch) -> None:
    monkeypatch.setattr(grade, "ENGINE", "worker")
    try:
        stuck = _run(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
            "print('never')",
            timeouts=[1.0, 20.0],
        )
        assert stuck[0]["state"] == "timeout" and stuck[0].get("stuck") is True
        assert 1 not in stuck
        stopped = _run("while True:\n    pass", "print('next')", timeouts=[1.0, 20.0])
        assert stopped[0]["state"] == "timeout" and not stopped[0].get("stuck")
        assert stopped[1]["state"] == "ok" and stopped[1]["text"] == "next\n"
    finally:
        grade_workers.WORKERS.close()
