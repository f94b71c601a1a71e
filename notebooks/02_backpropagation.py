# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. Backpropagation: your Value does it itself
#
# You backpropagate through a neuron by hand, give each op a `_backward` (its local derivative,
# times the output's gradient), write the topological sort and `backward()`, predict what
# `a + a` does and find out, write the rest of the lecture's ops into a file of your own
# (`my_value.py`: notebook 3 trains a network on it), and compare your gradients with PyTorch's.
# Exercises work as in notebook 1: your code is what runs; each solution is folded under
# "Solution" and runs only if you copy it in.

# %% tags=["setup"]
# Set-up: installs micrograd-plus with what these notebooks import (never Jupyter itself) where
# it is missing (Colab, a Jupyter of your own); where it is installed this does nothing.
# `pip install micrograd` would be karpathy's micrograd 0.1.0, which has no `check`.
import importlib, importlib.util, pathlib, subprocess, sys
try:
    import micrograd.check
except ImportError:
    REPO = 'OWNER/REPO'   # the GitHub repository these notebooks come from
    clone = pathlib.Path.cwd().parent   # in a clone of it, notebooks/ is the working folder
    if (clone / 'micrograd' / 'check').is_dir():
        where = clone.as_uri()
    elif REPO == 'OWNER/' + 'REPO':
        raise SystemExit("micrograd-plus is not installed, and this copy does not say where "
                         "from (REPO above is a placeholder): pip install "
                         "'micrograd-plus[lessons]' in this kernel's Python, then run "
                         "this cell again")
    else:
        where = f'git+https://github.com/{REPO}'
    if importlib.util.find_spec('micrograd'):   # karpathy's (one import name): ours replaces it
        print("this Python's micrograd has no micrograd.check: karpathy's micrograd (or a mix "
              "of his and micrograd-plus, one import name). Replacing it: pip uninstall -y "
              "micrograd micrograd-plus, then pip install micrograd-plus[lessons]")
        subprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-q', '-y', 'micrograd',
                        'micrograd-plus'])
    pip = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q',
                          f'micrograd-plus[lessons] @ {where}'], capture_output=True, text=True)
    if pip.returncode:
        said = ([line for line in pip.stderr.splitlines() if line.strip()] or ['no reason'])[-1]
        raise SystemExit(f'could not install micrograd-plus from {where} (no network?): {said}')
    for name in [m for m in sys.modules if m.split('.')[0] == 'micrograd']:
        del sys.modules[name]
    importlib.invalidate_caches()
    import micrograd.check

# %% [markdown]
# ## Your Value from notebook 1, plus tanh
#
# Paste your own if you like. Two additions: `_backward`, a function that does nothing until an op
# sets it, and `tanh(x) = (e^2x - 1) / (e^2x + 1)`, written as in the lecture (forward only, for
# now).

# %%
import math
from micrograd import check
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
        return Value(t, (self,), 'tanh')

# %% [markdown]
# ## A neuron
#
# o = tanh(x1·w1 + x2·w2 + b) with the lecture's numbers. Why the odd bias 6.8813735870195432?
# x1·w1 + x2·w2 = -6, so n = 0.8813735870195432 ≈ atanh(1/√2) = ln(1 + √2): then
# o = tanh(n) ≈ 1/√2 = 0.7071 and the local derivative 1 - o² is 0.5, a round number to
# backpropagate with.

# %%
print(math.atanh(1 / math.sqrt(2)), math.log(1 + math.sqrt(2)))

def neuron(V=None, x1=2.0, x2=0.0, w1=-3.0, w2=1.0, b=6.8813735870195432):
    V = V or Value   # your Value; micrograd's too, for the explorer below
    x1, x2 = V(x1, label='x1'), V(x2, label='x2')
    w1, w2 = V(w1, label='w1'), V(w2, label='w2')
    b = V(b, label='b')
    x1w1 = x1*w1; x1w1.label = 'x1*w1'
    x2w2 = x2*w2; x2w2.label = 'x2*w2'
    x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
    n = x1w1x2w2 + b; n.label = 'n'
    o = n.tanh(); o.label = 'o'
    return o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
print(n.data, o.data)
assert round(o.data, 4) == 0.7071
draw_dot(o)

# %% [markdown]
# Each gradient you compute below is checked against a nudge of that node (a central difference,
# in plain floats), as notebook 1's `lol()` did, at the lecture's numbers and then at a second
# point where no input is 0 or 1: there x2 = 0 cannot make a wrong product come out right.

