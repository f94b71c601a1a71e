"""The autograd engine: `Value`, a scalar that remembers how it was made, and backpropagation.

As in the lecture, a Value holds its `data`, its `grad`, its children `_prev` and its `_op`; each
op also stores its *local derivatives* (`_local`: d out / d child, one per child), and
`backward()` applies the chain rule, ``child.grad += local * out.grad``, children before parents.

Each primitive op is declared once, by `@_op` on its method: its `forward` and its derivative
rule `local(xp, out, *children)`, written for an array module `xp`, which runs on floats here,
on numpy arrays in `micrograd.jit`, on Values in ``grad(create_graph=True)`` and on names in the
pictures (core/registry.py keeps them: `OPS`). Each method stores what its rule gives on floats; `-`
and `/` are built from primitives. Beside this file: the numbers policy (core/floats.py: finite in,
finite out or an error naming your op) and the graph walk (core/walk.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from math import isfinite
from operator import mul
from typing import SupportsIndex, Union

from .core.collector import adopt, restore_gc
from .core.copying import reduce_value
from .core.floats import DERIVATIVES, FLOAT_MAX_TEXT, as_float, check_overflow, pow_forward
from .core.floats import sigmoid as _sigmoid
from .core.registry import FLOATS, OPS, OpInfo, explain_local, op_kind
from .core.registry import op as _op
from .core.walk import backward_step, chain_rule, local_derivatives, topological_order

__all__ = [
    "Value",
    "grad",
    "Operand",
    "OPS",
    "OpInfo",
    "op_kind",
    "explain_local",
    "topological_order",
    "backward_step",
    "restore_gc",
]  # the public names (README's API table)

adopt()  # the garbage-collector policy (core/collector.py); restore_gc() undoes it

Number = Union[int, float, Fraction]
Operand = Union["Value", int, float, Fraction]


class Value:
    """A scalar in a computation graph: its `data`, the `grad` of the output w.r.t. it, and how it
    was made: `_prev` (its children), `_op`, and `_local` (d self / d child, one per child).
    Values hash and compare by identity (object's defaults): they live in sets and dicts."""

    # Slots for speed and memory, and a `__dict__` so that a Value takes attributes of your own
    # too, as the lecture's does (p.m = 0 in an optimiser, a colour for a picture).
    __slots__ = ("data", "grad", "label", "_prev", "_op", "_local", "_visit", "__dict__")
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected ops

    def __init__(
        self,
        data: Number,
        _children: Iterable[Value] = (),
        _op: str = "",
        label: str = "",
        _local: Sequence[float] = (),
    ) -> None:
        self.data: float = data if type(data) is float else as_float(data)
        self.grad: float = 0.0
        self.label = label
        self._prev = _children if type(_children) is tuple else tuple(_children)
        self._op = _op
        self._local = _local  # d self / d child, one per child; or a callable set by a learner
        self._visit = None  # marks nodes already seen by a graph walk (cheaper than a set)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple:
        return reduce_value(self)  # copy.deepcopy and pickle at any depth, without recursion

    # ---------------------------------------------------------------- the ops
    # Each primitive is declared once, by @_op: its forward and its local derivatives (its rule:
    # d out / d child, for each child), for any array module xp. Its method builds the node on
    # floats: the value, what the rule gives there (`OPS[op].local(FLOATS, out, *children)`, or
    # its `constant`; `_node` runs both rules) and the op's errors.

    @_op("+", 2, forward=lambda xp, a, b: a + b, local=(1.0, 1.0))  # the same at every node
    def __add__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "+", self)  # (no call: fast)
        a, b = self.data, other.data
        out = a + b
        if not isfinite(out):  # an overflow is an error; a NaN or inf you put in propagates
            check_overflow(f"addition: {a!r} + {b!r}", out, a, b)
        return Value(out, (self, other), "+", "", OPS["+"].constant)

    @_op("*", 2, forward=lambda xp, a, b: a * b, local=lambda xp, out, a, b: (b, a))
    def __mul__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "*", self)
        a, b = self.data, other.data
        out = a * b
        if not isfinite(out):
            check_overflow(f"multiplication: {a!r} * {b!r}", out, a, b)
        return Value(out, (self, other), "*", "", OPS["*"].local(FLOATS, out, a, b))

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
        a = self.data
        if isinstance(other, Value):
            b = other.data
            out = pow_forward(a, b)
            return Value(out, (self, other), "**", "", OPS["**"].on_floats(out, a, b))
        p = as_float(other, "the exponent of **")
        out = pow_forward(a, p)
        node = Value(out, (self,), f"**{other}", "", OPS["**p"].on_floats(out, a, p))
        node._p = p  # the exponent: the op's own number, not a child
        return node

    @_op(
        "ReLU",
        1,
        forward=lambda xp, a: xp.maximum(a, 0.0) + 0.0,  # (+ 0.0: no -0.0)
        local=lambda xp, out, a: (xp.where(a <= 0, 0.0, 1.0),),  # NaN: slope 1, as PyTorch
    )
    def relu(self) -> Value:
        x = self.data
        out = 0.0 if x <= 0 else x
        return Value(out, (self,), "ReLU", "", OPS["ReLU"].local(FLOATS, out, x))

    @_op("exp", 1, forward=lambda xp, a: xp.exp(a), local=lambda xp, out, a: (out,))  # e^a
    def exp(self) -> Value:
        return _node("exp", self)

    @_op("log", 1, forward=lambda xp, a: xp.log(a), local=lambda xp, out, a: (1.0 / a,))
    def log(self) -> Value:
        if self.data <= 0 and not DERIVATIVES.active:  # (NaN passes: it propagates)
            raise ValueError(f"log is defined for positive numbers only, got log({self.data!r})")
        return _node("log", self)

    # tanh: xp.tanh is correctly rounded on floats and numpy (floats.tanh); ±1 past ±19.1
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
        return _node("maximum", self, _lift(other, "maximum", self))

    @_op(
        "minimum",
        2,
        forward=lambda xp, a, b: xp.minimum(a, b),
        local=lambda xp, out, a, b: (_winner(xp, b, a), _winner(xp, a, b)),
    )
    def minimum(self, other: Operand) -> Value:
        return _node("minimum", self, _lift(other, "minimum", self))

    # ---------------------------------------------------------------- fused ops
    # Same maths as chains of * and +, as one node: the level at which an op lives is a choice.

    @staticmethod
    @_op(
        "dot",
        None,  # children (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
        local=lambda xp, out, *c: _dot_local(*_w_x_b(c)),
        make=lambda children, p: Value.dot(*_w_x_b(children)),
    )
    def dot(w: Sequence[Operand], x: Sequence[Operand], b: Operand = 0.0) -> Value:
        """b + w[0]*x[0] + w[1]*x[1] + ..., one node (a neuron's pre-activation). Adds in the
        order ``sum((wi*xi for wi, xi in zip(w, x)), b)`` does: the same bits as that graph."""
        w, x = tuple(w), tuple(x)
        if len(w) != len(x):
            raise ValueError(f"dot: w has {len(w)} entries but x has {len(x)}")
        children = (*w, *x, b)
        for v in children:
            if type(v) is not Value:  # a plain number among them: lift it (else: no call)
                w, x = _lift_all(w, "dot", "w"), _lift_all(x, "dot", "x")
                children = (*w, *x, _lift(b, "dot", "b"))
                break
        wd = [wi.data for wi in w]
        xd = [xi.data for xi in x]
        bd = children[-1].data
        # A plain loop, not sum(): from Python 3.12 sum() of floats compensates rounding errors,
        # which would no longer match the unfused chain of + nodes bit for bit.
        out = bd
        for p in map(mul, wd, xd):
            out += p
        if not isfinite(out):
            check_overflow("dot: w·x + b", out, *wd, *xd, bd)
        return Value(out, children, "dot", "", _dot_local(wd, xd, bd))

    @staticmethod
    @_op(
        "sum",
        None,
        local=lambda xp, out, *c: (1.0,) * len(c),
        make=lambda children, p: Value.sum(children),
    )
    def sum(values: Iterable[Operand]) -> Value:
        """values[0] + values[1] + ..., one node with every term as a child."""
        vs = _lift_all(values, "sum", "sum")
        xs = [v.data for v in vs]
        out = 0.0
        for x in xs:  # a plain loop, not sum(): see dot
            out += x
        if not isfinite(out):
            check_overflow("sum", out, *xs)
        return Value(out, vs, "sum", "", OPS["sum"].local(FLOATS, out, *xs))

    # ---------------------------------------------------------------- derived ops
    # Built from the primitives; an overflow inside one is re-raised naming the op you wrote.

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

    # ---------------------------------------------------------------- backpropagation

    @property
    def _backward(self) -> Callable[[], None]:
        """The chain rule at this node, once: ``o.grad = 1.0; o._backward()`` pushes o's grad
        one step back, into each child's grad, as in the lecture."""
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
        chain_rule(topo)  # for v in reversed(topo): the chain rule at v, as v._backward()


