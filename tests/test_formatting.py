"""One number formatter, `micrograd.viz.formatting.format_number`, and its JavaScript mirror `fmt`
in the playground's static/common.js: the same text for the same number, and lines whose arithmetic
visibly holds."""

from __future__ import annotations

import math
import pathlib
import random
import struct
from typing import Any

import pytest

from micrograd.viz.formatting import format_number

COMMON_JS = pathlib.Path(__file__).resolve().parents[1] / "micrograd/playground/static/common.js"


@pytest.mark.parametrize(
    "x, text",
    [
        (-8.0, "-8.0000"),  # the lecture's numbers keep their look
        (6.0, "6.0000"),
        (0.7071067811865476, "0.7071"),
        (0.5, "0.5000"),
        (0.0, "0.0000"),
        (-0.0, "-0.0000"),
        (0.012345678, "0.01235"),  # never fewer than 4 significant digits
        (0.00012, "0.0001200"),
        (2.4577e-5, "2.4577e-5"),  # exponent form below 1e-4 ...
        (2e-6, "2.0000e-6"),
        (-1e-230, "-1.0000e-230"),
        (1e12, "1.0000e+12"),  # ... and from 1e12 up
        (123456.789, "123456.7890"),
        (9.99996e-5, "1.0000e-4"),  # rounding up to the next power of ten
        (1.03125, "1.0313"),  # an exact tie rounds away from zero (as JavaScript does)
        (-1.03125, "-1.0313"),
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
    ],
)
def test_format_number(x: float, text: str) -> None:
    assert format_number(x) == text


def _holds(a: float, b: float) -> bool:
    """a × b = c read off the shown digits agrees with the shown c up to its last digit (4
    significant digits at least: 1e-3)."""
    shown = [float(format_number(v)) for v in (a, b, a * b)]
    return math.isclose(shown[0] * shown[1], shown[2], rel_tol=1e-3)


@pytest.mark.parametrize(
    "a, b",
    [
        (3.0, 1 - math.tanh(6.0) ** 2),  # a = 2; b = 3a; c = tanh(b): a.grad = 3 × b.grad
        (3.0, 0.00012),  # 4 fixed decimals would show 3.0000 × 0.0001 → 0.0004
        (-2.0, 0.0123456),
        (1e-6, 1e-6),  # x = 1e-6; y = x*x
        (0.7071, 0.5),
    ],
)
def test_a_chain_rule_line_visibly_holds(a: float, b: float) -> None:
    assert _holds(a, b), [format_number(v) for v in (a, b, a * b)]


def _numbers() -> list[float]:
    rng = random.Random(20261124)
    xs = [
        0.0,
        -0.0,
        1.03125,
        -1.03125,
        0.1,
        0.01,
        0.001,
        1e-4,
        1e12,
        9.99996e-5,
        0.099999,
        0.0099999,
        5e-324,
        1.7976931348623157e308,
        -2.5,
        0.5,
        0.00125,
        1e-4 * (1 - 2**-52),
    ]
    for _ in range(300):  # spread over every size the formatter has a branch for
        xs.append(rng.choice([-1, 1]) * 10 ** rng.uniform(-8, 14))
    for _ in range(100):  # halfway cases: short binary fractions, exact ties at 4-7 decimals
        xs.append(rng.randint(-(10**6), 10**6) / 2 ** rng.randint(1, 12))
    for _ in range(100):  # any bit pattern that is a finite double
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(x):
            xs.append(x)
    return xs


def test_python_and_the_pages_javascript_format_alike(page: Any) -> None:
    page.set_content("<!doctype html><title>fmt</title>")
    # common.js is an ES module: its own text, run as one, hands its fmt to the page
    page.add_script_tag(
        content=COMMON_JS.read_text(encoding="utf-8") + "\nwindow.fmt = fmt;\n", type="module"
    )
    page.wait_for_function("typeof window.fmt === 'function'")
    xs = _numbers()
    # JSON has no NaN or infinities: those go as the strings the server sends, and as numbers
    # built in the page
    js = page.evaluate("xs => xs.map(fmt)", xs)
    special = page.evaluate("[fmt(NaN), fmt(Infinity), fmt(-Infinity), fmt('nan')]")
    mismatches = [(x, p, j) for x, p, j in zip(xs, map(format_number, xs), js) if p != j]
    assert not mismatches, mismatches[:10]
    assert special == ["nan", "inf", "-inf", "nan"]
