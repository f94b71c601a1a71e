"""Grading learners' filled-in notebooks: each one run top to bottom in a fresh Jupyter kernel,
under a time limit per notebook, and judged exercise by exercise.

An exercise is a code cell whose metadata names it (``exercise="slope"``); the cells that check
it name it too (``checks="slope"``). Each exercise is then one of `RESULTS`:

- passed: every cell that checks it ran without an error;
- failed: a check stopped it (an AssertionError): the detail is the checker's one-line cause;
- error: a cell of it, or one checking it, raised something else (the exception's one line), the
  kernel died, or the check could not run where the grader ran (PyTorch missing);
- timeout: the notebook's time ran out before its checks finished;
- not attempted: it did not pass and its cell still holds a `...` placeholder.

Only code cells run, as a learner's Jupyter runs them: the solutions are markdown and never run.
The learner's file is read, never written; it runs in a temporary folder of its own holding a
copy of the files the notebooks share (`my_value.py`, which notebook 2 writes and 3 imports).
Needs nbclient, nbformat and ipykernel (``pip install 'micrograd-plus[grade]'``).
"""

from __future__ import annotations

import ast
import os
import pathlib
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .atomic import atomic_write

RESULTS = ("passed", "failed", "error", "timeout", "not attempted")
DEFAULT_TIMEOUT = 120.0  # seconds per notebook; each of the course's runs in under 10
SHARED_FILES = {"my_value": "my_value.py"}  # an exercise whose %%writefile cell others import
NO_TORCH = "skipped: PyTorch is not installed"


@dataclass(frozen=True)
class Row:
    """One exercise of one submission, as the table and the CSV show it."""

    submission: str
    notebook: str
    exercise: str
    result: str  # one of RESULTS
    detail: str = ""


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
            f"pip install 'micrograd-plus[grade]'") from None
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
    return {c.metadata["exercise"]: i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and "exercise" in c.metadata}


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
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "..." in code
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(tree))


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def run(nb: Any, folder: str, timeout: float) -> list[_Cell]:
    """Run every code cell of `nb` in a fresh kernel in `folder`, within `timeout` seconds in
    all: what became of each cell. A hang or a dead kernel ends the run, never the grader."""
    nbclient, _ = require()
    cells = [_Cell() for _ in nb.cells]
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     allow_errors=True, resources={"metadata": {"path": folder}})
    deadline = time.monotonic() + timeout
    try:
        # The kernel process's own log lines (ipykernel's note about TCP) are not the learner's:
        # their code's output comes back through Jupyter's messages.
        with client.setup_kernel(stderr=subprocess.DEVNULL):
            for i, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    cells[i].state = "timeout"
                    break
                client.timeout = max(1, int(left + 0.999))
                try:
                    client.execute_cell(cell, i)
                except nbclient.exceptions.CellTimeoutError:
                    cells[i].state = "timeout"
                    break
                except nbclient.exceptions.DeadKernelError:
                    cells[i] = _Cell("dead", "the kernel died running this cell")
                    for later in cells[i + 1:]:
                        later.state, later.line = "dead", "not run: the kernel died before it"
                    break
                cells[i] = _outcome(cell)
    except nbclient.exceptions.DeadKernelError as exc:  # while starting or stopping the kernel
        return [c if c.state != "not run" else _Cell("dead", f"the kernel died ({_one_line(exc)})")
                for c in cells]
    except RuntimeError as exc:  # e.g. the kernel did not start in time
        return [c if c.state != "not run" else _Cell("dead", f"the kernel failed: "
                                                           f"{_one_line(exc)}") for c in cells]
    return cells


def _outcome(cell: Any) -> _Cell:
    text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            line = f"{o.get('ename', 'Error')}: {_one_line(o.get('evalue', ''))}".rstrip(": ")
            return _Cell("error", line, o.get("ename") == "AssertionError", text)
    return _Cell("ok", text=text)


def judge(nb: Any, cells: list[_Cell], submission: str, timeout: float) -> list[Row]:
    """Each exercise's result, from what became of its cell and the cells checking it."""
    notebook = notebook_id(nb, submission)
    checks: dict[str, list[int]] = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and "checks" in c.metadata:
            checks.setdefault(c.metadata["checks"], []).append(i)
    rows = []
    for name, index in exercises(nb).items():
        result, detail = _result(cells, index, checks.get(name, []), timeout)
        if result != "passed" and has_placeholder(nb.cells[index].source):
            result, detail = "not attempted", "`...` left in the exercise" + (
                f"; {detail}" if detail else "")
        rows.append(Row(submission, notebook, name, result, detail))
    return rows


def _result(cells: list[_Cell], index: int, checks: list[int], timeout: float) -> tuple[str, str]:
    for i in (index, *checks):
        c = cells[i]
        if c.state == "ok":
            if NO_TORCH in c.text:
                return "error", "not checked: PyTorch is not installed where the grader ran"
            continue
        if c.state == "timeout":
            return "timeout", f"the notebook did not finish within {timeout:g} s"
        if c.state == "dead":
            return "error", c.line
        if c.state == "not run":
            return "timeout", "not run: the notebook stopped at an earlier cell"
        if c.assertion and i != index:
            return "failed", c.line.removeprefix("AssertionError: ") or "a check failed"
        return "error", c.line
    if not checks:
        return "error", "no cell checks this exercise"
    return "passed", ""


def grade(path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT,
          shared: Iterable[tuple[str, str]] = (), label: str | None = None) -> list[Row]:
    """Grade one submission: its rows, one per exercise (one row saying why, if it cannot be
    read or has no exercises). `shared`: (file name, text) to put beside it, such as the
    learner's my_value.py, unless a file of that name is already next to the submission."""
    label = label or os.fspath(path)
    try:
        nb = read(path)
    except ValueError as exc:
        return [Row(label, "", "", "error", str(exc))]
    if not exercises(nb):
        return [Row(label, notebook_id(nb, label), "", "passed", "no exercises to grade")]
    here = pathlib.Path(path).resolve().parent
    with tempfile.TemporaryDirectory(prefix="micrograd-grade-") as folder:
        for name, text in shared:  # the learner's own file beside the notebook comes first
            mine = here / name
            atomic_write(pathlib.Path(folder) / name, mine.read_bytes() if mine.is_file() else text)
        for name in SHARED_FILES.values():
            if (here / name).is_file() and not (pathlib.Path(folder) / name).exists():
                atomic_write(pathlib.Path(folder) / name, (here / name).read_bytes())
        cells = run(nb, folder, timeout)
    return judge(nb, cells, label, timeout)
