"""`micrograd grade` on a class folder written here: correct notebooks, each kind of bug, a hang,
a kernel that dies, an untouched copy, a file that is no notebook; the table, the CSV and the
exit status, as a teacher runs it."""

from __future__ import annotations

import contextlib
import csv
import html
import io
import os
import pathlib
import re
import signal
import socket
import threading
from typing import Any

import pytest

from micrograd.check.timeout import DEFAULT_TIME_LIMIT, MAX_TIMEOUTS, WAITING_FACTOR
from micrograd.commands.cli import main
from micrograd.grading import class_report as grade_report
from micrograd.grading import grade
from micrograd.grading import sandbox as grade_sandbox

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
from tests.test_notebooks import FILLS, MY_VALUE, _filled, _nb  # noqa: E402

N1, N2, N3 = "01_derivatives_and_value", "02_backpropagation", "03_neuron_to_mlp"


@pytest.fixture(autouse=True)
def _bwrap_works_unless_sandboxed(request, monkeypatch) -> None:
    """Outside the sandbox tier the command's grading is faked: bubblewrap's one run that sees
    whether it can make a sandbox (sandbox.refusal) is taken as a success, not started."""
    if request.node.get_closest_marker("sandbox") is None:
        monkeypatch.setattr(grade_sandbox, "_probe", lambda path: None)


def _write(path: pathlib.Path, name: str, answers: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(_filled(name, answers), path)


def _with(name: str, **changes: str) -> dict[str, str]:
    return {**FILLS[name], **changes}


# `=` for `+=` in notebook 2's `*` (FILLS' own lines): the neuron uses each node once, so only a
# node used twice shows it
ASSIGNS = (
    FILLS[N2]["backward_ops"]
    .replace("self.grad += out.grad * other.data", "self.grad = out.grad * other.data")
    .replace("other.grad += out.grad * self.data", "other.grad = out.grad * self.data")
)


HOSTILE = {  # each exercise is right, after an attack that raises if it got anywhere
    "slope": """\
import os, pathlib
for target in (ROOT / "pwned.txt", ROOT / "zed" / "01.ipynb"):   # the teacher's, a later one
    try:
        target.write_text("pwned")
    except OSError:
        pass
    else:
        raise RuntimeError(f"wrote {target}")
def slope(f, x, h=0.0001):
    return (f(x + h) - f(x)) / h""",
    "step1": """\
import os
for attempt in (lambda: os.remove(ROOT / "teacher.txt"),
                lambda: open(ROOT / "ada" / "01.ipynb").read(),
                lambda: os.listdir(os.readlink(f"/proc/{os.getppid()}/cwd")),
                lambda: os.listdir(ROOT)):
    try:
        got = attempt()
    except OSError:
        continue
    if str(ROOT) in str(got) or "ada" in str(got) or got is None:
        raise RuntimeError(f"reached the teacher's files: {str(got)[:60]}")
L.grad = 1""",
    "step2": """\
import os, time
children = []
try:
    for _ in range(1000):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError:
    pass
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
if len(children) >= 1000:
    raise RuntimeError("forked 1,000 processes")
d.grad = -2.0
f.grad = 4.0""",
    "step3": """\
try:
    hog = bytearray(10 * 10**9)
except MemoryError:
    hog = None
if hog is not None:
    raise RuntimeError("allocated 10 GB")
e.grad = d.grad
c.grad = d.grad""",
    "step4": """\
import socket, subprocess, sys
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
except OSError:
    pass
else:
    raise RuntimeError("reached the grader's machine over the network")
survivor = (f"import pathlib, time\\n# {TOKEN}\\n"
            f"for _ in range(3000):\\n"
            f"    time.sleep(0.1)\\n"
            f"    for p in ({str(ROOT / 'grades.csv')!r}, {str(ROOT / 'late.txt')!r}):\\n"
            f"        try:\\n"
            f"            pathlib.Path(p).write_text('passed')\\n"
            f"        except OSError:\\n"
            f"            pass\\n")
subprocess.Popen([sys.executable, "-c", survivor, TOKEN], start_new_session=True)
a.grad = e.grad * b.data
b.grad = e.grad * a.data""",
}
TOKEN = "micrograd-grade-survivor-5c1e"


def _hostile(root: pathlib.Path, port: int) -> dict[str, str]:
    head = f"import pathlib\nROOT = pathlib.Path({str(root)!r})\nPORT = {port}\nTOKEN = {TOKEN!r}\n"
    return _with(N1, **{k: head + v for k, v in HOSTILE.items()})


def _tampered() -> Any:
    """A wrong engine whose copy lost its checks: slope's deleted, value's replaced by `pass`,
    step1's asserts gone; and a cell of the learner's own raising before step 4."""
    nb = _filled(
        N1,
        _with(
            N1,
            slope="def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)",
            value=FILLS[N1]["value"].replace("self.data * other.data", "self.data + other.data"),
            step1="L.grad = 2",
        ),
    )
    cells = []
    for c in nb.cells:
        checks = c.metadata.get("checks")
        if checks == "slope":
            continue
        if checks == "value":
            c.source = "pass"
        if checks == "step1":
            c.source = (
                "\n".join(
                    line
                    for line in c.source.splitlines()
                    if "assert" not in line and "compare" not in line
                )
                or "pass"
            )
        if c.metadata.get("exercise") == "step4":
            cells.append(nbformat.v4.new_code_cell("raise ValueError('my own cell')"))
        cells.append(c)
    nb.cells = cells
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, list[dict], pathlib.Path]:
    """The class folder (GitHub Classroom's layout: a folder per learner), graded once:
    (exit status, stdout, CSV rows, folder)."""
    if grade_sandbox.bwrap() is None:
        reason = "bubblewrap is not installed (make test installs it: scripts/ensure-bubblewrap)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the sandbox's tests")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("class")
    (root / "teacher.txt").write_text("the teacher's notes")
    _write(root / "ada" / "01.ipynb", N1, FILLS[N1])
    _write(root / "ada" / "02.ipynb", N2, FILLS[N2])  # her my_value.py is what 03 imports
    _write(root / "ada" / "03.ipynb", N3, FILLS[N3])
    _write(
        root / "bob" / "01.ipynb",
        N1,
        _with(
            N1,
            slope="def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)",  # half
            value=FILLS[N1]["value"].replace("self.data * other.data", "self.data + other.data"),
            step1="L.grad = 1 / 0",  # crashes
            step2="d.grad = d.data\nf.grad = 4.0",  # wrong
            step3="e.grad = ...\nc.grad = ...",  # left
        ),
    )
    bad_step = FILLS[N3]["step"].replace("        p.grad = 0\n", "        pass\n")
    _write(root / "bob" / "03.ipynb", N3, _with(N3, step=bad_step))
    (root / "bob" / "my_value.py").write_text(MY_VALUE.split("\n", 1)[1])  # his, beside it
    _write(
        root / "cy" / "01.ipynb",
        N1,
        _with(N1, slope="def slope(f, x, h=0.0001):\n    while True:\n        pass"),
    )
    _write(root / "dee" / "01.ipynb", N1, _with(N1, value="import os\nos._exit(1)"))
    root.joinpath("eve").mkdir()
    nbformat.write(_nb(N1), root / "eve" / "01.ipynb")  # the learner's copy, untouched
    (root / "eve" / "02.ipynb").write_text("{ not a notebook")
    root.joinpath("fay", "work").mkdir(parents=True)  # a notebook in a sub-folder is hers too
    nbformat.write(_tampered(), root / "fay" / "work" / "01.ipynb")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    _write(root / "hal" / "01.ipynb", N1, _hostile(root, listener.getsockname()[1]))
    _write(root / "zed" / "01.ipynb", N1, FILLS[N1])
    assert ASSIGNS != FILLS[N2]["backward_ops"]
    _write(root / "ivy" / "02.ipynb", N2, _with(N2, backward_ops=ASSIGNS))
    out = root / "grades.csv"
    out.write_text("the last run's grades")
    stdout = io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout):
            status = main(
                [
                    "grade",
                    str(root),
                    "--csv",
                    str(out),
                    "--timeout",  # every cell's (hal's attacks take time on a loaded machine)
                    "30",
                    "--summary",
                    str(root / "summary.csv"),
                    "--html",
                    str(root / "grades.html"),
                ]
            )
    finally:
        listener.close()
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return status, stdout.getvalue(), rows, root


