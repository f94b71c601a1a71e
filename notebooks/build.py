"""Build the learning-path notebooks from the cell lists below and store them with outputs.

    python notebooks/build.py            # write and execute every notebook (needs the test extras)
    python notebooks/build.py 03         # only notebooks whose name starts with 03

The notebooks are the lecture as runnable lessons; they call the package rather than re-implement
it, and each checks its own key numbers with `assert`. The test suite re-runs every stored notebook
top to bottom in a fresh kernel (tests/test_notebooks.py); this script is how they are edited.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

NOTEBOOKS["01_derivatives_and_value"] = [
    (
        "md",
        """# 1. Derivatives and the Value object

A derivative answers one question: *if I nudge the input a tiny bit, how much does the output move,
and in which direction?* We start with plain numbers, then build expressions out of `Value`s, which
remember how they were computed so we can ask that question of every input at once.""",
    ),
    (
        "code",
        """import math
import numpy as np
import matplotlib.pyplot as plt

def f(x):
    return 3*x**2 - 4*x + 5

xs = np.arange(-5, 5, 0.25)
plt.plot(xs, f(xs)); plt.title('f(x) = 3x² - 4x + 5'); plt.show()
f(3.0)""",
    ),
    (
        "md",
        """## The slope, numerically

Rise over run for a very small run `h`. At x = 3 the exact slope is f'(x) = 6x - 4 = 14.""",
    ),
    (
        "code",
        """h = 0.00000001
x = 3.0
slope = (f(x + h) - f(x)) / h
print(slope)
assert abs(slope - 14) < 1e-6""",
    ),
    (
        "md",
        """## A function of three inputs: d = a*b + c

Nudge each input in turn. The slope with respect to `a` is `b` (-3), with respect to `b` it is
`a` (2), and with respect to `c` it is 1.""",
    ),
    (
        "code",
        """h = 0.0001
a, b, c = 2.0, -3.0, 10.0

def d_of(a, b, c):
    return a * b + c

d1 = d_of(a, b, c)
slopes = {
    'a': (d_of(a + h, b, c) - d1) / h,
    'b': (d_of(a, b + h, c) - d1) / h,
    'c': (d_of(a, b, c + h) - d1) / h,
}
print(slopes)
assert math.isclose(slopes['a'], -3, abs_tol=1e-6)
assert math.isclose(slopes['b'], 2, abs_tol=1e-6)
assert math.isclose(slopes['c'], 1, abs_tol=1e-6)""",
    ),
    (
        "md",
        """## Value: a number that remembers where it came from

Each `Value` keeps its `data`, the children it was made from (`_prev`) and the operation (`_op`).
A whole expression becomes a graph we can draw.""",
    ),
    (
        "code",
        """from micrograd.engine import Value
from micrograd.viz import draw_dot, render_text

a = Value(2.0, label='a')
b = Value(-3.0, label='b')
c = Value(10.0, label='c')
e = a * b; e.label = 'e'
d = e + c; d.label = 'd'
f = Value(-2.0, label='f')
L = d * f; L.label = 'L'
print(d._prev, d._op)
draw_dot(L)""",
    ),
    (
        "md",
        """## Every gradient at once

`L.backward()` fills `grad` on every node: dL/d(node). Compare with the slopes you would get by
nudging each leaf: dL/da = f·b = 6, dL/db = f·a = -4, dL/dc = f = -2, dL/df = d = 4.""",
    ),
    (
        "code",
        """L.backward()
print(a.grad, b.grad, c.grad, f.grad)
assert (a.grad, b.grad, c.grad, f.grad) == (6.0, -4.0, -2.0, 4.0)
draw_dot(L)""",
    ),
    ("md", """The same graph as text, for a terminal (no Graphviz needed):"""),
    ("code", """print(render_text(L))"""),
    (
        "md",
        """## Nudging the inputs along the gradient

Moving every leaf a little in the direction of its gradient makes L go up: -8 becomes -7.286496.""",
    ),
    (
        "code",
        """for leaf in (a, b, c, f):
    leaf.data += 0.01 * leaf.grad
L = (a * b + c) * f
print(L.data)
assert math.isclose(L.data, -7.286496)""",
    ),
]

