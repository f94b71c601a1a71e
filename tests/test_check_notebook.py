"""The notebooks' own checks of grads (`micrograd.check.notebook`), played in an IPython shell as a
learner's Jupyter runs them (each cell stored in the input history): notebook 2's by-hand
exercise is judged at the lecture's numbers and, run again, at a second point where no input is
0 or 1 (`w2.grad = x2.data` is caught there); a missed chain-rule factor, a sign and a swapped
factor are named in the very words the explorer's Predict mode gives for the same number; a
failed check shows as its diagnosis alone, still an AssertionError (Run all stops, `micrograd
grade` reads it as failed); a right one says so in a ✓ line.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import pytest

from micrograd.engine import Value
from micrograd.playground.explore.explorer import EXAMPLES
from micrograd.playground.views import Tab
from micrograd.viz.formatting import format_number as fmt

IPython = pytest.importorskip("IPython")
jupytext = pytest.importorskip("jupytext")

NB2 = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "02_backpropagation.py"
NEURON = EXAMPLES[0]
assert "neuron with tanh" in NEURON["title"]
SOLUTION = """\
o.grad = 1.0
n.grad = 1 - o.data**2
x1w1x2w2.grad = n.grad
b.grad = n.grad
x1w1.grad = x1w1x2w2.grad
x2w2.grad = x1w1x2w2.grad
x1.grad = w1.data * x1w1.grad
w1.grad = x1.data * x1w1.grad
x2.grad = w2.data * x2w2.grad
w2.grad = x2.data * x2w2.grad
"""
NUMBERS = """\
o.grad = 1.0
n.grad = 0.5
x1w1x2w2.grad = 0.5
b.grad = 0.5
x1w1.grad = 0.5
x2w2.grad = 0.5
x1.grad = -1.5
w1.grad = 1.0
x2.grad = 0.5
w2.grad = 0.0
"""


@pytest.fixture(scope="module")
def shell() -> Any:
    """An IPython shell that has run notebook 2 up to its by-hand exercise."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    nb = jupytext.read(NB2)
    for cell in nb.cells:
        if cell.metadata.get("exercise") == "by_hand":
            break
        if cell.cell_type == "code" and "explore(" not in cell.source:
            result = sh.run_cell(cell.source, store_history=True)
            assert result.success, (cell.source[:200], result.error_in_exec)
    return sh


def by_hand(shell: Any, answer: str, capsys: Any) -> tuple[BaseException | None, str]:
    """The exercise cell with `answer` in it, then its check cell: (what stopped it, output)."""
    nb = jupytext.read(NB2)
    (check,) = [c.source for c in nb.cells if c.metadata.get("checks") == "by_hand"]
    capsys.readouterr()
    assert shell.run_cell(answer, store_history=True).success
    shell.run_cell("x = 3  # a cell of the learner's own in between", store_history=True)
    result = shell.run_cell(check, store_history=True)
    return result.error_in_exec, capsys.readouterr().out


def explorer_says(program: str, name: str, value: float) -> str:
    """The line the explorer's Predict mode gives when `value` is typed for `name`'s grad."""
    tab = Tab()
    tab.call("explorer", "load", {"program": program})
    state = tab.call("explorer", "predict", {"on": True})
    truth = lecture_grads(program)
    while True:
        ask = state["predict"]["ask"]
        if ask is None:
            assert state["phase"] != "done", f"{name} was never asked"
            state = tab.call("explorer", "step", {})
        elif ask["name"] == name:
            feedback = tab.call("explorer", "answer", {"value": value})["predict"]["feedback"]
            assert not feedback["right"], feedback
            return feedback["text"]
        else:
            state = tab.call("explorer", "answer", {"value": truth[ask["name"]]})


def lecture_grads(program: str) -> dict[str, float]:
    """The neuron's grads by micrograd's backward(), at the numbers `program` gives."""
    nums = dict(re.findall(r"(\w+): (?:data|param) = (-?[\d.]+)", program))
    v = {k: Value(float(x)) for k, x in nums.items()}
    v["x1w1"], v["x2w2"] = v["x1"] * v["w1"], v["x2"] * v["w2"]
    v["x1w1x2w2"] = v["x1w1"] + v["x2w2"]
    v["n"] = v["x1w1x2w2"] + v["b"]
    v["o"] = v["n"].tanh()
    v["o"].backward()
    return {k: x.grad for k, x in v.items()}


def second_point_program() -> str:
    """The explorer's neuron at notebook 2's SECOND point."""
    from micrograd.check import notebook  # noqa: F401  (the shell imported it too)

    src = NB2.read_text()
    second = eval(re.search(r"^SECOND = (dict\(.*?\))", src, re.M).group(1))  # noqa: S307
    assert all(x not in (0.0, 1.0) for x in second.values())
    return (
        f"x1: data = {second['x1']}; x2: data = {second['x2']}\n"
        f"w1: param = {second['w1']}; w2: param = {second['w2']}\n"
        f"b: param = {second['b']}\n"
        "x1w1 = x1*w1; x2w2 = x2*w2\nx1w1x2w2 = x1w1 + x2w2\nn = x1w1x2w2 + b\no = tanh(n)\n"
    )


@pytest.mark.parametrize("answer", [SOLUTION, NUMBERS], ids=["products", "numbers"])
def test_a_right_answer_says_so_in_a_line(shell: Any, answer: str, capsys: Any) -> None:
    stopped, out = by_hand(shell, answer, capsys)
    assert stopped is None, out
    assert "✓ n.grad = 0.5" in out
    if answer is SOLUTION:
        assert out.rstrip().endswith(
            "✓ all 10 grads right, at the lecture's numbers and at a second point"
        )
    else:  # numbers cannot be tried again at another point: said, not failed
        assert "checked at the lecture's numbers only" in out
        assert out.rstrip().endswith("✓ all 10 grads right")