def _results(rows: list[dict], who: str, notebook: str) -> dict[str, tuple[str, str]]:
    return {
        r["exercise"]: (r["result"], r["detail"])
        for r in rows
        if r["learner"] == who and r["notebook"] == notebook
    }


@pytest.fixture
def sandbox_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test whose point is not the sandbox (its grading is faked, or it stops before any
    submission runs): the command finds a sandbox, on a machine without bubblewrap too."""
    monkeypatch.setattr(grade_sandbox, "refusal", lambda: None)


def test_correct_notebooks_pass_every_exercise(graded) -> None:
    status, text, rows, _ = graded
    for nb, n in (("01", 6), ("02", 6), ("03", 3)):
        got = _results(rows, "ada", nb)
        assert len(got) == n and all(r == ("passed", "") for r in got.values()), got
    assert status == 1 and "micrograd grade" not in text


def test_each_kind_of_bug_is_reported_with_its_cause(graded) -> None:
    _, _, rows, _ = graded
    bob = _results(rows, "bob", "01")
    assert bob["slope"][0] == "failed" and "should be close to 14" in bob["slope"][1]
    assert bob["value"] == ("failed", bob["value"][1])
    assert bob["value"][1].startswith(
        "*: for out = a * b with a = 2.0, b = -3.0, out.data is -1.0, expected -6.0"
    )
    assert bob["step1"] == ("error", "ZeroDivisionError: division by zero")
    assert bob["step2"] == (
        "failed",
        "d.grad = 9.0000, but nudging d moves L by -2.000000 per unit: ∂(d·f)/∂d is f, the "
        "other factor, not d itself",
    )
    assert bob["step3"][0] == "not attempted" and "`...` left" in bob["step3"][1]
    # built on step 3's grads, still `...`: the exercise's own line crashes on them
    assert bob["step4"] == (
        "error",
        "TypeError: unsupported operand type(s) for *: 'ellipsis' and 'float'",
    )
    step = _results(rows, "bob", "03")
    assert step["nn"] == ("passed", "")
    assert step["step"][0] == "failed" and "the grads are never zeroed" in step["step"][1]


def test_a_hang_a_dead_kernel_and_untouched_copies(graded) -> None:
    _, _, rows, _ = graded
    # cy's slope never returns: its check is stopped after the --timeout, and the run goes on
    cy = _results(rows, "cy", "01")
    assert cy["slope"] == (
        "timeout",
        "the check of slope did not finish within 30 s: stopped there",
    )
    # value's cells before it call slope too (a cell of the course's own, stopped in turn):
    # with the course's slope, value passes, so the hang is slope's alone
    assert cy["value"] == ("blocked", "blocked by slope (timeout): it passes once slope is right")
    assert [cy[k] for k in ("step1", "step2", "step3", "step4")] == [("passed", "")] * 4
    dee = _results(rows, "dee", "01")
    assert dee["slope"] == ("passed", "")
    assert dee["value"][0] == "error" and dee["value"][1].startswith("the kernel died")
    # with the course's Value in her value cell, the rest pass: the kernel's death blocked them
    assert {dee[k] for k in ("step1", "step2", "step3", "step4")} == {
        ("blocked", "blocked by value (error): it passes once value is right")
    }
    eve = _results(rows, "eve", "01")
    assert len(eve) == 6 and all(r[0] == "not attempted" for r in eve.values()), eve
    broken = [r for r in rows if r["submission"].endswith("eve/02.ipynb")]
    assert [(r["result"], r["detail"][:15]) for r in broken] == [("error", "not a notebook:")]


def test_the_table_the_csv_and_the_exit_status(graded) -> None:
    status, text, rows, root = graded
    assert status == 1  # not everyone passed
    assert list(rows[0]) == [
        *("learner", "submission", "notebook", "exercise", "result", "detail", "flag")
    ]
    assert {r["learner"] for r in rows} == {
        *("ada", "bob", "cy", "dee", "eve", "fay", "hal", "ivy", "zed")
    }
    assert all(f"/{r['learner']}/" in r["submission"] for r in rows)
    lines = text.splitlines()
    assert lines[0].split() == ["submission", "notebook", "exercise", "result", "detail"]
    assert len(lines) == len(rows) + 2  # a line per row, then the summary
    counts = {k: sum(r["result"] == k for r in rows if r["exercise"]) for k in grade.RESULTS}
    assert lines[-1] == (
        f"13 submissions, {sum(counts.values())} exercises: "
        + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    )
    for row, line in zip(rows, lines[1:]):
        assert line.startswith(row["submission"]) and row["result"] in line
    # the learners' folders are read, never written: ada's my_value.py came from her notebook 2
    assert sorted(root.glob("**/my_value.py")) == [root / "bob" / "my_value.py"]


def test_tampered_check_cells_change_nothing(graded) -> None:
    """fay deleted slope's check, replaced value's by `pass` and took the asserts out of
    step1's: the course's checks ran all the same; her own cell raising before step 4 is
    reported there."""
    _, _, rows, _ = graded
    fay = _results(rows, "fay", "01")
    assert fay["slope"][0] == "failed" and "should be close to 14" in fay["slope"][1]
    assert fay["value"][0] == "failed" and fay["value"][1].startswith("*: for out = a * b")
    assert fay["step1"][0] == "failed" and "L.grad = 2" in fay["step1"][1]
    assert fay["step4"][0] == "error"
    assert re.fullmatch(
        r"cell \d+, line 1 \(`raise ValueError\('my own cell'\)`\), before this exercise, "
        r"raised ValueError: my own cell",
        fay["step4"][1],
    ), fay["step4"]


@pytest.mark.sandbox
def test_one_bug_is_one_failure_and_the_rest_blocked_by_it(graded) -> None:
    """ivy typed `=` for `+=` in notebook 2's `*`: backward_ops' own check names it (a node
    used twice), and the exercises standing on it are blocked by it, not failed."""
    _, _, rows, _ = graded
    ivy = _results(rows, "ivy", "02")
    assert ivy["backward_ops"] == (
        "failed",
        "`_backward` assigns (=) instead of accumulating (+=) in `*`: for out = a * a with "
        "a = 3.0, a.grad is 3.0 after out._backward(), expected 6.0",
    )
    blocked = ("blocked", "blocked by backward_ops (failed): it passes once backward_ops is right")
    assert {k: v for k, v in ivy.items() if v[0] != "passed"} == {
        "backward_ops": ivy["backward_ops"],
        **{k: blocked for k, v in ivy.items() if v[0] == "blocked"},
    }
    assert sum(v[0] == "failed" for v in ivy.values()) == 1
    assert ivy["by_hand"] == ivy["prediction"] == ("passed", "")
    assert ivy["backward"] == blocked  # its check runs on x * x


@pytest.mark.sandbox
def test_a_bug_in_a_flat_folder_blocks_by_name(tmp_path, capsys) -> None:
    """The flat layout (the notebooks in the class folder): one learner's notebook 2 whose
    backward() never ends (its check says so), and notebook 1 whose slope never returns: the
    grader stops its check after the time the course's own solution took for that cell, times
    FACTOR (at least FLOOR seconds), and goes on."""
    if grade_sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    hang = "def backward(self):\n    while True:\n        pass\n\nValue.backward = backward"
    _write(tmp_path / "02.ipynb", N2, _with(N2, backward=hang))
    slope = "def slope(f, x, h=0.0001):\n    while True:\n        pass"
    _write(tmp_path / "01.ipynb", N1, _with(N1, slope=slope))
    out = tmp_path / "g.csv"
    assert main(["grade", str(tmp_path), "--csv", str(out)]) == 1
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    two = _results(rows, str(tmp_path), "02")
    assert two["backward"][0] == "failed" and "did not finish" in two["backward"][1]
    blocked = ("blocked", "blocked by backward (failed): it passes once backward is right")
    assert two["assign_value"] == two["my_value"] == blocked
    assert two["backward_ops"] == two["by_hand"] == ("passed", "")
    one = _results(rows, str(tmp_path), "01")
    limit = max(grade.CHECK_FLOOR, grade.FACTOR * grade.course_times("01")["check:slope#0"])
    assert limit < 60
    assert one["slope"] == (
        "timeout",
        f"the check of slope did not finish within {limit:g} s: stopped there",
    )
    assert one["value"] == ("blocked", "blocked by slope (timeout): it passes once slope is right")
    assert [one[k] for k in ("step1", "step2", "step3", "step4")] == [("passed", "")] * 4


@pytest.mark.jupyter
@pytest.mark.sandbox
@pytest.mark.slow
def test_chapter_7_is_graded_like_the_others(tmp_path, capsys, monkeypatch) -> None:
    """Two learners' notebook 7 (on makemore's names, the shared copy: `needs_names`), each
    beside their my_value.py: one right throughout, one whose cross-entropy lost its minus sign."""
    from tests.test_notebooks import _ready

    n7 = "07_names_and_the_next_character"
    if grade_sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    (tmp_path / "ada").mkdir()
    (tmp_path / "bob").mkdir()
    _ready(n7, tmp_path / "ada", monkeypatch)  # the names; ada's my_value.py beside hers
    _ready(n7, tmp_path / "bob", monkeypatch)
    _write(tmp_path / "ada" / "07.ipynb", n7, FILLS[n7])
    plus = FILLS[n7]["cross_entropy"].replace(
        "sum((v - top).exp() for v in logits).log() + top - logits[target]",
        "logits[target] - top - sum((v - top).exp() for v in logits).log()",
    )
    _write(tmp_path / "bob" / "07.ipynb", n7, _with(n7, cross_entropy=plus))
    out = tmp_path / "g.csv"
    # each cell's limit given, as `graded` gives it (limits from the course's own run are
    # test_a_bug_in_a_flat_folder_blocks_by_name's): that run would train the course's notebook
    # 7 once more, a quarter of this test's time
    assert main(["grade", str(tmp_path), "--csv", str(out), "--timeout", "600"]) == 1
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    ada, bob = _results(rows, "ada", "07"), _results(rows, "bob", "07")
    assert ada == {k: ("passed", "") for k in ("softmax", "cross_entropy", "sequence_loss")}, ada
    assert bob["softmax"] == ("passed", "")
    assert (
        bob["cross_entropy"][0] == "failed" and "without the minus sign" in bob["cross_entropy"][1]
    ), bob
    # sequence_loss is right, but it calls bob's cross_entropy: blocked by it
    assert bob["sequence_loss"][0] == "blocked", bob


def test_a_cell_of_the_learners_own_names_its_line() -> None:
    """An assert with no message in a cell that is no exercise's: its cell, line and source."""
    course = grade.course()["02"]
    runnable, roles = grade.compose(_filled(N2, FILLS[N2]), course)
    where = next(i for i, c in enumerate(runnable.cells) if "assert a.grad == 2.0" in c.source)
    line = (
        runnable.cells[where]
        .source.splitlines()
        .index(next(x for x in runnable.cells[where].source.splitlines() if "assert a.grad" in x))
    )
    outcomes = {i: {"state": "ok"} for i, c in enumerate(runnable.cells) if c.cell_type == "code"}
    outcomes[where] = {
        "state": "error",
        "line": "AssertionError",
        "assertion": True,
        "at": line + 1,
    }
    cells = grade._cells(outcomes, "done", runnable)
    limits = grade.limits(runnable, roles, {}, 9.0)
    rows = {r.exercise: r for r in grade.judge(runnable, roles, cells, course, "02", limits)}
    source = runnable.cells[where].source.splitlines()[line].strip()
    assert rows["assign_value"].result == "error"
    assert rows["assign_value"].detail == (
        f"cell {roles[where].index + 1}, line {line + 1} (`{source}`), before this exercise, "
        f"raised AssertionError (an assert with no message)"
    )


