"""How the checker reads and writes the learner's numbers: `number` (a float, or None for what
is not a real number), `close` (equal to the checker's own up to the last digits), `fmt` (a
float as short as it reads), `describe` (a number, or what the object is instead) and
`repr_text` (any object in at most MAX_TEXT characters, even one whose ``__repr__`` crashes).
"""

from __future__ import annotations

import math
import numbers

REL_TOL, ABS_TOL = 1e-9, 1e-12  # a tanh built from exp differs from math.tanh in the last digits
MAX_TEXT = 100  # the longest repr of a learner's object shown in a problem


def repr_text(obj: object) -> str:
    try:
        text = repr(obj)
    except Exception:
        text = f"<{type(obj).__name__} whose __repr__ crashed>"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def fmt(x: float) -> str:
    text = repr(x)
    return text if len(text) <= 12 else f"{x:.10g}"


def number(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    try:
        return float(x)
    except (OverflowError, ValueError):
        return None


def close(got: float | None, want: float) -> bool:
    if got is None:
        return False
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def describe(x: object) -> str:
    n = number(x)
    return fmt(n) if n is not None else f"{repr_text(x)} (not a number)"
