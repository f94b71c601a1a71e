"""Build the learning-path notebooks from the cell lists below and store them with outputs.

    python notebooks/build.py            # write and execute every notebook (needs the test extras)
    python notebooks/build.py 03         # only notebooks whose name starts with 03

The notebooks are the lecture as a course: the learner writes `Value`, each op's `_backward`, the
topological sort, `Neuron`/`Layer`/`MLP` and the training loop, and `micrograd.check` says what is
wrong with what they wrote. Cell kinds:

* ``md`` and ``code``: as usual.
* ``exercise``: a template the learner fills in (tagged ``exercise``). Templates run as they are:
  a class or function is marked ``@exercise``, and numbers to fill in are ``...``.
* ``solution``: collapsed in Jupyter and Colab (tagged ``solution``), right after its exercise. A
  ``@solution`` definition takes over only while the exercise is still the template, so a
  learner's own code is kept; that is also why the notebooks run top to bottom in CI.

The test suite re-runs every stored notebook top to bottom in a fresh kernel and checks that this
script reproduces the committed cells (tests/test_notebooks.py); this script is how they are edited.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

SOLUTION_TITLE = "#@title Solution (collapsed: try the exercise first)\n"

NOTEBOOKS["01_derivatives_and_value"] = [
    (
        "md",
        """# 1. Derivatives, and a Value of your own

A derivative answers one question: *if I nudge the input a tiny bit, how much does the output
move, and in which direction?* We start with plain numbers; then you write the lecture's `Value`
(about 25 lines), draw an expression with it, and backpropagate through it by hand.

**How the exercises work.** An *exercise* cell is a template: replace each `...` with your code
and run it. The cell after it is the *solution*, collapsed (click it to expand). It only takes
over while your exercise is still the template, so the notebook runs top to bottom either way:
once you have written a class or function, delete its `@exercise` line and the solution keeps
yours; a number you have filled in is kept too. `micrograd.check` then tells you what, if
anything, is wrong with your code.""",
    ),
    (
        "code",
        """import math
import numpy as np
import matplotlib.pyplot as plt
from micrograd import check
from micrograd.check import exercise, solution

def f(x):
    return 3*x**2 - 4*x + 5

xs = np.arange(-5, 5, 0.25)
plt.plot(xs, f(xs)); plt.title('f(x) = 3x² - 4x + 5'); plt.show()
f(3.0)""",
    ),
    (
        "md",
        """## The slope, numerically

Rise over run for a small run `h`: (f(x + h) - f(x)) / h. At x = 3 the exact slope is
f'(x) = 6x - 4 = 14; at x = -3 it is -22; and at x = 2/3 it is 0: the bottom of the parabola,
where a small nudge does not move f at all (to first order).""",
    ),
    (
        "exercise",
        """@exercise
