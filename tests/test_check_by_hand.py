"""`check()` on a Value with each op's `_backward` but no `backward()` yet (notebook 2's learner
after the ops exercise): each closure is run by hand, as the lecture does before `backward()`
exists (``out.grad = ...; out._backward()``), and judged. The truth is micrograd's own gradients
(themselves checked against PyTorch): an input's grad after ``out._backward()`` must be what it
was plus the local derivative times out.grad."""

from __future__ import annotations

import re

import pytest

from micrograd import check
from micrograd.check.by_hand import BY_HAND, START
from micrograd.check.table import UPSTREAM

from .support.lecture_code import LECTURE_VALUE

# The lecture's Value as it stands before backward(): every op and its closure, no backward().
BEFORE_BACKWARD = LECTURE_VALUE.split("\n  def backward(self):")[0] + "\n"
assert "def exp(self):" in BEFORE_BACKWARD and "def backward" not in BEFORE_BACKWARD


def _value(source: str) -> type:
    ns: dict = {}
    exec(compile("import math\n" + source, "<learner>", "exec"), ns)
    return ns["Value"]


def _assigning(op_line: str) -> str:
    """The lecture's Value before backward(), with one closure's += made =."""
    assert BEFORE_BACKWARD.count(op_line) == 1, op_line
    return BEFORE_BACKWARD.replace(op_line, op_line.replace("+=", "=", 1))


def test_the_lectures_closures_pass_by_hand() -> None:
    report = check(_value(BEFORE_BACKWARD))
    assert report.ok and report.problems == [], str(report)
    assert BY_HAND in report.missing
    by_hand = [p for p in report.passed if "_backward by hand" in p]
    for op in ("+: a + b", "*: a * b", "a ** 2", "a.tanh()", "a.exp()"):
        assert any(op in p for p in by_hand), (op, by_hand)


@pytest.mark.parametrize(
    ("line", "op", "expr"),
    [
        ("      self.grad += 1.0 * out.grad", "+", "a + b"),
        ("      other.grad += self.data * out.grad", "*", "a * b"),
        ("      self.grad += (1 - t**2) * out.grad", "tanh", "a.tanh()"),
        ("      self.grad += out.data * out.grad", "exp", "a.exp()"),
    ],
)
def test_an_assigning_closure_is_named_without_backward(line: str, op: str, expr: str) -> None:
    report = check(_value(_assigning(line)))
    assert not report.ok
    ours = [p for p in report.problems if p.startswith(f"{op}: for out = {expr}")]
    assert len(ours) == 1, str(report)
    assert re.search(
        r"— does _backward assign \(=\) instead of accumulating \(\+=\)\? A node used "
        r"twice, as in (\w) \+ \1, needs both contributions added$",
        ours[0],
    ), ours[0]
    # the numbers it quotes are the truth: START + local * UPSTREAM expected, local * UPSTREAM got
    m = re.search(
        r"(\w)\.grad = ([-\d.e]+) and out\.grad = ([-\d.e]+) before out\._backward\(\): "
        r"\w\.grad is ([-\d.e]+) after it, expected ([-\d.e]+)",
        ours[0],
    )
    assert m, ours[0]
    start, upstream, got, want = map(float, m.groups()[1:])
    assert (start, upstream) == (START, UPSTREAM)
    assert got == pytest.approx(want - START)


def test_before_this_check_an_assigning_add_was_all_good() -> None:
    """The issue's defect: the same class used to get 'all good … only forward values'."""
    report = check(_value(_assigning("      self.grad += 1.0 * out.grad")))
    assert "only forward values are checked" not in " ".join(report.missing)
    assert not report.ok


def test_a_wrong_local_derivative_is_named_without_backward() -> None:
    wrong = BEFORE_BACKWARD.replace(
        "      other.grad += self.data * out.grad", "      other.grad += other.data * out.grad"
    )
    report = check(_value(wrong))
    problems = [p for p in report.problems if p.startswith("*: for out = a * b")]
    assert len(problems) == 1 and "out._backward() gives b.grad" in problems[0], str(report)


def test_a_class_with_backward_is_checked_as_before() -> None:
    report = check(_value(LECTURE_VALUE))
    assert report.ok and BY_HAND not in report.missing
    assert not [p for p in report.passed if "_backward by hand" in p]
