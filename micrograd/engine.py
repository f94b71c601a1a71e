"""The autograd engine: `Value`, a scalar that remembers how it was made, and backpropagation.

Each op computes its output *and its local derivatives* side by side and stores the derivatives
on the result (`_local`, one per child in `_prev`), so backpropagation is one uniform loop:
``child.grad += local * out.grad``. ``node._backward()`` still works as in the lecture. `backward()`
is iterative (a million-deep graph is fine) and deterministic; `grad(out, inputs,
create_graph=True)` returns gradients as Values, to differentiate again.

Every primitive is declared once, by a decorator on its method: `@_op` records it in `OPS`, the op
registry, with its symbolic derivative (for create_graph), its numpy rule (for `micrograd.jit`),
and its local derivative as text (for pictures and the playground). Everything else that needs to
know the ops -- jit, the expression language, `nn`'s activations, the pictures -- reads `OPS`.
Derived ops (`-`, `/`, reflected forms) are built from the primitives.

Numbers: finite numbers in give a finite number out, or an error that names the op you wrote
(OverflowError, ZeroDivisionError, ValueError). NaN and ±inf that you put in propagate as in
PyTorch, except into the domain errors (log of -inf is still a ValueError); derivatives may be
±inf, as in PyTorch. CONTRIBUTING.md has the details and how to add an op.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from operator import mul
from sys import _getframe
from types import FrameType
from typing import Any, NamedTuple, Union

Number = Union[int, float, Fraction]
Operand = Union["Value", int, float, Fraction]


# ------------------------------------------------------------------------------- the op registry


class Vec(NamedTuple):
    """An op over arrays (for `micrograd.jit`): ``forward(xp, *children)`` and ``local(xp, out,
    *children)``, one local derivative per child; `xp` is the array module (numpy), passed in so
    that this file imports nothing beyond the standard library. '**p' rules take the exponent as
    a last argument. Where the engine raises (overflow, log of a negative number, ...) these give
    IEEE's inf or NaN; jit then finds the sample and lets the engine raise its own error."""

    forward: Callable[..., Any]
    local: Callable[..., tuple]


@dataclass(frozen=True)
class OpInfo:
    """Everything micrograd knows about one primitive op; see `OPS`."""

    name: str  # the node kind, as `op_kind` gives it: '+', '*', '**p', 'tanh', ...
    arity: int | None  # children per node; None: any number (dot, sum)
    method: Callable[..., Value]  # the Value method: forward value + float local derivatives
    symbolic: Callable[..., tuple]  # rule(out, *children) -> local derivatives as Values
    vec: Vec | None  # the numpy rule (None: jit compiles dot and sum specially)
    explain: tuple[str, ...] | Callable[..., tuple[str, ...]]  # d node / d child, as text
    formula: str = ""  # the local derivative(s) in words, e.g. 'd/da = 1 - out²'
    caption: str = ""  # how pictures caption the op, if not by its `_op` (dot: 'w·x+b')
    activation: str = ""  # its title as a neuron's activation ('ReLU'); '': not an activation
    torch: Callable[[Any], Any] | None = field(default=None, compare=False)  # torch -> a Module

    equation: str = ""  # what it computes, for a learner: 'max(0, x)' (every activation has one)
    make: Callable[..., Value] | None = None  # builds a node from (children, param), if not method
    param: str = ""  # the node attribute holding the op's own number ('_p', the exponent of **p)
    # for an op of any number of children, what it computes, so jit can batch it as a whole:
    # 'weighted sum' (children *w, *x, b: b + Σ w·x) or 'sum' (Σ children)
    kernel: str = ""

    def apply(self, *children: Value, p: float | None = None) -> Value:
        """A new node of this op on `children` (an op with a `param` takes its number as `p`)."""
        if self.make is not None:
            return self.make(children, p)
        return self.method(*children)

    def parameter(self, node: Value) -> float | None:
        """The op's own number on `node` (the exponent of ``x ** 2``), or None if it has none:
        ``info.apply(*children, p=info.parameter(node))`` rebuilds `node` on other children."""
        return getattr(node, self.param) if self.param else None


# The registry: node kind -> OpInfo, filled by @_op beside each primitive below.
OPS: dict[str, OpInfo] = {}


def _op(
    name: str,
    arity: int | None,
    symbolic: Callable[..., tuple] | None = None,
    explain: tuple[str, ...] | Callable[..., tuple[str, ...]] | None = None,
    vec: Vec | None = None,
    formula: str = "",
    caption: str = "",
    activation: str = "",
    torch: Callable[[Any], Any] | None = None,
    equation: str = "",
    make: Callable[..., Value] | None = None,
    param: str = "",
    kernel: str = "",
) -> Callable[[Callable], Callable]:
    """Register the decorated method as the primitive `name` (the method itself is unchanged).

    An op whose numpy rule `vec.local` is arithmetic alone (``+ - * /`` and powers of its
    arguments, no ``xp.`` function) may leave out `symbolic` and `explain`: both are derived from
    that one rule, run on Values and on names (``lambda xp, out, a: (1.0 - out * out,)`` is
    tanh's rule for arrays, for create_graph, and the text '1 - out²')."""
    if activation and not equation:  # the training page shows it: no activation without one
        raise TypeError(f"op {name!r}: an activation needs equation= (what it computes)")
    if symbolic is None or explain is None:
        if vec is None or arity is None:
            raise TypeError(f"op {name!r}: give symbolic= and explain= (there is no vec rule of "
                            f"a fixed number of inputs to derive them from)")  # fmt: skip
        if explain is None:
            explain = _rule_as_text(name, arity, vec.local)
        if symbolic is None:
            symbolic = _rule_on_values(vec.local)

    def register(method: Callable) -> Callable:
        text = formula
        if not text and isinstance(explain, tuple):
            names = {"a": "a", "b": "b", "out": "out"}
            parts = [t.format(**names) for t in explain]
            text = (
                f"d/da = {parts[0]}"
                if len(parts) == 1
                else ", ".join(f"d/d{c} = {t}" for c, t in zip("ab", parts))
            )
        fn = method.__func__ if isinstance(method, staticmethod) else method
        OPS[name] = OpInfo(
            name, arity, fn, symbolic, vec, explain, text, caption, activation, torch, equation,
            make, param, kernel,
        )  # fmt: skip
        return method

    return register


