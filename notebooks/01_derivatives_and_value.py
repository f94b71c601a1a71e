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
# # 1. Derivatives, and a Value of your own
#
# A derivative answers one question: *if I nudge the input a tiny bit, how much does the output
# move, and in which direction?* We start with plain numbers; then you write the lecture's `Value`
# (about 25 lines), draw an expression with it, and backpropagate through it by hand.
#
# **How the exercises work.** An *exercise* cell is yours: replace each `...` with your code and
# run it. The cell after it checks what you wrote and says what, if anything, is wrong (for a
# class, `micrograd.check` does, op by op). Your code is always what runs. Each exercise has a
# solution below it, folded under "Solution": it never runs by itself; if you want it, open it
# and copy it into the exercise cell.

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

# %%
import math
from micrograd import check
try:
    import numpy as np
    import matplotlib.pyplot as plt
except ModuleNotFoundError:   # the course in the browser (JupyterLite) has no numpy or matplotlib
    np = plt = None

def f(x):
    return 3*x**2 - 4*x + 5

if plt is None:   # the course in the browser: micrograd's own picture of it
    from micrograd.viz.plot import line
    xs = [x / 4 for x in range(-20, 20)]
    display(line([f(x) for x in xs], xs=xs, title='f(x) = 3x² - 4x + 5'))
else:
    xs = np.arange(-5, 5, 0.25)
    plt.plot(xs, f(xs)); plt.title('f(x) = 3x² - 4x + 5'); plt.show()
f(3.0)

# %% [markdown]
# ## The slope, numerically
#
# Rise over run for a small run `h`: (f(x + h) - f(x)) / h. At x = 3 the exact slope is
# f'(x) = 6x - 4 = 14; at x = -3 it is -22; and at x = 2/3 it is 0: the bottom of the parabola,
# where a small nudge does not move f at all (to first order).

# %% exercise="slope" tags=["exercise"]
def slope(f, x, h=0.0001):
    ...  # how much f moves when x moves by h, divided by h

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def slope(f, x, h=0.0001):
#     return (f(x + h) - f(x)) / h
# ```
#
# </details>

# %% checks="slope"
assert slope(f, 3.0) is not None, 'slope returns nothing yet: write it in the exercise above'
for x in (3.0, -3.0, 2/3):
    print(f'slope at x = {x:.4f}: {slope(f, x)}')
assert abs(slope(f, 3.0) - 14) < 1e-3, 'slope(f, 3.0) should be close to 14 (f\'(3) = 6·3 - 4)'
assert abs(slope(f, -3.0) + 22) < 1e-3, 'slope(f, -3.0) should be close to -22'
assert abs(slope(f, 2/3)) < 1e-3, 'slope(f, 2/3) should be close to 0'
print('✓ slope is right: 14, -22 and 0, to 3 decimals')

# %% [markdown]
# 14.0003, -21.9997 and 0.0003, not 14, -22 and 0: this one-sided difference is off by 3h
# (half of f's second derivative, 6, times h). The lecture printed the same 14.0003. A smaller
# h shrinks that error, until floating-point rounding takes over: at h = 1e-15 the difference
# f(x + h) - f(x) is a few units in the last place of 20, and the slope is noise.

# %%
for h in (0.001, 0.0001, 1e-8, 1e-15):
    print(f'h = {h:g}: slope at 3 = {slope(f, 3.0, h)!r}')

# %% [markdown]
# ## Several inputs: d = a*b + c
#
# Nudge one input at a time. The slope with respect to `a` is `b` (-3), with respect to `b` it
# is `a` (2), and with respect to `c` it is 1. These are the lecture's numbers, digit for digit:
# the last digits are the rounding of (d2 - d1) / h.

# %%
h = 0.0001
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
assert slopes == {'a': -3.000000000010772, 'b': 2.0000000000042206, 'c': 0.9999999999976694}

# %% [markdown]
# ## Exercise: your Value
#
# A `Value` wraps a number and remembers how it was made: `_prev` holds the children it was
# computed from, `_op` the operation, `label` a name for pictures, and `grad` (0 for now) will
# hold the derivative of the final output with respect to this node. Write `__init__`, `__add__`
# and `__mul__`: each op returns a new Value whose children are `(self, other)`.
#
# The lecture stores `_prev` as a `set`; a tuple keeps the children in order, so pictures come
# out the same on every run and `a + a` keeps both of its edges. Either passes the check.

