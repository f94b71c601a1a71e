"""Grading learners' filled-in notebooks: each one run top to bottom in a fresh Jupyter kernel,
in a sandbox (`grading/sandbox.py`), under a time limit per notebook, and judged exercise by
exercise.

An exercise is a code cell whose metadata names it (``exercise="slope"``); the cells that check
it name it too (``checks="slope"``). Each exercise is then one of `RESULTS`:

- passed: every cell that checks it ran without an error;
- failed: a check stopped it (an AssertionError): the detail is the checker's one-line cause;
- error: a cell of it, or one checking it, or a cell of the notebook's own before it, raised
  something else (the exception's one line), or the kernel died;
- timeout: the notebook's time ran out before its checks finished;
- not attempted: it did not pass and its cell still holds a `...` placeholder (or is gone);
- skipped: a check needs what the grader's machine lacks (PyTorch for notebook 5).

The checks are the course's, never the submission's: every cell with ``checks=`` metadata is
taken from the course's own notebook in the installed package (`course()`), matched by that
metadata, wherever the submission has it, deleted it, or edited it. The learner's exercise cells
and the rest of their notebook run as written; a cell outside the exercises that raises is
reported on the exercise after it (or in a row of its own for the notebook).

Only code cells run, as a learner's Jupyter runs them: the solutions are markdown and never run.
The learner's file is read, never written; it runs in a fresh folder of its own holding a copy
of its learner's files (and `my_value.py`, which notebook 2 writes and 3 imports, from that
learner's notebook 2 when the folder has none). Needs nbclient, nbformat and ipykernel
(``pip install 'micrograd-plus[grade]'``).
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib.resources
import os
import pathlib
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.atomic import atomic_write
from . import sandbox as grade_sandbox

RESULTS = ("passed", "failed", "error", "timeout", "not attempted", "skipped")
DEFAULT_TIMEOUT = 120.0  # seconds per notebook; each of the course's runs in under 10
SHARED_FILES = {"my_value": "my_value.py"}  # an exercise whose %%writefile cell others import
NO_TORCH = "skipped: PyTorch is not installed"


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


@dataclass
class _Cell:
    state: str = "not run"  # "ok", "error", "timeout", "dead", "not run"
    line: str = ""  # the error's one line
    assertion: bool = False
    text: str = ""  # what it printed


def require() -> tuple[Any, Any]:
    try:
        import nbclient
        import nbformat
    except ImportError as exc:
        raise ImportError(
            f"micrograd grade needs nbclient, nbformat and ipykernel ({exc.name} is missing): "
            f"pip install 'micrograd-plus[grade]'"
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


def exercises(nb: Any) -> dict[str, int]:
    """Exercise name -> its cell's index, in notebook order."""
    return {
        c.metadata["exercise"]: i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "exercise" in c.metadata
    }


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


@dataclass(frozen=True)
class Role:
    """What a cell of the notebook that runs is: an exercise's cell, a check's (from the
    course), or another of the learner's (`index`: its place in the submission)."""

    kind: str  # "exercise", "check", "other"
    name: str = ""
    index: int = -1


def compose(submission: Any, original: Any) -> tuple[Any, list[Role]]:
    """The notebook to run: the submission's cells, its check cells replaced by the course's.

    A course check cell takes the place of the submission's cell with the same `checks=` name
    (the first such cell for the first, and so on); where the submission has none left, it goes
    after the cell it follows in the course (found by its exercise name or cell id), else after
    its exercise. Check cells the course does not have are dropped."""
    out: list[Any] = []
    roles: list[Role] = []
    seen: dict[str, int] = {}
    for i, cell in enumerate(submission.cells):
        meta = cell.get("metadata", {})
        if cell.cell_type == "code" and "checks" in meta:
            name = str(meta["checks"])
            k = seen[name] = seen.get(name, -1) + 1
            out.append(None)  # a slot, for the course's k-th check cell of that name
            roles.append(Role("slot", f"{name}#{k}"))
        elif cell.cell_type == "code" and "exercise" in meta:
            out.append(cell)
            roles.append(Role("exercise", str(meta["exercise"]), i))
        else:
            out.append(cell)
            roles.append(Role("other", str(cell.get("id", "")), i))
    count: dict[str, int] = {}
    for j, cell in enumerate(original.cells):
        meta = cell.get("metadata", {})
        if cell.cell_type != "code" or "checks" not in meta:
            continue
        name = str(meta["checks"])
        k = count[name] = count.get(name, -1) + 1
        mine = copy.deepcopy(cell)
        role = Role("check", name)
        slot = next((n for n, r in enumerate(roles) if r == Role("slot", f"{name}#{k}")), None)
        if slot is not None:
            out[slot], roles[slot] = mine, role
            continue
        at = len(out)
        for before in reversed(original.cells[:j]):
            bm = before.get("metadata", {})
            key = (
                Role("exercise", str(bm["exercise"]), -1)
                if "exercise" in bm and before.cell_type == "code"
                else None
            )
            hits = [
                n
                for n, r in enumerate(roles)
                if r.kind != "slot"
                and (
                    (key is not None and r.kind == "exercise" and r.name == key.name)
                    or (r.kind == "other" and before.get("id") and r.name == before.get("id"))
                    or (
                        r.kind == "check"
                        and out[n] is not None
                        and out[n].get("id") == before.get("id")
                        and before.get("id")
                    )
                )
            ]
            if hits:
                at = hits[-1] + 1
                break
        out.insert(at, mine)
        roles.insert(at, role)
    keep = [n for n, r in enumerate(roles) if r.kind != "slot"]
    nb = copy.deepcopy(submission)
    nb.cells = [out[n] for n in keep]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb, [roles[n] for n in keep]