def test_blame_reruns_with_the_courses_solution_and_names_the_blocker() -> None:
    """Without a kernel: `attempt` stands in for a run, passing exercise c only when b holds
    the course's solution; d fails whatever b holds; a is not attempted and blocks nothing."""
    course = grade.course()["01"]
    names = list(grade.exercises(course))
    a, b, c, d = names[:4]
    answers = grade.solutions(course)
    seen = []

    def attempt(nb):
        mine = {n: nb.cells[i].source for n, i in grade.exercises(nb).items()}
        seen.append(sorted(n for n in mine if mine[n] == answers[n]))
        fixed = mine[b] == answers[b]
        return [
            grade.Row("s", "01", c, "passed" if fixed else "failed", "x"),
            grade.Row("s", "01", d, "failed", "its own"),
        ]

    rows = [
        grade.Row("s", "01", a, "not attempted", "`...` left"),
        grade.Row("s", "01", b, "error", "ZeroDivisionError"),
        grade.Row("s", "01", c, "failed", "x"),
        grade.Row("s", "01", d, "failed", "its own"),
        *(grade.Row("s", "01", n, "passed") for n in names[4:]),
        grade.Row("s", "01", "", "error", "after the last"),
    ]
    copy = nbformat.reads(nbformat.writes(course), as_version=4)
    got = grade.blame(rows, copy, course, attempt)
    assert [(r.exercise, r.result) for r in got[:4]] == [
        (a, "not attempted"),
        (b, "error"),
        (c, "blocked"),
        (d, "failed"),
    ]
    assert got[2].detail == f"blocked by {b} (error): it passes once {b} is right"
    assert got[4:] == rows[4:]
    # a first (it stands before the failures), then a and b; d has nothing after it to block
    assert seen == [[a], sorted([a, b])]