# %% exercise="value" tags=["exercise"]
class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        ...  # store data, grad = 0.0, _prev (the children), _op and label

    def __repr__(self):
        return f'Value(data={self.data})'

    def __add__(self, other):
        ...  # a new Value: data self.data + other.data, children (self, other), _op '+'

    def __mul__(self, other):
        ...  # the same for *

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# class Value:
#     def __init__(self, data, _children=(), _op='', label=''):
#         self.data = data
#         self.grad = 0.0
#         self._prev = tuple(_children)
#         self._op = _op
#         self.label = label
#
#     def __repr__(self):
#         return f'Value(data={self.data})'
#
#     def __add__(self, other):
#         return Value(self.data + other.data, (self, other), '+')
#
#     def __mul__(self, other):
#         return Value(self.data * other.data, (self, other), '*')
# ```
#
# </details>

# %% [markdown]
# `check` builds expressions with your class and with micrograd's and compares them: forward
# values for now, gradients once you have written `backward()` (notebook 2). Ops you have not
# written yet are listed as "not implemented yet", not as failures.

# %% checks="value"
report = check(Value, asked="+ *")   # what this notebook asks for; the rest comes later
display(report)
assert report.ok, report.headline   # the first problem; all of them are listed above

# %% [markdown]
# ## The lecture's expression, drawn
#
# `draw_dot` from `micrograd.viz` draws any object of this shape, yours included: a record per
# Value (label, data, grad) and an oval per operation.

# %%
from micrograd.viz import draw_dot

a = Value(2.0, label='a')
b = Value(-3.0, label='b')
c = Value(10.0, label='c')
e = a*b; e.label = 'e'
d = e + c; d.label = 'd'
f = Value(-2.0, label='f')
L = d * f; L.label = 'L'
print(L, d._prev, d._op)
draw_dot(L)

# %% [markdown]
# ## Backpropagation by hand
#
# `L.grad` is to hold dL/dL, `d.grad` dL/dd, and so on down to the leaves. Each answer is checked
# against a nudge, as the lecture's `lol()` does: move one node by h, recompute L, take rise over run.
# Then your cell runs again on the same expression at other numbers (`elsewhere`), so that an
# answer right only by a coincidence of the lecture's numbers is caught.

# %%
from micrograd.check.notebook import compare_grads

def elsewhere(a=3.0, b=-1.5, c=4.0, f=2.5):
    # The lecture's expression at other numbers: the root first, then every node.
    a, b, c, f = Value(a, label='a'), Value(b, label='b'), Value(c, label='c'), Value(f, label='f')
    e = a*b; e.label = 'e'
    d = e + c; d.label = 'd'
    L = d * f; L.label = 'L'
    return L, d, e, a, b, c, f

def compare(*nodes):
    # Your grads against the nudge, a line each, at the lecture's numbers and then elsewhere.
    compare_grads(nodes, root=L, rerun=elsewhere)

# %% [markdown]
# **Step 1.** How much does L move when L moves by h? (`...` is Python's Ellipsis: replace it
# with a number.)

# %% exercise="step1" tags=["exercise"]
L.grad = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# L.grad = 1.0
# ```
#
# </details>

# %% checks="step1"
compare(L)

# %% [markdown]
# **Step 2.** L = d · f. Write the rise over run for L when d moves by h, ((d + h)·f - d·f) / h,
# and simplify; then the same for f.

# %% exercise="step2" tags=["exercise"]
d.grad = ...
f.grad = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# d.grad = f.data   # dL/dd = f
# f.grad = d.data   # dL/df = d
# ```
#
# </details>

# %% checks="step2"
compare(d, f)

# %% [markdown]
# **Step 3.** d = e + c. A nudge of e moves d by exactly as much, so dd/de = 1 (and dd/dc = 1).
# The *chain rule*: how much L moves per unit of e is how much L moves per unit of d (d.grad)
# times how much d moves per unit of e. A `+` node passes its gradient through unchanged.

# %% exercise="step3" tags=["exercise"]
e.grad = ...
c.grad = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# e.grad = 1.0 * d.grad
# c.grad = 1.0 * d.grad
# ```
#
# </details>

# %% checks="step3"
compare(e, c)

# %% [markdown]
# **Step 4.** e = a · b, so de/da = b and de/db = a (step 2's rule). Chain it with e.grad.

# %% exercise="step4" tags=["exercise"]
a.grad = ...
b.grad = ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# a.grad = b.data * e.grad
# b.grad = a.data * e.grad
# ```
#
# </details>

# %% checks="step4"
compare(a, b, c, f)
draw_dot(L)

# %% [markdown]
# ## Nudging the inputs along the gradient
#
# Each leaf's gradient says which way to move it to make L bigger. Move every leaf a little
# (0.01 × its gradient) and L goes up, from -8 to -7.286496. Training a network is this, with the
# sign flipped to make a *loss* smaller.

# %%
for leaf in (a, b, c, f):
    leaf.data += 0.01 * leaf.grad
L = (a*b + c) * f
print(L.data)
assert math.isclose(L.data, -7.286496)

# %% [markdown]
# Next, notebook 2: your `Value` learns to do steps 1 to 4 itself.
