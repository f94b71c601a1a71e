"""The explorer's nudge, (L(a + h) - L(a)) / h, where the floats are far apart (issue 33): at
a = 1e15 the lecture's h = 0.001 is below the float spacing (0.125), and the nudge showed
(5999999999999980 - 5999999999999980)/0.001 = 0 beside a.grad 6. It now picks an h the spacing
allows, and says why; where h cannot move L at all, it says that. Truth: the slope by hand."""

from __future__ import annotations

import math

import pytest

from micrograd.playground.explore.explorer import EXAMPLES, NUDGE_H, nudge_h
from micrograd.playground.views import Tab

LECTURE_L = EXAMPLES[1]["program"]


def set_leaf(program: str, name: str, value: float) -> dict:
    tab = Tab()
    state = tab.call("explorer", "load", {"program": program})
    node = next(n["id"] for n in state["drawing"]["nodes"] if n.get("name") == name)
    return tab.call("explorer", "set", {"node": node, "value": value})


@pytest.mark.parametrize("a", [2.0, -3.5, 1e6, 1e12, 1e15, -1e15])
def test_the_nudge_picks_an_h_the_floats_allow_and_finds_the_slope(a: float) -> None:
    nudge = set_leaf(LECTURE_L, "a", a)["nudge"]
    h = nudge["h"]
    assert abs((a + h) - a - h) <= 1e-3 * h  # h survives the addition, to 0.1%
    assert h == NUDGE_H or h >= 1000 * math.ulp(a)
    # L = (a*b + c)*f with b = -3, f = -2: a slope of 6 everywhere
    assert nudge["slope"] == pytest.approx(6.0, rel=1e-6)
    assert nudge["compare"] == "a.grad = 6.0000 (backprop)"
    if abs(a) < 1e12:
        assert h == NUDGE_H and nudge["why"] == ""  # the lecture's h wherever it works
    else:
        assert nudge["why"].startswith(f"h = {h:g}, not the lecture's 0.001: near a = ")
        assert f"floats are {math.ulp(a):g} apart" in nudge["why"]


def test_where_h_cannot_move_the_output_the_nudge_says_so() -> None:
    # a tiny a whose L is huge: L + 6·h is L again in floats
    nudge = set_leaf("a = 1.0; k = 1e15\nL = a*1e-9 + k*30", "a", 1.0)["nudge"]
    assert nudge["slope"] == 0.0
    assert "in floats: near L = " in nudge["why"] and "cannot see the slope here" in nudge["why"]


def test_nudge_h_is_the_lectures_below_a_billion() -> None:
    assert nudge_h(0.0) == nudge_h(1.0) == nudge_h(-1e9) == NUDGE_H
    assert nudge_h(1e15) == 1000.0