def op_kind(node: Value) -> str:
    """The registry key of `node`'s op: its `_op`, or the kind its class declares (`_kind`) for a
    node that keeps a number of its own: '**p' for ``x ** 2``, whose `_op` reads '**2'."""
    return getattr(node, "_kind", "") or node._op


def explain_local(node: Value, names: Sequence[str], out_name: str) -> tuple[str, ...]:
    """d node / d child for each child of `node`, as readable text with the children's display
    `names` and the node's own `out_name` filled in: ``('b', 'a')`` for ``e = a*b``, ``('1 -
    o²',)`` for ``o = tanh(n)``, ``('2·x',)`` for ``x**2``. A leaf gives ``()``."""
    if not node._prev:
        return ()
    info = OPS.get(op_kind(node))
    if info is None:
        raise ValueError(f"explain_local: {node._op!r} is not a registered op (see engine.OPS)")
    if len(names) != len(node._prev):
        raise ValueError(
            f"explain_local: {len(node._prev)} children but {len(names)} names: {names!r}"
        )
    if callable(info.explain):
        return info.explain(node, tuple(names), out_name)
    fill = {"a": names[0], "b": names[-1], "out": out_name}
    return tuple(t.format(**fill) for t in info.explain)


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_text(base: str, q: float) -> str:
    """base^q, as a learner writes it: x, x², x⁻¹, x^0.5."""
    if q == 1:
        return base
    if float(q).is_integer() and abs(q) < 100:
        return base + str(int(q)).translate(_SUPERSCRIPT)
    return f"{base}^{_number_text(q)}"


class _Formula:
    """A local derivative as text, made by running an op's arithmetic rule on names instead of
    numbers: ``out * (1.0 - out)`` gives '{out}·(1 - {out})'. `level` is how tightly the text
    binds (1: a sum, 2: a product, 3: a power, 4: a name or number), for parentheses."""

    __slots__ = ("text", "level")

    def __init__(self, text: str, level: int = 4) -> None:
        self.text, self.level = text, level

    def _at(self, level: int) -> str:
        return self.text if self.level >= level else f"({self.text})"

    def __add__(self, other: object) -> _Formula:
        return _Formula(f"{self._at(1)} + {_formula(other)._at(2)}", 1)

    def __sub__(self, other: object) -> _Formula:
        return _Formula(f"{self._at(1)} - {_formula(other)._at(2)}", 1)

    def __mul__(self, other: object) -> _Formula:
        if other is self:  # x * x reads x²
            return _Formula(_power_text(self._at(4), 2), 3)
        return _Formula(f"{self._at(2)}·{_formula(other)._at(3)}", 2)

    def __truediv__(self, other: object) -> _Formula:
        return _Formula(f"{self._at(2)}/{_formula(other)._at(3)}", 2)

    def __pow__(self, q: float) -> _Formula:
        return _Formula(_power_text(self._at(4), q), 3)

    def __neg__(self) -> _Formula:
        return _Formula(f"-{self._at(3)}", 1)

    def __radd__(self, other: object) -> _Formula:
        return _formula(other) + self

    def __rsub__(self, other: object) -> _Formula:
        return _formula(other) - self

    def __rmul__(self, other: object) -> _Formula:
        return _formula(other) * self

    def __rtruediv__(self, other: object) -> _Formula:
        return _formula(other) / self


def _formula(x: object) -> _Formula:
    if isinstance(x, _Formula):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"a local rule made {type(x).__name__} {x!r}, not a number")
    return _Formula(_number_text(x), 4 if x >= 0 else 1)


class _NoArrayModule:
    """The `xp` a rule is run with to derive its text: any function of it is refused, naming the
    op (its text and symbolic rule must then be written out)."""

    def __init__(self, op: str) -> None:
        self.op = op

    def __getattr__(self, attr: str) -> Any:
        raise TypeError(
            f"op {self.op!r}: its vec local rule uses xp.{attr}, so its text and symbolic rule "
            f"cannot be derived from it: give explain= and symbolic= too"
        )


def _rule_as_text(op: str, arity: int, local: Callable[..., tuple]) -> tuple[str, ...]:
    """`local` (the numpy rule of an op of `arity` inputs) run on names: each derivative as text,
    with {a}, {b}, {out} for the names (as a hand-written `explain` has them)."""
    children = [_Formula("{a}"), _Formula("{b}")][:arity]
    return tuple(_formula(d).text for d in local(_NoArrayModule(op), _Formula("{out}"), *children))


def _rule_on_values(local: Callable[..., tuple]) -> Callable[..., tuple]:
    """`local` (a numpy rule of arithmetic alone) as the symbolic rule: the same arithmetic on
    Values, so create_graph builds the derivative as nodes."""

    def symbolic(out: Value, *children: Value) -> tuple[Value, ...]:
        return tuple(d if isinstance(d, Value) else Value(d) for d in local(None, out, *children))

    return symbolic


def _explain_power(node: Value, names: tuple[str, ...], out_name: str) -> tuple[str, ...]:
    p = node._p
    if p == 0:
        return ("0",)
    if p == 1:
        return ("1",)
    return (f"{_number_text(p)}·{_power_text(names[0], p - 1)}",)


def _explain_dot(node: Value, names: tuple[str, ...], out_name: str) -> tuple[str, ...]:
    n = len(names) // 2  # children (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
    return (*names[n : 2 * n], *names[:n], "1")


# ------------------------------------------------------------------------------- jit's contract
# micrograd.jit traces per-sample code by watching how it reads Values' numbers (`.data`): a read
# by the code of an op is the op itself (jit replays it with the op's numpy rule), any other read
# is the user's program deciding something (a guard). The engine declares here which of its
# functions are which, and offers the tracer one hook, `watch_reads` (at the end of this file),
# which applies these declarations; the tracer knows nothing else of the engine's code. Every
# registered op's method (`OPS`) is an op's code already; a helper an op calls that reads `.data`
# is added with @_part_of_an_op, one that turns a number into a constant Value with
# @_makes_a_constant (a traced number reaching it is refused: it would freeze one sample's value).
PART_OF_AN_OP: list[Callable[..., Any]] = []
MAKES_A_CONSTANT: list[Callable[..., Any]] = []


