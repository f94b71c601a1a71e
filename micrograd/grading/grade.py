"""Grading learners' filled-in notebooks: each one run top to bottom in a fresh IPython
interpreter (a child of a warm worker, `grading/warm_worker.py`; or a Jupyter kernel of its own,
`ENGINE`), in a sandbox (`grading/sandbox.py`), under a time limit per cell, and judged exercise
by exercise.

An exercise is a code cell whose metadata names it (``exercise="slope"``); the cells that check
it name it too (``checks="slope"``). Each exercise is then one of `RESULTS`:

- passed: every cell that checks it ran without an error;
- failed: a check stopped it (an AssertionError): the detail is the checker's one-line cause;
- error: a cell of it, or one checking it, or a cell of the notebook's own before it, raised
  something else (the exception's one line; for a cell of the notebook's own, the line that
  raised), or the kernel died;
- timeout: a cell of it, or checking it, or before it, outlived its time (`limits`) and was
  stopped (the row names that cell); the run goes on with the next cell;
- blocked: it did not pass, but passes once an earlier exercise that is wrong (or not done) is
  replaced by the course's solution: the fault is that one's, and the row names it (the
  notebook runs again so, only when some exercise after a wrong one did not pass);
- not attempted: it did not pass and its cell still holds a `...` placeholder (or is gone);
- skipped: a check needs what the grader's machine lacks (PyTorch for notebook 5).

Each cell's time limit comes from the course itself (`limits`): its notebook run once with its
solutions, on this machine, in the same sandbox, each cell given `FACTOR` times what it took
there and at least `FLOOR` seconds; so a hang costs seconds, not minutes.

The checks are the course's, never the submission's: every cell with ``checks=`` metadata is
taken from the course's own notebook in the installed package (`course()`), matched by that
metadata, wherever the submission has it, deleted it, or edited it. The learner's exercise cells
and the rest of their notebook run as written; a cell outside the exercises that raises is
reported on the exercise after it (or in a row of its own for the notebook).

Only code cells run, as a learner's Jupyter runs them: the solutions are markdown and never run.
The learner's file is read, never written; it runs in a fresh folder of its own holding a copy
of its learner's files (and `my_value.py`, which notebook 2 writes and 3 imports, from that
learner's notebook 2 when the folder has none). Needs nbclient, nbformat and ipykernel
(``pip install "micrograd-plus[grade]"``).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.resources
import os
import pathlib
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..check.timeout import DEFAULT_TIME_LIMIT, MAX_TIMEOUTS, WAITING_FACTOR
from ..core.atomic import atomic_write
from . import sandbox as grade_sandbox
from . import workers as grade_workers
from .graded_notebook import Role, blame, compose, exercises, role_keys, solutions, with_solutions

RESULTS = ("passed", "failed", "error", "timeout", "blocked", "not attempted", "skipped")
FACTOR = 20.0  # a cell's time limit: this many times the course's solution's time ...
FLOOR = 3.0  # ... and at least this: the course's quick cells took a fraction of a second each
# A check cell's at least the check's own worst case (its calls' limits, each on the clock at most
# WAITING_FACTOR times, until it gives up), so that a learner's hang is named by the check ("did
# not finish": the call and the cause) and not cut short as the cell's time-out, on a loaded
# machine too.
CHECK_FLOOR = MAX_TIMEOUTS * DEFAULT_TIME_LIMIT * WAITING_FACTOR + FLOOR
# in a warm worker, even at a load average of 17 on 2 cores
UNTIMED = 60.0  # seconds for a cell the course's run did not time (its run stopped early)
SHARED_FILES = {"my_value": "my_value.py"}  # an exercise whose %%writefile cell others import
NO_TORCH = "skipped: PyTorch is not installed"
# How a notebook runs: "worker" (a child of a warm worker, grading/warm_worker.py) or "kernel"
# (its own Jupyter kernel, MICROGRAD_GRADE_ENGINE=kernel); the same results
# (tests/test_grade_worker.py).
ENGINE = "kernel" if os.environ.get("MICROGRAD_GRADE_ENGINE") == "kernel" else "worker"


@dataclass(frozen=True)
class Row:
    """One exercise of one submission, as the table and the CSV show it (exercise "": a row
    about the whole notebook)."""

    submission: str
    notebook: str
    exercise: str
    result: str  # one of RESULTS
    detail: str = ""
    learner: str = ""
    flag: str = ""  # what its notebook tried outside its folder (the sandbox stopped it)


@dataclass
class _Cell:
    state: str = "not run"  # "ok", "error", "timeout", "dead", "not run"
    line: str = ""  # the error's one line
    assertion: bool = False
    text: str = ""  # what it printed
    at: int = 0  # the line of the cell that raised (1-based; 0: not known)
    stuck: bool = False  # outlived its time and would not stop: the run ended there


def require() -> tuple[Any, Any]:
    try:
        import nbclient
        import nbformat
    except ImportError as exc:
        raise ImportError(
            f"micrograd grade needs nbclient, nbformat and ipykernel ({exc.name} is missing): "
            f'pip install "micrograd-plus[grade]"'
        ) from None
    return nbclient, nbformat


def read(path: str | os.PathLike) -> Any:
    """The notebook at `path` (nbformat 4), or a ValueError saying in one line why not."""
    _, nbformat = require()
    try:
        return nbformat.read(os.fspath(path), as_version=4)
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc.strerror or exc}") from None
    except Exception as exc:  # nbformat raises JSON and validation errors of many kinds
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"not a notebook: {first[:120]}") from None


def notebook_id(nb: Any, path: str) -> str:
    """'01' for a notebook titled '# 1. ...', else the file's name without .ipynb."""
    for c in nb.cells:
        if c.cell_type == "markdown":
            m = re.match(r"#\s+(\d+)\.", c.source)
            if m:
                return f"{int(m.group(1)):02d}"
            break
    return pathlib.Path(path).stem