NOTEBOOKS["02_backpropagation"] = [
    (
        "md",
        """# 2. Backpropagation, by hand and then automatically

A neuron: two inputs, two weights, a bias, and tanh. We fill in the gradients ourselves with the
chain rule, then let `_backward` do each step, then let `backward()` do all of them.""",
    ),
    (
        "code",
        """import math
from micrograd.engine import Value
from micrograd.viz import draw_dot

def neuron():
    x1, x2 = Value(2.0, label='x1'), Value(0.0, label='x2')
    w1, w2 = Value(-3.0, label='w1'), Value(1.0, label='w2')
    b = Value(6.8813735870195432, label='b')
    x1w1 = x1 * w1; x1w1.label = 'x1*w1'
    x2w2 = x2 * w2; x2w2.label = 'x2*w2'
    x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
    n = x1w1x2w2 + b; n.label = 'n'
    o = n.tanh(); o.label = 'o'
    return o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b

o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
draw_dot(o)""",
    ),
    (
        "md",
        """## By hand

do/dn = 1 - tanh(n)² = 1 - o². A `+` passes its gradient through unchanged to both inputs; a `*`
sends each input the other input's value times the gradient.""",
    ),
    (
        "code",
        """o.grad = 1.0
n.grad = 1 - o.data**2
x1w1x2w2.grad = b.grad = n.grad
x1w1.grad = x2w2.grad = x1w1x2w2.grad
x2.grad, w2.grad = w2.data * x2w2.grad, x2.data * x2w2.grad
x1.grad, w1.grad = w1.data * x1w1.grad, x1.data * x1w1.grad
print(round(n.grad, 4), x1.grad, w1.grad, x2.grad, w2.grad)
assert round(n.grad, 4) == 0.5
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]
draw_dot(o)""",
    ),
    (
        "md",
        """## One `_backward()` per node

Each node knows how to pass its gradient to its children. Calling them in the right order (every
node before its children) does the whole job.""",
    ),
    (
        "code",
        """o, n, x1w1x2w2, x1w1, x2w2, x1, x2, w1, w2, b = neuron()
o.grad = 1.0
for node in (o, n, x1w1x2w2, x1w1, x2w2):
    node._backward()
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]""",
    ),
    (
        "md",
        """## The order: a topological sort

Lay the graph out so that every node comes after its children; reversed, that is the order
backpropagation needs. Here is the lecture's `build_topo`, written by hand on `_prev`.
micrograd's own `backward()` does the same walk without recursion (so a million-deep graph is
fine) and visits children in the order they were given.""",
    ),
    (
        "code",
        """o, *rest = neuron()
topo = []
visited = set()
def build_topo(v):
    if v not in visited:
        visited.add(v)
        for child in v._prev:
            build_topo(child)
        topo.append(v)
build_topo(o)
print([round(v.data, 4) for v in topo])

o.grad = 1.0
for node in reversed(topo):
    node._backward()
x1, x2, w1, w2 = rest[4], rest[5], rest[6], rest[7]
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]""",
    ),
    (
        "md",
        """## Why gradients accumulate (`+=`)

When a value is used twice, both uses send it gradient. `b = a + a` should give `a.grad == 2`;
a backward pass that *assigned* instead of adding would say 1. In `f = (a*b) * (a+b)`, `b`
reaches `f` by two paths, and its gradient is the sum of both: -8.""",
    ),
    (
        "code",
        """a = Value(3.0, label='a')
b = a + a; b.label = 'b'
b.backward()
print(a.grad)
assert a.grad == 2.0

a = Value(-2.0, label='a'); b = Value(3.0, label='b')
d = a * b; d.label = 'd'
e = a + b; e.label = 'e'
f = d * e; f.label = 'f'
f.backward()
print(a.grad, b.grad)
assert (a.grad, b.grad) == (-3.0, -8.0)
draw_dot(f)""",
    ),
    (
        "md",
        """The same accumulation is why a training loop must call `zero_grad()`: gradients of leaves keep
adding up across `backward()` calls, exactly as in PyTorch. (The grads of intermediate nodes are
recomputed each time, so calling `backward()` twice gives twice the leaf gradient, not more.)""",
    ),
    (
        "code",
        """x = Value(3.0)
y = x * x * x
y.backward(); first = x.grad
y.backward(); second = x.grad
print(first, second)
assert (first, second) == (27.0, 54.0)""",
    ),
    (
        "md",
        """## tanh rebuilt from exp

The level at which an op is implemented is a choice. tanh(n) = (e^{2n} - 1) / (e^{2n} + 1) built
from `exp`, `+`, `*` and `**-1` gives the same output and the same gradients, through a bigger
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
print(round(o.data, 4), [round(v.grad, 4) for v in (x1, w1, x2, w2)])
assert round(o.data, 4) == 0.7071
assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]
draw_dot(o)""",
    ),
    (
        "md",
        """## Checking gradients with finite differences

The lecture's `lol()` as a library function: `gradcheck` nudges every input by ±h and compares the
slope with what backpropagation computed.""",
    ),
    (
        "code",
        """from micrograd import gradcheck, numerical_grad

def neuron_out(x1, x2, w1, w2, b):
    return (x1*w1 + x2*w2 + b).tanh()

point = [2.0, 0.0, -3.0, 1.0, 6.8813735870195432]
print(numerical_grad(neuron_out, point))
assert gradcheck(neuron_out, point)""",
    ),
]

