"""The op registry: every primitive op declared once, and its one derivative rule read four ways.

`op(...)` on a `Value` method (micrograd/engine.py) records the op in `OPS` with its
`forward(xp, *children)` and its derivative rule `local(xp, out, *children)`: the local
derivative d out / d child for each child, written once for an array module `xp`, as JAX writes
a primitive's derivative once (a rule that is the same at every node is given as its value:
``(1.0, 1.0)`` for +). Four backends run that same rule:

- floats: the eager engine, where each node stores its local derivatives (`FLOATS`);
- numpy: `micrograd.jit`, the rule on whole batches (`array_module(numpy)`);
- Values: `grad(create_graph=True)`, the rule building nodes to differentiate again
  (`OpInfo.on_values`);
- names: the text pictures and the playground show, ``1 - o²`` for tanh (`explain_local`).

So a rule may use arithmetic (``+ - * /``, and numbers), comparisons inside ``xp.where(cond, a,
b)``, ``xp.power(a, q)``, numpy's functions (``xp.exp``, ``xp.log``, ``xp.abs``, ...) and every
registered op by its method name (``xp.sigmoid(a)``). A function that is not an op (``cos`` for
the derivative of ``sin``) is declared once with `function`: floats and numpy use their own
(`math.cos`, `numpy.cos`), Values its definition in ops, names its name.

The registry holds the maths only. What else is said of an op lives with its reader, keyed by the
op's name: the pictures' words (`names.WORDS`), the activations (`nn.ACTIVATION_OPS`), PyTorch's
modules (`io.TORCH_MODULES`), jit's kernels (`jit.plan.KERNELS`); tests/test_op_tables.py holds
each complete against `OPS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import floats, names
from .compiled import value_class

Rule = Callable[..., tuple]


@dataclass
class OpInfo:
    """Everything micrograd knows about one primitive op; see `OPS`."""

    name: str  # the node kind, as `op_kind` gives it: '+', '*', '**p', 'tanh', ...
    arity: int | None  # children per node; None: any number (dot, sum)
    method: Callable[..., Any]  # the Value method, which builds the node
    forward: Callable[..., Any] | None  # forward(xp, *children) -> out; None: jit's kernel does
    local: Rule  # local(xp, out, *children) -> d out / d child for each child: THE rule
    make: Callable[..., Any] | None = None  # builds a node from (children, param), if not method
    param: str = ""  # the node attribute holding the op's own number ('_p', the exponent of **p);
    # forward and local then take it as a last argument
    constant: tuple | None = None  # the local derivatives if the same at every node: `local`
    # returns this very tuple ((1.0, 1.0) for +, shared by every node)

    def apply(self, *children: Any, p: float | None = None) -> Any:
        """A new node of this op on `children` (an op with a `param` takes its number as `p`)."""
        if self.make is not None:
            return self.make(children, p)
        return self.method(*children)

    def parameter(self, node: Any) -> float | None:
        """The op's own number on `node` (the exponent of ``x ** 2``), or None if it has none:
        ``info.apply(*children, p=info.parameter(node))`` rebuilds `node` on other children."""
        return getattr(node, self.param) if self.param else None

    @property
    def formula(self) -> str:
        """The rule in words: 'd/da = 1 - out²' (`local` run on the names a, b, out and p; for
        an op of any number of children, its words in `names.WORDS`)."""
        if self.name in names.WORDS:
            return names.WORDS[self.name].rule
        return names.formula(self.local, self.arity or 0, bool(self.param))

    def _args(self, node: Any) -> tuple:
        return (self.parameter(node),) if self.param else ()

    def value_on_floats(self, *xs: float) -> float:
        """The op's value on floats: its `forward` rule."""
        return _on_floats(self.forward, *xs)  # type: ignore[arg-type]

    def on_floats(self, out: float, *xs: float) -> tuple:
        """The local derivatives as floats (what an eager node stores): the `local` rule."""
        return _on_floats(self.local, out, *xs)

    def on_values(self, node: Any) -> tuple:
        """The local derivatives of `node` as Values (or constants), functions of its children:
        what grad(create_graph=True) differentiates again."""
        xp = _OnValues(value_class(node))  # the Value class (node may be a subclass)
        children = [_Sym(c) for c in node._prev]
        ds = self.local(xp, _Sym(node), *children, *self._args(node))
        return tuple(d.v if type(d) is _Sym else d for d in ds)

    def explain(self, node: Any, labels: Sequence[str], out_name: str) -> tuple[str, ...]:
        """The local derivatives of `node` as text, the names filled in; a `where` shows the
        case this node is in: ``('1 (a > 0)',)`` for a ReLU whose input is positive."""
        return names.explain(self.local, node, labels, out_name, self._args(node), FLOATS)


