"""A derivative rule run on names: the text pictures and the playground show for each op.

An op's rule (`registry.OpInfo.local`) is written for an array module `xp`; run here on names
instead of numbers it gives the local derivatives as text: tanh's rule reads ``1 - o²`` at a
node `o`, and ``d/da = 1 - out²`` in words. At a node, each name also carries
its number, so a ``where(cond, a, b)`` picks the case the node is in and says so: a ReLU whose
input n is positive has the slope ``1 (n > 0)``.

`WORDS` holds the pictures' words for the ops whose name and rule do not say it all.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .floats import ieee_pow


class Words(NamedTuple):
    caption: str  # a node's box in the pictures reads this, not the op's name
    rule: str  # its rule in words: a rule of any number of children cannot be run on a, b


# The pictures' words, keyed by op name, for each op of any number of children (a fused neuron
# reads better as what it computes); tests/test_op_tables.py holds it to the registry.
WORDS: dict[str, Words] = {
    "dot": Words("w·x+b", "d/dw_i = x_i, d/dx_i = w_i, d/db = 1"),  # children (*w, *x, b)
    "sum": Words("Σ", "d/da_i = 1"),
}

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_NEGATED = {"<": "≥", "≤": ">", ">": "≤", "≥": "<", "=": "≠", "≠": "="}
_COMPARE = {
    "<": operator.lt,
    "≤": operator.le,
    ">": operator.gt,
    "≥": operator.ge,
    "=": operator.eq,
    "≠": operator.ne,
}


def floats_text(x: float) -> str:
    """A number as a formula shows it: 2 (not 2.0), 0.5, NaN."""
    if x != x:
        return "NaN"
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def _power_text(base: str, q: float) -> str:
    """base^q, as a learner writes it: x, x², x⁻¹, x^0.5."""
    if float(q).is_integer() and abs(q) < 100:
        return base + str(int(q)).translate(_SUPERSCRIPT)
    return f"{base}^{floats_text(q)}"


class _Name:
    """A local derivative as text, made by running an op's rule on names instead of numbers:
    ``out * (1.0 - out)`` gives 'out·(1 - out)'. `level` is how tightly the text binds (0: an
    if/else, 1: a sum, 2: a product, 3: a power, 4: a name or number), for parentheses; `value`
    is its number at the node being explained (None for the formula in words), which picks the
    case of a `where`; `cases` are the conditions that held there, shown after the text."""

    __slots__ = ("text", "level", "value", "cases")

    def __init__(self, text: str, level: int = 4, value: Any = None, cases: tuple = ()) -> None:
        self.text, self.level, self.value, self.cases = text, level, value, cases

    @staticmethod
    def of(x: Any) -> _Name:
        if isinstance(x, _Name):
            return x
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise TypeError(f"a local rule made {type(x).__name__} {x!r}, not a number")
        return _Name(floats_text(x), 4 if x >= 0 or x != x else 2, float(x))  # -1·x, a·(-1)

    def at(self, level: int) -> str:
        return self.text if self.level >= level else f"({self.text})"

    def shown(self) -> str:
        return f"{self.text} ({', '.join(self.cases)})" if self.cases else self.text

    def _with(self, other: Any, text: str, level: int, value: Callable[[Any, Any], Any]) -> _Name:
        o = _Name.of(other)
        known = self.value is not None and o.value is not None
        return _Name(
            text,
            level,
            _ieee(value, self.value, o.value) if known else None,
            self.cases + tuple(c for c in o.cases if c not in self.cases),
        )

    def __add__(self, o: Any) -> _Name:
        n = _Name.of(o)
        return self._with(n, f"{self.at(1)} + {n.at(2)}", 1, lambda a, b: a + b)

    def __radd__(self, o: Any) -> _Name:
        return _Name.of(o) + self

    def __sub__(self, o: Any) -> _Name:
        n = _Name.of(o)
        return self._with(n, f"{self.at(1)} - {n.at(2)}", 1, lambda a, b: a - b)

    def __rsub__(self, o: Any) -> _Name:
        return _Name.of(o) - self

    def __mul__(self, o: Any) -> _Name:
        n = _Name.of(o)
        if n.text == "1" or self.text == "1":  # 1·x reads x
            keep = self if n.text == "1" else n
            return self._with(n, keep.text, keep.level, lambda a, b: a * b)
        if o is self:  # x * x reads x²
            return self._with(n, _power_text(self.at(4), 2), 3, lambda a, b: a * b)
        return self._with(n, f"{self.at(2)}·{n.at(3)}", 2, lambda a, b: a * b)

    def __rmul__(self, o: Any) -> _Name:
        return _Name.of(o) * self

    def __truediv__(self, o: Any) -> _Name:
        n = _Name.of(o)
        return self._with(n, f"{self.at(2)}/{n.at(3)}", 2, lambda a, b: a / b)

    def __rtruediv__(self, o: Any) -> _Name:
        return _Name.of(o) / self

    def __neg__(self) -> _Name:
        return _Name(f"-{self.at(3)}", 1, None if self.value is None else -self.value, self.cases)

    def _compare(self, symbol: str, o: Any) -> _Condition:
        n = _Name.of(o)
        return _Condition(
            f"{self.at(1)} {symbol} {n.at(1)}",
            symbol,
            self.value,
            n.value,
            f"{self.at(1)} {_NEGATED[symbol]} {n.at(1)}",
        )

    def __lt__(self, o: Any) -> _Condition:
        return self._compare("<", o)

    def __le__(self, o: Any) -> _Condition:
        return self._compare("≤", o)

    def __gt__(self, o: Any) -> _Condition:
        return self._compare(">", o)

    def __ge__(self, o: Any) -> _Condition:
        return self._compare("≥", o)

    def __eq__(self, o: Any) -> _Condition:  # type: ignore[override]
        return self._compare("=", o)

    def __ne__(self, o: Any) -> _Condition:  # type: ignore[override]
        return self._compare("≠", o)

    __hash__ = None  # type: ignore[assignment]


def _ieee(f: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    try:
        return f(a, b)
    except ZeroDivisionError:
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1, b)
    except OverflowError:
        return math.inf


class _Condition:
    """A comparison in a rule run on names: its text, and (at a node) whether it holds."""

    def __init__(self, text: str, symbol: str, a: Any, b: Any, negated: str) -> None:
        self.text, self.negated = text, negated
        known = a is not None and b is not None
        self.value = _COMPARE[symbol](a, b) if known else None
        self.negation = _COMPARE[_NEGATED[symbol]](a, b) if known else None
        self.equality = symbol == "="


class _OnNames:
    """The `xp` of rules run on names: each function gives its text (and, at a node, its value
    by the float module `values`)."""

    def __init__(self, values: Any = None) -> None:
        self.values = values

    @staticmethod
    def where(c: Any, a: Any, b: Any) -> _Name:
        if isinstance(c, bool):
            return _Name.of(a if c else b)
        a, b = _Name.of(a), _Name.of(b)
        if c.value is None:  # the formula in words: both cases
            return _Name(f"{a.at(1)} if {c.text} else {b.at(1)}", 0)
        chosen = a if c.value else b
        if chosen.cases:  # an inner where already said which case
            return chosen
        why = c.text if c.value else (c.negated if c.negation and not c.equality else "")
        return _Name(chosen.text, chosen.level, chosen.value, (why,) if why else ())

    @staticmethod
    def power(a: Any, q: Any) -> _Name:
        a = _Name.of(a)
        if isinstance(q, _Name):  # a name as the exponent: b (a Value), or p in words
            known = a.value is not None and q.value is not None
            return _Name(
                f"{a.at(4)}^{q.at(4)}",
                3,
                ieee_pow(a.value, q.value) if known else None,
                a.cases + q.cases,
            )
        if q == 0:
            return _Name("1", 4, 1.0)
        if q == 1:
            return a
        value = None if a.value is None else ieee_pow(a.value, q)
        return _Name(_power_text(a.at(4), q), 3, value, a.cases)

    @staticmethod
    def abs(a: Any) -> _Name:
        a = _Name.of(a)
        return _Name(f"|{a.text}|", 4, None if a.value is None else abs(a.value), a.cases)

    def __getattr__(self, name: str) -> Callable[..., _Name]:
        def call(*args: Any) -> _Name:
            ns = [_Name.of(a) for a in args]
            values = [n.value for n in ns]
            value = None
            if self.values is not None and all(v is not None for v in values):
                value = getattr(self.values, name)(*values)
            cases = tuple(c for n in ns for c in n.cases)
            return _Name(f"{name}({', '.join(n.text for n in ns)})", 4, value, cases)

        return call


def formula(local: Callable[..., tuple], arity: int, param: bool) -> str:
    """The rule `local` run on the names a, b, out (and p, the op's own number), in words:
    'd/da = 1 - out²'."""
    children = [_Name(c) for c in "ab"[:arity]]
    params = [_Name("p")] if param else []
    texts = [_Name.of(d).text for d in local(_OnNames(), _Name("out"), *children, *params)]
    return ", ".join(f"d/d{c} = {t}" for c, t in zip("ab", texts))


def explain(
    local: Callable[..., tuple],
    node: Any,
    labels: Sequence[str],
    out_name: str,
    params: tuple,
    values: Any,
) -> tuple[str, ...]:
    """The rule `local` run on the names of `node` and its children, each with its number (by
    the float module `values`), so a `where` picks and shows the case the node is in."""
    children = [_Name(n, 4, c.data) for n, c in zip(labels, node._prev)]
    ds = local(_OnNames(values), _Name(out_name, 4, node.data), *children, *params)
    return tuple(_Name.of(d).shown() for d in ds)
