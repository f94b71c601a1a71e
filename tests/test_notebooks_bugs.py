"""Each listed bug of a notebook (test_notebooks.BUGS) stops it at the check of its exercise,
which names the cause. In a file of its own: pytest-xdist (--dist loadfile) runs a file on one
worker, and with the notebooks' own runs these kept one worker busy long after the others."""

from __future__ import annotations

import pathlib

import pytest

from tests.test_notebooks import BUGS, FILLS, _execute, _exercises, _filled, _printed, _ready

nbclient = pytest.importorskip("nbclient")


@pytest.mark.parametrize(
    "name, key, change, said", BUGS, ids=[f"{b[0][:2]}-{b[1]}-{i}" for i, b in enumerate(BUGS)]
)
@pytest.mark.jupyter
def test_a_bug_stops_the_notebook_at_the_check_that_names_it(
    name: str,
    key: str,
    change: tuple[str, str],
    said: str,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = dict(FILLS[name])
    old, new = change
    assert answers[key].count(old) == 1, f"{key}: {old!r} is not in the answer once"
    answers[key] = answers[key].replace(old, new)
    _ready(name, tmp_path, monkeypatch)
    nb = _filled(name, answers)
    with pytest.raises(nbclient.exceptions.CellExecutionError):
        _execute(nb, tmp_path, monkeypatch)
    failed = next(
        i
        for i, c in enumerate(nb.cells)
        if any(o.output_type == "error" for o in c.get("outputs", []))
    )
    assert failed > _exercises(nb)[key], "the notebook stopped before the exercise"
    assert nb.cells[failed].metadata.get("checks") == key, "not the exercise's own check"
    shown = _printed(nb.cells[failed])
    assert said in shown, shown
    assert "AssertionError" in shown or "CheckFailed" in shown, shown
