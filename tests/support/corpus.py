"""Learners' implementations, correct and buggy, as `micrograd.check` meets them in the notebooks:
engines (a Value class), networks (Neuron, Layer, MLP) and training steps, each written as a
learner would, in a namespace of its own (a notebook's), and checked as the notebook tells them.

`CASES` holds them: a correct one must never be stopped; a buggy one must be stopped with its
own cause, a phrase of which is given. Correct code here is unlike the lecture's on purpose (a
dataclass, a float subclass, grads kept in a dict, an explicit stack, a `_prev` list or set, its
own - and /, stored local derivatives, Kahn's algorithm, __slots__...); each bug is one mistake.
"""

from __future__ import annotations

import linecache
import sys
import textwrap
import types
from dataclasses import dataclass

from tests.support.learner import SOURCE as LECTURE


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # "value", "nn" or "step": what check() is called with
    source: str  # the learner's code, run in a namespace of its own
    cause: tuple[str, ...] = ()  # phrases of the first problem; () for correct code
    time_limit: float = 2.0

    @property
    def correct(self) -> bool:
        return not self.cause


LECTURE_VALUE = LECTURE.split("\n\nclass Neuron:")[0]
LECTURE_NN = "class Neuron:" + LECTURE.split("\n\nclass Neuron:")[1].split("\n\nSOURCE = ")[0]


def edit(source: str, *changes: tuple[str, str]) -> str:
    for old, new in changes:
        assert source.count(old) == 1, f"not found once: {old!r}"
        source = source.replace(old, new)
    return source


def value_bug(
    name: str, cause: tuple[str, ...], *changes: tuple[str, str], time_limit: float = 2.0
) -> Case:
    return Case(name, "value", edit(LECTURE_VALUE, *changes), cause, time_limit)


def d(text: str) -> str:
    return textwrap.dedent(text)


# ------------------------------------------------------------------------- correct engines

DATACLASS = d("""\
    import math
    from dataclasses import dataclass, field

    @dataclass(eq=False)            # identity, not fields: nodes go into a visited set
    class Value:
        data: float
        _children: tuple = ()
        _op: str = ''
        label: str = ''
        grad: float = 0.0

        def __post_init__(self):
            self._prev = tuple(self._children)
            self._backward = lambda: None

        def _wrap(self, o):
            return o if isinstance(o, Value) else Value(o)

        def __add__(self, o):
            o = self._wrap(o)
            out = Value(self.data + o.data, (self, o), '+')
            def _backward():
                self.grad += out.grad
                o.grad += out.grad
            out._backward = _backward
            return out

        def __mul__(self, o):
            o = self._wrap(o)
            out = Value(self.data * o.data, (self, o), '*')
            def _backward():
                self.grad += o.data * out.grad
                o.grad += self.data * out.grad
            out._backward = _backward
            return out

        def __pow__(self, k):
            out = Value(self.data ** k, (self,), f'**{k}')
            def _backward():
                self.grad += k * self.data ** (k - 1) * out.grad
            out._backward = _backward
            return out

        def exp(self):
            out = Value(math.exp(self.data), (self,), 'exp')
            def _backward():
                self.grad += out.data * out.grad
            out._backward = _backward
            return out

        def tanh(self):
            t = math.tanh(self.data)
            out = Value(t, (self,), 'tanh')
            def _backward():
                self.grad += (1 - t * t) * out.grad
            out._backward = _backward
            return out

        def relu(self):
            out = Value(max(self.data, 0.0), (self,), 'relu')
            def _backward():
                self.grad += (self.data > 0) * out.grad
            out._backward = _backward
            return out

        __radd__ = __add__
        __rmul__ = __mul__
        def __neg__(self): return self * -1
        def __sub__(self, o): return self + (-o)
        def __rsub__(self, o): return (-self) + o
        def __truediv__(self, o): return self * self._wrap(o) ** -1
        def __rtruediv__(self, o): return self._wrap(o) * self ** -1

        def backward(self):
            topo, seen = [], set()
            def build(v):
                if v not in seen:
                    seen.add(v)
                    for c in v._prev:
                        build(c)
                    topo.append(v)
            build(self)
            self.grad = 1.0
            for v in reversed(topo):
                v._backward()
""")

FLOAT_SUBCLASS = d('''\
    import math

    class Value(float):
        """A float that remembers where it came from; nodes are told apart by id()."""
        def __new__(cls, data, _children=(), _op=''):
            obj = super().__new__(cls, data)
            obj.data, obj.grad, obj._prev, obj._op = float(data), 0.0, tuple(_children), _op
            obj._backward = lambda: None
            return obj

        __hash__ = object.__hash__
        def __eq__(self, other): return self is other

        @staticmethod
        def lift(o):
            return o if isinstance(o, Value) else Value(o)

        def __add__(self, o):
            o = Value.lift(o)
            out = Value(self.data + o.data, (self, o), '+')
            def bw():
                self.grad += out.grad
                o.grad += out.grad
            out._backward = bw
            return out

        def __mul__(self, o):
            o = Value.lift(o)
            out = Value(self.data * o.data, (self, o), '*')
            def bw():
                self.grad += o.data * out.grad
                o.grad += self.data * out.grad
            out._backward = bw
            return out

        def __radd__(self, o): return self + o
        def __rmul__(self, o): return self * o
        def __neg__(self): return self * -1.0
        def __sub__(self, o): return self + (-Value.lift(o))
        def __rsub__(self, o): return Value.lift(o) + (-self)
        def __truediv__(self, o): return self * Value.lift(o) ** -1
        def __rtruediv__(self, o): return Value.lift(o) * self ** -1

        def __pow__(self, k):
            out = Value(self.data ** k, (self,), '**')
            def bw():
                self.grad += k * self.data ** (k - 1) * out.grad
            out._backward = bw
            return out

        def exp(self):
            out = Value(math.exp(self.data), (self,), 'exp')
            def bw():
                self.grad += out.data * out.grad
            out._backward = bw
            return out

        def tanh(self):
            out = Value(math.tanh(self.data), (self,), 'tanh')
            def bw():
                self.grad += (1 - out.data ** 2) * out.grad
            out._backward = bw
            return out

        def relu(self):
            out = Value(self.data if self.data > 0 else 0.0, (self,), 'relu')
            def bw():
                self.grad += (out.data > 0) * out.grad
            out._backward = bw
            return out

        def backward(self):
            order, seen = [], set()
            def visit(v):
                if id(v) not in seen:
                    seen.add(id(v))
                    for c in v._prev:
                        visit(c)
                    order.append(v)
            visit(self)
            self.grad = 1.0
            for v in reversed(order):
                v._backward()
''')

