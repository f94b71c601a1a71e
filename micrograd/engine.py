"""The autograd engine: `Value`, a scalar that remembers how it was made, and backpropagation.

A Value holds `data`, `grad`, children `_prev`, `_op` and the *local derivatives* its op stored
(`_local`: d out / d child); `backward()` orders the graph children first, then applies the chain
rule at each node, parents first. Each primitive op is declared once, by `@_op` on its method: its
`forward` and derivative rule, for an array module `xp` (floats here, numpy in jit, Values in
``grad(create_graph=True)``, names in the pictures: `OPS`). `_node` runs both rules on floats; `-`
and `/` are built from primitives; the numbers policy is applied in one place, `_finite`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from operator import mul
from typing import Any, SupportsIndex, Union

from .core.collector import adopt, release_memory, restore_gc
from .core.compiled import Node, use_compiled
from .core.copying import reduce_value
from .core.fast import install
from .core.floats import DERIVATIVES, FLOAT_MAX_TEXT, Scalar, as_float, check_overflow, pow_forward
from .core.floats import sigmoid as _sigmoid
from .core.gradients import grad
from .core.registry import FLOATS, OPS, OpInfo, explain_local, op_kind
from .core.registry import op as _op
from .core.walk import backward_step, local_derivatives, topological_order

__all__ = ["Value", "grad", "Operand", "OPS", "OpInfo", "op_kind", "explain_local"]  # README's API
__all__ += ["topological_order", "backward_step", "restore_gc", "release_memory"]

adopt()  # the pure engine's garbage-collector policy (core/collector.py); restore_gc() undoes it

Number = Union[int, float, Fraction]
Operand = Union["Value", int, float, Fraction]
_ONE = object()  # _node's `b` when the op has one child


class Value(Node, Scalar):
    """A scalar in a computation graph: its `data`, the `grad` of the output w.r.t. it, and how it
    was made: `_prev` (its children), `_op`, `_local`. Its fields are Node's (core/compiled.py),
    with a `__dict__` (p.m = 0); float(v), v.item(), v < w read its number (Scalar, floats.py)."""

    __slots__ = ()  # (hashed by identity: sets and dicts)
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected ops

    def __init__(
        self,
        data: Number,
        _children: Iterable[Value] = (),
        _op: str = "",
        label: str = "",
        _local: Sequence[float] = (),
    ) -> None:
        x = data if type(data) is float else as_float(data)
        self._prev = _children if type(_children) is tuple else tuple(_children)
        if x - x and self._prev:  # NaN or ±inf made by an op (x - x is 0.0 for a finite x)
            _finite(x, self._prev, _op)
        self.data: float = x
        self.grad: float = 0.0
        self.label = label
        self._op = _op
        self._local = _local  # d self / d child, one per child; or a callable set by a learner
        self._visit = None  # marks nodes already seen by a graph walk (cheaper than a set)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple:
        return reduce_value(self)  # copy.deepcopy and pickle at any depth, without recursion

    # ------------------------------------------- the ops: each declared once, by @_op (see above)

    @_op("+", 2, forward=lambda xp, a, b: a + b, local=(1.0, 1.0))  # the same at every node
    def __add__(self, other: Operand) -> Value:
        return _node("+", self, other)

    @_op("*", 2, forward=lambda xp, a, b: a * b, local=lambda xp, out, a, b: (b, a))
    def __mul__(self, other: Operand) -> Value:
        return _node("*", self, other)

    @_op(
        "**p",
        1,
        forward=lambda xp, a, p: xp.power(a, p),  # x ** a number: its _op is '**2'
        local=lambda xp, out, a, p: (_power_slope(xp, a, p),),
        make=lambda children, p: children[0] ** p,
        param="_p",
    )
    @_op(
        "**",
        2,
        forward=lambda xp, a, b: xp.power(a, b),  # x ** a Value: d/db = a**b ln a
        local=lambda xp, out, a, b: (
            _power_slope(xp, a, b),
            xp.where(a > 0, out * xp.log(a), xp.where(a == 0, 0.0, float("nan"))),
        ),
    )  # (as PyTorch)
    def __pow__(self, other: Operand) -> Value:
        if isinstance(other, Value):
            pow_forward(self.data, other.data)  # its errors: a negative base, zero to a power < 0
            return _node("**", self, other)
        p = as_float(other, "the exponent of **")
        pow_forward(self.data, p)
        node = _node("**p", self, p, op=f"**{other}")  # _op: '**2'
        node._p = p  # the exponent: the op's own number, not a child
        return node

    @_op(
        "ReLU",
        1,
        forward=lambda xp, a: xp.maximum(a, 0.0) + 0.0,  # (+ 0.0: no -0.0)
        local=lambda xp, out, a: (xp.where(a <= 0, 0.0, 1.0),),  # NaN: slope 1, as PyTorch
    )
    def relu(self) -> Value:
        return _node("ReLU", self)

    @_op("exp", 1, forward=lambda xp, a: xp.exp(a), local=lambda xp, out, a: (out,))  # e^a
    def exp(self) -> Value:
        return _node("exp", self)

    @_op("log", 1, forward=lambda xp, a: xp.log(a), local=lambda xp, out, a: (1.0 / a,))
    def log(self) -> Value:
        if self.data <= 0 and not DERIVATIVES.active:  # (NaN passes: it propagates)
            raise ValueError(f"log is defined for positive numbers only, got log({self.data!r})")
        return _node("log", self)

    @_op("tanh", 1, forward=lambda xp, x: xp.tanh(x), local=lambda xp, t, x: (1.0 - t * t,))
    def tanh(self) -> Value:
        return _node("tanh", self)

    @_op("sigmoid", 1, forward=_sigmoid, local=lambda xp, out, a: (out * (1.0 - out),))
    def sigmoid(self) -> Value:
        return _node("sigmoid", self)

    @_op(
        "abs",
        1,
        forward=lambda xp, a: xp.abs(a),  # slope 0 at 0 (and NaN), as PyTorch
        local=lambda xp, out, a: (xp.where(a > 0, 1.0, xp.where(a < 0, -1.0, 0.0)),),
    )
    def abs(self) -> Value:
        return _node("abs", self)

    @_op(
        "softplus",
        1,  # log(1 + e^a), never e^a of a large a: exact at ±1e308
        forward=lambda xp, a: xp.log1p(xp.exp(-xp.abs(a))) + xp.maximum(a, 0.0),
        local=lambda xp, out, a: (xp.sigmoid(a),),
    )
    def softplus(self) -> Value:
        return _node("softplus", self)

    # maximum and minimum follow PyTorch: the winner takes the gradient, a tie (a == b) splits it
    # ½ and ½, and a NaN (which the result carries on) passes it to both.
    @_op(
        "maximum",
        2,
        forward=lambda xp, a, b: xp.maximum(a, b),
        local=lambda xp, out, a, b: (_winner(xp, a, b), _winner(xp, b, a)),
    )
    def maximum(self, other: Operand) -> Value:
        return _node("maximum", self, other)

    @_op(
        "minimum",
        2,
        forward=lambda xp, a, b: xp.minimum(a, b),
        local=lambda xp, out, a, b: (_winner(xp, b, a), _winner(xp, a, b)),
    )
    def minimum(self, other: Operand) -> Value:
        return _node("minimum", self, other)

    @staticmethod
    @_op(
        "dot",
        None,  # children (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
        local=lambda xp, out, *c: _dot_local(*_w_x_b(c)),
        make=lambda children, p: Value.dot(*_w_x_b(children)),
    )
    def dot(w: Sequence[Operand], x: Sequence[Operand], b: Operand = 0.0) -> Value:
        """A fused op: b + w[0]*x[0] + w[1]*x[1] + ..., one node (a neuron's pre-activation). In
        the order ``sum((wi*xi for wi, xi in zip(w, x)), b)`` adds: the same bits as that graph."""
        w, x = _lift_all(w, "dot", "w"), _lift_all(x, "dot", "x")
        if len(w) != len(x):
            raise ValueError(f"dot: w has {len(w)} entries but x has {len(x)}")
        children = (*w, *x, _lift(b, "dot", "b"))
        wd, xd, bd = [wi.data for wi in w], [xi.data for xi in x], children[-1].data
        out = bd  # a plain loop, not sum() (from 3.12 it compensates: not the chain's bits)
        for p in map(mul, wd, xd):
            out += p
        return Value(out, children, "dot", "", _dot_local(wd, xd, bd))

    @staticmethod
    @_op(
        "sum",
        None,
        local=lambda xp, out, *c: (1.0,) * len(c),
        make=lambda children, p: Value.sum(children),
    )
    def sum(values: Iterable[Operand]) -> Value:
        """values[0] + values[1] + ..., one node with every term as a child (a fused op, as dot)."""
        vs = _lift_all(values, "sum", "sum")
        xs = [v.data for v in vs]
        out = 0.0
        for x in xs:  # a plain loop, not sum(): see dot
            out += x
        return Value(out, vs, "sum", "", OPS["sum"].local(FLOATS, out, *xs))

    # ----------------------------------- derived ops (an overflow inside names the op you wrote)

    def __neg__(self) -> Value:
        return self * -1

    def __radd__(self, other: Operand) -> Value:
        return _lift(other, "+", self) + self

    def __sub__(self, other: Operand) -> Value:
        other = _lift(other, "-", self)
        try:
            return self + (-other)
        except OverflowError:
            raise OverflowError(_overflowed("subtraction", self, "-", other)) from None

    def __rsub__(self, other: Operand) -> Value:
        return _lift(other, "-", self) - self

    def __rmul__(self, other: Operand) -> Value:
        return _lift(other, "*", self) * self

    def __truediv__(self, other: Operand) -> Value:
        other = _lift(other, "/", self)
        if other.data == 0:
            raise ZeroDivisionError(f"division by zero: {self.data!r} / {other.data!r}")
        try:
            return self * other**-1
        except OverflowError:
            raise OverflowError(_overflowed("division", self, "/", other)) from None

    def __rtruediv__(self, other: Operand) -> Value:
        return _lift(other, "/", self) / self

    def __rpow__(self, other: Operand) -> Value:
        return _lift(other, "**", self) ** self

    @property
    def _backward(self) -> Callable[[], None]:  # backpropagation: the chain rule at one node
        """The chain rule at this node, once, as in the lecture: ``o._backward()``."""
        if callable(self._local):
            return self._local
        local_derivatives(self)  # refuse a malformed _local now, not when it is called

        def step() -> None:  # (it returns nothing, as the lecture's closure)
            backward_step(self)

        return step

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        self._local = fn  # a learner's own op in the lecture's style: `out._backward = _backward`

    def backward(self) -> None:
        """Fill `.grad` of every node this Value depends on with d(self)/d(node). As in PyTorch,
        leaves (inputs, parameters) accumulate: call `zero_grad()` between steps."""
        topo = topological_order(self, leaves=False)  # a leaf has no chain rule to apply
        for v in topo:
            if v._prev:
                v.grad = 0.0
        self.grad = 1.0 if self._prev else self.grad + 1.0
        for v in reversed(topo):  # the chain rule at each node, parents first
            if type(v._local) is not tuple or len(v._local) != len(v._prev):
                v._backward()  # a learner's own _backward, or local derivatives given by hand
                continue
            for child, local in zip(v._prev, v._local):
                child.grad += local * v.grad


install(Value)  # fast paths of the commonest ops (core/fast.py), held equal to the methods
use_compiled(Value)  # the compiled core's + - * and backward(), where it is built


def _lift(other: object, op: str, left: object) -> Value:
    """An operand of op `op` as a Value: a plain number becomes a constant leaf."""
    return other if isinstance(other, Value) else Value(as_float(other, op, left))


def _lift_all(values: Iterable[Operand], op: str, what: str) -> tuple[Value, ...]:
    vs = tuple(values)
    for v in vs:  # usually all Values already: a cheap loop, lifting only if not
        if type(v) is not Value:
            return tuple(_lift(v, op, what) for v in vs)
    return vs  # type: ignore[return-value]


def _node(kind: str, a: Value, b: Any = _ONE, op: str = "") -> Value:
    """A node of the op `kind` on `a` (and `b`: a number becomes a constant leaf, or is the op's
    own number, the exponent of x**2): its value and local derivatives by its rules on floats."""
    info = OPS[kind]
    if b is _ONE:
        children, xs = (a,), (a.data,)
    elif info.param:
        children, xs = (a,), (a.data, b)
    else:
        b = b if isinstance(b, Value) else _lift(b, kind, a)
        children, xs = (a, b), (a.data, b.data)
    try:
        out = info.forward(FLOATS, *xs)  # type: ignore[misc]
        local = info.constant or info.local(FLOATS, out, *xs)
    except ZeroDivisionError:  # Python's x / 0 raises: the rules as IEEE floating point divides
        out = info.value_on_floats(*xs)
        local = info.on_floats(out, *xs)
    return Value(out, children, op or kind, "", local)


_WHAT = {"+": "addition: {!r} + {!r}", "*": "multiplication: {!r} * {!r}", "dot": "dot: w·x + b"}


def _finite(out: float, children: tuple, op: str) -> None:
    """The numbers policy, as an op's node is made with a value `out` that is NaN or ±inf: from
    finite children an OverflowError naming the op (`_WHAT`, or exp(1000.0)); a node of no
    registered op (jit's, a learner's own) is its maker's business (core/floats.py)."""
    if op not in OPS:
        return
    xs = [c.data for c in children]
    what = _WHAT.get(op, "").format(*xs) or f"{op}({', '.join(map(repr, xs))})"
    check_overflow("sum" if op == "sum" else what, out, *xs)


def _overflowed(word: str, a: Value, op: str, b: Value) -> str:
    return f"{word}: {a.data!r} {op} {b.data!r} overflows a float ({FLOAT_MAX_TEXT})"


def _w_x_b(children: Sequence) -> tuple:
    n = len(children) // 2
    return children[:n], children[n:-1], children[-1]


def _dot_local(w: Sequence, x: Sequence, b: object) -> tuple:
    """d(b + w·x) / d(*w, *x, b): x_i for each w_i, w_i for each x_i, 1 for b."""
    return (*x, *w, 1.0)


def _power_slope(xp: object, a: float, q: float) -> float:
    """d/da a**q = q a**(q-1), and 0 where q == 0, as PyTorch (not 0 * inf at a == 0)."""
    return xp.where(q == 0, 0.0, q * xp.power(a, q - 1))  # type: ignore[attr-defined]


def _winner(xp: object, a: float, b: float) -> float:
    """The slope of `a` in max(a, b): 1 if a wins, 0 if b does, ½ on a tie, 1 if a NaN is in."""
    return xp.where(a > b, 1.0, xp.where(a < b, 0.0, xp.where(a == b, 0.5, 1.0)))  # type: ignore