def _lift(other: object, op: str, left: object) -> Value:
    """An operand of op `op` as a Value: a plain number becomes a constant leaf."""
    return other if isinstance(other, Value) else Value(as_float(other, op, left))


def _lift_all(values: Iterable[Operand], op: str, what: str) -> tuple[Value, ...]:
    vs = tuple(values)
    for v in vs:  # usually all Values already: check cheaply, lift only if needed
        if type(v) is not Value:
            return tuple(_lift(v, op, what) for v in vs)
    return vs  # type: ignore[return-value]


def _node(kind: str, *children: Value) -> Value:
    """A node of the op `kind` on `children`: its value and local derivatives by its rules."""
    info = OPS[kind]
    xs = [c.data for c in children]
    out = info.value_on_floats(*xs)
    if not isfinite(out):
        check_overflow(f"{kind}({', '.join(map(repr, xs))})", out, *xs)
    return Value(out, children, kind, "", info.on_floats(out, *xs))


def _overflowed(word: str, a: Value, op: str, b: Value) -> str:
    return f"{word}: {a.data!r} {op} {b.data!r} overflows a float ({FLOAT_MAX_TEXT})"


def _w_x_b(children: Sequence) -> tuple:
    """dot's children, (*w, *x, b), as w, x and b."""
    n = len(children) // 2
    return children[:n], children[n:-1], children[-1]