GRADS_IN_A_DICT = d("""\
    import math

    GRADS = {}   # id(node) -> its gradient

    class Value:
        def __init__(self, data, _children=(), _op='', label=''):
            self.data, self._prev, self._op, self.label = data, list(_children), _op, label
            self._rule = ()            # the local derivative for each child
            GRADS[id(self)] = 0.0

        @property
        def grad(self):
            return GRADS[id(self)]

        @grad.setter
        def grad(self, g):
            GRADS[id(self)] = g

        def _backward(self):
            for c, local in zip(self._prev, self._rule):
                c.grad += local * self.grad

        def _make(self, data, children, op, rule):
            out = Value(data, children, op)
            out._rule = rule
            return out

        def _v(self, o):
            return o if isinstance(o, Value) else Value(o)

        def __add__(self, o):
            o = self._v(o)
            return self._make(self.data + o.data, (self, o), '+', (1.0, 1.0))

        def __mul__(self, o):
            o = self._v(o)
            return self._make(self.data * o.data, (self, o), '*', (o.data, self.data))

        def __pow__(self, k):
            return self._make(self.data ** k, (self,), '**', (k * self.data ** (k - 1),))

        def exp(self):
            e = math.exp(self.data)
            return self._make(e, (self,), 'exp', (e,))

        def tanh(self):
            t = math.tanh(self.data)
            return self._make(t, (self,), 'tanh', (1 - t * t,))

        def relu(self):
            slope = 1.0 if self.data > 0 else 0.0
            return self._make(max(0.0, self.data), (self,), 'relu', (slope,))

        def __radd__(self, o): return self + o
        def __rmul__(self, o): return self * o
        def __neg__(self): return self * -1
        def __sub__(self, o): return self + -self._v(o)
        def __rsub__(self, o): return self._v(o) - self
        def __truediv__(self, o): return self * self._v(o) ** -1
        def __rtruediv__(self, o): return self._v(o) / self

        def backward(self):
            # explicit stack: a post-order without recursion
            topo, seen, stack = [], set(), [(self, iter(self._prev))]
            seen.add(id(self))
            while stack:
                v, it = stack[-1]
                for c in it:
                    if id(c) not in seen:
                        seen.add(id(c))
                        stack.append((c, iter(c._prev)))
                        break
                else:
                    stack.pop()
                    topo.append(v)
            for v in topo:
                v.grad = 0.0
            self.grad = 1.0
            for v in reversed(topo):
                v._backward()
""")

SLOTS_KAHN = d("""\
    import math

    class Value:
        __slots__ = ('data', 'grad', '_prev', '_op', '_backward', 'label')

        def __init__(self, data, _children=(), _op='', label=''):
            self.data, self.grad, self._op, self.label = data, 0.0, _op, label
            self._prev = set(_children)
            self._backward = lambda: None

        def _new(self, data, kids, op):
            return Value(data, kids, op)

        def __add__(self, other):
            other = other if isinstance(other, Value) else Value(other)
            out = Value(self.data + other.data, (self, other), '+')
            def _backward():
                self.grad += out.grad
                other.grad += out.grad
            out._backward = _backward
            return out

        def __mul__(self, other):
            other = other if isinstance(other, Value) else Value(other)
            out = Value(self.data * other.data, (self, other), '*')
            def _backward():
                self.grad += other.data * out.grad
                other.grad += self.data * out.grad
            out._backward = _backward
            return out

        def __pow__(self, other):
            if isinstance(other, Value):          # a Value exponent too
                out = Value(self.data ** other.data, (self, other), '**')
                def _backward():
                    self.grad += other.data * self.data ** (other.data - 1) * out.grad
                    other.grad += math.log(self.data) * out.data * out.grad
            else:
                out = Value(self.data ** other, (self,), f'**{other}')
                def _backward():
                    self.grad += other * self.data ** (other - 1) * out.grad
            out._backward = _backward
            return out

        def exp(self):
            out = Value(math.exp(self.data), (self,), 'exp')
            def _backward():
                self.grad += out.data * out.grad
            out._backward = _backward
            return out

        def tanh(self):               # built from exp: a graph, not one node
            e = (2 * self).exp()
            return (e - 1) / (e + 1)

        def relu(self):
            out = Value(0.0 if self.data < 0 else self.data, (self,), 'ReLU')
            def _backward():
                self.grad += (out.data > 0) * out.grad
            out._backward = _backward
            return out

        def __neg__(self): return self * -1
        def __radd__(self, other): return self + other
        def __sub__(self, other): return self + (-other)
        def __rsub__(self, other): return other + (-self)
        def __rmul__(self, other): return self * other
        def __truediv__(self, other): return self * other ** -1
        def __rtruediv__(self, other): return other * self ** -1

        def backward(self):
            # Kahn's algorithm: a node is ready once every node that uses it is done
            nodes, stack = {self}, [self]
            while stack:
                for c in stack.pop()._prev:
                    if c not in nodes:
                        nodes.add(c)
                        stack.append(c)
            users = {v: 0 for v in nodes}
            for v in nodes:
                for c in v._prev:
                    users[c] += 1
            self.grad = 1.0
            ready = [self]
            while ready:
                v = ready.pop()
                v._backward()
                for c in v._prev:
                    users[c] -= 1
                    if users[c] == 0:
                        ready.append(c)
""")

