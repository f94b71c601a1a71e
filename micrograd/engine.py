"""The autograd engine: a scalar `Value` that remembers how it was made, and backpropagation.

This is the lecture's `Value` with three changes a learner can see and one they mostly can't:

* Each op computes its output *and its local derivatives* on the spot, side by side, and stores the
  local derivatives on the result (`_local`, one per child in `_prev`). The backward pass is then a
  single, uniform application of the chain rule: ``child.grad += local * out.grad``. (The lecture
  stores a closure per node instead; a closure costs ~250 bytes, which is most of a node.)
  ``node._backward()`` still works, exactly as in the lecture.
* ``backward()`` is iterative (a million-deep graph is fine), deterministic (children are a tuple,
  visited in order), and PyTorch-shaped: gradients accumulate into leaves across calls, while the
  grads of intermediate nodes are recomputed each time (so calling it twice is not wrong).
* `grad(output, inputs, create_graph=True)` returns gradients as `Value`s, so you can differentiate
  again (second derivatives, Newton's method). For that each primitive also registers its local
  derivative written with `Value` arithmetic, right above its method (`@_rule`).
* Fused ops `Value.dot` (a neuron's w·x + b) and `Value.sum` are single nodes with many children:
  the same maths as a chain of `*` and `+`, many times fewer Python objects.

Derived ops (`-`, `/`, reflected forms) are built from the primitives and need no derivative of
their own.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from operator import mul
from typing import Union

Number = Union[int, float, Fraction]
Operand = Union["Value", int, float, Fraction]

# Symbolic local derivatives, by op kind, for create_graph=True: rule(out, *children) -> tuple of
# Values, one per child. Filled by @_rule beside each primitive below.
_RULES: dict[str, Callable[..., tuple[Value, ...]]] = {}


def _rule(kind: str, fn: Callable[..., tuple]) -> Callable[[Callable], Callable]:
    def register(method: Callable) -> Callable:
        _RULES[kind] = fn
        return method

    return register


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


def _pow_local(a: float, p: float) -> float:
    """d/da a**p = p * a**(p-1), with PyTorch's values where that formula breaks down."""
    if p == 0:
        return 0.0  # PyTorch masks this to 0, though 0 * 0**-1 would be 0 * inf
    try:
        return p * a ** (p - 1)
    except ZeroDivisionError:  # a == 0 and p < 1: the slope is infinite (sqrt at 0)
        return math.inf if p > 0 else -math.inf
    except OverflowError:  # the slope is too steep for a float: ±inf, with the formula's sign
        odd_power = (p - 1) % 2 == 1  # a**(p-1) keeps the sign of a only for odd p-1
        return math.copysign(math.inf, p * (a if odd_power else 1.0))


def _pow_forward(a: float, p: float) -> float:
    if a == 0 and p < 0:
        raise ZeroDivisionError(f"pow: {a!r} ** {p!r} (zero to a negative power) is undefined")
    if a < 0 and not float(p).is_integer():
        raise ValueError(
            f"pow: {a!r} ** {p!r} is not a real number (a negative base needs an integer "
            f"exponent)"
        )
    try:
        return float(a**p)
    except OverflowError:
        raise OverflowError(f"pow: {a!r} ** {p!r} overflows a float (max ~1.8e308)") from None


def _exponent(op: str) -> float:
    # `x ** p` with a plain number p is labelled '**p', as in karpathy's micrograd; repr
    # round-trips, so the exponent is recovered exactly when a symbolic rule needs it.
    text = op[2:]
    return float(Fraction(text)) if "/" in text else float(text)


_ONE, _ZERO = (1.0,), (0.0,)  # ReLU's local derivative, shared by every ReLU node