# %%
from micrograd.check.notebook import accumulates, compare_grads

SECOND = dict(x1=1.5, x2=-0.5, w1=-2.5, w2=0.75, b=4.5)   # the second point

# %% [markdown]
# ## Exercise: the chain rule through the neuron, by hand
#
# Start at `o` and work back, as in notebook 1. The one new local derivative: do/dn = 1 - o²
# (tanh's derivative, written with its output). **Predict first**: which of the four inputs x1,
# w1, x2, w2 gets a zero gradient, and why?
#
# Then work each grad out in the explorer below, the same neuron on micrograd's Value, with
# **Predict each grad** on: press **Backward step** and it asks you for each grad the step writes
# (`your n.grad`), with the node lit. Type your number and press Enter: a right one is written
# into the graph with its chain-rule line; a wrong one gets a line saying what your number looks
# like (the local derivative alone? the grad from above alone?). **Hint** shows the line's shape,
# then its factors; **Show me** does the step. Then write the same numbers in the exercise and
# run the check.

# %%
import micrograd.engine
from micrograd.widgets import explore

explore(neuron(micrograd.engine.Value)[0], predict=True)

# %% exercise="by_hand" tags=["exercise"]
o.grad = 1.0
n.grad = ...
x1w1x2w2.grad = ...
b.grad = ...
x1w1.grad = ...
x2w2.grad = ...
x1.grad = ...
w1.grad = ...
x2.grad = ...
w2.grad = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# o.grad = 1.0
# n.grad = 1 - o.data**2                  # 0.5
# x1w1x2w2.grad = n.grad                   # a + passes the gradient on
# b.grad = n.grad
# x1w1.grad = x1w1x2w2.grad
# x2w2.grad = x1w1x2w2.grad
# x1.grad = w1.data * x1w1.grad            # a * sends each input the other's value × grad
# w1.grad = x1.data * x1w1.grad
# x2.grad = w2.data * x2w2.grad
# w2.grad = x2.data * x2w2.grad            # 0: x2 is 0, so w2 cannot move o
# ```
#
# </details>

# %% checks="by_hand"
compare_grads([o, n, x1w1x2w2, b, x1w1, x2w2, x1, w1, x2, w2], root=o,
              rerun=lambda: neuron(**SECOND))   # your cell above, run again at SECOND

# %% [markdown]
# ## Exercise: each op's `_backward`
#
# Now the Value does what you just did. Each op creates `out` and gives it a `_backward` that sends
# `out.grad` back to its children: a child's gradient is its local derivative times `out.grad`
# (the chain rule). The local derivatives: 1 and 1 for `+`; `other.data` and `self.data` for `*`;
# 1 - t² for tanh, where t is tanh's *output*. Then run the next cell, which calls each node's
# `_backward` by hand, output first.

# %% exercise="backward_ops" tags=["exercise"]
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
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            ...  # self's gradient and other's, from out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            ...
        out._backward = _backward
        return out

    def tanh(self):
        x = self.data
        t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
        out = Value(t, (self,), 'tanh')
        def _backward():
            ...
        out._backward = _backward
        return out

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# class Value:
#     def __init__(self, data, _children=(), _op='', label=''):
#         self.data = data
#         self.grad = 0.0
#         self._backward = lambda: None
#         self._prev = tuple(_children)
#         self._op = _op
#         self.label = label
#
#     def __repr__(self):
#         return f'Value(data={self.data})'
#
#     def __add__(self, other):
#         out = Value(self.data + other.data, (self, other), '+')
#         def _backward():
#             self.grad += 1.0 * out.grad
#             other.grad += 1.0 * out.grad
#         out._backward = _backward
#         return out
#
#     def __mul__(self, other):
#         out = Value(self.data * other.data, (self, other), '*')
#         def _backward():
#             self.grad += other.data * out.grad
#             other.grad += self.data * out.grad
#         out._backward = _backward
#         return out
#
#     def tanh(self):
#         x = self.data
#         t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
#         out = Value(t, (self,), 'tanh')
#         def _backward():
#             self.grad += (1 - t**2) * out.grad
#         out._backward = _backward
#         return out
# ```
#
# Why `+=` and not `=`: see "Predict, then run" below.
#
# </details>