SUBCLASS_OF_MICROGRAD = d('''\
    from micrograd.engine import Value as Base

    class Value(Base):
        """micrograd's own Value, with a label printed differently: all of it is micrograd's."""
        def __repr__(self):
            return f'V({self.data})'
''')

# ------------------------------------------------------------------------------ engine bugs

BUILD_TOPO = """            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)"""
BACKWARD_LOOP = """        build_topo(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()"""
TANH_NODE = '        out = Value(t, (self,), "tanh")'
POW_NODE = '        out = Value(self.data**other, (self,), f"**{other}")'

ENGINE_BUGS = [
    value_bug(
        "+ assigns",
        ("does _backward assign (=) instead of accumulating (+=)?",),
        (
            "self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad",
            "self.grad = 1.0 * out.grad\n            other.grad = 1.0 * out.grad",
        ),
    ),
    value_bug(
        "* assigns",
        ("b = a * a", "assign (=)"),
        (
            "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
            "self.grad = other.data * out.grad\n            other.grad = self.data * out.grad",
        ),
    ),
    value_bug(
        "tanh uses the input",
        ("1 - x² uses the input",),
        ("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - x**2) * out.grad"),
    ),
    value_bug(
        "tanh without the chain rule",
        ("without × out.grad",),
        ("self.grad += (1 - t**2) * out.grad", "self.grad += 1 - t**2"),
    ),
    value_bug(
        "tanh forgets the square",
        ("forgot the square",),
        ("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - t) * out.grad"),
    ),
    value_bug(
        "pow exponent",
        ("the exponent drops by one",),
        ("other * (self.data ** (other - 1))", "other * (self.data ** other)"),
    ),
    value_bug(
        "pow factor",
        ("forgot the factor p",),
        ("other * (self.data ** (other - 1))", "(self.data ** (other - 1))"),
    ),
    value_bug(
        "exp uses x", ("not x",), ("self.grad += out.data * out.grad", "self.grad += x * out.grad")
    ),
    value_bug(
        "relu slope is the output",
        ("not the output's value",),
        ("self.grad += (out.data > 0) * out.grad", "self.grad += out.data * out.grad"),
    ),
    value_bug(
        "relu slope 1 everywhere",
        ("the slope is 0 where a <= 0",),
        ("self.grad += (out.data > 0) * out.grad", "self.grad += 1.0 * out.grad"),
    ),
    value_bug(
        "* its own input",
        ("the *other* input",),
        (
            "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
            "self.grad += self.data * out.grad\n            other.grad += other.data * out.grad",
        ),
    ),
    value_bug(
        "topo not reversed",
        ("children first", "reversed(topo)"),
        ("for node in reversed(topo):", "for node in topo:"),
    ),
    value_bug(
        "build_topo before children",
        ("puts a node before its children",),
        (
            BUILD_TOPO,
            BUILD_TOPO.replace(
                "                for child in v._prev:\n                    build_topo(child)\n"
                "                topo.append(v)",
                "                topo.append(v)\n"
                "                for child in v._prev:\n                    build_topo(child)",
            ),
        ),
    ),
    value_bug(
        "no visited set",
        ("a visited set",),
        (
            BUILD_TOPO,
            "            for child in v._prev:\n                build_topo(child)\n"
            "            topo.append(v)",
        ),
        time_limit=0.5,
    ),
    value_bug(
        "backward only calls self._backward()",
        ("only the output's own _backward",),
        (BACKWARD_LOOP, "        self.grad = 1.0\n        self._backward()"),
    ),
    value_bug(
        "no seed",
        ("self.grad = 1.0",),
        (
            "        self.grad = 1.0\n        for node in reversed(topo):",
            "        for node in reversed(topo):",
        ),
    ),
    value_bug(
        "topo.reverse() in the loop",
        ("list.reverse()",),
        ("for node in reversed(topo):", "for node in topo.reverse():"),
    ),
    value_bug(
        "tanh forgets its child",
        ("forgets its child",),
        (TANH_NODE, '        out = Value(t, _op="tanh")'),
    ),
    value_bug(
        "pow forgets its child",
        ("forgets its child",),
        (POW_NODE, "        out = Value(self.data**other)"),
    ),
    value_bug(
        "neg forgets its child",
        ("forgets its child",),
        ("        return self * -1\n", "        return Value(-self.data)\n"),
    ),
    value_bug(
        "exp forgets its child",
        ("forgets its child",),
        ('        out = Value(math.exp(x), (self,), "exp")', "        out = Value(math.exp(x))"),
    ),
    value_bug(
        "/ breaks on a plain number",
        ("a / 2.0", "crashed with a plain number"),
        (
            "        return self * other**-1\n",
            "        out = Value(self.data / other.data, (self, other), '/')\n"
            "        def _backward():\n"
            "            self.grad += out.grad / other.data\n"
            "            other.grad += -self.data / other.data**2 * out.grad\n"
            "        out._backward = _backward\n"
            "        return out\n",
        ),
    ),
    value_bug(
        "__rsub__ the wrong way round",
        ("not the other way round",),
        ("return other + (-self)", "return self - other"),
    ),
    value_bug(
        "__rtruediv__ the wrong way round",
        ("not the other way round",),
        ("        return other * self**-1\n", "        return self / other\n"),
    ),
    value_bug(
        "no __rmul__",
        ("needs __rmul__",),
        ("    def __rmul__(self, other):  # other * self\n        return self * other\n", ""),
    ),
    value_bug(
        "__radd__ recursion",
        ("calls itself again",),
        (
            "    def __radd__(self, other):  # other + self\n        return self + other",
            "    def __radd__(self, other):  # other + self\n        return other + self",
        ),
    ),
    value_bug(
        "grad None",
        ("grads start at 0",),
        (
            "        self.grad = 0.0\n        self._backward",
            "        self.grad = None\n        self._backward",
        ),
    ),
    value_bug(
        "visited kept on the class",
        ("kept between calls",),
        (
            "        topo = []\n        visited = set()\n",
            "        topo = []\n        visited = Value._visited\n",
        ),
        ("class Value:\n", "class Value:\n    _visited = set()\n"),
    ),
    value_bug(
        "visited as a default argument",
        ("kept between calls",),
        (
            "    def backward(self):\n        topo = []\n        visited = set()\n",
            "    def backward(self, visited=set()):\n        topo = []\n",
        ),
    ),
    value_bug(
        "* returns a float",
        ("not a Value with data and _prev",),
        (
            '        out = Value(self.data * other.data, (self, other), "*")\n',
            "        return self.data * other.data\n",
        ),
    ),
    value_bug(
        "+ forgets its children",
        ("should hold the inputs",),
        (
            '        out = Value(self.data + other.data, (self, other), "+")',
            '        out = Value(self.data + other.data, (), "+")',
        ),
    ),
    value_bug(
        "- adds",
        ("out.data is",),
        ("        return self + (-other)\n", "        return self + other\n"),
    ),
    value_bug(
        "__eq__ and __hash__ by data",
        ("equal data count as one",),
        (
            "    def __repr__(self):",
            "    def __eq__(self, other):\n"
            "        return isinstance(other, Value) and self.data == other.data\n\n"
            "    def __hash__(self):\n        return hash(self.data)\n\n"
            "    def __repr__(self):",
        ),
    ),
    value_bug(
        "tanh assigns",
        ("tanh's _backward assigns (=)",),
        ("self.grad += (1 - t**2) * out.grad", "self.grad = (1 - t**2) * out.grad"),
    ),
    value_bug(
        "relu assigns",
        ("relu's _backward assigns (=)",),
        ("self.grad += (out.data > 0) * out.grad", "self.grad = (out.data > 0) * out.grad"),
    ),
    value_bug(
        "exp assigns",
        ("exp's _backward assigns (=)",),
        ("self.grad += out.data * out.grad", "self.grad = out.data * out.grad"),
    ),
    value_bug(
        "backward through every path",
        ("visit each node once",),
        (
            "    def backward(self):\n        topo = []",
            "    def backward(self, start=True):\n        if start:\n"
            "            self.grad = 1.0\n"
            "        self._backward()\n        for c in self._prev:\n"
            "            c.backward(False)\n        return\n        topo = []",
        ),
    ),
    value_bug(
        "backward hangs",
        ("does its loop end?",),
        ("        build_topo(self)\n", "        while True: pass\n"),
        time_limit=0.3,
    ),
    value_bug(
        "+ adds a number to data only",
        ("a + 2.0",),
        (
            "        other = other if isinstance(other, Value) else Value(other)\n"
            '        out = Value(self.data + other.data, (self, other), "+")',
            "        if not isinstance(other, Value):\n"
            '            return Value(self.data + other, (self,), "+")\n'
            '        out = Value(self.data + other.data, (self, other), "+")',
        ),
    ),
]