def _dot_local(w: Sequence, x: Sequence, b: object) -> tuple:
    """d(b + w·x) / d(*w, *x, b): x_i for each w_i, w_i for each x_i, 1 for b (dot's rule,
    which dot's method calls with w and x already apart)."""
    return (*x, *w, 1.0)


def _power_slope(xp: object, a: float, q: float) -> float:
    """d/da a**q = q a**(q-1), and 0 where q == 0, as PyTorch (not 0 * inf at a == 0)."""
    return xp.where(q == 0, 0.0, q * xp.power(a, q - 1))  # type: ignore[attr-defined]


def _winner(xp: object, a: float, b: float) -> float:
    """The slope of `a` in max(a, b): 1 if a wins, 0 if b does, ½ on a tie, 1 if a NaN is in."""
    return xp.where(a > b, 1.0, xp.where(a < b, 0.0, xp.where(a == b, 0.5, 1.0)))  # type: ignore


def grad(
    output: Value, inputs: Value | Sequence[Value], create_graph: bool = False
) -> float | Value | tuple:
    """d output / d input for each input, returned; no `.grad` is touched.

    `inputs` is one Value (one gradient back) or a sequence (a tuple back); inputs the output
    does not depend on get 0. With ``create_graph=True`` the gradients are Values, built by the
    ops' rules, to differentiate again: for ``y = x ** 3`` at 2, ``dy = grad(y, x,
    create_graph=True)`` is 3x² = 12 and ``grad(dy, x)`` is 6x = 12.
    """
    if not isinstance(output, Value):
        raise TypeError(f"grad: output must be a Value, got {type(output).__name__} {output!r}")
    single = isinstance(inputs, Value)
    xs = [inputs] if single else list(inputs)
    for x in xs:
        if not isinstance(x, Value):
            raise TypeError(f"grad: inputs must be Values, got {type(x).__name__} {x!r}")
    grads: dict[Value, object] = {output: Value(1.0) if create_graph else 1.0}
    active, DERIVATIVES.active = DERIVATIVES.active, create_graph or DERIVATIVES.active
    try:
        for v in reversed(topological_order(output)):
            g = grads.get(v)
            if g is None or not v._prev:
                continue
            if create_graph and op_kind(v) in OPS:
                local = OPS[op_kind(v)].on_values(v)  # the op's rule, on Values
            elif create_graph or callable(v._local):
                raise NotImplementedError(
                    f"grad: node {v!r} (op {v._op!r}) has no registered "
                    f"rule; use .backward() for it"
                )
            else:
                local = local_derivatives(v)
            for child, d in zip(v._prev, local):
                prev = grads.get(child)
                grads[child] = d * g if prev is None else prev + d * g
    finally:
        DERIVATIVES.active = active
    zero = Value(0.0) if create_graph else 0.0
    result = tuple(grads.get(x, zero) for x in xs)
    return result[0] if single else result
