"""Numbers: the policy every op follows, and the functions the derivative rules call on floats.

The policy. Finite numbers in give a finite number out, or an error that names the op you wrote
(`OverflowError`, and the domain errors the ops raise themselves: `ValueError`,
`ZeroDivisionError`). NaN and ±inf that you put in propagate, as in PyTorch. Derivatives may be
±inf, as in PyTorch: while `grad(create_graph=True)` builds derivative nodes (`DERIVATIVES.active`),
every op computes as IEEE floating point does and raises nothing.

The functions. An op's rules are written once, for an array module `xp` (`xp.exp(a)`,
``xp.where(a > 0, 1.0, 0.0)``), and run on numpy arrays for `micrograd.jit` and on plain floats
for the eager engine. `NATIVE` holds the float versions of what numpy offers, with numpy's
IEEE answers where `math` would raise (``exp(1000.0)`` is inf, ``log(-1.0)`` NaN).

`tanh(xp, x)` is tanh correctly rounded, computed from IEEE ``+ - * /`` alone: the same bits on
floats and on numpy arrays (libm's and numpy's own tanh each miss the nearest float in about a
fifth of the cases, and not in the same ones), exact ±1 from |x| > 19.1 on, stable at ±1e308.
"""

from __future__ import annotations

import math
import numbers
import threading
from types import SimpleNamespace
from typing import Any

FLOAT_MAX = 1.7976931348623157e308  # the largest float: past it, a result overflows to inf
FLOAT_MAX_TEXT = "max ~1.8e308"


class _Derivatives(threading.local):
    active = False  # True while grad(create_graph=True) builds derivative nodes (in this thread)


DERIVATIVES = _Derivatives()


# ------------------------------------------------------------------------------- the policy


def as_float(data: object, what: str = "Value", left: object = None) -> float:
    """The float for a real number; a clear TypeError for anything else. `left` is the left
    operand when `data` is the other operand of a binary op `what`, for the message."""
    if type(data) is float:
        return data
    if isinstance(data, float):  # a subclass (numpy.float64)
        return float(data)
    if hasattr(data, "_prev") and hasattr(data, "data"):  # a Value
        raise TypeError(
            f"{what} needs a plain number, got a Value ({data!r}); use it directly, "
            f"or pass its .data to copy the number"
        )
    if isinstance(data, bool) or not isinstance(data, numbers.Real):
        if left is not None:
            raise TypeError(
                f"unsupported operand for {what}: {left!r} {what} {type(data).__name__} "
                f"{data!r} (micrograd works with Values and real numbers)"
            )
        raise TypeError(
            f"{what} needs a real number (int, float, Fraction, numpy scalar), "
            f"got {type(data).__name__} {data!r}"
        )
    try:
        return float(data)
    except OverflowError:
        if left is not None:
            what = f"the operand of {what}"
        raise OverflowError(too_large(data, what)) from None


class Scalar:
    """What a PyTorch user types to read a Value's number (Value's base, beside Node): float(v)
    and v.item() give `data`; v < w, v <= 1, v > w, 2 >= v compare the numbers and give a bool.
    No node is made. But == stays identity, as the hash does (a graph keeps its Values in sets
    and dicts): compare ``v.data == w.data``. Under jit these are reads of `.data` by your
    program: a comparison is a decision checked per sample, float(v) is refused."""

    __slots__ = ()
    data: Any

    def item(self) -> float:
        return float(self.data)

    def __float__(self) -> float:
        return float(self.data)

    def __lt__(self, other: object) -> bool:
        return self.data < number_of(other, "<", self)  # type: ignore[no-any-return]

    def __le__(self, other: object) -> bool:
        return self.data <= number_of(other, "<=", self)  # type: ignore[no-any-return]

    def __gt__(self, other: object) -> bool:
        return self.data > number_of(other, ">", self)  # type: ignore[no-any-return]

    def __ge__(self, other: object) -> bool:
        return self.data >= number_of(other, ">=", self)  # type: ignore[no-any-return]


def number_of(x: object, what: str, left: object) -> float:
    """The number of a Value (its data) or of a plain number, for a comparison `what` (v > 1)."""
    if hasattr(x, "_prev") and hasattr(x, "data"):
        return x.data  # type: ignore[no-any-return]
    return as_float(x, what, left)


def too_large(x: object, what: str) -> str:
    # Its size, not repr(x): an int of more than 4,300 digits cannot even be printed.
    digits = int(abs(int(x)).bit_length() * 0.30103) + 1  # type: ignore[call-overload]
    sign = "-" if x < 0 else ""  # type: ignore[operator]
    return (
        f"{what}: got a {digits}-digit {type(x).__name__} (about {sign}1e{digits - 1}), too large "
        f"for a float (micrograd computes in float64, {FLOAT_MAX_TEXT})"
    )


