"""Fast paths of the ops that make most of a graph's nodes (`+ * relu exp log` and ``x ** a
number``): `install(Value)` puts them on `Value` (engine.py calls it once, after the ops are
declared).

Each does what its declared method in engine.py does (through `_node`: the op's rules run on
floats) for the common case, without the generic steps: two Values, or one whose number is in the
op's plain domain. The forward is the float expression of the op's `forward` rule (held equal to
the declared method, bit for bit, by tests/test_engine_file.py); the local derivatives are the
op's own rule, read from the registry at each node (an edit of the rule in engine.py changes
them); the numbers policy is the one Value.__init__ applies to every node. Anything else (a plain
number as an operand, NaN, ±inf, a number outside the domain, an overflow) goes to the declared
method, which raises the op's own errors.
"""

from __future__ import annotations

import math
from typing import Any

from .registry import FLOATS, OPS

_EXP_MAX = 709.0  # e^x is finite below it (709.78...)


def install(Value: Any) -> None:
    """Put the fast paths on `Value`, in place of its declared methods (which stay the ops'
    methods in the registry: OPS['+'].method)."""
    add, mul, relu, exp, log, power = (OPS[k] for k in ("+", "*", "ReLU", "exp", "log", "**p"))
    slow = {k: OPS[k].method for k in ("+", "*", "ReLU", "exp", "log", "**")}

    def __add__(self: Any, other: Any) -> Any:
        if type(other) is not Value:
            return slow["+"](self, other)
        a, b = self.data, other.data
        out = a + b
        return Value(out, (self, other), "+", "", add.constant or add.local(FLOATS, out, a, b))

    def __mul__(self: Any, other: Any) -> Any:
        if type(other) is not Value:
            return slow["*"](self, other)
        a, b = self.data, other.data
        out = a * b
        return Value(out, (self, other), "*", "", mul.local(FLOATS, out, a, b))

    def relu_(self: Any) -> Any:
        a = self.data
        if not -math.inf < a < math.inf:  # NaN, ±inf
            return slow["ReLU"](self)
        out = a if a > 0.0 else 0.0
        return Value(out, (self,), "ReLU", "", relu.local(FLOATS, out, a))

    def exp_(self: Any) -> Any:
        a = self.data
        if not -math.inf < a < _EXP_MAX:
            return slow["exp"](self)
        out = math.exp(a)
        return Value(out, (self,), "exp", "", exp.local(FLOATS, out, a))

    def log_(self: Any) -> Any:
        a = self.data
        if not 0.0 < a < math.inf:
            return slow["log"](self)
        out = math.log(a)
        return Value(out, (self,), "log", "", log.local(FLOATS, out, a))

    def __pow__(self: Any, other: Any) -> Any:
        a = self.data
        if type(other) not in (int, float) or not 0.0 < a < math.inf or other != other:
            return slow["**"](self, other)
        try:
            p = float(other)
            out = a**p
        except OverflowError:  # (an int too large for a float, or a result too large)
            return slow["**"](self, other)
        node = Value(out, (self,), f"**{other}", "", power.local(FLOATS, out, a, p))
        node._p = p
        return node

    for name, fast, declared in (
        ("__add__", __add__, slow["+"]),
        ("__mul__", __mul__, slow["*"]),
        ("relu", relu_, slow["ReLU"]),
        ("exp", exp_, slow["exp"]),
        ("log", log_, slow["log"]),
        ("__pow__", __pow__, slow["**"]),
    ):
        fast.__name__, fast.__qualname__ = name, f"Value.{name}"
        fast.__doc__ = declared.__doc__
        setattr(Value, name, fast)