def slope(f, x, h=0.0001):
    ...  # how much f moves when x moves by h, divided by h""",
    ),
    (
        "solution",
        """@solution
def slope(f, x, h=0.0001):
    return (f(x + h) - f(x)) / h""",
    ),
    (
        "code",
        """for x in (3.0, -3.0, 2/3):
    print(f'slope at x = {x:.4f}: {slope(f, x):.6f}')
assert abs(slope(f, 3.0) - 14) < 1e-3 and abs(slope(f, -3.0) + 22) < 1e-3
assert abs(slope(f, 2/3)) < 1e-3""",
    ),
    (
        "md",
        """14.0003, -21.9997 and 0.0003, not 14, -22 and 0: this one-sided difference is off by 3h
(half of f's second derivative, 6, times h). The lecture printed the same 14.0003. A smaller
h shrinks that error, until floating-point rounding takes over: at h = 1e-15 the difference
f(x + h) - f(x) is a few units in the last place of 20, and the slope is noise.""",
    ),
    (
        "code",
        """for h in (0.001, 0.0001, 1e-8, 1e-15):
    print(f'h = {h:g}: slope at 3 = {slope(f, 3.0, h)!r}')
assert abs(slope(f, 3.0, 1e-15) - 14) > 0.5""",
    ),
    (
        "md",
        """## Several inputs: d = a*b + c

Nudge one input at a time. The slope with respect to `a` is `b` (-3), with respect to `b` it
is `a` (2), and with respect to `c` it is 1. These are the lecture's numbers, digit for digit:
the last digits are the rounding of (d2 - d1) / h.""",
    ),
    (
        "code",
        """h = 0.0001
a, b, c = 2.0, -3.0, 10.0

def d_of(a, b, c):
    return a*b + c

d1 = d_of(a, b, c)
slopes = {
    'a': (d_of(a + h, b, c) - d1) / h,
    'b': (d_of(a, b + h, c) - d1) / h,
    'c': (d_of(a, b, c + h) - d1) / h,
}
print(slopes)
assert slopes == {'a': -3.000000000010772, 'b': 2.0000000000042206, 'c': 0.9999999999976694}""",
    ),
    (
        "md",
        """## Exercise: your Value

A `Value` wraps a number and remembers how it was made: `_prev` holds the children it was
computed from, `_op` the operation, `label` a name for pictures, and `grad` (0 for now) will
hold the derivative of the final output with respect to this node. Write `__init__`, `__add__`
and `__mul__`: each op returns a new Value whose children are `(self, other)`.

The lecture stores `_prev` as a `set`; a tuple keeps the children in order, so pictures come
out the same on every run and `a + a` keeps both of its edges.""",
    ),
    (
        "exercise",
        """@exercise
class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        ...  # store data, grad = 0.0, _prev = tuple(_children), _op and label

    def __repr__(self):
        return f'Value(data={self.data})'

    def __add__(self, other):
        ...  # a new Value: data self.data + other.data, children (self, other), _op '+'

    def __mul__(self, other):
        ...  # the same for *""",
    ),
    (
        "solution",
        """@solution
class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f'Value(data={self.data})'

    def __add__(self, other):
        return Value(self.data + other.data, (self, other), '+')

    def __mul__(self, other):
        return Value(self.data * other.data, (self, other), '*')""",
    ),
    (
        "md",
        """`check` builds expressions with your class and with micrograd's and compares them: forward
values for now, gradients once you have written `backward()` (notebook 2). Ops you have not
written yet are listed as "not implemented yet", not as failures.""",
    ),
    ("code", """report = check(Value)
display(report)
assert report.ok, 'fix the problems listed above, then run this cell again'"""),
    (
        "md",
        """## The lecture's expression, drawn

`draw_dot` from `micrograd.viz` draws any object of this shape, yours included: a record per
Value (label, data, grad) and an oval per operation.""",
    ),
    (
        "code",
        """from micrograd.viz import draw_dot

a = Value(2.0, label='a')
b = Value(-3.0, label='b')
c = Value(10.0, label='c')
e = a*b; e.label = 'e'
d = e + c; d.label = 'd'
f = Value(-2.0, label='f')
L = d * f; L.label = 'L'
print(L, d._prev, d._op)
draw_dot(L)""",
    ),
    (
        "md",
        """## Backpropagation by hand

`L.grad` is to hold dL/dL, `d.grad` dL/dd, and so on down to the leaves. Each answer is checked
against a nudge, the lecture's `lol()`: move one node by h, recompute L, take rise over run.""",
    ),
    (
        "code",
        """def lol(name, h=0.0001):
    # dL/d(name) by nudging: recompute L with that one node moved by h, as in the lecture.
    def L_with(bump):
        a = 2.0 + (h if bump == 'a' else 0)
        b = -3.0 + (h if bump == 'b' else 0)
        c = 10.0 + (h if bump == 'c' else 0)
        f = -2.0 + (h if bump == 'f' else 0)
        e = a*b + (h if bump == 'e' else 0)
        d = e + c + (h if bump == 'd' else 0)
        return d*f + (h if bump == 'L' else 0)
    return (L_with(name) - L_with(None)) / h

def compare(*nodes):
    # Your grads against the nudge; True when all agree.
    ok = True
    for node in nodes:
        nudge = lol(node.label)
        if node.grad is ...:
            print(f'  {node.label}.grad: not filled in yet')
            ok = False
        elif abs(node.grad - nudge) < 1e-3:
            print(f'✓ {node.label}.grad = {node.grad}  (nudge: {nudge:.6f})')
        else:
            print(f'✗ {node.label}.grad = {node.grad}, but nudging {node.label} moves L by '
                  f'{nudge:.6f} per unit')
            ok = False
    return ok""",
    ),
    (
        "md",
        """**Step 1.** How much does L move when L moves by h? (`...` is Python's Ellipsis: replace it
with a number.)""",
    ),
    ("exercise", """L.grad = ..."""),
    ("code", """compare(L);"""),
    ("solution", """if L.grad is ...: L.grad = 1.0
assert compare(L)"""),
    (
        "md",
        """**Step 2.** L = d · f. Write the rise over run for L when d moves by h, ((d + h)·f - d·f) / h,
and simplify; then the same for f.""",
    ),
    ("exercise", """d.grad = ...
f.grad = ..."""),
    ("code", """compare(d, f);"""),
    ("solution", """if d.grad is ...: d.grad = f.data   # dL/dd = f = -2
if f.grad is ...: f.grad = d.data   # dL/df = d = 4
assert compare(d, f)"""),
    (
        "md",
        """**Step 3.** d = e + c. A nudge of e moves d by exactly as much, so dd/de = 1 (and dd/dc = 1).
The *chain rule*: how much L moves per unit of e is how much L moves per unit of d (d.grad)
times how much d moves per unit of e. A `+` node passes its gradient through unchanged.""",
    ),
    ("exercise", """e.grad = ...
c.grad = ..."""),
    ("code", """compare(e, c);"""),
    ("solution", """if e.grad is ...: e.grad = 1.0 * d.grad   # -2
if c.grad is ...: c.grad = 1.0 * d.grad   # -2
assert compare(e, c)"""),
    (
        "md",
        """**Step 4.** e = a · b, so de/da = b and de/db = a (step 2's rule). Chain it with e.grad.""",
    ),
    ("exercise", """a.grad = ...
b.grad = ..."""),
    ("code", """compare(a, b);"""),
    ("solution", """if a.grad is ...: a.grad = b.data * e.grad   # -3 · -2 = 6
if b.grad is ...: b.grad = a.data * e.grad   # 2 · -2 = -4
assert compare(a, b)"""),
    (
        "code",
        """assert (a.grad, b.grad, c.grad, f.grad) == (6.0, -4.0, -2.0, 4.0)
draw_dot(L)""",
    ),
    (
        "md",
        """## Nudging the inputs along the gradient

Each leaf's gradient says which way to move it to make L bigger. Move every leaf a little
(0.01 × its gradient) and L goes up, from -8 to -7.286496. Training a network is this, with the
sign flipped to make a *loss* smaller.""",
    ),
    (
        "code",
        """for leaf in (a, b, c, f):
    leaf.data += 0.01 * leaf.grad
L = (a*b + c) * f
print(L.data)
assert math.isclose(L.data, -7.286496)""",
    ),
    (
        "md",
        """Next, notebook 2: your `Value` learns to do steps 1 to 4 itself.""",
    ),
]