def _part_of_an_op(fn: Callable) -> Callable:
    PART_OF_AN_OP.append(fn)
    return fn


def _makes_a_constant(fn: Callable) -> Callable:
    MAKES_A_CONSTANT.append(fn)
    return fn


# ------------------------------------------------------------------------------- numbers

_FLOAT_MAX = "max ~1.8e308"


@_makes_a_constant
def _as_float(data: object, what: str = "Value") -> float:
    """The float for a real number; a clear TypeError for anything else."""
    if isinstance(data, float):  # float and its subclasses (numpy.float64)
        return float(data)
    if isinstance(data, Value):
        raise TypeError(
            f"{what} needs a plain number, got a Value ({data!r}); use it directly, "
            f"or pass its .data to copy the number"
        )
    if isinstance(data, bool) or not isinstance(data, numbers.Real):
        raise TypeError(
            f"{what} needs a real number (int, float, Fraction, numpy scalar), "
            f"got {type(data).__name__} {data!r}"
        )
    try:
        return float(data)
    except OverflowError:
        raise OverflowError(_too_large(data, what)) from None


def _too_large(x: object, what: str) -> str:
    # Its size, not repr(x): an int of more than 4,300 digits cannot even be printed.
    digits = int(abs(int(x)).bit_length() * 0.30103) + 1  # type: ignore[call-overload]
    sign = "-" if x < 0 else ""  # type: ignore[operator]
    return (
        f"{what}: got a {digits}-digit {type(x).__name__} (about {sign}1e{digits - 1}), too large "
        f"for a float (micrograd computes in float64, max ~1.8e308)"
    )


@_makes_a_constant
def _lift(other: object, op: str, left: object) -> Value:
    """The other operand of a binary op as a Value (a plain number becomes a constant leaf)."""
    if isinstance(other, Value):
        return other
    if type(other) is float or type(other) is int:  # the common case, before the slow ABC check
        try:
            return Value(float(other))
        except OverflowError:
            raise OverflowError(_too_large(other, f"the operand of {op}")) from None
    if isinstance(other, bool) or not isinstance(other, numbers.Real):
        raise TypeError(
            f"unsupported operand for {op}: {left!r} {op} {type(other).__name__} {other!r} "
            f"(micrograd works with Values and real numbers)"
        )
    return Value(_as_float(other, f"the operand of {op}"))


class _Derivatives(threading.local):
    active = False  # True while grad(create_graph=True) builds derivative nodes (in this thread)


_derivatives = _Derivatives()


def _raise_if_overflowed(what: str, *inputs: float) -> None:
    """An op's result is NaN or ±inf: an OverflowError if its inputs were all finite (the policy:
    finite in, finite out or an error), nothing if a NaN or inf was put in (it propagates).
    Derivatives may be ±inf, as in PyTorch (x ** 0.5 at 0): grad(create_graph=True) builds its
    nodes with `_derivatives.active` set, and they overflow to inf."""
    if all(map(math.isfinite, inputs)) and not _derivatives.active:
        raise OverflowError(f"{what} overflows a float ({_FLOAT_MAX})")


def _pow_forward(a: float, p: float) -> float:
    """a ** p, with an error naming pow where the result is undefined or too large."""
    if a < 0 and not p.is_integer() and p == p:  # (NaN is no integer, but propagates)
        raise ValueError(
            f"pow: {a!r} ** {p!r} is not a real number (a negative base needs an integer "
            f"exponent)"
        )
    if a == 0 and p < 0:
        raise ZeroDivisionError(f"pow: {a!r} ** {p!r} (zero to a negative power) is undefined")
    try:
        return a**p
    except OverflowError:  # Python raises it only for finite operands
        if _derivatives.active:
            return _ieee_pow(a, p)
        raise OverflowError(f"pow: {a!r} ** {p!r} overflows a float ({_FLOAT_MAX})") from None


def _pow_local(a: float, p: float) -> float:
    """d/da a**p = p * a**(p-1), with PyTorch's values where that formula breaks down."""
    if p == 0:
        return 0.0  # PyTorch masks this to 0, though 0 * 0**-1 would be 0 * inf
    return p * _ieee_pow(a, p - 1)


def _ieee_pow(a: float, q: float) -> float:
    """a ** q as IEEE floating point gives it: ±inf at zero and on overflow, never an error."""
    try:
        out = a**q
    except ZeroDivisionError:  # zero to a negative power: +inf, or -inf for -0.0 ** odd
        odd = float(q).is_integer() and q % 2 == 1
        return math.copysign(math.inf, a) if odd else math.inf
    except OverflowError:  # |a| > 1: the sign of a survives only odd integer powers
        odd = float(q).is_integer() and q % 2 == 1
        return math.copysign(math.inf, a if odd else 1.0)
    return math.nan if type(out) is complex else out


def _constant_slopes(out: Value, *children: Value) -> tuple[Value, ...]:
    """The symbolic rule of an op whose local derivatives are constants wherever they exist (+,
    ReLU, abs, maximum): the node's own stored slopes, as constant Values (derived, not
    restated)."""
    return tuple(Value(d) for d in out._local)


_ONE, _ZERO = (1.0,), (0.0,)  # ReLU's local derivative, shared by every ReLU node


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)  # 0 at 0 and for NaN, as PyTorch's abs'


_TORCH_MODULES: dict[tuple[Any, str], Any] = {}


def _torch_module(torch: Any, name: str, fn: Callable[[Any], Any]) -> Any:
    """A `torch.nn.Module` applying `fn`, for an op PyTorch has no module for (abs)."""
    cls = _TORCH_MODULES.get((torch, name))
    if cls is None:
        forward = lambda self, x: fn(x)  # noqa: E731
        cls = type(name, (torch.nn.Module,), {"forward": forward, "__module__": __name__})
        _TORCH_MODULES[(torch, name)] = cls
    return cls()