class Value:
    """A scalar in a computation graph: its `data`, the `grad` of the output w.r.t. it, and how it
    was made (`_prev` children, `_op`, and `_local` derivatives of this node w.r.t. each child)."""

    __slots__ = ("data", "grad", "label", "_prev", "_op", "_local", "_visit")
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected ops

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
    # Each: forward value, then the local derivative w.r.t. each child.

    @_rule("+", lambda out, a, b: (Value(1.0), Value(1.0)))
    def __add__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "+", self)
        return Value(self.data + other.data, (self, other), "+", "", (1.0, 1.0))

    @_rule("*", lambda out, a, b: (b, a))
    def __mul__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "*", self)
        return Value(self.data * other.data, (self, other), "*", "", (other.data, self.data))

    @_rule("**p", lambda out, a: (_pow_rule(a, _exponent(out._op)),))
    @_rule("**", lambda out, a, b: (_pow_rule(a, b), out * _log_or_nan(a)))
    def __pow__(self, other: Operand) -> Value:
        a = self.data
        if isinstance(other, Value):  # d/db a**b = a**b * ln(a): NaN for a < 0, 0 for a == 0
            b = other.data
            out = _pow_forward(a, b)
            db = out * math.log(a) if a > 0 else (0.0 if a == 0 else math.nan)
            return Value(out, (self, other), "**", "", (_pow_local(a, b), db))
        p = _as_float(other, "the exponent of **")
        return Value(_pow_forward(a, p), (self,), f"**{other}", "", (_pow_local(a, p),))

    @_rule("exp", lambda out, a: (out,))
    def exp(self) -> Value:
        x = self.data
        try:
            e = math.exp(x)
        except OverflowError:
            raise OverflowError(f"exp({x!r}) overflows a float (max ~1.8e308)") from None
        return Value(e, (self,), "exp", "", (e,))  # d/dx e^x = e^x

    @_rule("log", lambda out, a: (1 / a,))
    def log(self) -> Value:
        x = self.data
        if not x > 0:
            raise ValueError(f"log is defined for positive numbers only, got log({x!r})")
        return Value(math.log(x), (self,), "log", "", (1.0 / x,))

    @_rule("tanh", lambda out, a: (1 - out * out,))
    def tanh(self) -> Value:
        t = math.tanh(self.data)  # exact ±1 at ±1e308, where (e^2x - 1)/(e^2x + 1) overflows
        return Value(t, (self,), "tanh", "", (1.0 - t * t,))

    @_rule("sigmoid", lambda out, a: (out * (1 - out),))
    def sigmoid(self) -> Value:
        x = self.data
        if x >= 0:  # never exp of a large positive number: stable at ±1e308
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return Value(s, (self,), "sigmoid", "", (s * (1.0 - s),))

    @_rule("ReLU", lambda out, a: (Value(1.0 if a.data > 0 else 0.0),))
    def relu(self) -> Value:
        x = self.data
        # Shared constant tuples for the slope: one allocation fewer per node, less work for gc.
        return Value(x if x > 0 else 0.0, (self,), "ReLU", "", _ONE if x > 0 else _ZERO)

    # ---------------------------------------------------------------- fused ops
    # Same maths as chains of * and +, as one node: the level at which an op lives is a choice.

    @staticmethod
    # children are (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
    @_rule("dot", lambda out, *c: (*c[(len(c) // 2) : -1], *c[: len(c) // 2], Value(1.0)))
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
        return Value(out, (*w, *x, b), "dot", "", (*xd, *wd, 1.0))

    @staticmethod
    @_rule("sum", lambda out, *c: tuple(Value(1.0) for _ in c))
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
        return Value(out, vs, "sum", "", (1.0,) * len(vs))

    # ---------------------------------------------------------------- derived ops

    def __neg__(self) -> Value:
        return self * -1

    def __radd__(self, other: Operand) -> Value:
        return _lift(other, "+", self) + self

    def __sub__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "-", self)
        return self + (-other)

    def __rsub__(self, other: Operand) -> Value:
        return _lift(other, "-", self) + (-self)

    def __rmul__(self, other: Operand) -> Value:
        return _lift(other, "*", self) * self

    def __truediv__(self, other: Operand) -> Value:
        other = other if isinstance(other, Value) else _lift(other, "/", self)
        if other.data == 0:
            raise ZeroDivisionError(f"division by zero: {self.data!r} / {other.data!r}")
        return self * other**-1

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

        def _backward() -> None:
            for child, d in zip(self._prev, local):
                child.grad += d * self.grad

        return _backward

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        # A learner's own op in the lecture's style: `out._backward = _backward`.
        self._local = fn

    def backward(self) -> None:
        """Fill `.grad` of every node this Value depends on with d(self)/d(node).

        Like PyTorch, leaves (nodes with no children: inputs and parameters) accumulate, so call
        `zero_grad()` between steps; intermediate nodes are overwritten.
        """
        topo = _topological_order(self)
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
                else:
                    for child, d in zip(v._prev, local):
                        child.grad += d * g
            elif callable(local):
                local()


def _pow_rule(a: Value, p: Value | float) -> Value:
    # The symbolic d/da a**p = p * a**(p-1), with the float path's values where it breaks down
    # (p == 0, or a == 0 with p < 1): there the slope is a constant, 0 or ±inf.
    pv = p.data if isinstance(p, Value) else p
    if pv == 0 or (a.data == 0 and pv < 1):
        return Value(_pow_local(a.data, pv))
    return p * a ** (p - 1)


def _log_or_nan(a: Value) -> Value:
    # The symbolic d/db a**b needs ln(a); for a <= 0 it matches the float path: 0 or NaN.
    if a.data > 0:
        return a.log()
    return Value(0.0 if a.data == 0 else math.nan)


def _topological_order(root: Value) -> list[Value]:
    """Every node `root` depends on, children before parents (a post-order depth-first walk).

    Iterative, with an explicit stack, so depth is limited only by memory; deterministic, because
    children are visited in tuple order. Each node's `_visit` is set to a fresh token per walk.
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
        for child in reversed(v._prev):
            if child._visit is not done:
                stack.append(child)
    return topo


def _kind(op: str) -> str:
    return "**p" if op.startswith("**") and len(op) > 2 else op


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
    topo = _topological_order(output)
    grads: dict[Value, object] = {output: Value(1.0) if create_graph else 1.0}
    for v in reversed(topo):
        g = grads.get(v)
        if g is None or not v._prev:
            continue
        if create_graph:
            rule = _RULES.get(_kind(v._op))
            if rule is None:
                raise NotImplementedError(
                    f"grad(create_graph=True): no symbolic derivative for op {v._op!r}"
                )
            local = rule(v, *v._prev)
        else:
            local = v._local
            if callable(local):
                raise NotImplementedError(
                    f"grad: node {v!r} (op {v._op!r}) has a hand-written _backward; "
                    f"use .backward() for it"
                )
        for child, d in zip(v._prev, local):
            prev = grads.get(child)
            contribution = d * g
            grads[child] = contribution if prev is None else prev + contribution
    zero = Value(0.0) if create_graph else 0.0
    result = tuple(grads.get(x, zero) for x in xs)
    return result[0] if single else result