def shared_file(nb: Any, exercise: str) -> tuple[str, str] | None:
    """The file a learner's %%writefile exercise writes (name, text), or None."""
    index = exercises(nb).get(exercise)
    if index is None:
        return None
    first, _, rest = nb.cells[index].source.partition("\n")
    if not first.startswith("%%writefile"):
        return None
    return first.split(maxsplit=1)[1].strip(), rest


def has_placeholder(source: str) -> bool:
    """Whether code still holds a `...` the learner was to replace (IPython magics skipped)."""
    code = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "..." in code
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(tree))


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


@functools.lru_cache(maxsize=1)
def course() -> dict[str, Any]:
    """The course's own notebooks, from the installed package: notebook id ('01') -> notebook."""
    _, nbformat = require()
    folder = importlib.resources.files("micrograd") / "notebooks"
    found = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".ipynb") and entry.name[:2].isdigit():
            found[entry.name[:2]] = nbformat.reads(entry.read_text(encoding="utf-8"), as_version=4)
    if not found:
        raise FileNotFoundError(
            f"the course's notebooks are missing from {folder}: reinstall micrograd-plus"
        )
    return found


def course_notebook(nb: Any, path: str) -> tuple[str, Any] | None:
    """The course notebook a submission is a copy of: the one sharing most of its exercise
    names, else the one its title or file name numbers; None if none."""
    mine = set(exercises(nb))
    best = max(course().items(), key=lambda kv: len(mine & set(exercises(kv[1]))))
    if mine & set(exercises(best[1])):
        return best
    for key in (notebook_id(nb, path), pathlib.Path(path).name[:2]):
        if key in course():
            return key, course()[key]
    return None