NOTEBOOKS["03_neuron_to_mlp"] = [
    (
        "md",
        """# 3. From a neuron to an MLP

A neuron computes activation(w·x + b). A layer is neurons side by side; an MLP is layers in a row.
`MLP(3, [4, 4, 1])` has 3·4+4 + 4·4+4 + 4+1 = 41 parameters.""",
    ),
    (
        "code",
        """import math, random
import matplotlib.pyplot as plt
from micrograd.engine import Value
from micrograd.nn import Neuron, Layer, MLP
from micrograd.viz import draw_dot

random.seed(42)
n = MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')
print(n)
print(len(n.parameters()), 'parameters')
assert len(n.parameters()) == 41""",
    ),
    (
        "md",
        """A neuron the lecture's way (`fused=False`: one `*` and one `+` per input) and micrograd's way
(one `dot` node for w·x + b: the same numbers, a smaller graph and much faster).""",
    ),
    (
        "code",
        """random.seed(0)
lecture = Neuron(2, activation='tanh', fused=False)
random.seed(0)
fused = Neuron(2, activation='tanh')
x = [2.0, 3.0]
assert lecture(x).data == fused(x).data
draw_dot(lecture(x))""",
    ),
    ("code", """draw_dot(fused(x))"""),
    (
        "md",
        """## Training on four samples

Forward pass, loss (sum of squared errors), zero the grads, backward pass, a small step against
the gradient. Repeat.""",
    ),
    (
        "code",
        """xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]

def train(lr, steps=40, zero_grad=True, seed=42):
    random.seed(seed)
    n = MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')
    losses = []
    for k in range(steps):
        ypred = [n(x) for x in xs]
        loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
        if zero_grad:
            n.zero_grad()
        loss.backward()
        for p in n.parameters():
            p.data += -lr * p.grad
        losses.append(loss.data)
    return n, losses

n, losses = train(lr=0.05)
print(losses[0], '->', losses[-1])
print([round(n(x).data, 3) for x in xs])
assert losses[-1] < 0.1 * losses[0]
assert [math.copysign(1, n(x).data) for x in xs] == ys
plt.plot(losses); plt.xlabel('step'); plt.ylabel('loss'); plt.show()""",
    ),
    (
        "md",
        """## The forgotten `zero_grad()`

Without it, every step's gradient is added to all the previous ones: it is like a step size that
keeps growing. On this tiny problem it may even *look* faster. It is still a bug.""",
    ),
    (
        "code",
        """_, with_zero = train(lr=0.05)
_, without = train(lr=0.05, zero_grad=False)
plt.plot(with_zero, label='zero_grad() each step')
plt.plot(without, label='forgot zero_grad()')
plt.legend(); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
assert with_zero != without""",
    ),
    (
        "md",
        """## Learning rates: too small, about right, too large

The gradient only says which way is downhill *here*. With a small step the loss creeps down; with
a moderate one it falls steadily. A large step overshoots: the loss goes *up* on some steps and
lurches around before (with luck) it lands. A huge step throws every tanh unit into saturation
(outputs stuck at ±1, slopes 1 - tanh² ≈ 0): the gradients vanish and the loss is stuck for
good.""",
    ),
    (
        "code",
        """curves = {lr: train(lr=lr, steps=30)[1] for lr in (0.01, 0.05, 0.3, 2.0)}
for lr, curve in curves.items():
    plt.plot(curve, label=f'lr={lr}')
plt.legend(); plt.yscale('log'); plt.xlabel('step'); plt.ylabel('loss'); plt.show()

ups = {lr: sum(b > a for a, b in zip(c, c[1:])) for lr, c in curves.items()}
print('steps where the loss went up:', ups)
print('last losses with lr=2.0:', curves[2.0][-5:])
assert curves[0.01][-1] > curves[0.05][-1]   # too small: still far from done
assert ups[0.05] == 0 and ups[0.3] >= 2      # steady vs. overshooting
assert min(curves[2.0][-10:]) > 7.9          # saturated: every prediction ±1 on the wrong side""",
    ),
]