def check_overflow(what: str, out: float, *inputs: float) -> None:
    """`out`, the result of `what` on `inputs`, is NaN or ±inf: an OverflowError if every input
    was finite (finite in, finite out or an error), unless derivative nodes are being built (they
    may be ±inf, as in PyTorch); a NaN or inf put in propagates."""
    if DERIVATIVES.active or -FLOAT_MAX <= out <= FLOAT_MAX:
        return
    if all(map(math.isfinite, inputs)):
        raise OverflowError(f"{what} overflows a float ({FLOAT_MAX_TEXT})")


def pow_forward(a: float, p: float) -> float:
    """a ** p, with an error naming pow where the result is undefined or too large (IEEE
    values while derivative nodes are built)."""
    if DERIVATIVES.active:
        return ieee_pow(a, p)
    if a < 0 and not p.is_integer() and p == p:  # (NaN is no integer, but propagates)
        raise ValueError(
            f"pow: {a!r} ** {p!r} is not a real number (a negative base needs an integer exponent)"
        )
    if a == 0 and p < 0:
        raise ZeroDivisionError(f"pow: {a!r} ** {p!r} (zero to a negative power) is undefined")
    try:
        return a**p
    except OverflowError:  # Python raises it only for finite operands
        raise OverflowError(f"pow: {a!r} ** {p!r} overflows a float ({FLOAT_MAX_TEXT})") from None


def ieee_pow(a: float, q: float) -> float:
    """a ** q as IEEE floating point gives it (and numpy): ±inf at zero and on overflow, NaN for
    a negative base to a non-integer power; never an error."""
    try:
        out = a**q
    except ZeroDivisionError:  # zero to a negative power: +inf, or -inf for -0.0 ** odd
        odd = float(q).is_integer() and q % 2 == 1
        return math.copysign(math.inf, a) if odd else math.inf
    except OverflowError:  # |a| > 1: the sign of a survives only odd integer powers
        odd = float(q).is_integer() and q % 2 == 1
        return math.copysign(math.inf, a if odd else 1.0)
    return math.nan if type(out) is complex else out


# ------------------------------------------------------------------------------- float functions


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan  # (NaN stays NaN)


def _log1p(x: float) -> float:
    if x > -1:
        return math.log1p(x)
    return -math.inf if x == -1 else math.nan


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def _maximum(a: float, b: float) -> float:
    return a if a > b or a != a else b  # a NaN wins, as numpy's


def _minimum(a: float, b: float) -> float:
    return a if a < b or a != a else b


# The float versions of the numpy functions a rule may call (numpy's names and answers).
NATIVE: dict[str, Any] = {
    "where": lambda c, a, b: a if c else b,
    "exp": _exp,
    "log": _log,
    "log1p": _log1p,
    "power": ieee_pow,
    "sqrt": _sqrt,
    "maximum": _maximum,
    "minimum": _minimum,
    "abs": abs,
    "sign": lambda x: 1.0 if x > 0 else -1.0 if x < 0 else x,  # (±0 and NaN are their own)
    "floor": lambda x: float(math.floor(x)),
    "copysign": math.copysign,
    "take": lambda table, i: table[int(i)],
}


# ------------------------------------------------------------------------------- tanh
# tanh(y) = (E - 1)/(E + 1) with E = e^2y, in double-double arithmetic (a number as an unevaluated
# sum hi + lo, ~106 bits) from IEEE + - * / alone: a relative error below 2^-75, so rounding
# hi + lo once gives the nearest float. E: 2y = k ln2/256 + r with |r| <= ln2/512, so E =
# T[k] e^r, with T[k] = 2^(k/256) from a table (as hi + lo, hi of 26 bits so that hi * x splits
# exactly into two floats) and e^r - 1 from its series. Dekker's products and Knuth's sums are
# written out in place (a function call would cost more than the arithmetic, on floats).

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's split of a float into halves of 26 bits
_LN2_256_HI = float.fromhex("0x1.62e42fefa0000p-9")  # ln2/256 to 38 bits: k * it is exact
_LN2_256_LO = float.fromhex("0x1.cf79abc9e3b3ap-48")  # the rest of ln2/256
_INV_LN2_256 = float.fromhex("0x1.71547652b82fep+8")  # 256/ln2
_ROOT_HI = float.fromhex("0x1.00b1afa5abcbfp+0")  # 2^(1/256) as hi + lo
_ROOT_LO = float.fromhex("-0x1.4f6b2a7609f71p-55")
_LAST = 19.1  # tanh(y) rounds to 1 from here on: 1 - tanh(19.1) < 2^-54
_TABLES: tuple[list[float], list[float]] | None = None  # built on first use