def test_a_blame_rerun_runs_the_notebook_to_its_last_check_only(monkeypatch, tmp_path) -> None:
    """Chapter 7 with its cross-entropy broken: its sequence_loss fails on it, so blame grades
    it again with the course's cross-entropy. That rerun's rows are read for the exercises only:
    it stops at the last check, without the chapter's training and samples after it. (A run
    faked here: a check fails while the notebook holds the broken cell.)"""
    n7 = "07_names_and_the_next_character"
    runs: list[list[str]] = []

    def run(runnable, files, timeouts, sandbox, slot):
        sources = [c.source for c in runnable.cells]
        runs.append(sources)
        broken = any("BROKEN" in s for s in sources)
        outcomes = {}
        for i, c in enumerate(runnable.cells):
            if c.cell_type != "code":
                continue
            outcomes[i] = {"state": "ok", "seconds": 0.0}
            if "BROKEN" in c.source:
                outcomes[i] = {"state": "error", "line": "NameError: name 'BROKEN' is not defined"}
            elif broken and "check_sequence_loss(" in c.source:
                outcomes[i] = {"state": "error", "line": "CheckFailed: x", "assertion": True}
        return outcomes, "done"

    monkeypatch.setattr(grade, "_run", run)
    path = tmp_path / "07.ipynb"
    _write(path, n7, _with(n7, cross_entropy="BROKEN"))
    rows = {r.exercise: r for r in grade.grade(path, 60.0)}
    assert rows["cross_entropy"].result == "error"
    assert rows["sequence_loss"].result == "blocked", rows["sequence_loss"]
    assert len(runs) == 2
    training = [s for s in runs[0] if "STEPS, BATCH, LR = 200" in s]
    assert len(training) == 1 and training[0] not in runs[1]
    assert "check_sequence_loss(" in runs[1][-1]
    # the same cells up to there, but for the course's cross-entropy in the exercise's place
    differ = [i for i, (a, b) in enumerate(zip(runs[0], runs[1])) if a != b]
    assert len(differ) == 1 and runs[0][differ[0]] == "BROKEN"


def test_the_time_limits_come_from_the_course_unless_given() -> None:
    course = grade.course()["01"]
    runnable, roles = grade.compose(course, course)
    keys = grade.role_keys(roles)
    code = [i for i, c in enumerate(runnable.cells) if c.cell_type == "code"]
    times = {keys[i]: 0.01 * n for n, i in enumerate(code)}
    del times[keys[code[-1]]]  # a cell the course's run did not time: the notebook's largest
    got = grade.limits(runnable, roles, times)
    floor = [grade.CHECK_FLOOR if roles[i].kind == "check" else grade.FLOOR for i in code]
    want = [max(f, grade.FACTOR * times[keys[i]]) for f, i in zip(floor, code[:-1])]
    # a check's cell outlasts the check's own limits: its hang is named by the check
    assert any(roles[i].kind == "check" for i in code[:-1])
    assert grade.CHECK_FLOOR > MAX_TIMEOUTS * DEFAULT_TIME_LIMIT * WAITING_FACTOR
    assert [got[i] for i in code] == [*want, max(want)]
    assert all(got[i] is None for i in range(len(got)) if i not in code)
    assert grade.limits(runnable, roles, times, 7.0) == [
        7.0 if i in code else None for i in range(len(got))
    ]


def test_a_hostile_submission_harms_no_one(graded) -> None:
    """hal's exercises are right, each after an attack that raises if it got anywhere: writing
    into the teacher's folder and a later learner's notebook, deleting a teacher's file,
    reading another learner's notebook and the grader's folder, forking 1,000 processes,
    allocating 10 GB, connecting to the grader's machine, and a `setsid` child left to
    overwrite the grades once the grader is done."""
    _, _, rows, root = graded
    hal = _results(rows, "hal", "01")
    assert hal == {k: ("passed", "") for k in hal} and len(hal) == 6, hal
    # and the teacher is told it was tried: hal's rows carry the flag, no one else's
    flag = {r["flag"] for r in rows if r["learner"] == "hal"}
    assert len(flag) == 1 and flag.pop().startswith("tried to reach outside its folder: ")
    said = next(r["flag"] for r in rows if r["learner"] == "hal")
    for tried in (f"wrote {root / 'pwned.txt'}", "os.remove", "socket.connect ('127.0.0.1'"):
        assert tried in said, said
    assert {r["learner"] for r in rows if r["flag"]} == {"hal"}
    page = (root / "grades.html").read_text()
    assert page.count("<span class=flag ") == 1 and "Reached outside their folder" in page
    assert (root / "teacher.txt").read_text() == "the teacher's notes"
    assert not (root / "pwned.txt").exists() and not (root / "late.txt").exists()
    assert nbformat.read(root / "zed" / "01.ipynb", as_version=4) == _filled(N1, FILLS[N1])
    assert _results(rows, "zed", "01") == {k: ("passed", "") for k in FILLS[N1]}
    # the survivor died with its sandbox, before the grader wrote anything
    alive = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and TOKEN.encode() in (proc / "cmdline").read_bytes():
                alive.append(proc.name)
        except OSError:  # a process that ended while we looked
            continue
    assert alive == []
    assert (root / "grades.csv").read_text().startswith("learner,submission,")