SET_PREV_STORED_LOCALS = d('''\
    import math

    class Value:
        """Local derivatives stored per child, walked together with _prev: but _prev is a set."""
        def __init__(self, data, _children=(), _op='', _local=()):
            self.data, self.grad, self._op = data, 0.0, _op
            self._prev = set(_children)
            self._pairs = list(zip(_children, _local))

        def _backward(self):
            local = dict((id(c), l) for c, l in self._pairs)
            for c in self._prev:
                c.grad += local[id(c)] * self.grad

        def _v(self, o): return o if isinstance(o, Value) else Value(o)
        def __add__(self, o):
            o = self._v(o)
            return Value(self.data + o.data, (self, o), '+', (1.0, 1.0))
        def __mul__(self, o):
            o = self._v(o)
            return Value(self.data * o.data, (self, o), '*', (o.data, self.data))
        def __pow__(self, k):
            return Value(self.data ** k, (self,), '**', (k * self.data ** (k - 1),))
        def tanh(self):
            t = math.tanh(self.data)
            return Value(t, (self,), 'tanh', (1 - t * t,))
        def exp(self):
            e = math.exp(self.data)
            return Value(e, (self,), 'exp', (e,))
        def relu(self):
            return Value(max(self.data, 0), (self,), 'relu', (float(self.data > 0),))
        __radd__ = __add__
        __rmul__ = __mul__
        def __neg__(self): return self * -1
        def __sub__(self, o): return self + (-o)
        def __rsub__(self, o): return o + (-self)
        def __truediv__(self, o): return self * o ** -1
        def __rtruediv__(self, o): return o * self ** -1

        def backward(self):
            topo, seen = [], set()
            def build(v):
                if v not in seen:
                    seen.add(v)
                    for c in v._prev:
                        build(c)
                    topo.append(v)
            build(self)
            self.grad = 1
            for v in reversed(topo):
                v._backward()
''')

DATACLASS_WITH_EQ = edit(
    DATACLASS,
    (
        "@dataclass(eq=False)            # identity, not fields: nodes go into a visited set",
        "@dataclass",
    ),
)
FLOAT_SUBCLASS_BY_VALUE = edit(
    FLOAT_SUBCLASS,
    ("    __hash__ = object.__hash__\n    def __eq__(self, other): return self is other\n", ""),
    (
        "if id(v) not in seen:\n                seen.add(id(v))",
        "if v not in seen:\n                seen.add(v)",
    ),
)

# ----------------------------------------------------------------------------------- networks

NN_ON_LECTURE = LECTURE_VALUE + "\n\nimport random\n\n" + LECTURE_NN

BIAS_FIRST_NN = (
    LECTURE_VALUE
    + "\n\nimport random\n\n"
    + d("""\
    class Module:
        def zero_grad(self):
            for p in self.parameters():
                p.grad = 0.0

    class Neuron(Module):
        def __init__(self, nin, nonlin=True):
            self.b = Value(random.uniform(-1, 1))          # the bias drawn first
            self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
            self.nonlin = nonlin
        def __call__(self, x):
            act = self.b
            for wi, xi in zip(self.w, x):
                act = act + wi * xi
            return act.tanh() if self.nonlin else act
        def parameters(self):
            yield from self.w          # a generator, not a list
            yield self.b

    class Layer(Module):
        def __init__(self, nin, nout, **kw):
            self.neurons = [Neuron(nin, **kw) for _ in range(nout)]
        def __call__(self, x):
            return [n(x) for n in self.neurons]       # always a list
        def parameters(self):
            return [p for n in self.neurons for p in n.parameters()]

    class MLP(Module):
        def __init__(self, nin, nouts):
            sz = [nin] + nouts
            self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1)
                           for i in range(len(nouts))]
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x[0]
        def parameters(self):
            return [p for l in self.layers for p in l.parameters()]
""")
)