NOTEBOOKS["02_backpropagation"] = [
    (
        "md",
        """# 2. Backpropagation: your Value does it itself

You give each op a `_backward` (its local derivative, times the output's gradient), write the
topological sort and `backward()`, meet the `+=` bug, add the rest of the lecture's ops, and
check the result with `micrograd.check`. Exercises work as in notebook 1: write yours, delete
its `@exercise` line, and the collapsed solution after it leaves yours in place.""",
    ),
    (
        "md",
        """## Your Value from notebook 1, plus tanh

Paste your own if you like. Two additions: `_backward`, a function that does nothing until an op
sets it, and `tanh(x) = (e^2x - 1) / (e^2x + 1)`, written as in the lecture (forward only, for
now).""",
    ),
    (
        "code",
        """import math
from micrograd import check
from micrograd.check import exercise, solution
from micrograd.viz import draw_dot

class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f'Value(data={self.data})'

    def __add__(self, other):
        return Value(self.data + other.data, (self, other), '+')

    def __mul__(self, other):
        return Value(self.data * other.data, (self, other), '*')

    def tanh(self):
        x = self.data
        t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
        return Value(t, (self,), 'tanh')""",
    ),
    (
        "md",
        """## A neuron, by hand

o = tanh(x1·w1 + x2·w2 + b) with the lecture's numbers. Why the odd bias 6.8813735870195432?
x1·w1 + x2·w2 = -6, so n = 0.8813735870195432 ≈ atanh(1/√2) = ln(1 + √2): then
o = tanh(n) ≈ 1/√2 = 0.7071 and the local derivative 1 - o² is 0.5, a round number to
backpropagate with.""",
    ),
    (
        "code",
        """print(math.atanh(1 / math.sqrt(2)), math.log(1 + math.sqrt(2)))

def neuron():
    x1, x2 = Value(2.0, label='x1'), Value(0.0, label='x2')
    w1, w2 = Value(-3.0, label='w1'), Value(1.0, label='w2')
    b = Value(6.8813735870195432, label='b')
    x1w1 = x1*w1; x1w1.label = 'x1*w1'
    x2w2 = x2*w2; x2w2.label = 'x2*w2'
    x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
    n = x1w1x2w2 + b; n.label = 'n'
    o = n.tanh(); o.label = 'o'
    return o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
print(n.data, o.data, 1 - o.data**2)
assert round(o.data, 4) == 0.7071 and round(1 - o.data**2, 4) == 0.5
draw_dot(o)""",
    ),
    (
        "md",
        """The chain rule by hand, once more (notebook 1's steps): do/dn = 1 - o²; a `+` passes the
gradient through; a `*` sends each input the other input's value times the gradient.""",
    ),
    (
        "code",
        """o.grad = 1.0
n.grad = 1 - o.data**2
x1w1x2w2.grad = b.grad = n.grad
x1w1.grad = x2w2.grad = x1w1x2w2.grad
x2.grad, w2.grad = w2.data * x2w2.grad, x2.data * x2w2.grad
x1.grad, w1.grad = w1.data * x1w1.grad, x1.data * x1w1.grad
print([round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]""",
    ),
    (
        "md",
        """## Exercise: each op's `_backward`

Each op creates `out` and gives it a `_backward` that pushes `out.grad` to the children:
`child.grad += local derivative * out.grad`. Use `+=`, not `=`: a child used twice (`a + a`)
must receive both contributions, as you will see below. The local derivatives: 1 and 1 for `+`;
`other.data` and `self.data` for `*`; 1 - t² for tanh, where t is tanh's *output*.""",
    ),
    (
        "exercise",
        """@exercise
def __add__(self, other):
    out = Value(self.data + other.data, (self, other), '+')
    def _backward():
        ...  # self.grad += ... ; other.grad += ...
    out._backward = _backward
    return out

@exercise
def __mul__(self, other):
    out = Value(self.data * other.data, (self, other), '*')
    def _backward():
        ...
    out._backward = _backward
    return out

@exercise
def tanh(self):
    x = self.data
    t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
    out = Value(t, (self,), 'tanh')
    def _backward():
        ...
    out._backward = _backward
    return out""",
    ),
    (
        "solution",
        """@solution
def __add__(self, other):
    out = Value(self.data + other.data, (self, other), '+')
    def _backward():
        self.grad += 1.0 * out.grad
        other.grad += 1.0 * out.grad
    out._backward = _backward
    return out

@solution
def __mul__(self, other):
    out = Value(self.data * other.data, (self, other), '*')
    def _backward():
        self.grad += other.data * out.grad
        other.grad += self.data * out.grad
    out._backward = _backward
    return out

@solution
def tanh(self):
    x = self.data
    t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
    out = Value(t, (self,), 'tanh')
    def _backward():
        self.grad += (1 - t**2) * out.grad
    out._backward = _backward
    return out""",
    ),
    (
        "md",
        """Put them on the class, then call each node's `_backward` by hand, output first:""",
    ),
    (
        "code",
        """Value.__add__, Value.__mul__, Value.tanh = __add__, __mul__, tanh

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
o.grad = 1.0
for node in (o, n, x1w1x2w2, x1w1, x2w2):
    node._backward()
print([round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]""",
    ),
    (
        "md",
        """## Exercise: the order, and `backward()`

That order was written by hand: every node before its children, so that a node's gradient is
complete before it is pushed further back. A *topological sort* finds such an order for any
graph: `build_topo(v)` visits each child first (once: keep a `visited` set), then appends `v`.
`backward()` sets `self.grad = 1.0` and calls `_backward` on each node of `reversed(topo)`.""",
    ),
    (
        "exercise",
        """@exercise
def backward(self):
    topo = []
    visited = set()
    ...  # build_topo(self); then self.grad = 1.0 and each node's _backward, output first""",
    ),
    (
        "solution",
        """@solution
def backward(self):
    topo = []
    visited = set()
    def build_topo(v):
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build_topo(child)
            topo.append(v)
    build_topo(self)
    self.grad = 1.0
    for node in reversed(topo):
        node._backward()""",
    ),
    (
        "code",
        """Value.backward = backward

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
o.backward()
print([round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]
draw_dot(o)""",
    ),
    (
        "md",
        """Now `check` can test gradients too: each op at several points, on its own (`_backward` with
an `out.grad` that is not 1) and through `backward()`, reused nodes, graphs where the visiting
order matters, and `backward()` called twice.""",
    ),
    ("code", """report = check(Value)
display(report)
assert report.ok, 'fix the problems listed above, then run this cell again'"""),
    (
        "md",
        """## The `+=` bug

Here is a `+` whose `_backward` *assigns*. In `b = a + a` both children are `a`, so `a.grad` is
set to 1 twice instead of receiving 1 + 1: db/da comes out 1 instead of 2. `check` finds it and
says why.""",
    ),
    (
        "code",
        """class AssignValue(Value):
    def __add__(self, other):
        out = AssignValue(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad = 1.0 * out.grad    # = instead of +=
            other.grad = 1.0 * out.grad
        out._backward = _backward
        return out

a = AssignValue(3.0, label='a')
b = a + a; b.label = 'b'
b.backward()
print('a.grad =', a.grad, '(should be 2)')
assert a.grad == 1.0
buggy = check(AssignValue)
assert not buggy.ok and '(=) instead of accumulating (+=)' in buggy.problems[0]
buggy""",
    ),
    (
        "md",
        """Yours accumulates. In the lecture's second example, f = (a·b)·(a + b), both `a` and `b` reach
`f` by two paths, and each gradient is the sum over both: -3 and -8.""",
    ),
    (
        "code",
        """a = Value(3.0, label='a')
b = a + a; b.label = 'b'
b.backward()
assert a.grad == 2.0

a = Value(-2.0, label='a'); b = Value(3.0, label='b')
d = a*b; d.label = 'd'
e = a + b; e.label = 'e'
f = d*e; f.label = 'f'
f.backward()
print(a.grad, b.grad)
assert (a.grad, b.grad) == (-3.0, -8.0)
draw_dot(f)""",
    ),
    (
        "md",
        """## `backward()` twice

Gradients accumulate, so a second `backward()` adds to the first. With the lecture's
`backward()`, y = x·x·x at x = 3 gives x.grad 27, then **72**: the intermediate x·x still holds
its gradient from the first call, and it is pushed back again on top. PyTorch, and micrograd,
give **54** = 2 × 27: leaves accumulate, intermediate gradients are recomputed each call. Either
way, a training loop zeroes the gradients before each `backward()` (notebook 3).""",
    ),
    (
        "code",
        """import micrograd

x = Value(3.0)
y = x * x * x
y.backward(); first = x.grad
y.backward(); second = x.grad
print('yours:', first, second)

X = micrograd.Value(3.0)
Y = X * X * X
Y.backward(); Y.backward()
print('micrograd:', X.grad)
assert first == 27.0 and X.grad == 54.0""",
    ),
    (
        "md",
        """## Exercise: the rest of the lecture's ops

* Plain numbers: `a + 1` fails until `__add__` and `__mul__` wrap them:
  `other = other if isinstance(other, Value) else Value(other)`.
* `exp` (its local derivative is its own output), `__pow__` for a number exponent
  (p · x^(p-1)) and `relu` (slope 1 where the input is positive, else 0: notebook 4 needs it).
* Built from those, with no `_backward` of their own: `__neg__` (times -1), `__sub__`
  (a + (-b)), `__truediv__` (a · b⁻¹).
* The reflected ops. For `2 * a` Python first asks the number, which knows nothing of Values,
  then calls `a.__rmul__(2)`. Likewise `__radd__` (also what makes `sum()` work),
  `__rsub__` (2 - a) and `__rtruediv__` (2 / a); mind which side each number goes.""",
    ),
    (
        "exercise",
        """@exercise
def __add__(self, other):
    ...  # as above, for plain numbers too

@exercise
def __mul__(self, other):
    ...

@exercise
def exp(self):
    ...

@exercise
def __pow__(self, other):
    assert isinstance(other, (int, float)), 'only int/float powers'
    ...

@exercise
def relu(self):
    ...

@exercise
def __neg__(self):       # -self
    ...

@exercise
def __sub__(self, other):       # self - other
    ...

@exercise
def __truediv__(self, other):   # self / other
    ...

@exercise
def __radd__(self, other):      # other + self
    ...

@exercise
def __rmul__(self, other):      # other * self
    ...

@exercise
def __rsub__(self, other):      # other - self
    ...

@exercise
def __rtruediv__(self, other):  # other / self
    ...""",
    ),
    (
        "solution",
        """@solution
def __add__(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data + other.data, (self, other), '+')
    def _backward():
        self.grad += 1.0 * out.grad
        other.grad += 1.0 * out.grad
    out._backward = _backward
    return out

@solution
def __mul__(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data * other.data, (self, other), '*')
    def _backward():
        self.grad += other.data * out.grad
        other.grad += self.data * out.grad
    out._backward = _backward
    return out

@solution
def exp(self):
    out = Value(math.exp(self.data), (self,), 'exp')
    def _backward():
        self.grad += out.data * out.grad
    out._backward = _backward
    return out

@solution
def __pow__(self, other):
    assert isinstance(other, (int, float)), 'only int/float powers'
    out = Value(self.data**other, (self,), f'**{other}')
    def _backward():
        self.grad += other * self.data**(other - 1) * out.grad
    out._backward = _backward
    return out

@solution
def relu(self):
    out = Value(self.data if self.data > 0 else 0.0, (self,), 'ReLU')
    def _backward():
        self.grad += (out.data > 0) * out.grad
    out._backward = _backward
    return out

@solution
def __neg__(self):       # -self
    return self * -1

@solution
def __sub__(self, other):       # self - other
    return self + (-other)

@solution
def __truediv__(self, other):   # self / other
    return self * other**-1

@solution
def __radd__(self, other):      # other + self
    return self + other

@solution
def __rmul__(self, other):      # other * self
    return self * other

@solution
def __rsub__(self, other):      # other - self
    return other + (-self)

@solution
def __rtruediv__(self, other):  # other / self
    return other * self**-1""",
    ),
    (
        "code",
        """for fn in (__add__, __mul__, exp, __pow__, relu, __neg__, __sub__, __truediv__,
           __radd__, __rmul__, __rsub__, __rtruediv__):
    setattr(Value, fn.__name__, fn)

report = check(Value)
display(report)
assert report.ok, 'fix the problems listed above, then run this cell again'
assert not [m for m in report.missing if 'beyond the lecture' not in m], 'some ops are missing'""",
    ),
    (
        "md",
        """## tanh broken into pieces

The level at which an op is implemented is a choice. tanh(n) = (e^2n - 1) / (e^2n + 1) built
from `exp`, `-`, `+` and `/` gives the same output and the same gradients, through a bigger
graph.""",
    ),
    (
        "code",
        """x1, x2 = Value(2.0, label='x1'), Value(0.0, label='x2')
w1, w2 = Value(-3.0, label='w1'), Value(1.0, label='w2')
b = Value(6.8813735870195432, label='b')
n = x1*w1 + x2*w2 + b; n.label = 'n'
e = (2*n).exp(); e.label = 'e'
o = (e - 1) / (e + 1); o.label = 'o'
o.backward()
print(o.data, [round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert round(o.data, 4) == 0.7071
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]
draw_dot(o)""",
    ),
    (
        "md",
        """## Where micrograd's engine differs from yours, and why

* **Local derivatives are stored, not closed over.** Each op computes its output *and* its
  local derivatives on the spot and stores them on the node (`_local`, one per child); backward
  applies `child.grad += local * out.grad` uniformly. A closure costs ~250 bytes, most of a
  node. `node._backward()` still works, as in the lecture.
* **`_prev` is a tuple**, children in order: the same pictures and bit-identical sums every
  run (a set's order depends on memory addresses).
* **Intermediate grads are reset on every `backward()`**, so calling it twice gives 54, as
  PyTorch, not the lecture's 72 (above).
* **The topological sort is iterative**: a million-deep graph is fine, where a recursive
  `build_topo` (yours, the lecture's) stops near Python's recursion limit of 1,000 frames; the
  note in `check`'s report above says so.
* **tanh is `math.tanh`**: 0.7071067811865477 where the lecture's (e^2x - 1) / (e^2x + 1)
  gives 0.7071067811865476. Both are within one rounding step of the true value; they round
  differently in the last digit.""",
    ),
    (
        "code",
        """m = micrograd.Value(0.8813735870195432).tanh()
print('micrograd:', repr(m.data), 'local derivative', m._local)
print('yours:    ', repr(Value(0.8813735870195432).tanh().data))
e = micrograd.Value(2.0) * micrograd.Value(-3.0)
print(type(e._prev).__name__, e._op, e._local)
assert m.data == 0.7071067811865477 and Value(0.8813735870195432).tanh().data == 0.7071067811865476""",
    ),
]