# %% checks="backward_ops"
o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
there = neuron(**SECOND)
for nodes in (o, n, x1w1x2w2, x1w1, x2w2), there[:5]:
    nodes[0].grad = 1.0
    for node in nodes:
        node._backward()
compare_grads([n, x1w1x2w2, b, x1w1, x2w2, x1, w1, x2, w2], root=o, second=there)
# the neuron uses each node once; a node used twice gets the sum of both uses
for op, twice, want in (('+', lambda a: a + a, 2.0), ('*', lambda a: a * a, 6.0)):
    a = Value(3.0, label='a')
    out = twice(a)
    out.grad = 1.0
    out._backward()
    why = ('`_backward` assigns (=) instead of accumulating (+=) in `' + op + '`: '
           if a.grad == want / 2 else op + ': ')
    assert a.grad == want, (f'{why}for out = a {op} a with a = 3.0, a.grad is {a.grad} '
                            f'after out._backward(), expected {want}')
accumulates(Value)   # and each _backward adds (+=) to a grad its inputs already hold

# %% [markdown]
# ## Exercise: the order, and `backward()`
#
# That order was written by hand: every node before its children, so that a node's gradient is
# complete before it is pushed further back. A *topological sort* finds such an order for any
# graph: `build_topo(v)` visits each child first (each node once: keep a `visited` set), then
# appends `v`. `backward()` sets `self.grad = 1.0` and calls `_backward` on each node of
# `reversed(topo)`.
# The cell puts it on the class: run it again whenever you run the class's cell again.

# %% exercise="backward" tags=["exercise"]
def backward(self):
    ...  # build the topological order from self; then self.grad = 1.0 and each _backward

Value.backward = backward

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def backward(self):
#     topo = []
#     visited = set()
#     def build_topo(v):
#         if v not in visited:
#             visited.add(v)
#             for child in v._prev:
#                 build_topo(child)
#             topo.append(v)
#     build_topo(self)
#     self.grad = 1.0
#     for node in reversed(topo):
#         node._backward()
#
# Value.backward = backward
# ```
#
# </details>

# %% [markdown]
# ## Predict, then run: `b = a + a`
#
# With a = 3, b = a + a = 2a. If a moves by h, b moves by 2h, so db/da is 2. Before running the
# next cells: what will *your* `backward()` put in `a.grad`? Write your prediction down.

# %% exercise="prediction" tags=["exercise"]
my_prediction = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (make your prediction first)</summary>
#
# ```python
# my_prediction = 2
# ```
#
# 2 is what a nudge says, and what a right `backward()` gives. Whether yours does is what the
# next cell shows.
#
# </details>

# %% checks="prediction"
assert my_prediction is not ..., 'make your prediction first: write it in the cell above'
print('you predict a.grad =', my_prediction)

# %%
a = Value(3.0, label='a')
b = a + a; b.label = 'b'
b.backward()
print(f'a.grad = {a.grad} (you predicted {my_prediction}; a nudge says 2)')

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
o.backward()
print('the neuron:', [round(v.grad, 4) for v in (x1, w1, x2, w2)])
draw_dot(o)

# %% [markdown]
# ## Your `Value`, one node at a time
#
# `explore` steps through a graph of *your* class: each **Backward step** runs *your*
# `_backward` of one node and writes out what it did to its children's grads
# (`a.grad = 0.0000 + 1.0000 × 1.0000 = 1.0000`). Before any step it also checks every node's
# rule against the slope of its op, measured by central differences, and marks in red a node
# whose rule is not that slope. Step through `b = a + a`: is its `+` node red? (It runs on your
# objects: their grads are what the steps leave.)

# %%
from micrograd.widgets import explore

a = Value(3.0, label='a')
b = a + a; b.label = 'b'
explore(b)

# %% [markdown]
# If `a.grad` came out 1, your neuron was still right: why did the neuron not show the problem,
# and `a + a` does? Think it through, then open the answer.
#
# <details><summary>Why</summary>
#
# In `b = a + a` both children of the `+` node are the same Value. Its `_backward` runs once and
# gives `a` its gradient twice, once as `self` and once as `other`. With `self.grad = 1.0 *
# out.grad` the second assignment overwrites the first: 1. With `+=` the two contributions add
# up: 2. The same happens whenever a Value is used more than once, wherever the two uses meet; in
# the neuron every Value is used once, so `=` and `+=` give the same numbers there. The fix:
# accumulate (`+=`) in every `_backward`, in the exercise above, and rerun from there.
#
# </details>
#
# `check` now tests gradients too: each op at several points, on its own (`_backward` with an
# `out.grad` that is not 1) and through `backward()`, every op with its input used again,
# graphs where the visiting order matters, and `backward()` called twice. It names the cause.

