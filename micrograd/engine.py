"""The autograd engine: `Value`, a scalar that remembers how it was made, and backpropagation.

As in the lecture, a Value holds its `data`, its `grad`, its children `_prev` and its `_op`.
Each op computes its output and its *local derivatives*, d out / d child for each child, which
the new node keeps in `_local`; `backward()` is then one loop applying the chain rule,
``child.grad += local * out.grad``, children before parents (iterative: a million-deep graph is
fine; deterministic: children are a tuple). ``node._backward()`` applies it at one node.

Every primitive is declared once, by `@_op` on its method: its `forward` and its derivative
rule `local(xp, out, *children)`, written for an array module `xp` and run on floats here, on
numpy arrays by `micrograd.jit`, on Values by ``grad(create_graph=True)`` and on names for the
pictures (micrograd/registry.py holds `OPS`). `+`, `*`, `dot` and `relu` write their floats out
by hand, for speed; tests hold them equal to their rules. Derived ops (`-`, `/`) are built from
the primitives. Numbers follow one policy (micrograd/floats.py): finite in, finite out or an
error naming the op you wrote. micrograd.jit's tracer (micrograd/watch.py) reads how code reads
`.data`; the engine's one hook for it is `part_of_an_op`, on code that reads numbers for an op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from operator import mul
from typing import Union

from .floats import DERIVATIVES, FLOAT_MAX, FLOAT_MAX_TEXT, as_float, check_finite, pow_forward
from .registry import OPS, OpInfo, explain_local, op_kind, part_of_an_op, torch_module
from .registry import op as _op

__all__ = ["Value", "grad", "backward_step", "topological_order", "OPS", "OpInfo", "op_kind",
           "explain_local", "Operand"]  # fmt: skip

Number = Union[int, float, Fraction]
Operand = Union["Value", int, float, Fraction]


class Value:
    """A scalar in a computation graph: its `data`, the `grad` of the output w.r.t. it, and how it
    was made: `_prev` (its children), `_op`, and `_local` (d self / d child, one per child)."""

    # Slots for speed and memory, and a `__dict__` so that a Value takes attributes of your own
    # too, as the lecture's does (p.m = 0 in an optimiser, a colour for a picture).
    __slots__ = ("data", "grad", "label", "_prev", "_op", "_local", "_visit", "__dict__")
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
        self.data: float = data if type(data) is float else as_float(data)
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

    # ---------------------------------------------------------------- the ops
    # Each: @_op declares its forward and its local derivatives (one per child) once; the method
    # builds the node, with its own errors (naming the op and the value) where it has any.

    @_op("+", 2, forward=lambda xp, a, b: a + b, local=lambda xp, out, a, b: (1.0, 1.0))
    def __add__(self, other: Operand) -> Value:
        other = _lift(other, "+", self)
        out = self.data + other.data
        if not -FLOAT_MAX <= out <= FLOAT_MAX:  # overflow: ±inf
            check_finite(f"addition: {self.data!r} + {other.data!r}", out, self.data, other.data)
        return Value(out, (self, other), "+", "", (1.0, 1.0))

    @_op("*", 2, forward=lambda xp, a, b: a * b, local=lambda xp, out, a, b: (b, a))
    def __mul__(self, other: Operand) -> Value:
        other = _lift(other, "*", self)
        out = self.data * other.data
        if not -FLOAT_MAX <= out <= FLOAT_MAX:
            what = f"multiplication: {self.data!r} * {other.data!r}"
            check_finite(what, out, self.data, other.data)
        return Value(out, (self, other), "*", "", (other.data, self.data))

    @_op(
        "**p", 1,  # x ** a number p: the node's _op reads '**2', its exponent is node._p
        forward=lambda xp, a, p: xp.power(a, p),
        local=lambda xp, out, a, p: (xp.where(p == 0, 0.0, p * xp.power(a, p - 1)),),
        make=lambda children, p: children[0] ** p,
        param="_p",
    )  # fmt: skip
    @_op(
        "**", 2,  # x ** a Value: d/db a**b = a**b ln a, 0 at a == 0 and NaN below (as PyTorch)
        forward=lambda xp, a, b: xp.power(a, b),
        local=lambda xp, out, a, b: (
            xp.where(b == 0, 0.0, b * xp.power(a, b - 1)),
            xp.where(a > 0, out * xp.log(a), xp.where(a == 0, 0.0, float("nan"))),
        ),
    )  # fmt: skip
    def __pow__(self, other: Operand) -> Value:
        a = self.data
        if isinstance(other, Value):
            b = other.data
            out = pow_forward(a, b)
            return Value(out, (self, other), "**", "", OPS["**"].on_floats(out, a, b))
        p = as_float(other, "the exponent of **")
        out = pow_forward(a, p)
        return _Power(out, (self,), f"**{other}", "", OPS["**p"].on_floats(out, a, p), p)

    @_op(
        "ReLU", 1,
        forward=lambda xp, a: xp.maximum(a, 0.0) + 0.0,  # (+ 0.0: -0.0 becomes 0.0)
        local=lambda xp, out, a: (xp.where(a <= 0, 0.0, 1.0),),  # NaN: slope 1, as PyTorch
        activation="ReLU", equation="max(0, x)", torch=lambda torch: torch.nn.ReLU(),
    )  # fmt: skip
    def relu(self) -> Value:
        x = self.data  # its rule by hand, with tuples shared by every ReLU node: faster
        return Value(0.0 if x <= 0 else x, (self,), "ReLU", "", _ZERO if x <= 0 else _ONE)

    @_op("exp", 1, forward=lambda xp, a: xp.exp(a), local=lambda xp, out, a: (out,))  # e^a
    def exp(self) -> Value:
        return _node("exp", self)

    @_op("log", 1, forward=lambda xp, a: xp.log(a), local=lambda xp, out, a: (1.0 / a,))
    def log(self) -> Value:
        if self.data <= 0 and not DERIVATIVES.active:  # (NaN passes: it propagates)
            raise ValueError(f"log is defined for positive numbers only, got log({self.data!r})")
        return _node("log", self)

    @_op(
        "tanh", 1,
        forward=lambda xp, x: xp.tanh(x),  # correctly rounded; exact ±1 past ±19.1
        local=lambda xp, t, x: (1.0 - t * t,),
        activation="Tanh", equation="(e²ˣ − 1)/(e²ˣ + 1)", torch=lambda torch: torch.nn.Tanh(),
    )  # fmt: skip
    def tanh(self) -> Value:
        return _node("tanh", self)

    @_op(
        "sigmoid", 1,
        forward=lambda xp, a: _sigmoid(xp, a),
        local=lambda xp, out, a: (out * (1.0 - out),),
        activation="Sigmoid", equation="1/(1 + e⁻ˣ)", torch=lambda torch: torch.nn.Sigmoid(),
    )  # fmt: skip
    def sigmoid(self) -> Value:
        return _node("sigmoid", self)

    @_op(
        "abs", 1,
        forward=lambda xp, a: xp.abs(a),
        local=lambda xp, out, a: (xp.where(a > 0, 1.0, xp.where(a < 0, -1.0, 0.0)),),
        activation="Abs", equation="|x|",
        torch=lambda torch: torch_module(torch, "Abs", torch.abs),
    )  # fmt: skip
    def abs(self) -> Value:
        return _node("abs", self)  # slope 0 at 0 (and at NaN), as PyTorch

    @_op(
        "softplus", 1,  # log(1 + e^a), never exp of a large positive number: exact at ±1e308
        forward=lambda xp, a: xp.log1p(xp.exp(-xp.abs(a))) + xp.maximum(a, 0.0),
        local=lambda xp, out, a: (xp.sigmoid(a),),
        activation="Softplus", equation="log(1 + eˣ)",
        torch=lambda torch: torch.nn.Softplus(threshold=40.0),  # past 40, x itself is exact
    )  # fmt: skip
    def softplus(self) -> Value:
        return _node("softplus", self)

    # maximum and minimum follow PyTorch: the winner takes the gradient, a tie (a == b) splits it
    # ½ and ½, and a NaN (which the result carries on) passes it to both.
    @_op("maximum", 2, forward=lambda xp, a, b: xp.maximum(a, b),
         local=lambda xp, out, a, b: (_winner(xp, a, b), _winner(xp, b, a)))  # fmt: skip
    def maximum(self, other: Operand) -> Value:
        return _node("maximum", self, _lift(other, "maximum", self))

    @_op("minimum", 2, forward=lambda xp, a, b: xp.minimum(a, b),
         local=lambda xp, out, a, b: (_winner(xp, b, a), _winner(xp, a, b)))  # fmt: skip
    def minimum(self, other: Operand) -> Value:
        return _node("minimum", self, _lift(other, "minimum", self))

    # ---------------------------------------------------------------- fused ops
    # Same maths as chains of * and +, as one node: the level at which an op lives is a choice.

    @staticmethod
    @_op(
        "dot", None,  # children are (*w, *x, b): d/dw_i = x_i, d/dx_i = w_i, d/db = 1
        local=lambda xp, out, *c: (*c[len(c) // 2 : -1], *c[: len(c) // 2], 1.0),
        formula="d/dw_i = x_i, d/dx_i = w_i, d/db = 1", caption="w·x+b",
        make=lambda c, p: Value.dot(c[: len(c) // 2], c[len(c) // 2 : -1], c[-1]),
        kernel="weighted sum",
    )  # fmt: skip
    def dot(w: Sequence[Operand], x: Sequence[Operand], b: Operand = 0.0) -> Value:
        """b + w[0]*x[0] + w[1]*x[1] + ..., one node (a neuron's pre-activation). Adds in the
        order ``sum((wi*xi for wi, xi in zip(w, x)), b)`` does: the same bits as that graph."""
        w = _lift_all(w, "dot", "w")
        x = _lift_all(x, "dot", "x")
        if len(w) != len(x):
            raise ValueError(f"dot: w has {len(w)} entries but x has {len(x)}")
        b = _lift(b, "dot", "b")
        wd = [wi.data for wi in w]
        xd = [xi.data for xi in x]
        # A plain loop, not sum(): from Python 3.12 sum() of floats compensates rounding errors,
        # which would no longer match the unfused chain of + nodes bit for bit.
        out = b.data
        for p in map(mul, wd, xd):
            out += p
        if not -FLOAT_MAX <= out <= FLOAT_MAX:  # NaN or ±inf
            check_finite("dot: w·x + b", out, *wd, *xd, b.data)
        return Value(out, (*w, *x, b), "dot", "", (*xd, *wd, 1.0))

    @staticmethod
    @_op("sum", None, local=lambda xp, out, *c: (1.0,) * len(c), formula="d/da_i = 1",
         caption="Σ", make=lambda children, p: Value.sum(children), kernel="sum")  # fmt: skip
    def sum(values: Iterable[Operand]) -> Value:
        """values[0] + values[1] + ..., one node with every term as a child."""
        vs = _lift_all(values, "sum", "sum")
        out = 0.0
        for v in vs:  # a plain loop, not sum(): see dot
            out += v.data
        if not -FLOAT_MAX <= out <= FLOAT_MAX:
            check_finite("sum", out, *(v.data for v in vs))
        return Value(out, vs, "sum", "", (1.0,) * len(vs))

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

    @part_of_an_op  # it checks its divisor for zero before building a * b**-1
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
        """The chain rule at this node, once: each child's grad += local derivative * grad.
        ``o.grad = 1.0; o._backward()`` pushes o's gradient one step back, as in the lecture."""
        local = self._local
        if callable(local):
            return local
        _locals(self)  # refuse a malformed _local now, not when it is called

        def step() -> None:
            backward_step(self)

        return step

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        self._local = fn  # a learner's own op in the lecture's style: `out._backward = _backward`

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
            if type(local) is tuple:  # backward_step, inline: a call per node costs a third
                g = v.grad
                n = len(local)
                if n == 2 and len(v._prev) == 2:  # unpacking beats a zip loop, in the same order
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


class _Power(Value):
    """A node ``x ** p`` for a plain number p: a Value that also keeps its exponent, `_p` (its
    `_op` reads '**2'; its kind in the registry, `op_kind`, is '**p')."""

    __slots__ = ("_p",)
    _kind = "**p"

    def __init__(self, data: float, _children: tuple, _op: str, label: str, _local: tuple,
                 p: float) -> None:  # fmt: skip
        super().__init__(data, _children, _op, label, _local)
        self._p = p


_ONE, _ZERO = (1.0,), (0.0,)  # ReLU's local derivative, shared by every ReLU node


def _lift(other: object, op: str, left: object) -> Value:
    """An operand of op `op` as a Value: a plain number becomes a constant leaf."""
    return other if isinstance(other, Value) else Value(as_float(other, op, left))


def _lift_all(values: Iterable[Operand], op: str, what: str) -> tuple[Value, ...]:
    vs = tuple(values)
    for v in vs:  # usually all Values already: check cheaply, lift only if needed
        if type(v) is not Value:
            return tuple(_lift(v, op, what) for v in vs)
    return vs  # type: ignore[return-value]


@part_of_an_op  # it reads the children's numbers for the op that calls it
def _node(kind: str, *children: Value) -> Value:
    """A node of the op `kind` on `children`: its value and its local derivatives, by the op's
    two rules run on floats."""
    info = OPS[kind]
    xs = [c.data for c in children]
    out = info.value_on_floats(*xs)
    if not -FLOAT_MAX <= out <= FLOAT_MAX:
        check_finite(f"{kind}({', '.join(map(repr, xs))})", out, *xs)
    return Value(out, children, kind, "", info.on_floats(out, *xs))


@part_of_an_op  # it reads the operands' numbers for the message
def _overflowed(word: str, a: Value, op: str, b: Value) -> str:
    return f"{word}: {a.data!r} {op} {b.data!r} overflows a float ({FLOAT_MAX_TEXT})"


def _sigmoid(xp: object, a: float) -> float:
    e = xp.exp(-xp.abs(a))  # type: ignore[attr-defined]  # never e^x of a large x: stable
    return xp.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # type: ignore[attr-defined]


def _winner(xp: object, a: float, b: float) -> float:
    """The slope of `a` in max(a, b): 1 if a wins, 0 if b does, ½ on a tie, 1 if a NaN is in."""
    return xp.where(a > b, 1.0, xp.where(a < b, 0.0, xp.where(a == b, 0.5, 1.0)))  # type: ignore



# ------------------------------------------------------------------------------- the graph


def backward_step(v: Value) -> list[tuple[Value, float, float]]:
    """The chain rule at one node, as backward() applies it to each: every child's ``grad +=
    local derivative * v.grad``, children in order. Returns (child, local derivative, the child's
    grad after) for each, for whoever shows the step (the playground's chain-rule log)."""
    g = v.grad
    steps = []
    for child, d in zip(v._prev, _locals(v)):
        child.grad += d * g
        steps.append((child, d, child.grad))
    return steps


def _locals(v: Value) -> Sequence[float]:
    """`v._local` as backward() and grad() both use it: one local derivative per child (a tuple,
    or a list given by hand), or none (the gradient stops there, as with the lecture's default
    `_backward`); anything else is refused, the same way by both."""
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


def topological_order(root: Value, leaves: bool = True) -> list[Value]:
    """Every node `root` depends on, children before parents (a post-order depth-first walk with
    an explicit stack: any depth; children in tuple order: deterministic). ``leaves=False``
    leaves out the leaves below `root` (no children, no hand-written `_backward`)."""
    opened, done = object(), object()  # each node's `_visit`, fresh tokens per walk
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
            if child._visit is not done and (leaves or child._prev or child._local):
                stack.append(child)
    return topo


def grad(
    output: Value, inputs: Value | Sequence[Value], create_graph: bool = False
) -> float | Value | tuple:
    """d output / d input for each input, returned; no `.grad` is touched.

    `inputs` is one Value (one gradient back) or a sequence (a tuple back); inputs the output
    does not depend on get 0. With ``create_graph=True`` the gradients are Values, functions of
    the inputs built by the ops' rules, so they can be differentiated again::

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
    grads: dict[Value, object] = {output: Value(1.0) if create_graph else 1.0}
    active, DERIVATIVES.active = DERIVATIVES.active, create_graph or DERIVATIVES.active
    try:
        for v in reversed(topological_order(output)):
            g = grads.get(v)
            if g is None or not v._prev:
                continue
            if create_graph:
                local = _local_rule(v)
            elif callable(v._local):
                raise NotImplementedError(f"grad: node {v!r} (op {v._op!r}) has a hand-written "
                                          f"_backward; use .backward() for it")
            else:
                local = _locals(v)
            for child, d in zip(v._prev, local):
                prev = grads.get(child)
                grads[child] = d * g if prev is None else prev + d * g
    finally:
        DERIVATIVES.active = active
    zero = Value(0.0) if create_graph else 0.0
    result = tuple(grads.get(x, zero) for x in xs)
    return result[0] if single else result


def _local_rule(v: Value) -> tuple:
    info = OPS.get(op_kind(v))
    if info is None:
        raise NotImplementedError(f"grad(create_graph=True): no derivative rule for op {v._op!r}")
    return info.on_values(v)
