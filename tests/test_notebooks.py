"""The learning-path notebooks: each runs top to bottom in a fresh kernel (with the collapsed
solutions standing in for the learner's exercises), is stored with outputs, and is exactly what
`notebooks/build.py` makes (cells, ids, tags; outputs aside, since timings differ per run).

The notebooks check their own key numbers with `assert`, so running them is a real test.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

HERE = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))


def _build_module():
    spec = importlib.util.spec_from_file_location("notebooks_build", HERE / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _build_module()


def test_the_learning_path_is_all_there() -> None:
    assert [p.stem for p in NOTEBOOKS] == list(BUILD.NOTEBOOKS)
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06"]


@pytest.mark.parametrize("name", list(BUILD.NOTEBOOKS))
def test_build_py_reproduces_the_committed_notebook(name: str) -> None:
    committed = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
    made = BUILD.make(name, BUILD.NOTEBOOKS[name])

    def cells(nb) -> list[tuple]:
        return [(c.id, c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]

    assert cells(committed) == cells(made), f"run: python notebooks/build.py {name[:2]}"
    assert committed.metadata["kernelspec"] == made.metadata["kernelspec"]


@pytest.mark.parametrize("name", list(BUILD.NOTEBOOKS))
def test_every_exercise_has_a_collapsed_solution_after_it(name: str) -> None:
    cells = BUILD.NOTEBOOKS[name]
    kinds = [kind for kind, _ in cells]
    for i, (kind, text) in enumerate(cells):
        if kind == "exercise":
            following = kinds[i + 1 : i + 3]  # the solution, or a check cell and then it
            assert "solution" in following, f"{name}: exercise {i} has no solution after it"
            # A template runs as it is: it parses, and whatever it defines is marked @exercise
            # (so the solution takes over) or is a number left as `...`.
            tree = ast.parse(text)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    names = [ast.unparse(d) for d in node.decorator_list]
                    assert names == ["exercise"], f"{name}: {node.name} is not @exercise"
                else:
                    assert "..." in ast.unparse(node), f"{name}: {ast.unparse(node)!r}"
    meta = BUILD.cell_metadata("solution")
    assert meta["jupyter"]["source_hidden"] and meta["tags"] == ["solution"]


def _execute(nb, monkeypatch: pytest.MonkeyPatch, allow_errors: bool = False) -> None:
    # The kernel is a new process: let it import this checkout's micrograd even if not installed.
    root = str(HERE.parent)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}},
        allow_errors=allow_errors,
    )
    client.execute()  # raises CellExecutionError, with the failing cell, on any error


def test_a_learners_own_code_is_kept_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Play a learner in notebook 1: the Value exercise written, with its @exercise line deleted
    # and a bug (* adds). The solution after it must keep it, and the check cell must say what
    # is wrong, then stop.
    name = "01_derivatives_and_value"
    cells = list(BUILD.NOTEBOOKS[name])
    i = next(k for k, (kind, text) in enumerate(cells)
             if kind == "exercise" and "class Value" in text)
    mine = cells[i + 1][1].replace("@solution\n", "").replace(
        "Value(self.data * other.data, (self, other), '*')",
        "Value(self.data + other.data, (self, other), '*')",
    )
    assert mine.startswith("class Value") and "self.data + other.data, (self, other), '*'" in mine
    cells[i] = ("exercise", mine)
    last = next(k for k in range(i, len(cells)) if "check(Value)" in cells[k][1])
    nb = BUILD.make(name, cells[: last + 1])
    _execute(nb, monkeypatch, allow_errors=True)

    assert "Keeping your Value" in nb.cells[i + 1].outputs[0].text
    shown = nb.cells[last].outputs
    report = next(o.data["text/plain"] for o in shown if o.output_type == "display_data")
    assert ("*: for out = a * b with a = 2.0, b = -3.0, out.data is -1.0, expected -6.0"
            in report)
    error = next(o for o in shown if o.output_type == "error")
    assert error.ename == "AssertionError" and "fix the problems listed above" in error.evalue


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_with_outputs(path: pathlib.Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("outputs") is not None for c in code)
    assert any(c.outputs for c in code), f"{path.name} has no stored outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name} was stored with an error: {errors[0].evalue}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    _execute(nb, monkeypatch)
    if any("solution" in c.metadata.get("tags", []) for c in nb.cells):
        printed = "".join(
            o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
        )
        # The templates were left as they are, so every @solution must have taken over.
        assert "Using the solution's" in printed and "Keeping your" not in printed