# %% checks="backward"
report = check(Value, asked="+ * tanh backward")   # this notebook asks for these so far
display(report)
assert report.ok, report.headline   # the first problem; all of them are listed above

# %% [markdown]
# The lecture's second example, f = (a·b)·(a + b): both `a` and `b` reach `f` by two paths, and
# each gradient is the sum over both, -3 and -8.

# %%
a = Value(3.0, label='a')
b = a + a; b.label = 'b'
b.backward()
assert a.grad == 2.0, f'a.grad is {a.grad} for b = a + a; it should be 2'

a = Value(-2.0, label='a'); b = Value(3.0, label='b')
d = a*b; d.label = 'd'
e = a + b; e.label = 'e'
f = d*e; f.label = 'f'
f.backward()
print(a.grad, b.grad)
assert (a.grad, b.grad) == (-3.0, -8.0)
draw_dot(f)

# %% [markdown]
# ## Exercise: break it on purpose
#
# Write the lecture's first, wrong `+`: a subclass whose `_backward` *assigns* (`=`). Predict what
# `a + a` gives with it and what `check` will say, then run.

# %% exercise="assign_value" tags=["exercise"]
class AssignValue(Value):
    def __add__(self, other):
        ...  # an AssignValue out; its _backward assigns self.grad and other.grad

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# class AssignValue(Value):
#     def __add__(self, other):
#         out = AssignValue(self.data + other.data, (self, other), '+')
#         def _backward():
#             self.grad = 1.0 * out.grad    # = instead of +=
#             other.grad = 1.0 * out.grad
#         out._backward = _backward
#         return out
# ```
#
# </details>

# %% checks="assign_value"
a = AssignValue(3.0, label='a')
b = a + a
b.backward()
print('a.grad =', a.grad, '(a nudge says 2)')
buggy = check(AssignValue)
display(buggy)
assert not buggy.ok, 'this AssignValue accumulates: its _backward should assign (=)'

# %% [markdown]
# ## `backward()` twice
#
# Gradients accumulate, so a second `backward()` adds to the first. With the lecture's
# `backward()`, y = x·x·x at x = 3 gives x.grad 27, then **72**: the intermediate x·x still holds
# its gradient from the first call, and it is pushed back again on top. PyTorch, and micrograd,
# give **54** = 2 × 27: leaves accumulate, intermediate gradients are recomputed each call. Either
# way, a training loop zeroes the gradients before each `backward()` (notebook 3).

# %%
import micrograd

x = Value(3.0)
y = x * x * x
y.backward(); first = x.grad
y.backward(); second = x.grad
print('yours:', first, second)

X = micrograd.Value(3.0)
Y = X * X * X
Y.backward(); Y.backward()
print('micrograd:', X.grad)
assert first == 27.0 and X.grad == 54.0

# %% [markdown]
# ## Exercise: your whole Value, in a file of your own
#
# The cell below writes your class to `my_value.py` (that is what `%%writefile` does: it does not
# run the code), and notebook 3 imports it to train a network. Paste your class from above
# (`__init__`, `__repr__`, `+`, `*`, `tanh`, and `backward` as a method), then add the rest of the
# lecture's ops:
#
# * Plain numbers: `a + 1` fails until `__add__` and `__mul__` wrap them:
#   `other = other if isinstance(other, Value) else Value(other)`.
# * `exp` (its local derivative is its own output), `__pow__` for a number exponent
#   (p · x^(p-1)) and `relu` (slope 1 where the input is positive, else 0: notebook 4 needs it).
# * Built from those, with no `_backward` of their own: `__neg__` (times -1), `__sub__`
#   (a + (-b)), `__truediv__` (a · b⁻¹).
# * The reflected ops. For `2 * a` Python first asks the number, which knows nothing of Values,
#   then calls `a.__rmul__(2)`. Likewise `__radd__` (also what makes `sum()` work),
#   `__rsub__` (2 - a) and `__rtruediv__` (2 / a); mind which side each number goes.
#   `__radd__ = __add__` in the class body is fine.