RELU_NN = edit(
    BIAS_FIRST_NN,
    ("return act.tanh() if self.nonlin else act", "return act.relu() if self.nonlin else act"),
)


def nn_bug(name: str, cause: tuple[str, ...], *changes: tuple[str, str]) -> Case:
    return Case(name, "nn", edit(NN_ON_LECTURE, *changes), cause)


NN_BUGS = [
    nn_bug(
        "[Neuron(nin)] * nout",
        ("[Neuron(nin)] * nout",),
        ("[Neuron(nin) for _ in range(nout)]", "[Neuron(nin)] * nout"),
    ),
    nn_bug(
        "one weight for a whole neuron",
        ("[Value(...)] * nin",),
        (
            "[Value(random.uniform(-1, 1)) for _ in range(nin)]",
            "[Value(random.uniform(-1, 1))] * nin",
        ),
    ),
    nn_bug(
        "Layer with its sizes swapped",
        ("nin and nout swapped",),
        ("[Neuron(nin) for _ in range(nout)]", "[Neuron(nout) for _ in range(nin)]"),
    ),
    nn_bug(
        "parameters with the bias first",
        ("in order: each neuron's w, then its b",),
        ("        return self.w + [self.b]", "        return [self.b] + self.w"),
    ),
    nn_bug(
        "a neuron without its bias in parameters()",
        ("expected 4 (3 weights and a bias)",),
        ("        return self.w + [self.b]", "        return self.w"),
    ),
    nn_bug(
        "tanh on each product",
        ("tanh applied to each product",),
        (
            "        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)\n"
            "        return act.tanh()",
            "        return sum(((wi * xi).tanh() for wi, xi in zip(self.w, x)), self.b)",
        ),
    ),
    nn_bug(
        "the bias never reaches the output",
        ("never reaches the output",),
        (
            "sum((wi * xi for wi, xi in zip(self.w, x)), self.b)",
            "sum((wi * xi for wi, xi in zip(self.w, x)), Value(0.0))",
        ),
    ),
    nn_bug(
        "the bias after tanh",
        ("added after tanh",),
        (
            "        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)\n"
            "        return act.tanh()",
            "        act = sum((wi * xi for wi, xi in zip(self.w, x)), Value(0.0))\n"
            "        return act.tanh() + self.b",
        ),
    ),
    nn_bug(
        "every Neuron reseeds",
        ("random.seed()",),
        (
            "    def __init__(self, nin):\n        self.w",
            "    def __init__(self, nin):\n        random.seed(42)\n        self.w",
        ),
    ),
    nn_bug(
        "an MLP that forgets a layer in parameters()",
        ("has 25 entries, expected 41",),
        (
            "        return [p for layer in self.layers for p in layer.parameters()]",
            "        return [p for layer in self.layers[1:] for p in layer.parameters()]",
        ),
    ),
    nn_bug(
        "each layer reads the inputs",
        ("micrograd.nn with the same parameters()",),
        (
            "        for layer in self.layers:\n            x = layer(x)\n        return x",
            "        out = x\n        for layer in self.layers:\n            out = layer(x)\n"
            "        return out",
        ),
    ),
    nn_bug(
        "no activation anywhere",
        ("no activation in the hidden layers",),
        ("        return act.tanh()", "        return act"),
    ),
    Case(
        "ReLU on the output layer",
        "nn",
        edit(RELU_NN, ("nonlin=i != len(nouts) - 1", "nonlin=True")),
        ("ReLU on the output layer",),
    ),
    Case(
        "zero_grad that forgets the bias",
        "nn",
        edit(
            BIAS_FIRST_NN,
            (
                "        for p in self.parameters():\n            p.grad = 0.0",
                "        for p in list(self.parameters())[:-1]:\n            p.grad = 0.0",
            ),
        ),
        ("zero_grad() left parameter",),
    ),
]

# ------------------------------------------------------------------------------ training steps

STEP_SETTING = LECTURE_VALUE + "\n\nimport random\n\n" + LECTURE_NN + "\n\n"

LECTURE_STEP = d("""\
    def step(model, xs, ys, lr):
        ypred = [model(x) for x in xs]
        loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
        for p in model.parameters():
            p.grad = 0.0
        loss.backward()
        for p in model.parameters():
            p.data += -lr * p.grad
        return loss
""")


def step_case(
    name: str,
    cause: tuple[str, ...],
    *changes: tuple[str, str],
    setting: str = STEP_SETTING,
    step: str = LECTURE_STEP,
) -> Case:
    return Case(name, "step", setting + edit(step, *changes), cause)


STEP_ZERO_LOSS = d("""\
    def step(model, xs, ys, lr):
        loss = Value(0.0)
        for x, yt in zip(xs, ys):
            yp = model(x)
            loss = loss + (yp - Value(yt))**2
        for p in model.parameters():
            p.grad = 0
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        return loss
""")