def _cells(outcomes: dict[int, dict[str, Any]], end: str, nb: Any, timeout: float) -> list[_Cell]:
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
            )
    last = max((i for i in outcomes if 0 <= i < len(cells)), default=-1)
    stopped = cells[last].state if last >= 0 else ""
    later = [
        c for c, nbc in zip(cells[last + 1 :], nb.cells[last + 1 :]) if nbc.cell_type == "code"
    ]
    if end == "done" or stopped == "timeout":
        return cells
    if stopped == "dead" or end == "killed":
        line = (
            "not run: the kernel died before it"
            if stopped == "dead"
            else "the notebook's run was killed (by its own code?) before this cell ended"
        )
        for c in later:
            c.state, c.line = "dead", line
        return cells
    for c in later:  # "expired": the grader stopped it when its time was up
        c.state = "timeout"
    return cells


def judge(
    nb: Any,
    roles: list[Role],
    cells: list[_Cell],
    original: Any,
    submission: str,
    timeout: float,
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
        result, detail = _result(cells, roles, steps[name], index, timeout)
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
        if c.state == "error":
            rows.append(
                Row(
                    submission,
                    notebook,
                    "",
                    "error",
                    f"{_where(roles[n])} (after the last exercise) raised {c.line}",
                    learner,
                )
            )
            break
    return rows


def _where(role: Role) -> str:
    return f"cell {role.index + 1}"


def _result(
    cells: list[_Cell], roles: list[Role], steps: list[int], index: int, timeout: float
) -> tuple[str, str]:
    for i in steps:
        c, role = cells[i], roles[i]
        if c.state == "ok":
            if NO_TORCH in c.text:
                return "skipped", "needs PyTorch, which is not installed where the grader ran"
            continue
        if c.state == "timeout":
            return "timeout", f"the notebook did not finish within {timeout:g} s"
        if c.state == "dead":
            return "error", c.line
        if c.state == "not run":
            return "timeout", "not run: the notebook stopped at an earlier cell"
        if role.kind == "other":
            return "error", f"{_where(role)}, before this exercise, raised {c.line}"
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


def grade(
    path: str | os.PathLike,
    timeout: float = DEFAULT_TIMEOUT,
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
    folder holding the files of its own folder when that is its learner's alone (`own_folder`:
    `learner_files`), else only the my_value.py there; and `shared`, (file name, text) pairs
    such as the learner's my_value.py from their notebook 2, where there is no such file.
    `sandbox`: run it in bubblewrap (where there is one); `slot`: which parallel job this is."""
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
    runnable, roles = compose(nb, original)
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
    use_bwrap = sandbox and grade_sandbox.bwrap() is not None
    uid = grade_sandbox.UID_BASE + slot if use_bwrap and os.geteuid() == 0 else None
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
        outcomes, end = grade_sandbox.run(
            dict(runnable), folder, timeout, use_bwrap=use_bwrap, uid=uid
        )
    finally:
        shutil.rmtree(folder)
    cells = _cells(outcomes, end, runnable, timeout)
    return judge(runnable, roles, cells, original, label, timeout, learner)