def test_w2_grad_equal_to_x2_data_is_caught_at_the_second_point(shell: Any, capsys: Any) -> None:
    wrong = SOLUTION.replace("w2.grad = x2.data * x2w2.grad", "w2.grad = x2.data")
    stopped, out = by_hand(shell, wrong, capsys)
    assert isinstance(stopped, AssertionError), out  # Run all stops; grade reads "failed"
    said = str(stopped)
    assert said.startswith("at a second point (x1 = 1.5000, w1 = -2.5000, x2 = -0.5000,"), said
    assert "w2.grad = -0.5000, but nudging w2 moves o by" in said
    assert explorer_says(second_point_program(), "w2", -0.5) in said
    assert "that is ∂x2w2/∂w2 alone: the chain rule multiplies it by x2w2.grad" in said
    assert "Traceback" not in out and "notebook.py" not in out  # the diagnosis alone


@pytest.mark.parametrize(
    "line, number, words",
    [
        ("x1.grad = w1.data", -3.0, "that is ∂x1w1/∂x1 alone: the chain rule multiplies it"),
        ("x1.grad = -w1.data * x1w1.grad", 1.5, "the size is right but not the sign"),
        ("x1.grad = x1.data * x1w1.grad", 1.0, "∂(x1·w1)/∂x1 is w1, the other factor"),
    ],
    ids=["chain rule", "sign", "swapped factor"],
)
def test_each_mistake_is_named_as_the_explorer_names_it(
    shell: Any, capsys: Any, line: str, number: float, words: str
) -> None:
    stopped, out = by_hand(shell, SOLUTION.replace("x1.grad = w1.data * x1w1.grad", line), capsys)
    assert isinstance(stopped, AssertionError), out
    theirs = explorer_says(NEURON["program"], "x1", number)
    assert theirs.startswith(words)
    nudge = "but nudging x1 moves o by -1.500000 per unit"
    assert str(stopped) == f"x1.grad = {fmt(number)}, {nudge}: {theirs}"
    assert f"✗ x1.grad = {fmt(number)}" in out


def test_a_failed_check_is_one_block_without_the_checkers_traceback(
    shell: Any, capsys: Any
) -> None:
    wrong = SOLUTION.replace("n.grad = 1 - o.data**2", "n.grad = 1 - o.data")
    stopped, out = by_hand(shell, wrong, capsys)
    assert isinstance(stopped, AssertionError)
    assert "Traceback" not in out and "File " not in out and "compare_grads" not in out
    lines = out.rstrip().splitlines()
    # a line per grad, the first wrong one's once: the block the cell stops with, not above it
    assert [ln[:2] for ln in lines] == ["✓ "] + ["✗ "] * 7 + ["✓ "] + ["\x1b["]
    assert "x1.grad = -0.8787" in lines[5] and "it follows from x1w1.grad, which is off" in lines[5]
    assert not [ln for ln in lines[:-1] if "n.grad = 0.2929" in ln]
    block = re.sub(r"\x1b\[[0-9;]*m", "", lines[-1])  # the one block the cell stops with
    assert block == f"✗ {stopped}" and block.endswith("(and 7 more, above)")
    assert block.startswith("✗ n.grad = 0.2929, but nudging n moves o by 0.500000 per unit")


def test_an_assert_inside_a_function_keeps_its_traceback(shell: Any, capsys: Any) -> None:
    capsys.readouterr()
    shell.run_cell("def mine():\n    assert 1 == 2, 'my own'\nmine()", store_history=True)
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "Traceback (most recent call last)" in out and "----> 2" in out, out
    assert out.rstrip().endswith("AssertionError: my own")


class PlusTimes:
    """Notebook 1's Value: + and * only, no backward() yet."""

    def __init__(self, data: float, _children: tuple = (), _op: str = "", label: str = "") -> None:
        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op
        self.label = label

    def __add__(self, other: PlusTimes) -> PlusTimes:
        return PlusTimes(self.data + other.data, (self, other), "+")

    def __mul__(self, other: PlusTimes) -> PlusTimes:
        return PlusTimes(self.data * other.data, (self, other), "*")


def test_an_all_good_report_names_only_what_the_notebook_asked_for() -> None:
    from micrograd import check

    everything = check(PlusTimes)
    assert everything.ok and len(everything.missing) == 4 and not everything.later
    report = check(PlusTimes, asked="+ *")
    assert report.ok and report.missing == [], str(report)
    text = str(report)
    assert "not implemented yet" not in text and "not implemented yet" not in report._repr_html_()
    (later,) = [ln for ln in text.splitlines() if "later" in ln]
    assert later.startswith("  … for later notebooks (not asked for yet): backward(), 2.0 + a")
    assert [ln for ln in text.splitlines() if ln.startswith("  ✓")][1:] == [
        "  ✓ +: a + b, value at 3 points",
        "  ✓ *: a * b, value at 3 points",
    ]
    # what was asked for and is missing is still named
    assert "tanh" in " ".join(check(PlusTimes, asked="+ * tanh").missing)


def test_the_notebooks_ask_check_for_what_their_exercises_wrote() -> None:
    nb1 = (NB2.parent / "01_derivatives_and_value.py").read_text()
    assert 'check(Value, asked="+ *")' in nb1
    assert 'check(Value, asked="+ * tanh backward")' in NB2.read_text()