CORRECT_STEPS = [
    Case("the lecture's step", "step", STEP_SETTING + LECTURE_STEP),
    Case(
        "a loss from Value(0.0), targets as Value(yt), their Value with micrograd's MLP",
        "step",
        LECTURE_VALUE + "\n\nfrom micrograd.nn import MLP\n\n" + STEP_ZERO_LOSS,
    ),
    Case("a loss from Value(0.0), on their own MLP", "step", STEP_SETTING + STEP_ZERO_LOSS),
    Case(
        "the mean squared error, grads zeroed with zero_grad()",
        "step",
        BIAS_FIRST_NN
        + "\n\n"
        + d("""\
            def step(model, xs, ys, lr):
                preds = [model(x) for x in xs]
                loss = sum(((p - y) ** 2 for p, y in zip(preds, ys)), Value(0.0)) / len(ys)
                model.zero_grad()
                loss.backward()
                for p in model.parameters():
                    p.data = p.data - lr * p.grad
                return loss
            """),
    ),
    Case(
        "zeroing after the update",
        "step",
        STEP_SETTING
        + edit(
            LECTURE_STEP,
            ("    for p in model.parameters():\n        p.grad = 0.0\n", ""),
            (
                "    return loss",
                "    for p in model.parameters():\n        p.grad = 0.0\n    return loss",
            ),
        ),
    ),
    Case(
        "micrograd's own Value and MLP",
        "step",
        "from micrograd import Value, MLP\n\n" + LECTURE_STEP,
    ),
    Case(
        "a hinge loss on a float-subclass engine",
        "step",
        FLOAT_SUBCLASS
        + "\n\n"
        + d("""\
            def step(model, xs, ys, lr):
                scores = [model(x) for x in xs]
                loss = sum((1 + -y * s).relu() for y, s in zip(ys, scores))
                for p in model.parameters():
                    p.grad = 0.0
                loss.backward()
                for p in model.parameters():
                    p.data += -lr * p.grad
                return loss
            """),
    ),
]

STEP_BUGS = [
    step_case(
        "the update climbs",
        ("climbs the loss",),
        ("p.data += -lr * p.grad", "p.data += lr * p.grad"),
    ),
    step_case(
        "zeroing between backward() and the update",
        ("zeroed between backward()",),
        (
            "    for p in model.parameters():\n        p.grad = 0.0\n    loss.backward()\n",
            "    loss.backward()\n    for p in model.parameters():\n        p.grad = 0.0\n",
        ),
    ),
    step_case(
        "grads never zeroed",
        ("never zeroed",),
        ("    for p in model.parameters():\n        p.grad = 0.0\n", ""),
    ),
    step_case(
        "grads zeroed on the first step only",
        ("first step only",),
        ("def step(model, xs, ys, lr):\n", "STEPS = [0]\ndef step(model, xs, ys, lr):\n"),
        (
            "    for p in model.parameters():\n        p.grad = 0.0\n",
            "    if STEPS[0] == 0:\n        for p in model.parameters():\n"
            "            p.grad = 0.0\n    STEPS[0] += 1\n",
        ),
    ),
    step_case(
        "lr ignored (1.0)",
        ("learning rate is ignored",),
        ("p.data += -lr * p.grad", "p.data += -p.grad"),
    ),
    step_case(
        "lr ignored (0.05, the lecture's)",
        ("not the one used",),
        ("p.data += -lr * p.grad", "p.data += -0.05 * p.grad"),
    ),
    step_case(
        "the inputs moved",
        ("changed the inputs",),
        (
            "    return loss",
            "    for x in xs:\n        for v in x:\n"
            "            v.data += -lr * v.grad\n    return loss",
        ),
    ),
    step_case(
        "the targets changed",
        ("changed the targets",),
        ("    return loss", "    ys[0] = 0.0\n    return loss"),
    ),
    step_case("no loss returned", ("return the loss",), ("    return loss", "")),
    step_case(
        "loss.data returned", ("return the loss",), ("    return loss", "    return loss.data")
    ),
    step_case(
        "a loss carried over from the previous step",
        ("carried over",),
        (
            "def step(model, xs, ys, lr):\n    ypred = [model(x) for x in xs]\n"
            "    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))\n",
            "TOTAL = [Value(0.0)]\ndef step(model, xs, ys, lr):\n"
            "    ypred = [model(x) for x in xs]\n"
            "    TOTAL[0] = TOTAL[0] + sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))\n"
            "    loss = TOTAL[0]\n",
        ),
    ),
    step_case(
        "a global network",
        ("does not depend on the model",),
        (
            "def step(model, xs, ys, lr):\n",
            "random.seed(0)\nn = MLP(3, [4, 4, 1])\ndef step(model, xs, ys, lr):\n    model = n\n",
        ),
    ),
    step_case(
        "the update before backward()",
        ("before backward()",),
        (
            "def step(model, xs, ys, lr):\n",
            "def step(model, xs, ys, lr):\n"
            "    for p in model.parameters():\n        p.data += -lr * p.grad\n",
        ),
        ("        p.data += -lr * p.grad\n    return loss", "        pass\n    return loss"),
    ),
    step_case(
        "only the last layer updated",
        ("did not move",),
        (
            "    for p in model.parameters():\n        p.data += -lr * p.grad",
            "    for p in model.layers[-1].parameters():\n        p.data += -lr * p.grad",
        ),
    ),
    step_case(
        "the loss recomputed after the update",
        ("after the update",),
        (
            "    return loss",
            "    loss = sum((model(x) - y)**2 for x, y in zip(xs, ys))\n    return loss",
        ),
    ),
    step_case(
        "micrograd's Value mixed into their engine",
        ("two engines mixed",),
        (
            "    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))",
            "    loss = EngineValue(0.0) + sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))",
        ),
        setting=STEP_SETTING + "from micrograd.engine import Value as EngineValue\n\n",
    ),
]


# ------------------------------------------------------------------------------ more of each

