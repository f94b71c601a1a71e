"""How micrograd shows a number to a person: `format_number`, one rule for every picture, text
view and page (the playground's JavaScript `fmt` in static/common.js is its exact mirror, and
tests/test_formatting.py runs both on the same numbers).

The rule: 4 decimals, as the lecture prints (``data -8.0000``, ``grad 0.5000``), but never fewer
than 4 significant digits, so that a chain-rule line's arithmetic visibly holds (``3.0000 ×
0.0001200 → 0.0003600``, not ``3.0000 × 0.0001 → 0.0004``); exponent form (``2.4577e-5``,
``1.0000e+12``) below 1e-4 and from 1e12 up, where decimals would be a wall of digits or show a
nonzero as zero. NaN and infinities as words (``nan``, ``inf``, ``-inf``). Rounding is half away
from zero on the exact binary value, as JavaScript's toFixed and toExponential do, so both sides
print the same digits.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

# Decimals by size, for 4 significant digits at least: compared with the same double constants in
# JavaScript, so both sides pick the same count (no log10, whose last bit may differ).
_DECIMALS = ((0.1, 4), (0.01, 5), (0.001, 6), (1e-4, 7))


def format_number(x: float) -> str:
    """`x` as micrograd shows it: see the module's docstring."""
    x = float(x)
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    size = abs(x)
    if size == 0:
        return "-0.0000" if math.copysign(1.0, x) < 0 else "0.0000"
    if size >= 1e12 or size < 1e-4:
        return _exponent(x)
    return _fixed(x, next(d for limit, d in _DECIMALS if size >= limit))


def _fixed(x: float, decimals: int) -> str:
    # Decimal(x) is the double's exact value: the rounding is decided on it, not on a shorter repr.
    q = Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{q:f}"


def _exponent(x: float) -> str:
    d = Decimal(x)
    e = d.adjusted()  # the exponent of the first significant digit
    m = d.scaleb(-e).quantize(Decimal("1.0000"), rounding=ROUND_HALF_UP)
    if abs(m) >= 10:  # 9.99996e-5 rounds up to 10.0000e-5: one more power of ten
        e += 1
        m = d.scaleb(-e).quantize(Decimal("1.0000"), rounding=ROUND_HALF_UP)
    return f"{m:f}e{'+' if e >= 0 else '-'}{abs(e)}"


def reads_as_number(text: str) -> bool:
    """Whether a formula's text is a plain number ("1", "-3.0000"): a chain-rule line then
    shows the number alone, not "formula = number"."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def json_float(x: float) -> float | str:
    """A float for a JSON answer: NaN and infinities (not JSON) as 'nan', 'inf', '-inf'."""
    return x if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))