NOTEBOOKS["04_moons_demo"] = [
    (
        "md",
        """# 4. karpathy's moons demo

A 2-16-16-1 ReLU network learns to separate two interleaved half-moons, with karpathy's own code:
an SVM "max-margin" loss, L2 regularisation and SGD with a decaying learning rate. micrograd
reproduces his final loss, 0.010978370135492717, to the last digit.""",
    ),
    (
        "code",
        """import random, time
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
        "code",
        """model = MLP(2, [16, 16, 1])  # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))""",
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
        "code",
        """# optimization
start = time.perf_counter()
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
eager_ms = (time.perf_counter() - start) * 1000 / 100
print(f"eager: {eager_ms:.1f} ms per step")
assert abs(total_loss.data - 0.010978370135492717) < 1e-9
assert acc == 1.0""",
    ),
    (
        "md",
        """## The decision boundary

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
        """## The same training, under `micrograd.jit`

The per-sample loss is ordinary scalar code. `jit` runs it once on placeholder inputs, records the
graph, and replays that graph with numpy over the whole batch at once. The result is a `Value`
whose children are the parameters, so the eager L2 term and `backward()` work as before.""",
    ),
    (
        "code",
        """from micrograd import jit

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
print(f"eager {eager_ms:.1f} ms/step, jit {jit_ms:.2f} ms/step: {eager_ms/jit_ms:.0f}x faster")
assert abs(total_loss.data - 0.010978370135492717) < 1e-6
assert acc == 1.0""",
    ),
]

NOTEBOOKS["05_pytorch_side_by_side"] = [
    (
        "md",
        """# 5. The same computations in PyTorch

micrograd works on scalars; PyTorch on tensors. The semantics are the same: `requires_grad`
leaves, a graph built by the forward pass, `.backward()`, gradients in `.grad`.""",
    ),
    (
        "code",
        """import math
import torch
from micrograd.engine import Value
from micrograd import grad

# dtype=float64 from the start: torch.Tensor([6.8813735870195432]).double() would round the bias
# to float32 first and every number below would be off in the 7th digit.
x1 = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
x2 = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
w1 = torch.tensor([-3.0], dtype=torch.float64, requires_grad=True)
w2 = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
b = torch.tensor([6.8813735870195432], dtype=torch.float64, requires_grad=True)
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)
o.backward()
torch_grads = [t.grad.item() for t in (x1, w1, x2, w2)]
print(o.item(), torch_grads)

vx1, vx2, vw1, vw2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
vb = Value(6.8813735870195432)
vo = (vx1*vw1 + vx2*vw2 + vb).tanh()
vo.backward()
ours = [v.grad for v in (vx1, vw1, vx2, vw2)]
print(vo.data, ours)
assert math.isclose(vo.data, o.item(), rel_tol=1e-15)
assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) for a, b in zip(ours, torch_grads))""",
    ),
    (
        "md",
        """The numbers agree to within one rounding step (about 1e-16): micrograd's tanh is Python's
`math.tanh` and PyTorch has its own, so the last printed digit can differ (the lecture's
0.7071067811865476 is 0.7071067811865477 here). The tests hold every op to PyTorch within 1e-9.

## An MLP, both ways

The same weights in a micrograd `MLP` and in `torch` tensors give the same loss and the same
gradient for every parameter.""",
    ),
    (
        "code",
        """import random
from micrograd.nn import MLP

random.seed(1)
model = MLP(3, [4, 4, 1], activation='tanh', out_activation='tanh')
Ws = [torch.tensor([[w.data for w in nrn.w] for nrn in layer.neurons], dtype=torch.float64, requires_grad=True)
      for layer in model.layers]
Bs = [torch.tensor([nrn.b.data for nrn in layer.neurons], dtype=torch.float64, requires_grad=True)
      for layer in model.layers]

xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]
loss = sum((model(x) - y)**2 for x, y in zip(xs, ys))
loss.backward()

h = torch.tensor(xs, dtype=torch.float64)
for W, B in zip(Ws, Bs):
    h = torch.tanh(h @ W.T + B)
tloss = ((h.squeeze(1) - torch.tensor(ys, dtype=torch.float64))**2).sum()
tloss.backward()
print(loss.data, tloss.item())
ours = [w.grad for layer in model.layers for nrn in layer.neurons for w in nrn.w]
theirs = [g.item() for W in Ws for g in W.grad.flatten()]
assert math.isclose(loss.data, tloss.item(), rel_tol=1e-12)
assert all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) for a, b in zip(ours, theirs))""",
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
        """x = Value(2.0)
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

Root finding: x ← x - f(x)/f'(x). For f(x) = x³ - 2x - 5 (Newton's own example), starting at 2.""",
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
]


def build(name: str, cells: list[tuple[str, str]]) -> pathlib.Path:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for kind, text in cells:
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        nb.cells.append(make(text))
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    # Stable cell ids and no timestamps: rebuilding an unchanged notebook changes nothing in git.
    for i, cell in enumerate(nb.cells):
        cell.id = f"{name[:2]}-{i:02d}"
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    path = HERE / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for name, cells in NOTEBOOKS.items():
        if not wanted or any(name.startswith(w) for w in wanted):
            print("built", build(name, cells))