NOTEBOOKS["03_neuron_to_mlp"] = [
    (
        "md",
        """# 3. From a neuron to an MLP, and training it

A neuron computes tanh(w·x + b). A layer is neurons side by side, reading the same inputs; an
MLP is layers in a row. You write all three (as in the lecture), take one training step by hand,
then write the training loop and meet the forgotten-`zero_grad` bug.

From here on `Value` is micrograd's: notebook 2's `check` showed that yours computes the same
things, and micrograd's is faster. Your Value from notebook 2 would work just as well.""",
    ),
    (
        "code",
        """import math, random
import matplotlib.pyplot as plt
from micrograd import Value, check
from micrograd.check import exercise, solution
from micrograd.viz import draw_dot""",
    ),
    (
        "md",
        """## Exercise: Neuron, Layer, MLP

* `Neuron(nin)`: `nin` weights and a bias, each drawn with `random.uniform(-1, 1)` (the lecture
  draws the bias at random too; `micrograd.nn` starts it at 0, as karpathy's repository does).
  Calling it on `x` gives tanh(w·x + b); `parameters()` is `w + [b]`.
* `Layer(nin, nout)`: `nout` neurons; calling it gives one Value for a one-neuron layer, else a
  list (the lecture's convenience, so that an MLP's output is a Value).
* `MLP(nin, nouts)`: layers of sizes `nouts`, each reading the previous one's outputs.
  `parameters()` lists them layer by layer, neuron by neuron.""",
    ),
    (
        "exercise",
        """@exercise
class Neuron:
    def __init__(self, nin):
        ...
    def __call__(self, x):
        ...  # tanh(w·x + b)
    def parameters(self):
        ...

@exercise
class Layer:
    def __init__(self, nin, nout):
        ...
    def __call__(self, x):
        ...
    def parameters(self):
        ...

@exercise
class MLP:
    def __init__(self, nin, nouts):
        ...
    def __call__(self, x):
        ...
    def parameters(self):
        ...""",
    ),
    (
        "solution",
        """@solution
class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))
    def __call__(self, x):
        act = sum((wi*xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh()
    def parameters(self):
        return self.w + [self.b]

@solution
class Layer:
    def __init__(self, nin, nout):
        self.neurons = [Neuron(nin) for _ in range(nout)]
    def __call__(self, x):
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs
    def parameters(self):
        return [p for neuron in self.neurons for p in neuron.parameters()]

@solution
class MLP:
    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i+1]) for i in range(len(nouts))]
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]""",
    ),
    (
        "md",
        """`check` builds your classes, copies their `parameters()` into `micrograd.nn`'s and compares
outputs and gradients: that also checks the parameters' order. It leaves the random generator
as it found it, so the seeded numbers below do not depend on it.""",
    ),
    ("code", """report = check(NeuronClass=Neuron, LayerClass=Layer, MLPClass=MLP)
display(report)
assert report.ok, 'fix the problems listed above, then run this cell again'"""),
    (
        "md",
        """## One training step, by hand

Four inputs and the outputs we want (the lecture's tiny data set). `MLP(3, [4, 4, 1])` has
3·4+4 + 4·4+4 + 4+1 = 41 parameters. The loss is the sum of squared errors: 0 when every
prediction is right, bigger the further off they are. The numbers below are not the lecture's:
its weights were drawn without a seed, so every run of the video differs; `random.seed(0)` makes
these repeatable.""",
    ),
    (
        "code",
        """xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]

random.seed(0)
n = MLP(3, [4, 4, 1])
print(len(n.parameters()), 'parameters')
ypred = [n(x) for x in xs]
loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
print('predictions', [round(y.data, 4) for y in ypred])
print('loss', loss.data)
assert len(n.parameters()) == 41""",
    ),
    (
        "md",
        """The loss is one Value at the end of a graph that contains every parameter. `backward()` fills
each parameter's `grad` with d(loss)/d(parameter). Take the first weight of the first neuron,
and check its gradient the slow way, by nudging it (a central difference, as `gradcheck` does).""",
    ),
    (
        "code",
        """loss.backward()
w = n.layers[0].neurons[0].w[0]
print('backward():', w.grad)

def loss_now():
    return sum((n(x).data - ygt)**2 for x, ygt in zip(xs, ys))

h = 1e-6
w.data += h; up = loss_now()
w.data -= 2*h; down = loss_now()
w.data += h
print('nudging   :', (up - down) / (2*h))
assert math.isclose(w.grad, (up - down) / (2*h), rel_tol=1e-6)""",
    ),
    (
        "md",
        """**Why the update has a minus sign.** A gradient points uphill: a positive `w.grad` means that
increasing `w` increases the loss. We want the loss *down*, so each parameter takes a small step
against its gradient, `p.data += -lr * p.grad`. One step with lr = 0.05, and the loss drops.""",
    ),
    (
        "code",
        """lr = 0.05
before = loss.data
for p in n.parameters():
    p.data += -lr * p.grad
after = loss_now()
print(before, '->', after)
assert after < before""",
    ),
    (
        "md",
        """## Exercise: the training loop

Repeat: forward pass, loss, zero the gradients, `backward()`, update. Zero them because
gradients accumulate (notebook 2): without it each step adds its gradient to all the previous
ones. Record `loss.data` at every step.""",
    ),
    (
        "exercise",
        """@exercise
def train(lr, steps=30, seed=0, zero_grad=True):
    random.seed(seed)
    n = MLP(3, [4, 4, 1])
    losses = []
    for k in range(steps):
        ...  # forward pass and loss; zero the grads (if zero_grad); backward(); update
    return n, losses""",
    ),
    (
        "solution",
        """@solution
def train(lr, steps=30, seed=0, zero_grad=True):
    random.seed(seed)
    n = MLP(3, [4, 4, 1])
    losses = []
    for k in range(steps):
        ypred = [n(x) for x in xs]
        loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
        if zero_grad:
            for p in n.parameters():
                p.grad = 0.0
        loss.backward()
        for p in n.parameters():
            p.data += -lr * p.grad
        losses.append(loss.data)
    return n, losses""",
    ),
    (
        "code",
        """n, losses = train(lr=0.05)
print(losses[0], '->', losses[-1])
print('predictions', [round(n(x).data, 3) for x in xs], 'wanted', ys)
assert losses[-1] < 0.01 * losses[0]
assert [math.copysign(1, n(x).data) for x in xs] == ys
plt.plot(losses); plt.xlabel('step'); plt.ylabel('loss'); plt.show()""",
    ),
    (
        "md",
        """## The forgotten `zero_grad`

The lecture's famous bug. Without zeroing, every step's gradient is added to all the previous
ones: the steps keep growing, as if the learning rate kept increasing. On this tiny problem that
can even *look* faster; count the steps where the loss went *up*: those are the overshoots.""",
    ),
    (
        "code",
        """_, with_zero = train(lr=0.05)
_, without = train(lr=0.05, zero_grad=False)
ups = lambda c: sum(b > a for a, b in zip(c, c[1:]))
print('loss went up on', ups(with_zero), 'steps with zero_grad,', ups(without), 'without')
plt.plot(with_zero, label='zero the grads each step')
plt.plot(without, label='forgot to zero them')
plt.legend(); plt.yscale('log'); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
assert ups(with_zero) == 0 and ups(without) >= 3""",
    ),
    (
        "md",
        """## Learning rates

Four settings, 30 steps each, the same starting weights: 0.01 and 0.05 are the lecture's; 0.2 and
1.0 are four and twenty times 0.05, to see where a bigger step stops helping.""",
    ),
    (
        "code",
        """rates = (0.01, 0.05, 0.2, 1.0)
curves = {lr: train(lr=lr)[1] for lr in rates}
for lr, curve in curves.items():
    plt.plot(curve, label=f'lr={lr}')
plt.legend(); plt.yscale('log'); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
for lr, curve in curves.items():
    print(f'lr={lr}: last loss {curve[-1]:.4f}, went up on {ups(curve)} steps')

assert curves[0.01][-1] > curves[0.05][-1] > curves[0.2][-1]   # bigger is better, up to a point
assert ups(curves[0.01]) == ups(curves[0.05]) == 0 and ups(curves[0.2]) >= 1
assert min(curves[1.0][-10:]) > 7.9   # stuck: every prediction ±1 on the wrong side
# The numbers the text below quotes:
assert 0.4 < curves[0.01][-1] < 0.7 and 0.01 < curves[0.05][-1] < 0.05
assert curves[0.2][-1] < 0.002 and ups(curves[0.2]) == 1""",
    ),
    (
        "md",
        """What the plot shows, on this problem and these starting weights:

* **0.01** is too small: the loss falls smoothly but is still about 0.56 after 30 steps.
* **0.05** falls steadily, never up, to about 0.03.
* **0.2** ends lowest, near 0.001, although at step 3 the loss jumped back up almost to where
  it started: a step can overshoot badly and still win overall. On four points, bigger is better
  for a while.
* **1.0** is too large: the first steps throw every tanh unit into saturation (outputs stuck at
  ±1, where the slope 1 - tanh² is almost 0). The gradients vanish and the loss sits near 8, all
  four predictions wrong, for good.

So "too large" is not a number: it is when the loss goes up and stays up, or stops moving. On a
real problem the best setting is found the same way: try values a few times apart and look.""",
    ),
]