# %% exercise="my_value" tags=["exercise"]
# %%writefile my_value.py
"""My own Value: the engine of karpathy's lecture, written in notebook 2."""
import math


class Value:
    ...  # paste your class here: __init__, __repr__, __add__, __mul__, tanh, backward

    def exp(self):
        ...

    def __pow__(self, other):       # other: an int or a float
        ...

    def relu(self):
        ...

    def __neg__(self):              # -self
        ...

    def __sub__(self, other):       # self - other
        ...

    def __truediv__(self, other):   # self / other
        ...

    def __radd__(self, other):      # other + self
        ...

    def __rmul__(self, other):      # other * self
        ...

    def __rsub__(self, other):      # other - self
        ...

    def __rtruediv__(self, other):  # other / self
        ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# %%writefile my_value.py
# """My own Value: the engine of karpathy's lecture, written in notebook 2."""
# import math
#
#
# class Value:
#     def __init__(self, data, _children=(), _op='', label=''):
#         self.data = data
#         self.grad = 0.0
#         self._backward = lambda: None
#         self._prev = tuple(_children)
#         self._op = _op
#         self.label = label
#
#     def __repr__(self):
#         return f'Value(data={self.data})'
#
#     def __add__(self, other):
#         other = other if isinstance(other, Value) else Value(other)
#         out = Value(self.data + other.data, (self, other), '+')
#         def _backward():
#             self.grad += 1.0 * out.grad
#             other.grad += 1.0 * out.grad
#         out._backward = _backward
#         return out
#
#     def __mul__(self, other):
#         other = other if isinstance(other, Value) else Value(other)
#         out = Value(self.data * other.data, (self, other), '*')
#         def _backward():
#             self.grad += other.data * out.grad
#             other.grad += self.data * out.grad
#         out._backward = _backward
#         return out
#
#     def tanh(self):
#         x = self.data
#         t = (math.exp(2*x) - 1) / (math.exp(2*x) + 1)
#         out = Value(t, (self,), 'tanh')
#         def _backward():
#             self.grad += (1 - t**2) * out.grad
#         out._backward = _backward
#         return out
#
#     def exp(self):
#         out = Value(math.exp(self.data), (self,), 'exp')
#         def _backward():
#             self.grad += out.data * out.grad
#         out._backward = _backward
#         return out
#
#     def __pow__(self, other):
#         assert isinstance(other, (int, float)), 'only int/float powers'
#         out = Value(self.data**other, (self,), f'**{other}')
#         def _backward():
#             self.grad += other * self.data**(other - 1) * out.grad
#         out._backward = _backward
#         return out
#
#     def relu(self):
#         out = Value(self.data if self.data > 0 else 0.0, (self,), 'ReLU')
#         def _backward():
#             self.grad += (out.data > 0) * out.grad
#         out._backward = _backward
#         return out
#
#     def __neg__(self):              # -self
#         return self * -1
#
#     def __sub__(self, other):       # self - other
#         return self + (-other)
#
#     def __truediv__(self, other):   # self / other
#         return self * other**-1
#
#     def __radd__(self, other):      # other + self
#         return self + other
#
#     def __rmul__(self, other):      # other * self
#         return self * other
#
#     def __rsub__(self, other):      # other - self
#         return other + (-self)
#
#     def __rtruediv__(self, other):  # other / self
#         return other * self**-1
#
#     def backward(self):
#         topo = []
#         visited = set()
#         def build_topo(v):
#             if v not in visited:
#                 visited.add(v)
#                 for child in v._prev:
#                     build_topo(child)
#                 topo.append(v)
#         build_topo(self)
#         self.grad = 1.0
#         for node in reversed(topo):
#             node._backward()
# ```
#
# </details>

# %% [markdown]
# Import it (again after each change: `reload` reads the file anew) and check it. From here on
# `Value` is the one in your file.

# %% checks="my_value"
import importlib
importlib.invalidate_caches()   # so that Python sees the file just written (in a browser too)
import my_value

importlib.reload(my_value)
Value = my_value.Value
report = check(Value)
display(report)
assert report.ok, report.headline   # fix my_value.py above, then run both cells again
missing = [m for m in report.missing if 'beyond the lecture' not in m]
assert not missing, 'not written yet: ' + '; '.join(missing)

