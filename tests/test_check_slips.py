"""A learner's slips in the course's notebooks, each one red line (IPython's handler of a cell's
exceptions, `micrograd.check.notebook._plainly`), played in an IPython shell as Jupyter runs the
cells (each stored in the input history): a check run before its exercise ("run that cell
first", not a NameError's traceback), an exercise still holding its `...` ("not attempted", and
what goes there, the same in every chapter), notebook 2's "break it on purpose" cell under Run
all, step 1's root grad, a report's headline shown once. The error's kind is kept (Run all
stops, `micrograd grade` reads it)."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import pytest

IPython = pytest.importorskip("IPython")
jupytext = pytest.importorskip("jupytext")

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def _cells(name: str) -> list[Any]:
    return jupytext.read(NOTEBOOKS / f"{name}.py").cells


def _cell(name: str, key: str, kind: str) -> str:
    (source,) = [c.source for c in _cells(name) if c.metadata.get(kind) == key]
    return source


@pytest.fixture
def shell() -> Any:
    """IPython's shell, emptied (the one `micrograd.check` shows its lines in)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()  # no history file: its saving thread would outlive the test
    config.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=config)
    sh.reset(new_session=False)
    from micrograd.check.notebook import show_plainly

    show_plainly()  # as `import micrograd.check` (the set-up cell) does under IPython
    return sh


def _run(shell: Any, source: str, capsys: Any) -> tuple[BaseException | None, str]:
    """A cell: (what stopped it, what it showed, colours taken out)."""
    capsys.readouterr()
    result = shell.run_cell(source, store_history=True)
    shown = capsys.readouterr().out
    return result.error_in_exec, re.sub(r"\x1b\[[0-9;]*m", "", shown)


def _upto(shell: Any, name: str, key: str) -> None:
    """Notebook `name`'s code cells before exercise `key`, its exercises done (FILLS), its set-up
    cell left out (micrograd is installed here) and its explorers (widgets) too."""
    from .test_notebooks import FILLS

    for i, c in enumerate(_cells(name)):
        if c.metadata.get("exercise") == key:
            return
        if c.cell_type == "code" and i > 1 and "explore(" not in c.source:
            source = FILLS[name].get(c.metadata.get("exercise"), c.source)
            result = shell.run_cell(source, store_history=True)
            assert result.success, (source[:200], result.error_in_exec)
    raise AssertionError(f"{name} has no exercise {key}")


def test_a_check_run_before_its_exercise_says_to_run_that_cell_first(
    shell: Any, capsys: Any
) -> None:
    _upto(shell, "01_derivatives_and_value", "slope")
    stopped, shown = _run(shell, _cell("01_derivatives_and_value", "slope", "checks"), capsys)
    assert isinstance(stopped, NameError)  # its kind kept: Run all stops, grade reads it
    assert shown.strip() == (
        "✗ slope is not defined yet: run the cell that defines it first (the exercise above, "
        "where you write it, and the cells before it), then this one"
    )


def test_a_name_mistyped_in_a_cell_is_said_so_and_a_function_keeps_its_traceback(
    shell: Any, capsys: Any
) -> None:
    _run(shell, "slope = 1", capsys)
    stopped, shown = _run(shell, "print(sloep)", capsys)
    assert isinstance(stopped, NameError)
    assert (
        shown.strip()
        == "✗ sloep is not defined: did you mean slope? (else run the cells above first)"
    )
    # a name the cell defines itself, or one inside a function of another cell: Python's words
    _run(shell, "def g():\n    return nowhere", capsys)
    stopped, shown = _run(shell, "g()", capsys)
    assert isinstance(stopped, NameError) and "Traceback" in shown and "return nowhere" in shown
    stopped, shown = _run(shell, "late\nlate = 1", capsys)
    assert isinstance(stopped, NameError) and "Traceback" in shown


def test_notebook_4s_check_run_before_its_exercise_says_so_too(shell: Any, capsys: Any) -> None:
    """Its check cell defines the function that reads hinge, l2 and learning_rate: the name
    missing there is the exercise's too."""
    _upto(shell, "04_moons_demo", "moons_parts")
    stopped, shown = _run(shell, _cell("04_moons_demo", "moons_parts", "checks"), capsys)
    assert isinstance(stopped, NameError)
    assert shown.strip().startswith("✗ hinge is not defined yet: run the cell that defines it"), (
        shown
    )