NOTEBOOKS["04_moons_demo"] = [
    (
        "md",
        """# 4. karpathy's moons demo

A 2-16-16-1 network learns to separate two interleaved half-moons, with karpathy's own code from
his micrograd repository (`demo.ipynb`), run on this package's `MLP` and `Value`. With his seeds
it reproduces his final loss, **0.010978370135492717**, to the last digit, and 100% accuracy.

Three things differ from notebook 3, each explained where it appears: a max-margin loss instead
of squared error, L2 regularisation, and a learning rate that decays. And the neurons use ReLU.""",
    ),
    (
        "code",
        """import random
import numpy as np
import matplotlib.pyplot as plt
from sklearn.datasets import make_moons
from micrograd.engine import Value
from micrograd.nn import MLP

np.random.seed(1337)
random.seed(1337)
X, y = make_moons(n_samples=100, noise=0.1)
y = y*2 - 1  # make y be -1 or 1
plt.figure(figsize=(5, 5))
plt.scatter(X[:, 0], X[:, 1], c=y, s=20, cmap='jet'); plt.show()""",
    ),
    (
        "md",
        """## ReLU

`MLP(2, [16, 16, 1])` is karpathy's default: hidden neurons use ReLU, relu(x) = max(0, x), and the
output neuron is linear, so its output is an unbounded *score*: its sign is the predicted class.
ReLU's slope is 1 for positive inputs and 0 otherwise: it never saturates on the positive side,
as tanh does (notebook 3's lr = 1.0), and it is cheap. Biases start at 0 here, as in his code.""",
    ),
    (
        "code",
        """model = MLP(2, [16, 16, 1])  # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))
assert len(model.parameters()) == 337""",
    ),
    (
        "md",
        """## The loss: max-margin, plus L2

* **Max-margin (hinge) loss**, as in a support vector machine: for a label yᵢ = ±1 and a score
  sᵢ, the loss is relu(1 - yᵢ·sᵢ). It is 0 once a point is on the right side *with a margin*
  (yᵢ·sᵢ ≥ 1), and grows linearly the more wrong it is. Points already classified with room to
  spare stop contributing, so training concentrates on the ones near the boundary.
* **L2 regularisation**: alpha · Σ p² over all parameters, with alpha = 1e-4. Its gradient,
  2·alpha·p, pulls every weight a little towards 0: among the many boundaries that separate the
  training points, it prefers one made of small weights, which tends to be smoother.""",
    ),
    (
        "code",
        """# loss function (karpathy's, verbatim)
def loss(batch_size=None):
    # inline DataLoader :)
    if batch_size is None:
        Xb, yb = X, y
    else:
        ri = np.random.permutation(X.shape[0])[:batch_size]
        Xb, yb = X[ri], y[ri]
    inputs = [list(map(Value, xrow)) for xrow in Xb]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p*p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

total_loss, acc = loss()
print(total_loss, acc)""",
    ),
    (
        "md",
        """## Training, with a decaying learning rate

100 steps of plain gradient descent on all 100 points. The learning rate starts at 1.0 and falls
linearly to 0.109 at the last step, `1.0 - 0.9*k/100`: big steps while the boundary is far off,
small ones at the end so that it settles instead of jittering back and forth across a point.""",
    ),
    (
        "code",
        """# optimization
for k in range(100):
    # forward
    total_loss, acc = loss()
    # backward
    model.zero_grad()
    total_loss.backward()
    # update (sgd)
    learning_rate = 1.0 - 0.9*k/100
    for p in model.parameters():
        p.data -= learning_rate * p.grad
    if k % 10 == 9:
        print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
assert total_loss.data == 0.010978370135492717   # karpathy's step 99, to the last digit
assert acc == 1.0""",
    ),
    (
        "md",
        """The last line printed is karpathy's: `step 99 loss 0.010978370135492717, accuracy 100.0%`.
Every weight is drawn in his order, every sum is added in his order, so the floats are the same
bit for bit (even `dot` and `sum` inside micrograd's fused neurons add in the lecture's order).

## The decision boundary

Score every point of a grid and colour it by the sign of the score.""",
    ),
    (
        "code",
        """h = 0.25
x_min, x_max = X[:, 0].min() - 1, X[:, 0].max() + 1
y_min, y_max = X[:, 1].min() - 1, X[:, 1].max() + 1
xx, yy = np.meshgrid(np.arange(x_min, x_max, h), np.arange(y_min, y_max, h))
Xmesh = np.c_[xx.ravel(), yy.ravel()]
inputs = [list(map(Value, xrow)) for xrow in Xmesh]
scores = list(map(model, inputs))
Z = np.array([s.data > 0 for s in scores]).reshape(xx.shape)
plt.figure(figsize=(5, 5))
plt.contourf(xx, yy, Z, cmap=plt.cm.Spectral, alpha=0.8)
plt.scatter(X[:, 0], X[:, 1], c=y, s=40, cmap=plt.cm.Spectral)
plt.xlim(xx.min(), xx.max()); plt.ylim(yy.min(), yy.max()); plt.show()""",
    ),
    (
        "md",
        """The appendix notebook runs this same training under `micrograd.jit`, many times faster.""",
    ),
]