CREATION_ORDER = d('''\
    import itertools, math

    _ids = itertools.count()

    class Value:
        """backward() sorts the graph by creation: a node is always made after its children."""
        def __init__(self, data, _children=(), _op=''):
            self.data, self.grad, self._prev, self._op = data, 0.0, _children, _op
            self._n = next(_ids)

        def _backward(self):   # one method, dispatching on the op
            a = self._prev[0] if self._prev else None
            if self._op == '+':
                for c in self._prev:
                    c.grad += self.grad
            elif self._op == '*':
                b = self._prev[1]
                a.grad += b.data * self.grad
                b.grad += a.data * self.grad
            elif self._op == 'pow':
                a.grad += self._k * a.data ** (self._k - 1) * self.grad
            elif self._op == 'tanh':
                a.grad += (1 - self.data ** 2) * self.grad
            elif self._op == 'exp':
                a.grad += self.data * self.grad
            elif self._op == 'relu':
                a.grad += (a.data > 0) * self.grad

        def _v(self, o): return o if isinstance(o, Value) else Value(o)
        def __add__(self, o): o = self._v(o); return Value(self.data + o.data, (self, o), '+')
        def __mul__(self, o): o = self._v(o); return Value(self.data * o.data, (self, o), '*')
        def __pow__(self, k):
            out = Value(self.data ** k, (self,), 'pow')
            out._k = k
            return out
        def tanh(self): return Value(math.tanh(self.data), (self,), 'tanh')
        def exp(self): return Value(math.exp(self.data), (self,), 'exp')
        def relu(self): return Value(self.data if self.data > 0 else 0, (self,), 'relu')
        def __radd__(self, o): return self + o
        def __rmul__(self, o): return self * o
        def __neg__(self): return self * -1
        def __sub__(self, o): return self + (-self._v(o))
        def __rsub__(self, o): return self._v(o) + (-self)
        def __truediv__(self, o): return self * self._v(o) ** -1
        def __rtruediv__(self, o): return self._v(o) * self ** -1

        def backward(self):
            nodes, stack = {}, [self]
            while stack:
                v = stack.pop()
                if id(v) not in nodes:
                    nodes[id(v)] = v
                    stack.extend(v._prev)
            for v in nodes.values():
                v.grad = 0.0
            self.grad = 1.0
            for v in sorted(nodes.values(), key=lambda v: -v._n):
                v._backward()
''')

from tests.test_notebooks import MY_VALUE  # noqa: E402  (the notebook learner's engine)

NOTEBOOK_LEARNER = MY_VALUE.split("\n", 1)[1]

SUM_FROM_ZERO_NN = (
    LECTURE_VALUE
    + "\n\nimport itertools, random\n\n"
    + d("""\
    class Neuron:
        def __init__(self, nin):
            self.params = [Value(random.uniform(-1, 1)) for _ in range(nin + 1)]  # w..., b
        def __call__(self, x):
            *w, b = self.params
            return (sum(wi * xi for wi, xi in zip(w, x)) + b).tanh()
        def parameters(self):
            return list(self.params)

    class Layer:
        def __init__(self, nin, nout):
            self.neurons = tuple(Neuron(nin) for _ in range(nout))
        def __call__(self, x):
            outs = tuple(n(x) for n in self.neurons)
            return outs[0] if len(outs) == 1 else outs
        def parameters(self):
            return list(itertools.chain.from_iterable(n.parameters() for n in self.neurons))

    class MLP:
        def __init__(self, nin, nouts):
            self.layers = []
            for nout in nouts:
                self.layers.append(Layer(nin, nout))
                nin = nout
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]
""")
)

MORE = [
    Case("backward by creation order, one _backward dispatching on _op", "value", CREATION_ORDER),
    Case("its own one-node - and /", "value", "from tests.test_check import OwnSubDiv as Value\n"),
    Case(
        "stored local derivatives, _prev a list, a property for grad",
        "value",
        "from tests.test_check import Unusual as Value\n",
    ),
    Case("the notebook learner's engine (closures over stored locals)", "value", NOTEBOOK_LEARNER),
    value_bug(
        "tan for tanh",
        ("out.data is",),
        ("t = (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)", "t = math.tan(x)"),
    ),
    value_bug(
        "* does not wrap numbers though + does",
        ("a * 3.0", "crashed with a plain number"),
        (
            "        other = other if isinstance(other, Value) else Value(other)\n"
            '        out = Value(self.data * other.data, (self, other), "*")',
            '        out = Value(self.data * other.data, (self, other), "*")',
        ),
    ),
    Case("parameters in one list, sum() from 0, tuples, itertools.chain", "nn", SUM_FROM_ZERO_NN),
    nn_bug(
        "a Layer that returns its first neuron only",
        ("micrograd.nn with the same parameters()",),
        ("        return outs[0] if len(outs) == 1 else outs", "        return outs[0]"),
    ),
    Case(
        "a random minibatch of two each step",
        "step",
        STEP_SETTING
        + d("""\
        def step(model, xs, ys, lr):
            batch = random.sample(range(len(xs)), 2)
            loss = sum((model(xs[i]) - ys[i])**2 for i in batch)
            params = model.parameters()
            for p in params:
                p.grad = 0.0
            loss.backward()
            for p in params:
                p.data -= lr * p.grad
            return loss
        """),
    ),
    Case(
        "a step that prints as it goes, on the notebook learner's engine",
        "step",
        NOTEBOOK_LEARNER
        + "\n\nimport random\n\n"
        + LECTURE_NN
        + "\n\n"
        + d("""\
        def step(model, xs, ys, lr):
            loss = 0.0
            for x, y in zip(xs, ys):
                loss = loss + (model(x) - y) ** 2
            print('loss', loss.data)
            for p in model.parameters():
                p.grad = 0
            loss.backward()
            for p in model.parameters():
                p.data += -lr * p.grad
            return loss
        """),
    ),
    Case("a step on parameters kept in one list", "step", SUM_FROM_ZERO_NN + "\n\n" + LECTURE_STEP),
    Case(
        "a loss computed once, outside the step",
        "step",
        STEP_SETTING
        + d("""\
        random.seed(0)
        n = MLP(3, [4, 4, 1])
        xs0 = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
        loss = sum((n(x) - y)**2 for x, y in zip(xs0, [1.0, -1.0, -1.0, 1.0]))
        def step(model, xs, ys, lr):
            for p in model.parameters():
                p.grad = 0.0
            loss.backward()
            for p in model.parameters():
                p.data += -lr * p.grad
            return loss
        """),
        ("the very same loss Value each time",),
    ),
    step_case(
        "only the weights updated, not the biases",
        ("did not move",),
        (
            "    for p in model.parameters():\n        p.data += -lr * p.grad",
            "    for n in (n for l in model.layers for n in l.neurons):\n"
            "        for p in n.w:\n            p.data += -lr * p.grad",
        ),
    ),
]