# %% [markdown]
# ## tanh broken into pieces
#
# The level at which an op is implemented is a choice. tanh(n) = (e^2n - 1) / (e^2n + 1) built
# from `exp`, `-`, `+` and `/` gives the same output and the same gradients, through a bigger
# graph.

# %%
x1, x2 = Value(2.0, label='x1'), Value(0.0, label='x2')
w1, w2 = Value(-3.0, label='w1'), Value(1.0, label='w2')
b = Value(6.8813735870195432, label='b')
n = x1*w1 + x2*w2 + b; n.label = 'n'
e = (2*n).exp(); e.label = 'e'
o = (e - 1) / (e + 1); o.label = 'o'
o.backward()
print(o.data, [round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert round(o.data, 4) == 0.7071
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]
draw_dot(o)

# %% [markdown]
# ## The same neuron in PyTorch
#
# Right after tanh the lecture rebuilds its neuron in PyTorch. micrograd works on scalars, PyTorch
# on tensors; the semantics are the same: leaves with `requires_grad`, a graph built by the
# forward pass, `.backward()`, gradients in `.grad`. Your gradients, next to PyTorch's:

# %%
try:
    import torch
except ModuleNotFoundError:
    torch = None

if torch is None:
    print('PyTorch is not installed: this comparison is skipped (pip install torch to run it).')
else:
    # dtype=float64 from the start: the lecture's torch.Tensor([6.8813735870195432]).double()
    # rounds the bias to float32 first, and every number would be off in the 7th digit.
    def leaf(v):
        return torch.tensor([v], dtype=torch.float64, requires_grad=True)
    tx1, tx2, tw1, tw2, tb = leaf(2.0), leaf(0.0), leaf(-3.0), leaf(1.0), leaf(6.8813735870195432)
    to = torch.tanh(tx1*tw1 + tx2*tw2 + tb)
    to.backward()

    o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()   # your Value, from my_value.py
    o.backward()
    print(f"{'':4} {'yours':>22} {'PyTorch':>22}")
    print(f"{'o':4} {o.data!r:>22} {to.item()!r:>22}")
    for name, yours, theirs in zip(['x1', 'w1', 'x2', 'w2', 'b'], [x1, w1, x2, w2, b],
                                   [tx1, tw1, tx2, tw2, tb]):
        print(f"{name:4} {yours.grad!r:>22} {theirs.grad.item()!r:>22}")
        assert math.isclose(yours.grad, theirs.grad.item(), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(o.data, to.item(), rel_tol=1e-15)

# %% [markdown]
# They agree to within a rounding step or so, not always to the last digit: PyTorch's tanh is
# its own, yours is the lecture's formula (or `math.tanh`, if you used that).
#
# ## Where micrograd's engine differs from yours, and why
#
# * **Local derivatives are stored, not closed over.** Each op computes its output *and* its
#   local derivatives on the spot and stores them on the node (`_local`, one per child); backward
#   applies `child.grad += local * out.grad` uniformly. A closure costs ~250 bytes, most of a
#   node. `node._backward()` still works, as in the lecture.
# * **`_prev` is a tuple**, children in order: the same pictures and bit-identical sums every
#   run (a set's order depends on memory addresses).
# * **Intermediate grads are reset on every `backward()`**, so calling it twice gives 54, as
#   PyTorch, not the lecture's 72 (above).
# * **The topological sort is iterative**: a million-deep graph is fine, where a recursive
#   `build_topo` (the lecture's) stops near Python's recursion limit of 1,000 frames; the note
#   in `check`'s report above says so if yours is recursive.
# * **tanh is micrograd's own, correctly rounded** (the same last digit on every machine, in the
#   browser too), where `math.tanh` is the C library's and the lecture's (e^2x - 1) / (e^2x + 1)
#   rounds twice: the cell below prints micrograd's and yours; if their last digits differ, both
#   are still within one rounding step of the true value.

# %%
m = micrograd.Value(0.8813735870195432).tanh()
yours = Value(0.8813735870195432).tanh().data
print('micrograd:', repr(m.data), 'local derivative', m._local)
print('yours:    ', repr(yours))
e = micrograd.Value(2.0) * micrograd.Value(-3.0)
print(type(e._prev).__name__, e._op, e._local)
assert abs(m.data - yours) <= 2 * math.ulp(m.data)   # both tanh(n), to a rounding step

# %% [markdown]
# Next, notebook 3: a neuron, a layer and an MLP made of your `Value`, trained.