NOTEBOOKS["05_pytorch_side_by_side"] = [
    (
        "md",
        """# 5. The same neuron, and the same MLP, in PyTorch

Right after tanh the lecture rebuilds its neuron in PyTorch. micrograd works on scalars, PyTorch
on tensors; the semantics are the same: leaves with `requires_grad`, a graph built by the forward
pass, `.backward()`, gradients in `.grad`. Every gradient is compared and printed, biases too.""",
    ),
    (
        "code",
        """import math
import torch
from micrograd import Value

# dtype=float64 from the start: torch.Tensor([6.8813735870195432]).double(), the lecture's
# spelling, rounds the bias to float32 first, and every number below would be off in the 7th
# digit.
x1 = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
x2 = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
w1 = torch.tensor([-3.0], dtype=torch.float64, requires_grad=True)
w2 = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
b = torch.tensor([6.8813735870195432], dtype=torch.float64, requires_grad=True)
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)
o.backward()

vx1, vx2, vw1, vw2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
vb = Value(6.8813735870195432)
vo = (vx1*vw1 + vx2*vw2 + vb).tanh()
vo.backward()

print(f"{'':4} {'micrograd':>22} {'PyTorch':>22}")
print(f"{'o':4} {vo.data!r:>22} {o.item()!r:>22}")
for name, ours, theirs in zip(['x1', 'w1', 'x2', 'w2', 'b'], [vx1, vw1, vx2, vw2, vb],
                              [x1, w1, x2, w2, b]):
    print(f"{name:4} {ours.grad!r:>22} {theirs.grad.item()!r:>22}")
    assert math.isclose(ours.grad, theirs.grad.item(), rel_tol=1e-12, abs_tol=1e-15)
assert math.isclose(vo.data, o.item(), rel_tol=1e-15)""",
    ),
    (
        "md",
        """The numbers agree to within one rounding step (about 1e-16), not always to the last digit:
micrograd's tanh is Python's `math.tanh` and PyTorch has its own. o prints 0.7071067811865477
here and 0.7071067811865476 in PyTorch and in the lecture (whose tanh is (e^2x - 1)/(e^2x + 1));
every gradient that goes through 1 - o² (all but w2's, which is 0) differs the same way. The
tests hold every op to PyTorch within 1e-9 relative.

## An MLP, both ways

The same weights in a micrograd `MLP` (the lecture's all-tanh network) and in PyTorch tensors
give the same loss and the same gradient for every weight and every bias.""",
    ),
    (
        "code",
        """import random
from micrograd.nn import MLP

random.seed(1)
model = MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')
Ws = [torch.tensor([[w.data for w in nrn.w] for nrn in layer.neurons], dtype=torch.float64,
                   requires_grad=True) for layer in model.layers]
Bs = [torch.tensor([nrn.b.data for nrn in layer.neurons], dtype=torch.float64,
                   requires_grad=True) for layer in model.layers]

xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]
loss = sum((model(x) - y)**2 for x, y in zip(xs, ys))
loss.backward()

h = torch.tensor(xs, dtype=torch.float64)
for W, B in zip(Ws, Bs):
    h = torch.tanh(h @ W.T + B)
tloss = ((h.squeeze(1) - torch.tensor(ys, dtype=torch.float64))**2).sum()
tloss.backward()
print('loss', loss.data, tloss.item())
assert math.isclose(loss.data, tloss.item(), rel_tol=1e-12)

print(f"{'parameter':16} {'micrograd':>23} {'PyTorch':>23}")
worst = 0.0
for li, (layer, W, B) in enumerate(zip(model.layers, Ws, Bs)):
    for ni, nrn in enumerate(layer.neurons):
        rows = [(f'w[{wi}]', p, W.grad[ni, wi].item()) for wi, p in enumerate(nrn.w)]
        rows.append(('b', nrn.b, B.grad[ni].item()))
        for name, p, theirs in rows:
            print(f"layer {li} n{ni} {name:5} {p.grad!r:>23} {theirs!r:>23}")
            assert math.isclose(p.grad, theirs, rel_tol=1e-9, abs_tol=1e-15)
            worst = max(worst, abs(p.grad - theirs))
print('largest difference', worst)""",
    ),
    (
        "md",
        """Second derivatives, Newton's method and `micrograd.jit` are in the appendix notebook.""",
    ),
]

