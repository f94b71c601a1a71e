"""`micrograd grade` on a class folder written here: correct notebooks, each kind of bug, a hang,
a kernel that dies, an untouched copy, a file that is no notebook; the table, the CSV and the
exit status, as a teacher runs it."""

from __future__ import annotations

import csv
import pathlib

import pytest

from micrograd import grade
from micrograd.cli import main

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
from tests.test_notebooks import FILLS, MY_VALUE, _filled, _nb  # noqa: E402

N1, N2, N3 = "01_derivatives_and_value", "02_backpropagation", "03_neuron_to_mlp"


def _write(path: pathlib.Path, name: str, answers: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(_filled(name, answers), path)


def _with(name: str, **changes: str) -> dict[str, str]:
    return {**FILLS[name], **changes}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, list[dict], pathlib.Path]:
    """The class folder, graded once: (exit status, stdout, CSV rows, folder)."""
    root = tmp_path_factory.mktemp("class")
    _write(root / "ada" / "01.ipynb", N1, FILLS[N1])
    _write(root / "ada" / "02.ipynb", N2, FILLS[N2])  # her my_value.py is what 03 imports
    _write(root / "ada" / "03.ipynb", N3, FILLS[N3])
    _write(root / "bob" / "01.ipynb", N1, _with(
        N1,
        slope="def slope(f, x, h=0.0001):\n    return (f(x + h) - f(x)) / (2 * h)",   # half
        value=FILLS[N1]["value"].replace("self.data * other.data", "self.data + other.data"),
        step1="L.grad = 1 / 0",                                                     # crashes
        step2="d.grad = d.data\nf.grad = 4.0",                                      # wrong
        step3="e.grad = ...\nc.grad = ...",                                         # left
    ))
    bad_step = FILLS[N3]["step"].replace("        p.grad = 0\n", "        pass\n")
    _write(root / "bob" / "03.ipynb", N3, _with(N3, step=bad_step))
    (root / "bob" / "my_value.py").write_text(MY_VALUE.split("\n", 1)[1])  # his, beside it
    _write(root / "cy" / "01.ipynb", N1, _with(N1, slope="def slope(f, x, h=0.0001):\n"
                                                         "    while True:\n        pass"))
    _write(root / "dee" / "01.ipynb", N1, _with(N1, value="import os\nos._exit(1)"))
    root.joinpath("eve").mkdir()
    nbformat.write(_nb(N1), root / "eve" / "01.ipynb")  # the learner's copy, untouched
    (root / "eve" / "02.ipynb").write_text("{ not a notebook")
    subs = sorted(str(p) for p in root.glob("*/*.ipynb"))
    out = root / "grades.csv"
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = main(["grade", *subs, "--csv", str(out), "--timeout", "25"])
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return status, stdout.getvalue(), rows, root


def _results(rows: list[dict], who: str, notebook: str) -> dict[str, tuple[str, str]]:
    return {r["exercise"]: (r["result"], r["detail"]) for r in rows
            if f"/{who}/{notebook}" in r["submission"]}


def test_correct_notebooks_pass_every_exercise(graded) -> None:
    status, text, rows, _ = graded
    for nb, n in (("01", 6), ("02", 6), ("03", 3)):
        got = _results(rows, "ada", nb)
        assert len(got) == n and all(r == ("passed", "") for r in got.values()), got


def test_each_kind_of_bug_is_reported_with_its_cause(graded) -> None:
    _, _, rows, _ = graded
    bob = _results(rows, "bob", "01")
    assert bob["slope"][0] == "failed" and "should be close to 14" in bob["slope"][1]
    assert bob["value"] == ("failed", bob["value"][1])
    assert bob["value"][1].startswith("*: for out = a * b with a = 2.0, b = -3.0, out.data is "
                                      "-1.0, expected -6.0")
    assert bob["step1"] == ("error", "ZeroDivisionError: division by zero")
    assert bob["step2"] == ("failed", "d.grad = 9.0, but nudging d moves L by -2.000000 per unit")
    assert bob["step3"][0] == "not attempted" and "`...` left" in bob["step3"][1]
    # built on step 3's grads, still `...`: the exercise's own line crashes on them
    assert bob["step4"] == ("error", "TypeError: unsupported operand type(s) for *: 'ellipsis' "
                                     "and 'float'")
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
    assert list(rows[0]) == ["submission", "notebook", "exercise", "result", "detail"]
    lines = text.splitlines()
    assert lines[0].split() == ["submission", "notebook", "exercise", "result", "detail"]
    assert len(lines) == len(rows) + 2  # a line per row, then the summary
    counts = {k: sum(r["result"] == k for r in rows if r["exercise"]) for k in grade.RESULTS}
    assert lines[-1] == (f"9 submissions, {sum(counts.values())} exercises: " + ", ".join(
        f"{n} {k}" for k, n in counts.items() if n))
    for row, line in zip(rows, lines[1:]):
        assert line.startswith(row["submission"]) and row["result"] in line
    # the learners' folders are read, never written: ada's my_value.py came from her notebook 2
    assert sorted(root.glob("**/my_value.py")) == [root / "bob" / "my_value.py"]


def test_every_exercise_passed_is_exit_status_0(tmp_path: pathlib.Path, capsys) -> None:
    _write(tmp_path / "01.ipynb", N1, FILLS[N1])
    assert main(["grade", str(tmp_path / "01.ipynb")]) == 0
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