# The registry: node kind -> OpInfo, filled by `op` beside each primitive (engine.py).
OPS: dict[str, OpInfo] = {}
# Functions a rule may call that are not ops: name -> definition(xp, *args) in ops (see `function`)
FUNCTIONS: dict[str, Callable[..., Any]] = {}


def op(
    name: str,
    arity: int | None,
    local: Rule | tuple,
    forward: Callable[..., Any] | None = None,
    make: Callable[..., Any] | None = None,
    param: str = "",
) -> Callable[[Callable], Callable]:
    """Register the decorated method as the primitive `name` (the method itself is unchanged):
    its `forward` on any array module and its derivative rule `local`, each written once. A
    `local` that is a tuple is the local derivatives of every node of the op (`constant`): its
    rule returns that very tuple."""
    if forward is None and arity is not None:  # (jit computes dot and sum by their kernels)
        raise TypeError(f"op {name!r}: give forward= (only an op of any arity may go without)")
    constant = local if isinstance(local, tuple) else None
    rule = local if constant is None else lambda xp, out, *children: constant

    def register(method: Callable) -> Callable:
        fn = method.__func__ if isinstance(method, staticmethod) else method
        OPS[name] = OpInfo(name, arity, fn, forward, rule, make, param, constant)
        return method

    return register


def function(name: str, definition: Callable[..., Any]) -> None:
    """Declare `name` as a function rules may call (``xp.cos(a)``) without being an op: floats
    and numpy use their own function of that name where they have one, Values (second
    derivatives) run `definition(xp, *args)`, written with ops: ``lambda xp, a: xp.sin(a +
    math.pi / 2)`` for cos."""
    FUNCTIONS[name] = definition


def op_kind(node: Any) -> str:
    """The registry key of `node`'s op: its `_op`, or, for a node that keeps the op's own number
    (its `param`), that op: '**p' for ``x ** 2``, whose `_op` reads '**2' and whose `_p` is 2."""
    kind = node._op
    if kind in OPS or not getattr(node, "__dict__", None):
        return kind
    return next((i.name for i in OPS.values() if i.param and i.param in node.__dict__), kind)


def by_method(name: str) -> OpInfo | None:
    """The op whose Value method is called `name` ('tanh', 'maximum'), if any."""
    for info in OPS.values():
        if info.method.__name__ == name:
            return info
    return None


def explain_local(node: Any, labels: Sequence[str], out_name: str) -> tuple[str, ...]:
    """d node / d child for each child of `node`, as readable text with the children's display
    `labels` and the node's own `out_name` filled in: ``('b', 'a')`` for ``e = a*b``, ``('1 -
    o²',)`` for ``o = tanh(n)``, ``('2·x',)`` for ``x**2``. A leaf gives ``()``."""
    if not node._prev:
        return ()
    info = OPS.get(op_kind(node))
    if info is None:
        raise ValueError(f"explain_local: {node._op!r} is not a registered op (see engine.OPS)")
    if len(labels) != len(node._prev):
        raise ValueError(
            f"explain_local: {len(node._prev)} children but {len(labels)} names: {labels!r}"
        )
    return info.explain(node, labels, out_name)