def test_the_summary_a_row_per_learner(graded) -> None:
    _, _, rows, root = graded
    with open(root / "summary.csv", newline="") as f:
        summary = list(csv.DictReader(f))
    assert list(summary[0]) == [
        "learner",
        "passed",
        "failed",
        "error",
        "timeout",
        "blocked",
        "not attempted",
        "skipped",
    ]
    assert [s["learner"] for s in summary] == [
        *("ada", "bob", "cy", "dee", "eve", "fay", "hal", "ivy", "zed")
    ]
    for s in summary:
        mine = [r for r in rows if r["learner"] == s["learner"]]
        for k in grade.RESULTS:
            assert int(s[k]) == sum(r["result"] == k for r in mine), (s, k)
    assert summary[0] == {
        "learner": "ada",
        "passed": "15",
        "failed": "0",
        "error": "0",
        "timeout": "0",
        "blocked": "0",
        "not attempted": "0",
        "skipped": "0",
    }


def test_the_html_page_learners_by_exercises(graded) -> None:
    _, _, rows, root = graded
    page = (root / "grades.html").read_text()
    assert "<script src" not in page and "http" not in page.replace("http-equiv", "")
    trs = re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)
    heads = re.findall(r"<th scope=col[^>]*>(.*?)</th>", trs[0])
    assert heads[:2] == ["learner", "passed"] and "01: slope" in heads and "03: step" in heads
    learners = [
        re.sub(
            r"<span class=flag [^>]*>⚑</span> ",
            "⚑ ",
            re.search(r"<th scope=row[^>]*>(.*?)</th>", tr).group(1),
        )
        for tr in trs[2:]
    ]
    assert learners == ["ada", "bob", "cy", "dee", "eve", "fay", "⚑ hal", "ivy", "zed"]
    bob = trs[2 + learners.index("bob")]
    cells = re.findall(
        r"<td class=r [^>]*style='background:(#\w+)'[^>]*data-cause='([^']*)'"
        r"[^>]*>([^<]*)</td>",
        bob,
    )
    by = {cause.split(" · ")[1]: (colour, cause, result) for colour, cause, result in cells}
    assert by["01: slope"][2] == "failed" and by["01: slope"][0] == grade_report.COLOURS["failed"]
    assert "should be close to 14" in by["01: slope"][1]
    assert by["01: step1"][2] == "error" and "ZeroDivisionError" in by["01: step1"][1]


@pytest.mark.jupyter
@pytest.mark.sandbox
def test_every_exercise_passed_is_exit_status_0(tmp_path: pathlib.Path, capsys) -> None:
    """A flat class folder: the notebook lies in it, and the folder is its learner."""
    _write(tmp_path / "01.ipynb", N1, FILLS[N1])
    assert main(["grade", str(tmp_path), "--summary", str(tmp_path / "s.csv")]) == 0
    assert (tmp_path / "s.csv").read_text().splitlines()[1] == f"{tmp_path},6,0,0,0,0,0,0"
    assert capsys.readouterr().out.splitlines()[-1] == "1 submission, 6 exercises: 6 passed"


def test_ctrl_c_stops_it_in_one_line_and_writes_nothing(
    tmp_path, monkeypatch, capsys, sandbox_here
) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(grade, "grade", interrupted)
    out = tmp_path / "grades.csv"
    assert main(["grade", "a.ipynb", "b.ipynb", "--csv", str(out)]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "micrograd grade: interrupted after 0 of 2 submissions; nothing written"
    assert not (tmp_path / "grade-results").exists()
    assert not out.exists()


# A process where other threads live (a notebook kernel's, the playground's): Ctrl-C may land on
# any of them. Here it lands on a bystander thread for sure (pthread_kill), while the grader's main
# thread waits for a submission that never ends.
_CTRL_C_ON_ANOTHER_THREAD = """
import os, signal, sys, threading
from micrograd.commands.cli import main
from micrograd.grading import grade

started = threading.Event()

def stuck(*args, **kwargs):
    started.set()
    threading.Event().wait()

grade.grade = stuck
from micrograd.grading import sandbox
sandbox.refusal = lambda: None  # (its point is Ctrl-C, not the sandbox: none needed here)
bystander = threading.Thread(target=threading.Event().wait, name="bystander", daemon=True)
bystander.start()

def press():
    started.wait()
    signal.pthread_kill(bystander.ident, signal.SIGINT)

threading.Thread(target=press, daemon=True).start()
status = main(["grade", "a.ipynb", "--jobs", "1"])
sys.stderr.flush()
os._exit(status)  # not waiting at exit for the stuck submission's thread
"""


def test_ctrl_c_taken_by_another_thread_still_stops_the_grader(tmp_path) -> None:
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-c", _CTRL_C_ON_ANOTHER_THREAD],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the grader's main thread slept through a Ctrl-C taken by another thread")
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "micrograd grade: interrupted after 0 of 1 submissions; nothing written"
    )