@pytest.mark.parametrize(
    "name, key, what",
    [
        (
            "01_derivatives_and_value",
            "slope",
            "slope still has `...` (how much f moves when x moves by h, divided by h)",
        ),
        (
            "01_derivatives_and_value",
            "value",
            "Value still has `...` (store data, grad = 0.0, _prev (the children), _op and label, "
            "and 2 more)",
        ),
        (
            "02_backpropagation",
            "assign_value",  # "break it on purpose", under Run all: b = a + a is None
            "AssignValue still has `...` (an AssignValue out; its _backward assigns self.grad "
            "and other.grad)",
        ),
    ],
)
def test_an_exercise_left_with_its_dots_is_not_attempted_with_what_goes_there(
    shell: Any, capsys: Any, name: str, key: str, what: str
) -> None:
    _upto(shell, name, key)
    assert _run(shell, _cell(name, key, "exercise"), capsys)[0] is None
    stopped, shown = _run(shell, _cell(name, key, "checks"), capsys)
    assert stopped is not None
    assert shown.strip().splitlines()[-1] == (
        f"✗ not attempted: {what}: replace each `...` with your code, run that cell, then this one"
    ), shown
    assert "Traceback" not in shown


def test_step_1_run_before_its_exercise_names_the_roots_own_grad(shell: Any, capsys: Any) -> None:
    name = "01_derivatives_and_value"
    _upto(shell, name, "step1")
    stopped, shown = _run(shell, _cell(name, "step1", "checks"), capsys)
    assert isinstance(stopped, AssertionError)
    assert shown.strip() == (
        "✗ L.grad = 0.0000, but nudging L moves L by 1.000000 per unit: L is the output itself: "
        "nudging L by h moves L by h, so L.grad = dL/dL = 1"
    ), shown
    # the exercise as given: not attempted, once
    assert _run(shell, _cell(name, "step1", "exercise"), capsys)[0] is None
    stopped, shown = _run(shell, _cell(name, "step1", "checks"), capsys)
    assert shown.strip() == (
        "✗ not attempted: L.grad is still `...`: replace it with your number (or expression), "
        "run that cell, then this one"
    ), shown


def test_a_failing_report_shows_its_headline_once(shell: Any, capsys: Any) -> None:
    """``display(report); assert report.ok, report.headline``: the report lists the problem,
    and the cell stops with the report's verdict, not the same line again."""
    _upto(shell, "01_derivatives_and_value", "value")
    wrong = """\
class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        self.data, self.grad, self._prev = data, 0.0, tuple(_children)
        self._op, self.label = _op, label
    def __add__(self, other):
        return Value(self.data + other.data, (self, other), '+')
    def __mul__(self, other):
        return Value(self.data + other.data, (self, other), '*')
"""
    assert _run(shell, wrong, capsys)[0] is None
    stopped, shown = _run(shell, _cell("01_derivatives_and_value", "value", "checks"), capsys)
    assert isinstance(stopped, AssertionError)
    headline = "*: for out = a * b with a = 2.0, b = -3.0, out.data is -1.0, expected -6.0"
    assert str(stopped).startswith(headline)  # what grade reads
    assert shown.count(headline) == 1, shown
    assert shown.strip().splitlines()[-1].startswith("✗ check(Value): not yet (1 problem"), shown
    assert shown.strip().endswith("fix the one ✗ above, then run the cells again"), shown


def test_a_class_whose_static_methods_hold_the_dots_is_not_attempted(
    shell: Any, capsys: Any
) -> None:
    """Notebook 5's exercise is a torch.autograd.Function: its forward and backward are static
    methods."""
    stub = _cell("05_pytorch_side_by_side", "torch_function", "exercise")
    _run(shell, "class Function:\n    pass", capsys)  # (PyTorch not needed to define the stub)
    assert _run(shell, stub, capsys)[0] is None
    stopped, shown = _run(shell, "Tanh.apply(1.0)", capsys)
    assert stopped is not None
    assert shown.strip() == (
        "✗ not attempted: Tanh still has `...` (t = tanh(x) with torch.exp; save what backward "
        "needs; return t, and 1 more): replace each `...` with your code, run that cell, then "
        "this one"
    ), shown


def test_a_notebooks_own_message_is_its_line_and_a_learners_raise_keeps_its_traceback(
    shell: Any, capsys: Any
) -> None:
    """Chapter 7 run before notebook 2 wrote my_value.py: the notebook's own words (a raise
    ``from None`` at a cell's top level), one line; a learner's own raise keeps Python's."""
    cell = _cells("07_names_and_the_next_character")[2].source
    assert "from None" in cell and "import my_value" in cell
    stopped, shown = _run(
        shell, "import importlib\n" + cell.replace("my_value", "my_value_gone"), capsys
    )
    assert isinstance(stopped, ModuleNotFoundError)
    assert shown.strip().startswith("✗ my_value_gone.py is not here: run notebook 2"), shown
    assert "Traceback" not in shown
    stopped, shown = _run(shell, "raise ValueError('my own cell')", capsys)
    assert isinstance(stopped, ValueError) and "Traceback" in shown