# ------------------------------------------------------------------------------- floats, numpy


class ArrayModule:
    """An `xp` for rules: the backend's own functions (`native`: numpy, or floats.NATIVE), then
    every registered op by its method name, then the declared `FUNCTIONS`. Read live: an op
    registered later is found too."""

    def __init__(self, native: Any, overrides: dict[str, Any]) -> None:
        self._native = native
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:
        native = getattr(self._native, name, None)
        if native is not None:
            self.__dict__[name] = native  # the backend's own function: looked up once
            return native
        info = by_method(name)
        if info is not None and info.forward is not None:
            return lambda *args: info.forward(self, *args)
        if name in FUNCTIONS:
            return lambda *args: FUNCTIONS[name](self, *args)
        raise AttributeError(f"no function {name!r} for rules (not numpy's, an op or declared)")


class _IEEEMath:
    """`math`'s functions answering as IEEE floating point does instead of raising: NaN outside
    the domain (``sin(inf)``), inf on overflow."""

    def __getattr__(self, name: str) -> Any:
        f = getattr(math, name, None)
        if f is None:
            return None

        def call(*args: float) -> float:
            try:
                return f(*args)
            except ValueError:
                return math.nan
            except OverflowError:
                return math.inf

        return call


FLOATS: Any = ArrayModule(_IEEEMath(), floats.NATIVE)


def _on_floats(rule: Callable[..., Any], *xs: float) -> Any:
    """`rule` run on floats. Python's ``x / 0`` raises where numpy gives ±inf or NaN: then the
    rule runs again on `_IEEE` floats, which divide as IEEE does (and as numpy)."""
    try:
        return rule(FLOATS, *xs)
    except ZeroDivisionError:
        out = rule(FLOATS, *map(_IEEE, xs))
        return tuple(map(float, out)) if isinstance(out, tuple) else float(out)


class _IEEE(float):
    """A float whose arithmetic never raises: ``1 / 0.0`` is inf, ``0 / 0.0`` NaN."""

    def __truediv__(self, o: Any) -> _IEEE:
        o = float(o)
        if o == 0:
            if self == 0 or self != self:
                return _IEEE(math.nan)
            return _IEEE(math.copysign(math.inf, self) * math.copysign(1.0, o))
        return _IEEE(float(self) / o)

    def __rtruediv__(self, o: Any) -> _IEEE:
        return _IEEE(o).__truediv__(self)

    def __pow__(self, o: Any) -> _IEEE:
        return _IEEE(floats.ieee_pow(float(self), float(o)))

    def __rpow__(self, o: Any) -> _IEEE:
        return _IEEE(floats.ieee_pow(float(o), float(self)))


for _name in ("add", "sub", "mul"):  # the rest of the arithmetic keeps _IEEE floats

    def _arith(name: str) -> tuple[Callable, Callable]:
        f = getattr(float, f"__{name}__")
        rf = getattr(float, f"__r{name}__")
        return (lambda self, o: _IEEE(f(self, o)), lambda self, o: _IEEE(rf(self, o)))

    _fwd, _rev = _arith(_name)
    setattr(_IEEE, f"__{_name}__", _fwd)
    setattr(_IEEE, f"__r{_name}__", _rev)
_IEEE.__neg__ = lambda self: _IEEE(-float(self))  # type: ignore[method-assign]