def tables() -> tuple[list[float], list[float]]:
    """tanh's table: 2^(k/256) as hi (26 bits) + lo, for k up to 2*19.1*256/ln2."""
    global _TABLES
    if _TABLES is None:
        his, los, h, lo = [], [], 1.0, 0.0
        for _ in range(256):  # 2^(j/256) = 2^((j-1)/256) * 2^(1/256), each product exact
            t = _SPLIT * h
            hi = t - (t - h)  # the leading 26 bits
            his.append(hi)
            los.append((h - hi) + lo)
            p = h * _ROOT_HI  # h * 2^(1/256) as p + e, exactly (Dekker's product)
            t = _SPLIT * _ROOT_HI
            rh = t - (t - _ROOT_HI)
            e = ((hi * rh - p) + hi * (_ROOT_HI - rh) + (h - hi) * rh) + (h - hi) * (_ROOT_HI - rh)
            h2 = p + (e + (h * _ROOT_LO + lo * _ROOT_HI))
            h, lo = h2, (e + (h * _ROOT_LO + lo * _ROOT_HI)) - (h2 - p)
        last = int(2 * _LAST * _INV_LN2_256 + 1.5)  # 2^(k/256) = 2^m 2^(j/256), exactly
        _TABLES = (
            [his[k % 256] * 2.0 ** (k // 256) for k in range(last)],
            [los[k % 256] * 2.0 ** (k // 256) for k in range(last)],
        )
    return _TABLES


def tanh(xp: Any, x: Any) -> Any:
    """tanh(x) correctly rounded, for floats or arrays: `xp` is the array module (`NATIVE` for
    floats, numpy); only + - * / and exact operations (floor, a table lookup) are used."""
    hi_table, lo_table = tables()
    y = xp.abs(x)
    y = xp.where(y <= _LAST, y, _LAST)  # (NaN too: it is put back at the end)
    z = y + y
    k = xp.floor(z * _INV_LN2_256 + 0.5)
    rh = z - k * _LN2_256_HI  # r = z - k ln2/256 = rh + rl, exactly
    rl = -(k * _LN2_256_LO)
    s = rh + rl
    v = s - rh
    rh, rl = s, (rh - (s - v)) + (rl - v)
    # e^r - 1 = r + r²/2 + r³/6 + ...: r and r² exactly, the rest (< 5e-10) in plain floats
    t = _SPLIT * rh
    h = t - (t - rh)
    low = rh - h
    sq = rh * rh
    sq_lo = ((h * h - sq) + 2.0 * h * low) + low * low
    rest = rh * sq * (1 / 6 + rh * (1 / 24 + rh * (1 / 120 + rh * (1 / 720))))
    half = sq * 0.5
    ph = rh + half
    pl = (half - (ph - rh)) + (rl + (sq_lo * 0.5 + (rh * rl + rest)))
    s = ph + pl
    ph, pl = s, pl - (s - ph)
    # E = T e^r = th + th*ph + (tl + tl*ph + th*pl), th*ph exactly as th*p1 + th*(ph - p1)
    th, tl = xp.take(hi_table, k), xp.take(lo_table, k)
    t = _SPLIT * ph
    p1 = t - (t - ph)
    a = th * p1
    fh = th + a
    fl = (a - (fh - th)) + (th * (ph - p1) + (tl + (tl * ph + th * pl)))
    s = fh + fl
    fh, fl = s, fl - (s - fh)
    # (E - 1)/(E + 1), E >= 1: numerator and denominator as hi + lo, then one division whose
    # remainder is computed exactly (Dekker's product q * dh)
    nh = fh - 1.0
    nl = (-1.0 - (nh - fh)) + fl
    dh = fh + 1.0
    dl = (1.0 - (dh - fh)) + fl
    q = nh / dh
    a = q * dh
    t = _SPLIT * q
    qh = t - (t - q)
    t = _SPLIT * dh
    d1 = t - (t - dh)
    b = ((qh * d1 - a) + qh * (dh - d1) + (q - qh) * d1) + (q - qh) * (dh - d1)
    t = q + (((nh - a) - b) + nl - q * dl) / dh
    t = xp.where(y < 7.450580596923828e-09, y, t)  # below 2^-27 tanh(y) rounds to y itself
    return xp.where(x == x, xp.copysign(t, x), x)  # odd, and NaN stays NaN


def sigmoid(xp: Any, x: Any) -> Any:
    """1/(1 + e^-x) for floats or arrays, never e^x of a large x: stable at ±1e308."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


NATIVE["tanh"] = lambda x: tanh(NATIVE_MODULE, x)


NATIVE_MODULE: Any = SimpleNamespace(**NATIVE)  # `NATIVE` as a module: NATIVE_MODULE.exp(x)
