"""Every notebook in notebooks/ runs top to bottom in a fresh kernel, and is stored with outputs.

The notebooks check their own key numbers with `assert`, so running them is a real test.
"""

from __future__ import annotations

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_learning_path_is_all_there() -> None:
    names = [p.name[:2] for p in NOTEBOOKS]
    assert names == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_with_outputs(path: pathlib.Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("outputs") is not None for c in code)
    assert any(c.outputs for c in code), f"{path.name} has no stored outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel is a new process: let it import this checkout's micrograd even if not installed.
    root = str(path.parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError, with the failing cell, on any error