NOTEBOOKS["06_appendix_second_derivatives_and_jit"] = [
    (
        "md",
        """# Appendix: second derivatives, Newton's method, and `micrograd.jit`

Beyond the lecture: two things micrograd adds to its engine, shown briefly.""",
    ),
    (
        "md",
        """## Second derivatives

`grad(y, x, create_graph=True)` returns the gradient as a `Value` that is itself a function of
`x`, so it can be differentiated again, like `torch.autograd.grad(..., create_graph=True)`.
For y = x³ at x = 2: dy/dx = 3x² = 12 and d²y/dx² = 6x = 12.""",
    ),
    (
        "code",
        """import math, random, time
import numpy as np
import torch
from micrograd import Value, grad, jit
from micrograd.nn import MLP

x = Value(2.0)
dy = grad(x**3, x, create_graph=True)
d2y = grad(dy, x)
print(dy.data, d2y)

t = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
(tdy,) = torch.autograd.grad(t**3, t, create_graph=True)
(td2y,) = torch.autograd.grad(tdy, t)
print(tdy.item(), td2y.item())
assert (dy.data, d2y) == (tdy.item(), td2y.item()) == (12.0, 12.0)""",
    ),
    (
        "md",
        """## Newton's method

Root finding: x ← x - f(x)/f'(x). For f(x) = x³ - 2x - 5 (Newton's own example), from 2.""",
    ),
    (
        "code",
        """x = Value(2.0)
for i in range(6):
    f = x**3 - 2*x - 5
    x = Value(x.data - f.data / grad(f, x))
    print(i, repr(x.data))
assert x.data == 2.0945514815423265""",
    ),
    (
        "md",
        """And minimisation, which needs the second derivative: x ← x - f'(x)/f''(x) for
f(x) = x⁴ - 3x² + x.""",
    ),
    (
        "code",
        """x = Value(1.5)
for i in range(8):
    f = x**4 - 3*x**2 + x
    d1 = grad(f, x, create_graph=True)
    d2 = grad(d1, x)
    x = Value(x.data - d1.data / d2)
print(x.data, 4*x.data**3 - 6*x.data + 1)
assert abs(4*x.data**3 - 6*x.data + 1) < 1e-12""",
    ),
    (
        "md",
        """## The moons demo under `micrograd.jit`

Notebook 4's per-sample loss is ordinary scalar code. `jit` runs it once on placeholder inputs,
records the graph, and replays that graph with numpy over the whole batch at once. The result is
a `Value` whose children are the parameters, so the eager L2 term and `backward()` work as
before. The final loss is karpathy's again (here to the last digit; the check allows 1e-9,
because numpy is free to add up a batch in a different order than Python's `sum`).""",
    ),
    (
        "code",
        """from sklearn.datasets import make_moons

np.random.seed(1337)
random.seed(1337)
X, y = make_moons(n_samples=100, noise=0.1)
y = y*2 - 1
model = MLP(2, [16, 16, 1])
params = model.parameters()

per_sample = jit(lambda x, yi: (1 + -yi * model(x)).relu())   # mean over the batch

start = time.perf_counter()
for k in range(100):
    total_loss = per_sample(X, y) + 1e-4 * Value.dot(params, params)
    model.zero_grad()
    total_loss.backward()
    learning_rate = 1.0 - 0.9*k/100
    for p in params:
        p.data -= learning_rate * p.grad
jit_ms = (time.perf_counter() - start) * 1000 / 100
acc = np.mean([(yi > 0) == (model(list(x)).data > 0) for x, yi in zip(X, y)])
print(f"final loss {total_loss.data}, accuracy {acc*100}%")
print(f"jit: {jit_ms:.2f} ms per step (timings vary from run to run)")
assert abs(total_loss.data - 0.010978370135492717) < 1e-9
assert acc == 1.0""",
    ),
]