def _cells(outcomes: dict[int, dict[str, Any]], end: str, nb: Any) -> list[_Cell]:
    """What became of each cell, from the runner's lines and how its run ended."""
    cells = [_Cell() if c.cell_type == "code" else _Cell("ok") for c in nb.cells]
    if -1 in outcomes:  # the kernel never started
        return [_Cell("dead", outcomes[-1].get("line", "the kernel failed")) for _ in nb.cells]
    for i, o in outcomes.items():
        if 0 <= i < len(cells):
            cells[i] = _Cell(
                str(o.get("state", "error")),
                str(o.get("line", "")),
                bool(o.get("assertion")),
                str(o.get("text", "")),
                int(o.get("at") or 0),
                bool(o.get("stuck")),
            )
    last = max((i for i in outcomes if 0 <= i < len(cells)), default=-1)
    stopped = cells[last] if last >= 0 else _Cell("")
    later = [
        c for c, nbc in zip(cells[last + 1 :], nb.cells[last + 1 :]) if nbc.cell_type == "code"
    ]
    if end == "done":
        return cells
    if stopped.state == "timeout" and stopped.stuck:
        for c in later:
            c.line = "not run: an earlier cell outlived its time and would not stop"
        return cells
    if stopped.state == "dead" or end == "killed":
        line = (
            "not run: the kernel died before it"
            if stopped.state == "dead"
            else "the notebook's run was killed (by its own code?) before this cell ended"
        )
        for c in later:
            c.state, c.line = "dead", line
        return cells
    for c in later:  # "expired": the grader stopped the whole run when its time was up
        c.state, c.line = "timeout", "the notebook's run outlived the time of all its cells"
    return cells


def judge(
    nb: Any,
    roles: list[Role],
    cells: list[_Cell],
    original: Any,
    submission: str,
    limits: list[float | None],
    learner: str = "",
) -> list[Row]:
    """Each of the course's exercises' result, from what became of its cell, the cells checking
    it and the learner's own cells before it."""
    notebook = notebook_id(original, submission)
    rows = []
    before: list[int] = []  # the learner's other cells since the last exercise
    steps: dict[str, list[int]] = {}
    seen_exercise: dict[str, int] = {}
    for n, r in enumerate(roles):
        if r.kind == "exercise" and r.name not in seen_exercise:
            seen_exercise[r.name] = n
            steps[r.name] = [*before, n]
            before = []
        elif r.kind == "other" and nb.cells[n].cell_type == "code":
            before.append(n)
    for n, r in enumerate(roles):
        if r.kind == "check" and r.name in steps:
            steps[r.name].append(n)
    for name in exercises(original):
        if name not in seen_exercise:
            rows.append(
                Row(
                    submission,
                    notebook,
                    name,
                    "not attempted",
                    "the exercise's cell is not in the notebook",
                    learner,
                )
            )
            continue
        index = seen_exercise[name]
        result, detail = _result(nb, cells, roles, steps[name], index, limits)
        if result not in ("passed", "skipped") and has_placeholder(nb.cells[index].source):
            result, detail = (
                "not attempted",
                "`...` left in the exercise" + (f"; {detail}" if detail else ""),
            )
        elif result == "passed" and not any(roles[i].kind == "check" for i in steps[name]):
            result, detail = "error", "no cell checks this exercise"
        rows.append(Row(submission, notebook, name, result, detail, learner))
    for n in before:  # after the last exercise: said when it is not a known problem's echo
        c = cells[n]
        if any(r.result not in ("passed", "skipped") for r in rows):
            break
        if c.state in ("error", "timeout"):
            said = _other(nb, n, roles[n], c, limits[n])
            rows.append(
                Row(
                    submission,
                    notebook,
                    "",
                    c.state,
                    said.replace(", before this exercise,", " (after the last exercise)"),
                    learner,
                )
            )
            break
    return rows


def _where(role: Role) -> str:
    return f"cell {role.index + 1}"


def _other(nb: Any, i: int, role: Role, c: _Cell, limit: float | None) -> str:
    """What became of a cell of the learner's own (not an exercise's): its place, and the
    time it outlived or the line that raised and the error."""
    if c.state == "timeout":
        return f"{_where(role)}, before this exercise, did not finish within {limit or 0:g} s"
    source = nb.cells[i].source.splitlines()
    at = f", line {c.at} (`{source[c.at - 1].strip()[:80]}`)" if 0 < c.at <= len(source) else ""
    line = "AssertionError (an assert with no message)" if c.line == "AssertionError" else c.line
    return f"{_where(role)}{at}, before this exercise, raised {line}"