def _sigmoid_vec(xp: Any, a: Any) -> Any:
    # The engine's two formulas, picked per element: never exp of a large positive number.
    e = xp.exp(-xp.abs(a))
    return xp.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _pow_local_vec(xp: Any, a: Any, p: Any) -> Any:
    # p * a**(p-1), 0 where p == 0 (PyTorch's mask); IEEE gives ±inf at a == 0 by itself
    d = p * xp.power(a, p - 1)
    if isinstance(p, float):  # the exponent of '**p', the same for the whole batch
        return xp.zeros_like(d) if p == 0 else d
    return xp.where(p == 0, 0.0, d)


def _pow_value_local_vec(xp: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # d/db a**b = a**b * ln(a): NaN for a < 0, 0 for a == 0 (as the engine)
    safe = xp.where(a > 0, a, 1.0)
    db = xp.where(a > 0, out * xp.log(safe), xp.where(a == 0, 0.0, math.nan))
    return _pow_local_vec(xp, a, b), db


def _extreme_vec(xp: Any, a: Any, b: Any) -> tuple[Any, Any]:
    # maximum's slopes over arrays (minimum's with a and b swapped): 1 for the winner, ½ each on
    # a tie, 1 for both where a NaN is involved (no comparison holds)
    da = xp.where(a > b, 1.0, xp.where(a < b, 0.0, xp.where(a == b, 0.5, 1.0)))
    db = xp.where(b > a, 1.0, xp.where(b < a, 0.0, xp.where(a == b, 0.5, 1.0)))
    return da, db


def _explain_extreme(node: Value, names: tuple[str, ...], wins: str) -> tuple[str, ...]:
    """maximum's (wins '>') or minimum's ('<') slopes as text, with the case this node is in."""
    a, b = names
    da, db = node._local
    if da == db == 0.5:
        return (f"½ (a tie: {a} = {b})",) * 2
    if da == db:
        return ("1 (NaN)",) * 2
    lose = "<" if wins == ">" else ">"
    case = f"{a} {wins} {b}" if da == 1.0 else f"{a} {lose} {b}"
    return (f"{_number_text(da)} ({case})", f"{_number_text(db)} ({case})")


class Value:
    """A scalar in a computation graph: its `data`, the `grad` of the output w.r.t. it, and how it
    was made (`_prev` children, `_op`, and `_local` derivatives of this node w.r.t. each child)."""

    __slots__ = ("data", "grad", "label", "_prev", "_op", "_local", "_visit")
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected ops
    _kind = ""  # the op's registry key, where `_op` is not it (see op_kind)

    def __init__(
        self,
        data: Number,
        _children: Iterable[Value] = (),
        _op: str = "",
        label: str = "",
        _local: Sequence[float] = (),
    ) -> None:
        self.data: float = data if type(data) is float else _as_float(data)
        self.grad: float = 0.0
        self.label = label
        self._prev: tuple[Value, ...] = (
            _children if type(_children) is tuple else tuple(_children)
        )
        self._op = _op
        self._local = _local  # d self / d child, one per child; or a callable set by a learner
        self._visit = None  # marks nodes already seen by a graph walk (cheaper than a set)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    # Values hash and compare by identity (object's defaults): they live in sets and dicts.

    # ---------------------------------------------------------------- primitives
    # Each: forward value, then the local derivative w.r.t. each child. The @_op above it
    # registers the op in OPS: its derivative as Values (for create_graph), its numpy form (jit),
    # and the derivative as text.

    @_op("+", 2, vec=Vec(lambda xp, a, b: a + b, lambda xp, out, a, b: (1.0, 1.0)))
    def __add__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "+", self)
        out = self.data + other.data
        # overflow gives ±inf (finite numbers never add up to NaN); two comparisons are cheapest
        if out > 1.7976931348623157e308 or out < -1.7976931348623157e308:
            what = f"addition: {self.data!r} + {other.data!r}"
            _raise_if_overflowed(what, self.data, other.data)
        return Value(out, (self, other), "+", "", (1.0, 1.0))

    @_op("*", 2, vec=Vec(lambda xp, a, b: a * b, lambda xp, out, a, b: (b, a)))
    def __mul__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "*", self)
        out = self.data * other.data
        if out > 1.7976931348623157e308 or out < -1.7976931348623157e308:  # overflow: ±inf
            what = f"multiplication: {self.data!r} * {other.data!r}"
            _raise_if_overflowed(what, self.data, other.data)
        return Value(out, (self, other), "*", "", (other.data, self.data))

    @_op(
        "**p", 1,  # x ** a number p: the node's _op reads '**2', its exponent is node._p
        symbolic=lambda out, a: (_pow_rule(a, out._p),),
        vec=Vec(lambda xp, a, p: xp.power(a, p), lambda xp, out, a, p: (_pow_local_vec(xp, a, p),)),
        explain=_explain_power,
        formula="d/da = p·a^(p-1)",
        make=lambda children, p: children[0] ** p,
        param="_p",
    )  # fmt: skip
    @_op(
        "**", 2,  # x ** a Value
        symbolic=lambda out, a, b: (_pow_rule(a, b), out * _log_or_nan(a)),
        vec=Vec(lambda xp, a, b: xp.power(a, b), _pow_value_local_vec),
        explain=("{b}·{a}^({b} - 1)", "{out}·ln {a}"),
    )  # fmt: skip
    def __pow__(self, other: Operand) -> Value:
        a = self.data
        if isinstance(other, Value):  # d/db a**b = a**b * ln(a): NaN for a < 0, 0 for a == 0
            b = other.data
            out = _pow_forward(a, b)
            db = out * math.log(a) if a > 0 else (0.0 if a == 0 else math.nan)
            return Value(out, (self, other), "**", "", (_pow_local(a, b), db))
        p = _as_float(other, "the exponent of **")
        return _Power(_pow_forward(a, p), (self,), f"**{other}", "", (_pow_local(a, p),), p)

    @_op(
        "ReLU", 1,
        symbolic=_constant_slopes,
        # (not xp.where: on a random sign pattern it is 5x slower; `+ 0.0` makes -0.0 +0.0 as
        # the engine's, and NaN passes with slope 1 in both)
        vec=Vec(
            lambda xp, a: xp.maximum(a, 0.0) + 0.0,
            lambda xp, out, a: (1.0 - (a <= 0),),
        ),
        explain=("1 if {a} > 0 else 0",),
        activation="ReLU",
        equation="max(0, x)",
        torch=lambda torch: torch.nn.ReLU(),
    )  # fmt: skip
    def relu(self) -> Value:
        x = self.data
        # `x <= 0`, not `x > 0`: NaN passes through with slope 1, as in PyTorch. Shared constant
        # tuples for the slope: one allocation fewer per node, less work for gc.
        return Value(0.0 if x <= 0 else x, (self,), "ReLU", "", _ZERO if x <= 0 else _ONE)

    @_op(
        "exp", 1,
        vec=Vec(lambda xp, a: xp.exp(a), lambda xp, out, a: (out,)),
        formula="d/da = e^a = out",
    )  # fmt: skip
    def exp(self) -> Value:
        x = self.data
        try:
            e = math.exp(x)
        except OverflowError:
            if not _derivatives.active:
                raise OverflowError(f"exp({x!r}) overflows a float ({_FLOAT_MAX})") from None
            e = math.inf
        return Value(e, (self,), "exp", "", (e,))  # d/dx e^x = e^x

    @_op("log", 1, vec=Vec(lambda xp, a: xp.log(a), lambda xp, out, a: (1.0 / a,)))
    def log(self) -> Value:
        x = self.data
        if x <= 0:  # NaN passes: it propagates
            raise ValueError(f"log is defined for positive numbers only, got log({x!r})")
        return Value(math.log(x) if x > 0 else math.nan, (self,), "log", "", (1.0 / x,))

    @_op(
        "tanh", 1,
        vec=Vec(lambda xp, a: xp.tanh(a), lambda xp, out, a: (1.0 - out * out,)),
        activation="Tanh",
        equation="(e²ˣ − 1)/(e²ˣ + 1)",
        torch=lambda torch: torch.nn.Tanh(),
    )  # fmt: skip
    def tanh(self) -> Value:
        t = math.tanh(self.data)  # exact ±1 at ±1e308, where (e^2x - 1)/(e^2x + 1) overflows
        return Value(t, (self,), "tanh", "", (1.0 - t * t,))

    @_op(
        "sigmoid", 1,
        vec=Vec(_sigmoid_vec, lambda xp, out, a: (out * (1.0 - out),)),
        activation="Sigmoid",
        equation="1/(1 + e⁻ˣ)",
        torch=lambda torch: torch.nn.Sigmoid(),
    )  # fmt: skip
    def sigmoid(self) -> Value:
        x = self.data
        if x >= 0:  # never exp of a large positive number: stable at ±1e308
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return Value(s, (self,), "sigmoid", "", (s * (1.0 - s),))

    @_op(
        "abs", 1,
        symbolic=_constant_slopes,
        vec=Vec(
            lambda xp, a: xp.abs(a),
            lambda xp, out, a: (xp.where(a > 0, 1.0, 0.0) - xp.where(a < 0, 1.0, 0.0),),
        ),
        explain=("sign({a})",),
        activation="Abs",
        equation="|x|",
        torch=lambda torch: _torch_module(torch, "Abs", torch.abs),
    )  # fmt: skip
    def abs(self) -> Value:
        x = self.data
        return Value(abs(x), (self,), "abs", "", (_sign(x),))  # slope 0 at 0 (and NaN), as PyTorch

    @_op(
        "softplus", 1,
        symbolic=lambda out, a: (a.sigmoid(),),
        vec=Vec(
            lambda xp, a: xp.log1p(xp.exp(-xp.abs(a))) + xp.maximum(a, 0.0),
            lambda xp, out, a: (_sigmoid_vec(xp, a),),
        ),
        explain=("sigmoid({a})",),
        activation="Softplus",
        equation="log(1 + eˣ)",
        torch=lambda torch: torch.nn.Softplus(threshold=40.0),  # past 40, x itself is exact
    )  # fmt: skip
    def softplus(self) -> Value:
        x = self.data
        # log(1 + e^x), never exp of a large positive number: exact at ±1e308
        out = math.log1p(math.exp(-abs(x))) + (x if x > 0 else 0.0)
        return Value(out, (self,), "softplus", "", (self.sigmoid().data,))  # slope: sigmoid(x)

    @_op(
        "maximum", 2,
        symbolic=_constant_slopes,
        vec=Vec(lambda xp, a, b: xp.maximum(a, b), lambda xp, out, a, b: _extreme_vec(xp, a, b)),
        explain=lambda node, names, out_name: _explain_extreme(node, names, ">"),
        formula="d/da = 1 if a > b, ½ if a = b, else 0 (and d/db the other way)",
    )  # fmt: skip
    def maximum(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "maximum", self)
        a, b = self.data, other.data
        # PyTorch's slopes: the larger input takes the gradient, a tie splits it half and half,
        # and a NaN (which the result carries on) passes it to both.
        if a > b:
            return Value(a, (self, other), "maximum", "", (1.0, 0.0))
        if a < b:
            return Value(b, (self, other), "maximum", "", (0.0, 1.0))
        if a == b:
            return Value(a, (self, other), "maximum", "", (0.5, 0.5))
        return Value(math.nan, (self, other), "maximum", "", (1.0, 1.0))

    @_op(
        "minimum", 2,
        symbolic=_constant_slopes,
        vec=Vec(lambda xp, a, b: xp.minimum(a, b), lambda xp, out, a, b: _extreme_vec(xp, b, a)),
        explain=lambda node, names, out_name: _explain_extreme(node, names, "<"),
        formula="d/da = 1 if a < b, ½ if a = b, else 0 (and d/db the other way)",
    )  # fmt: skip
    def minimum(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "minimum", self)
        a, b = self.data, other.data
        # maximum's slopes, mirrored: the smaller input takes the gradient
        if a < b:
            return Value(a, (self, other), "minimum", "", (1.0, 0.0))
        if a > b:
            return Value(b, (self, other), "minimum", "", (0.0, 1.0))
        if a == b:
            return Value(a, (self, other), "minimum", "", (0.5, 0.5))
        return Value(math.nan, (self, other), "minimum", "", (1.0, 1.0))

    # ---------------------------------------------------------------- fused ops
    # Same maths as chains of * and +, as one node: the level at which an op lives is a choice.

    @staticmethod
    @_op(
        "dot", None,  # children are (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
        symbolic=lambda out, *c: (*c[(len(c) // 2) : -1], *c[: len(c) // 2], Value(1.0)),
        explain=_explain_dot,
        formula="d/dw_i = x_i, d/dx_i = w_i, d/db = 1",
        caption="w·x+b",
        make=lambda c, p: Value.dot(c[: len(c) // 2], c[len(c) // 2 : -1], c[-1]),
        kernel="weighted sum",
    )  # fmt: skip
    def dot(w: Sequence[Value], x: Sequence[Operand], b: Operand = 0.0) -> Value:
        """b + w[0]*x[0] + w[1]*x[1] + ..., one node (a neuron's pre-activation).

        Adds in the same order as ``sum((wi*xi for wi, xi in zip(w, x)), b)``, so results match
        the unfused graph bit for bit.
        """
        w = tuple(w)
        for wi in w:  # plain-number weights are constants, as in x
            if type(wi) is not Value:
                w = tuple(v if isinstance(v, Value) else _lift(v, "dot", "w") for v in w)
                break
        x = tuple(x)
        for xi in x:  # usually all Values already: check cheaply, lift only if needed
            if type(xi) is not Value:
                x = tuple(xi if isinstance(xi, Value) else _lift(xi, "dot", "x") for xi in x)
                break
        if len(w) != len(x):
            raise ValueError(f"dot: w has {len(w)} entries but x has {len(x)}")
        b = b if isinstance(b, Value) else _lift(b, "dot", "b")
        wd = [wi.data for wi in w]
        xd = [xi.data for xi in x]
        # A plain loop, not sum(): from Python 3.12 sum() of floats compensates rounding errors,
        # which would no longer match the unfused chain of + nodes bit for bit.
        out = b.data
        for p in map(mul, wd, xd):
            out += p
        if not -1.7976931348623157e308 <= out <= 1.7976931348623157e308:  # NaN or ±inf
            _raise_if_overflowed("dot: w·x + b", *wd, *xd, b.data)
        return Value(out, (*w, *x, b), "dot", "", (*xd, *wd, 1.0))

    @staticmethod
    @_op(
        "sum", None,
        symbolic=lambda out, *c: tuple(Value(1.0) for _ in c),
        explain=lambda node, names, out_name: ("1",) * len(names),
        formula="d/da_i = 1",
        caption="Σ",
        make=lambda children, p: Value.sum(children),
        kernel="sum",
    )  # fmt: skip
    def sum(values: Iterable[Operand]) -> Value:
        """values[0] + values[1] + ..., one node with every term as a child."""
        vs = tuple(values)
        for v in vs:  # usually all Values already: check cheaply, lift only if needed
            if type(v) is not Value:
                vs = tuple(v if isinstance(v, Value) else _lift(v, "sum", "sum") for v in vs)
                break
        out = 0.0
        for v in vs:  # a plain loop, not sum(): see dot
            out += v.data
        if not -1.7976931348623157e308 <= out <= 1.7976931348623157e308:  # NaN or ±inf
            _raise_if_overflowed("sum", *(v.data for v in vs))
        return Value(out, vs, "sum", "", (1.0,) * len(vs))

    # ---------------------------------------------------------------- derived ops
    # Built from the primitives; an error inside one is re-raised naming the op you wrote.

    def __neg__(self) -> Value:
        return self * -1

    def __radd__(self, other: Operand) -> Value:
        return _lift(other, "+", self) + self

    def __sub__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "-", self)
        try:
            return self + (-other)
        except OverflowError:
            raise OverflowError(_overflow_message("subtraction", self, "-", other)) from None

    def __rsub__(self, other: Operand) -> Value:
        return _lift(other, "-", self) - self

    def __rmul__(self, other: Operand) -> Value:
        return _lift(other, "*", self) * self

    @_part_of_an_op  # it checks its divisor for zero before building a * b**-1
    def __truediv__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "/", self)
        if other.data == 0:
            raise ZeroDivisionError(f"division by zero: {self.data!r} / {other.data!r}")
        try:
            return self * other**-1
        except OverflowError:
            raise OverflowError(_overflow_message("division", self, "/", other)) from None

    def __rtruediv__(self, other: Operand) -> Value:
        return _lift(other, "/", self) / self

    def __rpow__(self, other: Operand) -> Value:
        return _lift(other, "**", self) ** self

    # ---------------------------------------------------------------- backpropagation

    @property
    def _backward(self) -> Callable[[], None]:
        """Apply the chain rule at this node once: each child's grad += local derivative * grad.

        ``o.grad = 1.0; o._backward()`` pushes o's gradient one step back, as in the lecture.
        """
        local = self._local
        if callable(local):
            return local
        _locals(self)  # refuse a malformed _local now, not when it is called
        return lambda: backward_step(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        # A learner's own op in the lecture's style: `out._backward = _backward`.
        self._local = fn

    def backward(self) -> None:
        """Fill `.grad` of every node this Value depends on with d(self)/d(node).

        Like PyTorch, leaves (nodes with no children: inputs and parameters) accumulate, so call
        `zero_grad()` between steps; intermediate nodes are overwritten.
        """
        topo = topological_order(self, leaves=False)  # a leaf has no chain rule to apply
        for v in topo:
            if v._prev:
                v.grad = 0.0
        if self._prev:
            self.grad = 1.0
        else:
            self.grad += 1.0
        for v in reversed(topo):
            local = v._local
            if type(local) is tuple:
                g = v.grad
                n = len(local)
                # Most nodes are binary or unary ops: unpacking them is twice as fast as a zip loop
                # (and adds in the same order).
                if n == 2 and len(v._prev) == 2:
                    a, b = v._prev
                    da, db = local
                    a.grad += da * g
                    b.grad += db * g
                elif n == 1 and len(v._prev) == 1:
                    v._prev[0].grad += local[0] * g
                elif n:  # a fused node's many children (a leaf has no local derivatives)
                    if n != len(v._prev):
                        _locals(v)  # raises: one local derivative per child, or it is wrong
                    for child, d in zip(v._prev, local):
                        child.grad += d * g
            elif callable(local):
                local()
            else:  # a list (or other sequence) given by hand: the same chain rule as a tuple
                backward_step(v)


def backward_step(v: Value) -> list[tuple[Value, float, float]]:
    """The chain rule at one node, as backward() applies it to each: every child's ``grad +=
    local derivative * v.grad``, children in order. Returns (child, local derivative, the child's
    grad after) for each, for whoever shows the step (the playground's chain-rule log).

    backward() runs this same update inline where the local derivatives are a tuple (every node
    micrograd builds: a call per node would cost a third of its time) and calls this for the rest
    (a list given by hand; `node._backward()`).
    """
    g = v.grad
    steps = []
    for child, d in zip(v._prev, _locals(v)):
        child.grad += d * g
        steps.append((child, d, child.grad))
    return steps


def _locals(v: Value) -> Sequence[float]:
    """`v._local` as backward() and grad() both use it: a sequence with one local derivative per
    child (a tuple, or a list given by hand), or empty (the gradient stops there, as with the
    lecture's default `_backward`); anything else is refused, the same way by both."""
    local = v._local
    if not isinstance(local, Sequence) and isinstance(local, Iterable):
        local = tuple(local)  # e.g. a numpy array
    if isinstance(local, (str, bytes)) or not isinstance(local, Sequence):
        raise TypeError(
            f"node {v!r} (op {v._op!r}): _local must be a sequence of local derivatives, one "
            f"per child (or a callable _backward), got {type(local).__name__} {local!r}"
        )
    if local and len(local) != len(v._prev):
        raise ValueError(
            f"node {v!r} (op {v._op!r}) has {len(local)} local derivatives for "
            f"{len(v._prev)} children"
        )
    return local


class _Power(Value):
    """A node ``x ** p`` for a plain number p: a Value that also keeps its exponent, `_p` (its
    `_op` reads '**2'; its kind in the registry, `op_kind`, is '**p', whose declaration names `_p`
    as the op's parameter). Only these nodes pay for the extra slot."""

    __slots__ = ("_p",)
    _kind = "**p"

    def __init__(
        self,
        data: float,
        _children: tuple[Value, ...],
        _op: str,
        label: str,
        _local: tuple[float, ...],
        p: float,
    ) -> None:
        super().__init__(data, _children, _op, label, _local)
        self._p = p


@_part_of_an_op
def _overflow_message(word: str, a: Value, op: str, b: Value) -> str:
    return f"{word}: {a.data!r} {op} {b.data!r} overflows a float ({_FLOAT_MAX})"


def _ieee_pow_node(a: Value, q: Value | float) -> Value:
    # a ** q as a node that never raises (IEEE values at zero and on overflow): the derivative of
    # a ** p at an edge point may be infinite, as in PyTorch, where a ** p itself was fine.
    if isinstance(q, Value):
        out = _ieee_pow(a.data, q.data)
        db = out * math.log(a.data) if a.data > 0 else (0.0 if a.data == 0 else math.nan)
        return Value(out, (a, q), "**", "", (_pow_local(a.data, q.data), db))
    local = (_pow_local(a.data, q),)
    return _Power(_ieee_pow(a.data, q), (a,), f"**{_number_text(q)}", "", local, q)


def _pow_rule(a: Value, p: Value | float) -> Value:
    # The symbolic d/da a**p = p * a**(p-1); 0 where p == 0, as the float path (PyTorch's mask).
    pv = p.data if isinstance(p, Value) else p
    if pv == 0:
        return Value(0.0)
    return p * _ieee_pow_node(a, p - 1)


def _log_or_nan(a: Value) -> Value:
    # The symbolic d/db a**b needs ln(a); for a <= 0 it matches the float path: 0 or NaN.
    if a.data > 0:
        return a.log()
    return Value(0.0 if a.data == 0 else math.nan)


def topological_order(root: Value, leaves: bool = True) -> list[Value]:
    """Every node `root` depends on, children before parents (a post-order depth-first walk).

    Iterative, with an explicit stack, so depth is limited only by memory; deterministic, because
    children are visited in tuple order. Each node's `_visit` is set to a fresh token per walk.
    ``leaves=False`` leaves out the leaves below `root` (no children, no hand-written `_backward`):
    backward() has no chain rule to apply there, and a node with thousands of parameters as
    children is then walked in two thirds of the time.
    """
    opened, done = object(), object()
    topo: list[Value] = []
    stack = [root]
    while stack:
        v = stack.pop()
        mark = v._visit
        if mark is done:
            continue
        if mark is opened:  # second time here: all of v's children are done
            v._visit = done
            topo.append(v)
            continue
        v._visit = opened
        stack.append(v)
        if leaves:
            for child in reversed(v._prev):
                if child._visit is not done:
                    stack.append(child)
        else:  # a leaf below with a hand-written _backward (or stray _local) stays in
            for child in reversed(v._prev):
                if (child._prev or child._local) and child._visit is not done:
                    stack.append(child)
    return topo


def grad(
    output: Value, inputs: Value | Sequence[Value], create_graph: bool = False
) -> float | Value | tuple:
    """d output / d input for each input, returned; no `.grad` is touched.

    `inputs` is one Value (one gradient back) or a sequence (a tuple back). Inputs the output does
    not depend on get 0. With ``create_graph=True`` the gradients are Values that are themselves
    functions of the inputs, so they can be differentiated again::

        x = Value(2.0); y = x ** 3
        dy = grad(y, x, create_graph=True)   # 3x² = 12
        d2y = grad(dy, x)                    # 6x  = 12
    """
    if not isinstance(output, Value):
        raise TypeError(f"grad: output must be a Value, got {type(output).__name__} {output!r}")
    single = isinstance(inputs, Value)
    xs = [inputs] if single else list(inputs)
    for x in xs:
        if not isinstance(x, Value):
            raise TypeError(f"grad: inputs must be Values, got {type(x).__name__} {x!r}")
    topo = topological_order(output)
    if create_graph:
        active, _derivatives.active = _derivatives.active, True
        try:
            return _grads(topo, output, xs, single, True)
        finally:
            _derivatives.active = active
    return _grads(topo, output, xs, single, False)


def _grads(
    topo: list[Value], output: Value, xs: list[Value], single: bool, create_graph: bool
) -> float | Value | tuple:
    grads: dict[Value, object] = {output: Value(1.0) if create_graph else 1.0}
    for v in reversed(topo):
        g = grads.get(v)
        if g is None or not v._prev:
            continue
        if create_graph:
            info = OPS.get(op_kind(v))
            if info is None:
                raise NotImplementedError(
                    f"grad(create_graph=True): no symbolic derivative for op {v._op!r}"
                )
            local = info.symbolic(v, *v._prev)
        else:
            if callable(v._local):
                raise NotImplementedError(
                    f"grad: node {v!r} (op {v._op!r}) has a hand-written _backward; "
                    f"use .backward() for it"
                )
            local = _locals(v)
        for child, d in zip(v._prev, local):
            prev = grads.get(child)
            contribution = d * g
            grads[child] = contribution if prev is None else prev + contribution
    zero = Value(0.0) if create_graph else 0.0
    result = tuple(grads.get(x, zero) for x in xs)
    return result[0] if single else result


# ------------------------------------------------------------------------------- jit's hook
# The one way in for micrograd.jit's tracer (micrograd/tracing.py). While a thread is inside
# ``watch_reads(watcher)``, its reads of a Value's `.data`, `._local` and `.grad` are told to
# `watcher`, except an op's own reads of `.data` (the code declared above: jit replays an op as a
# whole). It works by making these three slots properties of the class while any thread watches
# (nothing else can see a read); other threads read the plain values through them, untold, and
# the slots come back when the last watcher leaves. `raw_data` reads a number past any watcher.


class ReadWatcher:
    """What `watch_reads` tells, in the watching thread; `frame` is the reading code's frame.
    Override what you need; the defaults change nothing."""

    def data(self, v: Value, x: float, frame: FrameType) -> Any:
        """`v.data` was read (its number is `x`) by code that is not an op's: what it gets."""
        return x

    def made(self, v: Value) -> None:
        """A Value was made (its __init__ set its number)."""

    def stored(self, v: Value, x: Any, frame: FrameType) -> None:
        """``v.data = x`` was run, outside __init__."""

    def local(self, v: Value, frame: FrameType) -> None:
        """`v._local` was read (by backward(), grad(), or other code)."""

    def grad(self, v: Value, frame: FrameType) -> None:
        """`v.grad` was read by code outside the engine."""


def _code_objects(fns: Iterable[Callable[..., Any]]) -> frozenset:
    # each function's code and the code nested in it (the comprehensions of an op's method)
    todo = [getattr(fn, "__func__", fn).__code__ for fn in fns]
    out = set()
    while todo:
        code = todo.pop()
        out.add(code)
        todo.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return frozenset(out)


_OP_CODE = _code_objects([info.method for info in OPS.values()] + PART_OF_AN_OP)
_CONSTANT_CODE = _code_objects(MAKES_A_CONSTANT)
_INIT_CODE = Value.__init__.__code__
_SLOTS = {name: Value.__dict__[name] for name in ("data", "_local", "grad")}
_RAW_DATA, _RAW_LOCAL, _RAW_GRAD = _SLOTS.values()


def code_role(frame: FrameType) -> str:
    """What the code running in `frame` is, as the engine declares it: 'op' (an op's own code),
    'constant' (it turns a number into a constant Value), 'engine' (other code of this module),
    or '' (not the engine's: the user's program, or another module)."""
    code = frame.f_code
    if code in _OP_CODE:
        return "op"
    if code in _CONSTANT_CODE:
        return "constant"
    return "engine" if frame.f_globals is globals() else ""


def raw_data(v: Value) -> float:
    """v's number, read past any watcher (for the tracer's own bookkeeping)."""
    return _RAW_DATA.__get__(v, Value)


class _Watchers(threading.local):
    def __init__(self) -> None:
        self.stack: list[ReadWatcher] = []  # this thread's watchers; the last one is told


_watchers = _Watchers()
_watch_lock = threading.Lock()
_watching = 0  # watchers in all threads: the properties are installed while > 0


def _get_data(v: Value) -> Any:
    x = _RAW_DATA.__get__(v, Value)
    stack = _watchers.stack
    if not stack:
        return x
    frame = _getframe(1)
    return x if frame.f_code in _OP_CODE else stack[-1].data(v, x, frame)


def _set_data(v: Value, x: Any) -> None:
    stack = _watchers.stack
    if stack:
        frame = _getframe(1)
        if frame.f_code is _INIT_CODE:
            stack[-1].made(v)
        else:
            stack[-1].stored(v, x, frame)
    _RAW_DATA.__set__(v, x)


def _get_local(v: Value) -> Any:
    stack = _watchers.stack
    if stack:
        stack[-1].local(v, _getframe(1))
    return _RAW_LOCAL.__get__(v, Value)


def _get_grad(v: Value) -> Any:
    stack = _watchers.stack
    if stack:
        frame = _getframe(1)
        if frame.f_globals is not globals():  # the engine's own reads (repr, backward) pass
            stack[-1].grad(v, frame)
    return _RAW_GRAD.__get__(v, Value)


_WATCHED = {
    "data": property(_get_data, _set_data, doc="The node's number (watched: see watch_reads)."),
    "_local": property(_get_local, _RAW_LOCAL.__set__),
    "grad": property(_get_grad, _RAW_GRAD.__set__),
}


@contextmanager
def watch_reads(watcher: ReadWatcher) -> Iterator[None]:
    """For the duration of the block, this thread's reads of Values' `.data`, `._local` and
    `.grad` are told to `watcher` (see `ReadWatcher`); other threads are not affected. Nests: the
    innermost watcher of a thread is told."""
    global _watching
    with _watch_lock:
        if _watching == 0:
            for name, prop in _WATCHED.items():
                setattr(Value, name, prop)
        _watching += 1
    stack = _watchers.stack
    stack.append(watcher)
    try:
        yield
    finally:
        stack.pop()
        with _watch_lock:
            _watching -= 1
            if _watching == 0:
                for name, slot in _SLOTS.items():
                    setattr(Value, name, slot)