def cell_metadata(kind: str) -> dict:
    """Exercises are tagged; solutions are tagged and collapsed in Jupyter ("source_hidden") and in
    Colab (a form cell shows its `#@title` line only)."""
    if kind == "exercise":
        return {"tags": ["exercise"]}
    if kind == "solution":
        return {"tags": ["solution"], "jupyter": {"source_hidden": True}, "cellView": "form"}
    return {}


def make(name: str, cells: list[tuple[str, str]]):
    """The notebook `name` as built from `cells`, not executed: what the tests compare with."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for i, (kind, text) in enumerate(cells):
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(text)
        else:
            source = SOLUTION_TITLE + text if kind == "solution" else text
            cell = nbformat.v4.new_code_cell(source)
        # Stable cell ids and metadata: rebuilding an unchanged notebook changes nothing in git.
        cell.id = f"{name[:2]}-{i:02d}"
        cell.metadata = cell_metadata(kind)
        nb.cells.append(cell)
    return nb


def coalesce_streams(outputs: list) -> list:
    """Consecutive prints to the same stream as one output: the kernel splits them at random
    points, which would change the stored notebook from one build to the next."""
    merged: list = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (out.output_type == "stream" and last is not None and last.output_type == "stream"
                and last.name == out.name):
            last.text += out.text
        else:
            merged.append(out)
    return merged


def build(name: str, cells: list[tuple[str, str]]) -> pathlib.Path:
    """Make, execute (outputs stored for readers on GitHub) and write the notebook `name`."""
    import nbformat
    from nbclient import NotebookClient

    nb = make(name, cells)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    path = HERE / f"{name}.ipynb"
    tmp = path.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    tmp.replace(path)  # atomically: an interrupted build leaves the old notebook
    return path


if __name__ == "__main__":
    wanted = sys.argv[1:]
    try:
        for name, cells in NOTEBOOKS.items():
            if not wanted or any(name.startswith(w) for w in wanted):
                print("built", build(name, cells))
    except KeyboardInterrupt:
        sys.exit("interrupted: notebooks built so far are written, the rest are unchanged")