# Issue 33: four kinds named by their symptom once, now by their cause, and their relatives.
CAUSES = [
    value_bug(
        "__mul__ stores its closure's result (None)",
        ("__mul__ stores what its closure returns", "out._backward = _backward()", "line"),
        (
            "            other.grad += self.data * out.grad\n\n        out._backward = _backward\n",
            "            other.grad += self.data * out.grad\n\n        "
            "out._backward = _backward()\n",
        ),
    ),
    value_bug(
        "tanh stores its closure's result (None)",
        ("tanh stores what its closure returns",),
        (
            "            self.grad += (1 - t**2) * out.grad\n\n        out._backward = _backward\n",
            "            self.grad += (1 - t**2) * out.grad\n\n        "
            "out._backward = _backward()\n",
        ),
    ),
    value_bug(
        "grads zeroed while build_topo walks, after the seed",
        ("wiped during the walk",),
        (
            "            if v not in visited:\n                visited.add(v)",
            "            if v not in visited:\n                visited.add(v)\n"
            "                v.grad = 0.0",
        ),
        (
            "        build_topo(self)\n        self.grad = 1.0",
            "        self.grad = 1.0\n        build_topo(self)",
        ),
    ),
    value_bug(
        "each node's children zeroed before its _backward",
        ("wiped during the walk",),
        (
            "        for node in reversed(topo):\n            node._backward()",
            "        for node in reversed(topo):\n            for c in node._prev:\n"
            "                c.grad = 0.0\n            node._backward()",
        ),
    ),
    nn_bug(
        "a bias kept as a float, wrapped anew in parameters()",
        ("parameter 3: the bias never reaches the output: its grad stays 0",),
        ("        self.b = Value(random.uniform(-1, 1))", "        self.b = random.uniform(-1, 1)"),
        (
            "sum((wi * xi for wi, xi in zip(self.w, x)), self.b)",
            "sum((wi * xi for wi, xi in zip(self.w, x)), Value(self.b))",
        ),
        ("        return self.w + [self.b]", "        return self.w + [Value(self.b)]"),
    ),
    nn_bug(
        "weights copied into new Values in __call__",
        ("parameter 0 never reaches the output: its grad stays 0",),
        (
            "sum((wi * xi for wi, xi in zip(self.w, x)), self.b)",
            "sum((Value(wi.data) * xi for wi, xi in zip(self.w, x)), self.b)",
        ),
    ),
    step_case(
        "grads zeroed for a two-step warm-up only",
        ("from step 3 on they pile up",),
        ("def step(model, xs, ys, lr):\n", "WARMUP = [2]\ndef step(model, xs, ys, lr):\n"),
        (
            "    for p in model.parameters():\n        p.grad = 0.0\n",
            "    if WARMUP[0] > 0:\n        for p in model.parameters():\n"
            "            p.grad = 0.0\n        if lr > 0:  # a training step, not a probe\n"
            "            WARMUP[0] -= 1\n",
        ),
    ),
    step_case(
        "grads zeroed on the first call only, by a flag on the function",
        ("first step only",),
        (
            "    for p in model.parameters():\n        p.grad = 0.0\n",
            "    if not hasattr(step, 'done'):\n        for p in model.parameters():\n"
            "            p.grad = 0.0\n        step.done = True\n",
        ),
    ),
]


CASES: list[Case] = [
    Case("the lecture's Value", "value", LECTURE_VALUE),
    Case("a dataclass Value", "value", DATACLASS),
    Case("a float subclass", "value", FLOAT_SUBCLASS),
    Case(
        "grads kept in a dict, an explicit-stack backward, _prev a list, stored local derivatives",
        "value",
        GRADS_IN_A_DICT,
    ),
    Case(
        "__slots__, _prev a set, Kahn's algorithm, tanh built from exp, a Value exponent",
        "value",
        SLOTS_KAHN,
    ),
    Case("a subclass of micrograd's Value", "value", SUBCLASS_OF_MICROGRAD),
    *ENGINE_BUGS,
    Case(
        "_prev a set walked with stored local derivatives",
        "value",
        SET_PREV_STORED_LOCALS,
        ("holds it once",),
    ),
    Case("a dataclass that compares fields", "value", DATACLASS_WITH_EQ, ("@dataclass(eq=False)",)),
    Case(
        "a float subclass that hashes by value",
        "value",
        FLOAT_SUBCLASS_BY_VALUE,
        ("equal data count as one",),
    ),
    Case("the lecture's Neuron, Layer and MLP", "nn", NN_ON_LECTURE),
    Case(
        "bias drawn first, a generator of parameters, Layer always a list, zero_grad",
        "nn",
        BIAS_FIRST_NN,
    ),
    Case("ReLU hidden, linear output", "nn", RELU_NN),
    Case("micrograd.nn itself", "nn", "from micrograd.nn import Neuron, Layer, MLP\n"),
    *NN_BUGS,
    *CORRECT_STEPS,
    *STEP_BUGS,
    *MORE,
    *CAUSES,
]


def run_case(case: Case):
    """What the notebook would show: the learner's code run in a fresh namespace, then checked."""
    from micrograd import check

    module = types.ModuleType(f"learner_{abs(hash(case.name))}")  # a notebook's namespace
    sys.modules[module.__name__] = module  # as a notebook's __main__ is (dataclasses look)
    namespace = module.__dict__
    filename = f"<{case.name}>"  # its lines in tracebacks, as IPython gives a cell's
    linecache.cache[filename] = (len(case.source), None, case.source.splitlines(True), filename)
    exec(compile(case.source, filename, "exec"), namespace)
    if case.kind == "value":
        return check(namespace["Value"], time_limit=case.time_limit)
    if case.kind == "nn":
        classes = {k: namespace[k] for k in ("Neuron", "Layer", "MLP") if k in namespace}
        return check(
            NeuronClass=classes.get("Neuron"),
            LayerClass=classes.get("Layer"),
            MLPClass=classes.get("MLP"),
            time_limit=case.time_limit,
        )
    return check(train_step=namespace["step"], time_limit=case.time_limit)