def _result(
    nb: Any,
    cells: list[_Cell],
    roles: list[Role],
    steps: list[int],
    index: int,
    limits: list[float | None],
) -> tuple[str, str]:
    for i in steps:
        c, role = cells[i], roles[i]
        if c.state == "ok":
            if NO_TORCH in c.text:
                return "skipped", "needs PyTorch, which is not installed where the grader ran"
            continue
        if c.state == "timeout":
            if c.line:  # not run, or the whole run expired
                return "timeout", c.line
            if role.kind == "other":
                return "timeout", _other(nb, i, role, c, limits[i])
            what = "the exercise's cell" if i == index else f"the check of {role.name}"
            return "timeout", f"{what} did not finish within {limits[i] or 0:g} s: stopped there"
        if c.state == "dead":
            return "error", c.line
        if c.state == "not run":
            return "timeout", c.line or "not run: the notebook stopped at an earlier cell"
        if role.kind == "other":
            return "error", _other(nb, i, role, c, limits[i])
        if c.assertion and i != index:
            return "failed", c.line.removeprefix("AssertionError: ") or "a check failed"
        return "error", c.line
    return "passed", ""


def learner_files(folder: str | os.PathLike) -> dict[str, bytes]:
    """The files a notebook of this folder may use, relative path -> bytes: every regular file
    in it and its sub-folders, except notebooks, hidden ones (.git) and symbolic links."""
    root = pathlib.Path(folder)
    found: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d))
        ]
        for name in filenames:
            path = pathlib.Path(dirpath) / name
            if name.startswith(".") or name.endswith(".ipynb") or path.is_symlink():
                continue
            if path.is_file():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


_TIMES: dict[tuple[str, bool, str], dict[str, float]] = {}
_TIMING: dict[tuple[str, bool, str], threading.Lock] = {}
_TIMING_LOCK = threading.Lock()


def course_files() -> dict[str, bytes]:
    """The files the course's own notebooks write for each other (my_value.py), solved."""
    found = {}
    for original in course().values():
        solved = with_solutions(original, solutions(original))
        for exercise in SHARED_FILES:
            written = shared_file(solved, exercise)
            if written is not None:
                found[written[0]] = written[1].encode()
    return found


def course_times(key: str, sandbox: bool = True, slot: int = 0) -> dict[str, float]:
    """Cell (`role_keys`) -> the seconds the course notebook `key`, run with its solutions,
    took for it here (once per process: the grader's first notebook of each kind waits)."""
    at = (key, sandbox, ENGINE)
    with _TIMING_LOCK:
        lock = _TIMING.setdefault(at, threading.Lock())
    with lock:
        if at not in _TIMES:
            original = course()[key]
            runnable, roles = compose(with_solutions(original, solutions(original)), original)
            keys = role_keys(roles)
            untimed = [UNTIMED if c.cell_type == "code" else None for c in runnable.cells]
            outcomes, _ = _run(runnable, course_files(), untimed, sandbox, slot)
            _TIMES[at] = {
                keys[i]: float(o["seconds"])
                for i, o in outcomes.items()
                if 0 <= i < len(keys) and isinstance(o.get("seconds"), (int, float))
            }
    return _TIMES[at]


def limits(
    runnable: Any, roles: list[Role], times: dict[str, float], timeout: float | None = None
) -> list[float | None]:
    """Each cell's time limit in seconds (None: not code): `timeout` for all if given, else
    FACTOR times the course's own time for it, at least FLOOR (a check's: CHECK_FLOOR); a cell
    the course has not (the learner's own) gets the notebook's largest."""
    code = [c.cell_type == "code" for c in runnable.cells]
    if timeout is not None:
        return [timeout if k else None for k in code]
    keys = role_keys(roles)
    known = [
        max(CHECK_FLOOR if r.kind == "check" else FLOOR, FACTOR * times[k])
        if k in times and not k.endswith(":")
        else None
        for k, r in zip(keys, roles)
    ]
    most = max((t for t in known if t is not None), default=UNTIMED)
    return [(t if t is not None else most) if k else None for t, k in zip(known, code)]