def array_module(np: Any) -> ArrayModule:
    """`xp` for numpy arrays, as `FLOATS` is for floats: numpy, with tanh correctly rounded (the
    same bits as on floats) and a `where` fast on random masks."""
    tables = {id(t): np.array(t) for t in floats.tables()}  # tanh's, as arrays
    last: list[tuple] = [(None, None)]  # the last index array, as integers (tanh takes twice)
    xp: ArrayModule

    def take(table: list[float], i: Any) -> Any:
        seen, index = last[0]  # (one read of an immutable pair: safe across threads)
        if seen is not i:
            index = i.astype(np.intp)
            last[0] = (i, index)
        return tables[id(table)][index]

    def where(c: Any, a: Any, b: Any) -> Any:
        if type(c) is bool:
            return a if c else b
        if type(a) is float and type(b) is float and a - b + b == a:  # 0/1 slopes: no np.where,
            return c.astype(float) * (a - b) + b  # slow on a random mask; exact by the test
        return np.where(c, a, b)

    def tanh(x: Any) -> Any:
        if x.size <= 4096:
            return floats.tanh(xp, x)
        flat, out = x.reshape(-1), np.empty(x.size)  # in blocks: the temporaries stay in cache
        for s in range(0, x.size, 4096):
            out[s : s + 4096] = floats.tanh(xp, flat[s : s + 4096])
        return out.reshape(x.shape)

    xp = ArrayModule(np, {"take": take, "where": where, "tanh": tanh})
    return xp


# ------------------------------------------------------------------------------- Values


class _Sym:
    """A Value inside a rule run on Values: arithmetic builds nodes, comparisons read numbers (so
    ``xp.where(a > 0, ...)`` picks the branch this node is on)."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __add__(self, o: Any) -> _Sym:
        return _Sym(self.v + _raw(o))

    def __radd__(self, o: Any) -> _Sym:
        return _Sym(_raw(o) + self.v)

    def __sub__(self, o: Any) -> _Sym:
        return _Sym(self.v - _raw(o))

    def __rsub__(self, o: Any) -> _Sym:
        return _Sym(_raw(o) - self.v)

    def __mul__(self, o: Any) -> _Sym:
        return _Sym(self.v * _raw(o))

    def __rmul__(self, o: Any) -> _Sym:
        return _Sym(_raw(o) * self.v)

    def __truediv__(self, o: Any) -> _Sym:
        return _Sym(self.v / _raw(o))

    def __rtruediv__(self, o: Any) -> _Sym:
        return _Sym(_raw(o) / self.v)

    def __pow__(self, o: Any) -> _Sym:
        return _Sym(self.v ** _raw(o))

    def __neg__(self) -> _Sym:
        return _Sym(-self.v)

    def __lt__(self, o: Any) -> bool:
        return self.v.data < _number(o)

    def __le__(self, o: Any) -> bool:
        return self.v.data <= _number(o)

    def __gt__(self, o: Any) -> bool:
        return self.v.data > _number(o)

    def __ge__(self, o: Any) -> bool:
        return self.v.data >= _number(o)

    def __eq__(self, o: Any) -> bool:  # type: ignore[override]
        return self.v.data == _number(o)

    def __ne__(self, o: Any) -> bool:  # type: ignore[override]
        return self.v.data != _number(o)

    __hash__ = None  # type: ignore[assignment]


def _raw(x: Any) -> Any:
    return x.v if type(x) is _Sym else x


def _number(x: Any) -> float:
    return x.v.data if type(x) is _Sym else x


class _OnValues:
    """The `xp` of rules run on Values (grad(create_graph=True)): every function builds nodes."""

    def __init__(self, value: type) -> None:
        self.value = value  # the Value class, to lift a plain number

    @staticmethod
    def where(c: bool, a: Any, b: Any) -> Any:
        return a if c else b

    def power(self, a: Any, q: Any) -> Any:
        if type(a) is not _Sym and type(q) is not _Sym:
            return floats.ieee_pow(a, q)
        return _Sym(self._lift(a) ** _raw(q))

    def _lift(self, x: Any) -> Any:
        return x.v if type(x) is _Sym else self.value(x)

    def __getattr__(self, name: str) -> Any:
        info = by_method(name)
        if info is not None:
            return lambda *args: _Sym(info.method(self._lift(args[0]), *map(_raw, args[1:])))
        if name in FUNCTIONS:
            return lambda *args: FUNCTIONS[name](self, *args)
        raise AttributeError(
            f"grad(create_graph=True): a derivative rule calls xp.{name}, which is neither an op "
            f"nor declared with registry.function(): it has no form on Values"
        )