def test_results_are_kept_as_they_come_and_a_rerun_grades_only_the_rest(
    tmp_path, monkeypatch, capsys, sandbox_here
) -> None:
    """Ctrl-C after two of four keeps those two; running again grades the other two; a late
    submission is graded alone, then a changed one (a file beside it counts); --regrade grades
    all; the reports always hold everyone's results."""
    root = tmp_path / "class"
    for who in ("ada", "bob", "cy", "dee"):
        _write(root / who / "01.ipynb", N1, FILLS[N1])
    graded: list[str] = []
    stop_at: list[int] = [3]
    released = threading.Event()

    def fake(path, timeout, shared=(), label=None, *, learner="", **kwargs):
        graded.append(learner)
        if len(graded) == stop_at[0]:  # the teacher presses Ctrl-C while this one runs
            os.kill(os.getpid(), signal.SIGINT)
            released.wait()
        return [grade.Row(str(path), "01", "slope", "passed", f"run {len(graded)}", learner)]

    monkeypatch.setattr(grade, "grade", fake)
    out = tmp_path / "g.csv"

    def run(*extra: str) -> tuple[int, list[str], list[dict]]:
        graded.clear()
        status = main(["grade", str(root), "--jobs", "1", "--csv", str(out), *extra])
        rows = []
        if out.exists():
            with open(out, newline="") as f:
                rows = list(csv.DictReader(f))
        return status, list(graded), rows

    status, who, rows = run()
    released.set()
    err = capsys.readouterr().err.splitlines()
    assert (status, who, rows) == (130, ["ada", "bob", "cy"], [])
    assert err[-1] == (
        f"micrograd grade: interrupted after 2 of 4 submissions; the 2 graded are kept in "
        f"{tmp_path / 'grade-results'}: run again to grade the rest"
    )
    assert len(list((tmp_path / "grade-results").glob("*.json"))) == 2
    stop_at[0] = 0
    status, who, rows = run()
    assert (status, who) == (0, ["cy", "dee"])
    assert [(r["learner"], r["detail"]) for r in rows] == [
        ("ada", "run 1"),
        ("bob", "run 2"),
        ("cy", "run 1"),
        ("dee", "run 2"),
    ]
    assert "2 of 4 notebooks unchanged since their results" in capsys.readouterr().err
    _write(root / "eve" / "01.ipynb", N1, FILLS[N1])  # late
    assert run()[1] == ["eve"]
    _write(root / "bob" / "01.ipynb", N1, _with(N1, step1="L.grad = 1.0"))  # changed
    (root / "dee" / "data.txt").write_text("read by her notebook")  # a file beside it
    status, who, rows = run()
    assert who == ["bob", "dee"] and [r["learner"] for r in rows] == [
        *("ada", "bob", "cy", "dee", "eve")
    ]
    assert run()[1] == []
    assert run("--regrade")[1] == ["ada", "bob", "cy", "dee", "eve"]
    # graded one by one, each learner's results join the others' in the reports
    (root / "eve" / "01.ipynb").unlink()  # a submission withdrawn: its result leaves the reports
    _write(root / "fay" / "01.ipynb", N1, FILLS[N1])
    graded.clear()
    assert main(["grade", str(root / "fay" / "01.ipynb"), "--csv", str(out)]) == 0
    with open(out, newline="") as f:
        learners = [r["learner"] for r in csv.DictReader(f)]
    assert graded == [str(root / "fay")] and sorted(learners) == sorted(
        ["ada", "bob", "cy", "dee", str(root / "fay")]
    )


