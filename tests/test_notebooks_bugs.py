"""Each listed bug of a notebook (test_notebooks.BUGS) stops it at the check of its exercise,
which names the cause. In a file of its own: pytest-xdist (--dist loadfile) runs a file on one
worker, and with the notebooks' own runs these kept one worker busy long after the others."""

from __future__ import annotations

import pathlib

import pytest

from tests.test_notebooks import (
    BUGS,
    FILLS,
    _execute,
    _exercises,
    _filled,
    _printed,
    _ready,
    _shorter,
)

nbclient = pytest.importorskip("nbclient")

# A bug's run of notebook 9 trains the three broken nets one step, not the chapter's 15: the
# checks its bugs stop at after that cell (diagnosis, kaiming) judge the learner's answer alone,
# never those runs, and the cell still runs (on the learner's saturation and update_data). The
# 15 steps, and the re-initialised nets' training after the last check, run in
# test_notebooks.py's correct answers and folded solutions.
BUG_SHORTER = {
    "09_why_isnt_it_learning": [
        (
            "runs[name] = train(build(name, Value))",
            "runs[name] = train(build(name, Value), steps=1)",
        )
    ],
}


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
    nb = _shorter(_filled(name, answers), name, BUG_SHORTER)
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