def _run(
    runnable: Any, files: dict[str, bytes], timeouts: list[float | None], sandbox: bool, slot: int
) -> tuple[dict[int, dict[str, Any]], str]:
    """Run the notebook in a fresh folder holding `files`: the sandbox's outcomes and end."""
    refused = grade_sandbox.refusal() if sandbox else None
    if refused:
        raise RuntimeError(refused)
    use_bwrap = sandbox
    uid = grade_sandbox.UID_BASE + slot if use_bwrap and os.geteuid() == 0 else None
    if ENGINE == "worker":
        return grade_workers.WORKERS.run(slot, use_bwrap, uid, dict(runnable), files, timeouts)
    folder = tempfile.mkdtemp(prefix="micrograd-grade-")
    try:
        for name, data in files.items():
            target = pathlib.Path(folder, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        if uid is not None:
            for dirpath, _, filenames in os.walk(folder):
                os.chown(dirpath, uid, uid)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), uid, uid)
        return grade_sandbox.run(dict(runnable), folder, timeouts, use_bwrap=use_bwrap, uid=uid)
    finally:
        shutil.rmtree(folder)


def inputs(
    path: str | os.PathLike, shared: Iterable[tuple[str, str]] = (), own_folder: bool = False
) -> dict[str, bytes]:
    """The files a submission runs beside (name -> bytes): those of its own folder when that is
    its learner's alone (`own_folder`: `learner_files`), else only the my_value.py there; and
    `shared`, (file name, text) pairs such as the learner's my_value.py from their notebook 2,
    where there is no such file."""
    here = pathlib.Path(path).resolve().parent
    if own_folder:
        files = learner_files(here)
    else:  # a folder of many learners' (or the teacher's) files: none of them but my_value.py
        files = {
            name: (here / name).read_bytes()
            for name in SHARED_FILES.values()
            if (here / name).is_file() and not (here / name).is_symlink()
        }
    for name, text in shared:
        files.setdefault(name, text.encode())
    return files


def grade(
    path: str | os.PathLike,
    timeout: float | None = None,
    shared: Iterable[tuple[str, str]] = (),
    label: str | None = None,
    *,
    learner: str = "",
    sandbox: bool = True,
    slot: int = 0,
    own_folder: bool = False,
) -> list[Row]:
    """Grade one submission: its rows, one per exercise of the course notebook it is a copy of
    (one row saying why, if it cannot be read or is none of the course's). It runs in a fresh
    folder holding `inputs(path, shared, own_folder)`. `timeout`: seconds for every cell
    (default: `limits`, from the course's own times); `sandbox`: run it in bubblewrap (a
    RuntimeError where there is none); `slot`: which parallel job this is."""
    label = label or os.fspath(path)
    try:
        nb = read(path)
    except ValueError as exc:
        return [Row(label, "", "", "error", str(exc), learner)]
    found = course_notebook(nb, label)
    if found is None:
        return [
            Row(
                label,
                notebook_id(nb, label),
                "",
                "error",
                "not one of the course's notebooks (no exercise of theirs in it)",
                learner,
            )
        ]
    key, original = found
    if not exercises(original):
        return [Row(label, key, "", "passed", "no exercises to grade", learner)]
    files = inputs(path, shared, own_folder)
    times = course_times(key, sandbox, slot) if timeout is None else {}

    def attempt(submission: Any, rerun: bool = False) -> list[Row]:
        runnable, roles = compose(submission, original)
        if rerun:  # blame's: it reads the exercises' rows only, so the cells after the last
            # check (a chapter's training, its samples) do not run again
            runnable.cells, roles = _to_last_check(runnable.cells, roles)
        cell_limits = limits(runnable, roles, times, timeout)
        outcomes, end = _run(runnable, files, cell_limits, sandbox, slot)
        cells = _cells(outcomes, end, runnable)
        rows = judge(runnable, roles, cells, original, label, cell_limits, learner)
        reached = outcomes.get(-2, {}).get("reached") or []
        if reached:
            flag = "tried to reach outside its folder: " + "; ".join(map(str, reached))
            rows = [dataclasses.replace(r, flag=flag) for r in rows]
        return rows

    return blame(attempt(nb), nb, original, lambda again: attempt(again, rerun=True))


def _to_last_check(cells: list[Any], roles: list[Role]) -> tuple[list[Any], list[Role]]:
    """`cells` and their `roles` up to the last exercise's or check's cell: all that an
    exercise's row is judged on (its cell, its checks, the learner's cells before it)."""
    kinds = ("exercise", "check")
    last = max((i for i, r in enumerate(roles) if r.kind in kinds), default=len(roles) - 1)
    return cells[: last + 1], roles[: last + 1]