def test_bad_options_are_one_line(tmp_path, capsys, sandbox_here) -> None:
    assert main(["grade", "a.ipynb", "--timeout", "0"]) == 2
    assert main(["grade", "a.ipynb", "--csv", str(tmp_path / "no" / "such" / "g.csv")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "--timeout must be a positive number" in err[0]
    assert err[1].startswith("micrograd grade: error: cannot write ")


def test_placeholders_are_found_by_reading_the_code() -> None:
    assert grade.has_placeholder("x = ...")
    assert grade.has_placeholder("%%writefile f.py\nclass V:\n    ...")
    assert not grade.has_placeholder("x = 1  # ... a comment\ns = '...'")


# ---------------------------------------------------------------------------------------------
# Without a kernel: how a submission is put together, found, refused and reported.


@pytest.mark.parametrize("key", sorted(grade.course()))
def test_the_course_checks_run_where_the_course_has_them(key: str) -> None:
    """Deleted, emptied or kept, a copy's check cells come back as the course's, in place."""
    course = grade.course()[key]
    code = [c.source for c in course.cells if c.cell_type == "code"]
    for tamper in ("keep", "delete", "empty"):
        copy = nbformat.reads(nbformat.writes(course), as_version=4)
        if tamper == "delete":
            copy.cells = [c for c in copy.cells if "checks" not in c.metadata]
        elif tamper == "empty":
            for c in copy.cells:
                if "checks" in c.metadata:
                    c.source = "pass"
        runnable, roles = grade.compose(copy, course)
        assert [c.source for c in runnable.cells if c.cell_type == "code"] == code, tamper
        assert sum(r.kind == "check" for r in roles) == sum(
            "checks" in c.metadata for c in course.cells
        )


def test_a_check_pytorch_would_run_is_skipped_not_an_error() -> None:
    course = grade.course()["05"]
    runnable, roles = grade.compose(course, course)
    outcomes = {
        i: {"state": "ok", "text": grade.NO_TORCH if r.kind == "check" else ""}
        for i, r in enumerate(roles)
        if runnable.cells[i].cell_type == "code"
    }
    cells = grade._cells(outcomes, "done", runnable)
    limits = grade.limits(runnable, roles, {}, 60.0)
    rows = grade.judge(runnable, roles, cells, course, "05.ipynb", limits)
    assert [(r.exercise, r.result) for r in rows] == [("torch_function", "skipped")]


def _fake(results: dict[str, str]):
    def fake(
        path, timeout, shared=(), label=None, *, learner="", sandbox=True, slot=0, own_folder=False
    ):
        return [
            grade.Row(str(path), "01", ex, res, f'=HYPERLINK("http://x","{ex}")', learner)
            for ex, res in results.items()
        ]

    return fake


def test_skipped_and_not_attempted_leave_the_exit_status_0(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "01.ipynb").write_text("{}")
    monkeypatch.setattr(
        grade, "grade", _fake({"a": "passed", "b": "skipped", "c": "not attempted"})
    )
    assert main(["grade", str(tmp_path), "--no-sandbox"]) == 0
    monkeypatch.setattr(grade, "grade", _fake({"a": "passed", "b": "timeout"}))
    assert main(["grade", str(tmp_path), "--no-sandbox"]) == 1


def test_no_csv_cell_is_a_formula(tmp_path, monkeypatch) -> None:
    (tmp_path / "=cmd").mkdir()
    (tmp_path / "=cmd" / "01.ipynb").write_text("{}")
    monkeypatch.setattr(grade, "grade", _fake({"-2+3": "failed", "@SUM(A1)": "error"}))
    out, summary = tmp_path / "g.csv", tmp_path / "s.csv"
    main(["grade", str(tmp_path), "--no-sandbox", "--csv", str(out), "--summary", str(summary)])
    for path in (out, summary):
        with open(path, newline="") as f:
            cells = [c for row in csv.reader(f) for c in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], cells
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["learner"] == "'=cmd" and rows[0]["exercise"] == "'-2+3"
    assert rows[1]["detail"] == '\'=HYPERLINK("http://x","@SUM(A1)")'


def test_the_gradebook_follows_the_roster_in_each_format(
    tmp_path, monkeypatch, capsys, sandbox_here
) -> None:
    """GitHub Classroom's folders (assignment-login) matched to a roster by login, e-mail or
    id; points per notebook (passed and skipped count) and the total; who is missing from
    either side in one line."""
    results = {  # learner folder -> notebook -> results
        "hw1-ada": {"01": ["passed", "passed", "failed"], "02": ["passed", "skipped"]},
        "hw1-Bob": {"01": ["blocked", "passed", "error"], "02": ["timeout", "not attempted"]},
        "hw1-s1234": {"01": ["passed", "passed", "passed"]},
        "hw1-zoe": {"01": ["passed", "passed", "passed"], "02": ["passed", "passed"]},
    }
    for who in results:
        (tmp_path / "class" / who).mkdir(parents=True)
        (tmp_path / "class" / who / "01.ipynb").write_text("{}")

    def fake(path, timeout, shared=(), label=None, *, learner="", **kwargs):
        return [
            grade.Row(str(path), nb, f"e{i}", res, "", learner)
            for nb, got in results[learner].items()
            for i, res in enumerate(got)
        ]

    monkeypatch.setattr(grade, "grade", fake)
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Name,ID,SIS User ID,SIS Login ID,Section,Email,github_username\n"
        "Ada Lovelace,101,ada-sis,ada-login,A,ada@school.edu,ada\n"
        "Bob Bell,102,,,B,bob@school.edu,\n"
        "Cy Young,s1234,,,A,,\n"
        "Dee Dee,104,,,B,dee@school.edu,dee\n"
    )
    book = tmp_path / "book.csv"
    want = {
        "Ada Lovelace": ["2", "2", "4"],
        "Bob Bell": ["1", "0", "1"],
        "Cy Young": ["3", "0", "3"],
    }
    for fmt in ("canvas", "moodle", "plain"):
        args = ["grade", str(tmp_path / "class"), "--no-sandbox", "--gradebook", str(book)]
        assert main([*args, "--roster", str(roster), "--format", fmt]) == 1
        err = capsys.readouterr().err.splitlines()
        missing = [line for line in err if "gradebook:" in line]
        assert missing == [
            "micrograd grade: gradebook: 1 submitting learner not on the roster (left out): "
            "hw1-zoe; 1 on the roster with no submission (empty cells): dee"
        ]
        with open(book, newline="") as f:
            table = list(csv.reader(f))
        if fmt == "canvas":
            assert table[0] == [
                *("Student", "ID", "SIS User ID", "SIS Login ID", "Section"),
                *("micrograd 01", "micrograd 02", "micrograd total"),
            ]
            assert table[1] == ["Points Possible", "", "", "", "", "3", "2", "5"]
            assert table[2] == ["Ada Lovelace", "101", "ada-sis", "ada-login", "A", "2", "2", "4"]
            got = {r[0]: r[5:] for r in table[2:]}
        elif fmt == "moodle":
            assert table[0] == [
                *("Email address", "ID number", "Full name"),
                *("micrograd 01", "micrograd 02", "micrograd total"),
            ]
            assert table[1][:3] == ["ada@school.edu", "101", "Ada Lovelace"]
            got = {r[2]: r[3:] for r in table[1:]}
        else:
            assert table[0] == ["learner", "id", "name", "01", "02", "total"]
            assert [r[0] for r in table[1:]] == ["hw1-ada", "hw1-Bob", "hw1-s1234", "dee"]
            got = {r[2]: r[3:] for r in table[1:]}
        # Cy handed in no notebook 2: 0 points for it, his total is notebook 1's
        assert got == {**want, "Dee Dee": ["", "", ""]}, fmt
    assert main(["grade", str(tmp_path / "class"), "--gradebook", str(book)]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("colour,size\nred,3\n")
    assert main(["grade", str(tmp_path), "--gradebook", str(book), "--roster", str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-2] == (
        "micrograd grade: error: --gradebook and --roster go together: the gradebook follows "
        "the roster"
    )
    assert err[-1].startswith(f"micrograd grade: error: {bad} has none of the columns")


def test_feedback_pages_hold_one_learner_each(tmp_path, monkeypatch) -> None:
    causes = {
        "ada": [("slope", "failed", "slope(f, 3.0) is 7.0, should be close to 14")],
        "bob": [
            ("slope", "passed", ""),
            ("value", "blocked", "blocked by slope (failed): it passes once slope is right"),
            ("step1", "timeout", "the check of step1 did not finish within 10 s: stopped there"),
        ],
    }
    for who in causes:
        (tmp_path / "class" / who).mkdir(parents=True)
        (tmp_path / "class" / who / "01.ipynb").write_text("{}")

    def fake(path, timeout, shared=(), label=None, *, learner="", **kwargs):
        return [
            grade.Row(str(path), "01", ex, res, why, learner) for ex, res, why in causes[learner]
        ]

    monkeypatch.setattr(grade, "grade", fake)
    out = tmp_path / "feedback"
    assert main(["grade", str(tmp_path / "class"), "--no-sandbox", "--feedback", str(out)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["ada.html", "bob.html"]
    for who, mine in causes.items():
        page = (out / f"{who}.html").read_text()
        other = "bob" if who == "ada" else "ada"
        assert who in page and other not in page and "class/" not in page
        for exercise, result, why in mine:
            assert (
                f"01: {exercise}</strong>" in page and result in page and html.escape(why) in page
            )
        assert "<script" not in page and "http" not in page
    bob = (out / "bob.html").read_text()
    assert grade_report.NEXT["blocked"] in bob and grade_report.NEXT["timeout"] in bob
    assert "1 passed, 1 timeout, 1 blocked" in bob


def test_learners_are_the_class_folders_and_a_list_is_by_folder(tmp_path) -> None:
    from micrograd.commands.grade import submissions

    for p in (
        "ada/01.ipynb",
        "ada/sub/02.ipynb",
        "ada/.ipynb_checkpoints/01-checkpoint.ipynb",
        "bob/01.ipynb",
        "flat.ipynb",
        ".git/x.ipynb",
    ):
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("{}")
    got = [
        (pathlib.Path(p).relative_to(tmp_path).as_posix(), who, own)
        for p, who, _, own in submissions([str(tmp_path)])
    ]
    assert got == [
        ("flat.ipynb", str(tmp_path), False),
        ("ada/01.ipynb", "ada", True),
        ("ada/sub/02.ipynb", "ada", True),
        ("bob/01.ipynb", "bob", True),
    ]
    listed = submissions([str(tmp_path / "ada" / "01.ipynb"), str(tmp_path / "flat.ipynb")])
    assert [(who, folder, own) for _, who, folder, own in listed] == [
        (str(tmp_path / "ada"), str(tmp_path / "ada"), False),
        (str(tmp_path), str(tmp_path), False),
    ]


def test_two_learners_sharing_my_value_is_refused_in_one_line(
    tmp_path, capsys, sandbox_here
) -> None:
    """A flat folder: alice's and bob's notebook 2 would both write the my_value.py that a
    notebook 3 beside them imports."""
    _write(tmp_path / "alice_02.ipynb", N2, FILLS[N2])
    _write(tmp_path / "bob_02.ipynb", N2, FILLS[N2])
    _write(tmp_path / "alice_03.ipynb", N3, FILLS[N3])
    out = tmp_path / "grades.csv"
    assert main(["grade", str(tmp_path), "--csv", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "my_value.py" in err[0] and "give each learner a folder" in err[0]
    assert not out.exists()


def test_without_bubblewrap_it_refuses_in_one_line_and_runs_nothing(
    tmp_path, monkeypatch, capsys
) -> None:
    """Secure by default: where bubblewrap is missing, a submission that would write a file
    writes none; exit status 2, one line saying why and how; --no-sandbox runs it, said once."""
    target = tmp_path / "written.txt"
    writes = f"pathlib.Path({str(target)!r}).write_text('ran')\n" + FILLS[N1]["slope"]
    _write(tmp_path / "ada" / "01.ipynb", N1, _with(N1, slope="import pathlib\n" + writes))
    monkeypatch.setattr(grade_sandbox, "bwrap", lambda: None)
    out = tmp_path / "g.csv"
    assert main(["grade", str(tmp_path), "--csv", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "micrograd grade: error: no sandbox here (bubblewrap is missing), so no submission was "
        "run: "
    )
    assert err[0].endswith(
        "or pass --no-sandbox to run them with your own permissions (they "
        "could read and write your files)"
    )
    if os.uname().sysname == "Linux":
        assert "apt install bubblewrap" in err[0]
    assert not target.exists() and not out.exists()
    assert not (tmp_path / "grade-results").exists()
    with pytest.raises(RuntimeError, match="no sandbox here"):  # the library refuses too
        grade.grade(tmp_path / "ada" / "01.ipynb", 30)
    assert not target.exists()
    monkeypatch.setattr(grade, "grade", _fake({"a": "passed"}))
    assert main(["grade", str(tmp_path), "--no-sandbox"]) == 0
    err = [
        line
        for line in capsys.readouterr().err.splitlines()
        if "[1/1]" not in line and "1 notebook in" not in line
    ]
    assert len(err) == 1 and err[0].startswith(
        "micrograd grade: --no-sandbox: the submissions run with your permissions"
    )


def test_the_sandbox_shows_no_class_folder_and_no_network(tmp_path) -> None:
    if grade_sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    cmd = grade_sandbox.command(str(tmp_path), True)
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in cmd
    binds = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind")]
    assert cmd[cmd.index("--bind") + 1 : cmd.index("--bind") + 3] == [str(tmp_path), "/submission"]
    # Besides the submission: the system's folders and the Python the grader runs on (its venv,
    # its packages), read-only; none of them holds the class folder or anything above it.
    python = set(grade_sandbox._readable_roots())
    system = {"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
    others = [b for b in binds if b != str(tmp_path)]
    assert "/" not in binds and set(others) <= system | python, set(others) - system - python
    assert not any(str(tmp_path).startswith(b.rstrip("/") + "/") for b in others)
    # its own /tmp comes first, so that a Python living under /tmp (a clone there) is bound on
    # top of it rather than hidden by it
    tmpfs = cmd.index("/tmp", cmd.index("--tmpfs") + 1)
    assert cmd[tmpfs - 1] == "--tmpfs"
    assert all(cmd.index(b) > tmpfs for b in others if b.startswith("/tmp/"))
    assert grade_sandbox.limits(10)["RLIMIT_CPU"] == 10 + grade_sandbox.CPU_SLACK


def test_the_html_page_sorts_and_shows_a_cause_in_a_browser(graded, browser, screenshot) -> None:
    _, _, rows, root = graded
    from tests.conftest import watch_errors

    for name, viewport in (
        ("1280", {"width": 1280, "height": 800}),
        ("phone", {"width": 390, "height": 844}),
    ):
        context = browser.new_context(viewport=viewport)
        context.set_default_timeout(10_000)
        page = context.new_page()
        errors = watch_errors(page)
        requests: list[str] = []
        page.on("request", lambda r, seen=requests: seen.append(r.url))
        try:
            page.goto((root / "grades.html").as_uri())
            learners = "els => els.map(e => e.textContent)"
            names = page.locator("tbody th").evaluate_all(learners)
            assert names == ["ada", "bob", "cy", "dee", "eve", "fay", "⚑ hal", "ivy", "zed"]
            page.get_by_role("columnheader", name="passed").click()
            passed = page.locator("tbody tr td:nth-child(2)").evaluate_all(
                "els => els.map(e => Number(e.dataset.sort))"
            )
            assert passed == sorted(passed) and passed[0] < passed[-1]
            page.get_by_role("columnheader", name="passed").click()  # again: the other way
            again = page.locator("tbody tr td:nth-child(2)").evaluate_all(
                "els => els.map(e => Number(e.dataset.sort))"
            )
            assert again == sorted(passed, reverse=True)
            bob = page.locator("tbody tr", has=page.locator("th", has_text="bob"))
            bob.locator("td.r", has_text="failed").first.click()
            shown = page.locator("tr.cause").text_content()
            assert shown.startswith("bob · 01: slope · ") and "should be close to 14" in shown
            screenshot(page, f"grade-html-{name}")
        finally:
            context.close()
        assert not errors, errors
        assert all(u.startswith("file:") for u in requests), requests


@pytest.mark.jupyter
@pytest.mark.sandbox
def test_a_sandbox_that_cannot_start_says_why(tmp_path, monkeypatch) -> None:
    if grade_sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    real = grade_sandbox.command
    monkeypatch.setattr(
        grade_sandbox,
        "command",  # as a bwrap refused by the system would
        lambda folder, use: [real(folder, use)[0], "--no-such-option"],
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    outcomes, end = grade_sandbox.run(dict(nb), str(tmp_path), [30.0], use_bwrap=True, uid=None)
    assert end == "killed" and outcomes[-1]["line"] == (
        "the sandbox did not start: bwrap: Unknown option --no-such-option (micrograd grade "
        "--no-sandbox runs without it)"
    )
