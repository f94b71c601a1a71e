"""`micrograd grade` on a class folder written here: correct notebooks, each kind of bug, a hang,
a kernel that dies, an untouched copy, a file that is no notebook; the table, the CSV and the
exit status, as a teacher runs it."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pathlib
import re
import socket
from typing import Any

import pytest

from micrograd.commands.cli import main
from micrograd.grading import grade
from micrograd.grading import report as grade_report
from micrograd.grading import sandbox as grade_sandbox

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
from tests.test_notebooks import FILLS, MY_VALUE, _filled, _nb  # noqa: E402

N1, N2, N3 = "01_derivatives_and_value", "02_backpropagation", "03_neuron_to_mlp"


def _write(path: pathlib.Path, name: str, answers: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(_filled(name, answers), path)


def _with(name: str, **changes: str) -> dict[str, str]:
    return {**FILLS[name], **changes}


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
                    "--timeout",
                    "25",
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
    cy = _results(rows, "cy", "01")
    assert cy["slope"] == ("timeout", "the notebook did not finish within 25 s")
    assert all(r[0] == "timeout" for r in cy.values())  # the rest never ran
    dee = _results(rows, "dee", "01")
    assert dee["slope"] == ("passed", "")
    assert dee["value"][0] == "error" and dee["value"][1].startswith("the kernel died")
    eve = _results(rows, "eve", "01")
    assert len(eve) == 6 and all(r[0] == "not attempted" for r in eve.values()), eve
    broken = [r for r in rows if r["submission"].endswith("eve/02.ipynb")]
    assert [(r["result"], r["detail"][:15]) for r in broken] == [("error", "not a notebook:")]


def test_the_table_the_csv_and_the_exit_status(graded) -> None:
    status, text, rows, root = graded
    assert status == 1  # not everyone passed
    assert list(rows[0]) == ["learner", "submission", "notebook", "exercise", "result", "detail"]
    assert {r["learner"] for r in rows} == {"ada", "bob", "cy", "dee", "eve", "fay", "hal", "zed"}
    assert all(f"/{r['learner']}/" in r["submission"] for r in rows)
    lines = text.splitlines()
    assert lines[0].split() == ["submission", "notebook", "exercise", "result", "detail"]
    assert len(lines) == len(rows) + 2  # a line per row, then the summary
    counts = {k: sum(r["result"] == k for r in rows if r["exercise"]) for k in grade.RESULTS}
    assert lines[-1] == (
        f"12 submissions, {sum(counts.values())} exercises: "
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
        r"cell \d+, before this exercise, raised ValueError: my own cell", fay["step4"][1]
    ), fay["step4"]


def test_a_hostile_submission_harms_no_one(graded) -> None:
    """hal's exercises are right, each after an attack that raises if it got anywhere: writing
    into the teacher's folder and a later learner's notebook, deleting a teacher's file,
    reading another learner's notebook and the grader's folder, forking 1,000 processes,
    allocating 10 GB, connecting to the grader's machine, and a `setsid` child left to
    overwrite the grades once the grader is done."""
    _, _, rows, root = graded
    hal = _results(rows, "hal", "01")
    assert hal == {k: ("passed", "") for k in hal} and len(hal) == 6, hal
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
        "not attempted",
        "skipped",
    ]
    assert [s["learner"] for s in summary] == [
        "ada",
        "bob",
        "cy",
        "dee",
        "eve",
        "fay",
        "hal",
        "zed",
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
        "not attempted": "0",
        "skipped": "0",
    }


def test_the_html_page_learners_by_exercises(graded) -> None:
    _, _, rows, root = graded
    page = (root / "grades.html").read_text()
    assert "<script src" not in page and "http" not in page.replace("http-equiv", "")
    trs = re.findall(r"<tr>(.*?)</tr>", page, re.S)
    heads = re.findall(r"<th scope=col>(.*?)</th>", trs[0])
    assert heads[:2] == ["learner", "passed"] and "01: slope" in heads and "03: step" in heads
    learners = [re.search(r"<th scope=row>(.*?)</th>", tr).group(1) for tr in trs[1:]]
    assert learners == ["ada", "bob", "cy", "dee", "eve", "fay", "hal", "zed"]
    bob = trs[1 + learners.index("bob")]
    cells = re.findall(
        r"<td class=r [^>]*style='background:(#\w+)'[^>]*data-cause='([^']*)'"
        r"[^>]*>([^<]*)</td>",
        bob,
    )
    by = {cause.split(" · ")[1]: (colour, cause, result) for colour, cause, result in cells}
    assert by["01: slope"][2] == "failed" and by["01: slope"][0] == grade_report.COLOURS["failed"]
    assert "should be close to 14" in by["01: slope"][1]
    assert by["01: step1"][2] == "error" and "ZeroDivisionError" in by["01: step1"][1]


def test_every_exercise_passed_is_exit_status_0(tmp_path: pathlib.Path, capsys) -> None:
    """A flat class folder: the notebook lies in it, and the folder is its learner."""
    _write(tmp_path / "01.ipynb", N1, FILLS[N1])
    assert main(["grade", str(tmp_path), "--summary", str(tmp_path / "s.csv")]) == 0
    assert (tmp_path / "s.csv").read_text().splitlines()[1] == f"{tmp_path},6,0,0,0,0,0"
    assert capsys.readouterr().out.splitlines()[-1] == "1 submission, 6 exercises: 6 passed"


def test_ctrl_c_stops_it_in_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(grade, "grade", interrupted)
    out = tmp_path / "grades.csv"
    assert main(["grade", "a.ipynb", "b.ipynb", "--csv", str(out)]) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "micrograd grade: interrupted after 0 of 2 submissions; nothing written"
    assert not out.exists()


def test_bad_options_are_one_line(tmp_path, capsys) -> None:
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
    cells = grade._cells(outcomes, "done", runnable, 60)
    rows = grade.judge(runnable, roles, cells, course, "05.ipynb", 60)
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


def test_two_learners_sharing_my_value_is_refused_in_one_line(tmp_path, capsys) -> None:
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


def test_without_bubblewrap_one_line_says_so(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "01.ipynb").write_text("{}")
    monkeypatch.setattr(grade, "grade", _fake({"a": "passed"}))
    monkeypatch.setattr(grade_sandbox, "bwrap", lambda: None)
    assert main(["grade", str(tmp_path)]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "[1/1]" not in line]
    assert err[-1] == "micrograd grade: 1 notebook in 0 s, 1 at once (CPU time of the kernels: 0 s)"
    err = err[:-1]
    assert len(err) == 1 and "run with your permissions" in err[0]
    if os.uname().sysname == "Linux":
        assert "apt install bubblewrap" in err[0]
    monkeypatch.undo()
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
            assert names == ["ada", "bob", "cy", "dee", "eve", "fay", "hal", "zed"]
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
            shown = page.locator("#cause").text_content()
            assert shown.startswith("bob · 01: slope · ") and "should be close to 14" in shown
            screenshot(page, f"grade-html-{name}")
        finally:
            context.close()
        assert not errors, errors
        assert all(u.startswith("file:") for u in requests), requests


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
    outcomes, end = grade_sandbox.run(dict(nb), str(tmp_path), 30, use_bwrap=True, uid=None)
    assert end == "killed" and outcomes[-1]["line"] == (
        "the sandbox did not start: bwrap: Unknown option --no-such-option (micrograd grade "
        "--no-sandbox runs without it)"
    )
