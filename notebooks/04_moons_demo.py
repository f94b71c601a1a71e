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
# # 4. karpathy's moons demo
#
# A 2-16-16-1 network learns to separate two interleaved half-moons, with karpathy's own code from
# his micrograd repository (`demo.ipynb`), run on this package's `MLP` and `Value`. Three things
# differ from notebook 3, and you write each of them: a max-margin loss instead of squared error,
# L2 regularisation, and a learning rate that decays. With them, and his seeds, the training
# reaches his final loss, **0.010978370135492717**, and 100% accuracy. The neurons use ReLU.

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
import random
from micrograd.engine import Value
from micrograd.nn import MLP
try:
    import numpy as np
    import matplotlib.pyplot as plt
    from sklearn.datasets import make_moons
except ModuleNotFoundError:   # the course in the browser (JupyterLite) has none of them
    np = plt = None

random.seed(1337)
if np is None:   # the same 100 points, bit for bit, as lists (micrograd.data repeats sklearn)
    from micrograd.data import moons
    X, y = moons(n_samples=100, noise=0.1, seed=1337)
    from micrograd.viz.plot import points   # micrograd's own picture, without matplotlib
    display(points(X, y, title='the moons'))
else:
    np.random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y*2 - 1  # make y be -1 or 1
    plt.figure(figsize=(5, 5))
    plt.scatter(X[:, 0], X[:, 1], c=y, s=20, cmap='jet'); plt.show()

# %% [markdown]
# ## ReLU
#
# `MLP(2, [16, 16, 1])` is karpathy's default: hidden neurons use ReLU, relu(x) = max(0, x), and the
# output neuron is linear, so its output is an unbounded *score*: its sign is the predicted class.
# ReLU's slope is 1 for positive inputs and 0 otherwise: it never saturates on the positive side,
# as tanh does (notebook 3's lr = 1.0), and it is cheap. Biases start at 0 here, as in his code.

# %%
model = MLP(2, [16, 16, 1])  # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))
assert len(model.parameters()) == 337

# %% [markdown]
# ## Exercise: the loss, and the learning rate
#
# * **Max-margin (hinge) loss**, as in a support vector machine: for a label yᵢ = ±1 and a score
#   sᵢ (a Value), the loss is relu(1 - yᵢ·sᵢ). It is 0 once a point is on the right side *with a
#   margin* (yᵢ·sᵢ ≥ 1), and grows linearly the more wrong it is. Points already classified with
#   room to spare stop contributing, so training concentrates on the ones near the boundary.
# * **L2 regularisation**: alpha · Σ p² over all parameters. Its gradient, 2·alpha·p, pulls every
#   weight a little towards 0: among the many boundaries that separate the training points, it
#   prefers one made of small weights, which tends to be smoother.
# * **Learning-rate decay**: the rate at step k (0 to 99) starts at 1.0 and falls linearly,
#   by 0.009 a step (to 0.109 at the last one): big steps while the boundary is far off, small
#   ones at the end so that it settles instead of jittering back and forth across a point.
#
# Predict before you run the check: what is `hinge(1, Value(2.0))`, and the gradient of the score
# there?

# %% exercise="moons_parts" tags=["exercise"]
def hinge(yi, score):
    ...  # relu(1 - yi·score), a Value

def l2(params, alpha):
    ...  # alpha · the sum of p² over params, a Value

def learning_rate(k):
    ...  # 1.0 at k = 0, 0.009 less at each step

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# karpathy's own lines:
#
# ```python
# def hinge(yi, score):
#     return (1 + -yi*score).relu()
#
# def l2(params, alpha):
#     return alpha * sum((p*p for p in params))
#
# def learning_rate(k):
#     return 1.0 - 0.9*k/100
# ```
#
# </details>

# %% [markdown]
# The check: each part on a few inputs, values and gradients against what the formulas say.

# %% checks="moons_parts"
def attempt(what, fn, *args):
    # fn(*args), or the reason it crashed, in one line (with the op to use instead of max()).
    try:
        return fn(*args), None
    except TypeError as e:
        hint = ''
        if 'not supported between' in str(e):
            hint = (': max() compares numbers, and a Value is not one; .relu() is max(0, x) as '
                    'an op of the graph, with its gradient')
        return None, f'{what} crashed: TypeError: {e}{hint}'
    except Exception as e:
        return None, f'{what} crashed: {type(e).__name__}: {e}'

def check_parts():
    problems = []
    for yi, s in ((1, 0.3), (-1, 0.3), (1, 2.0), (-1, -0.5), (1, -1.5)):
        score = Value(s)
        out, crash = attempt(f'hinge({yi}, Value({s}))', hinge, yi, score)
        if crash:
            problems.append(crash)
            break
        want = max(0.0, 1 - yi*s)
        slope = -yi if 1 - yi*s > 0 else 0.0
        if not isinstance(out, Value):
            problems.append(f'hinge({yi}, Value({s})) returned {out!r}, not a Value'
                            + (': max(0, x) can pick the plain 0, which no gradient '
                               'reaches; .relu() is max(0, x) as an op of the graph'
                               if isinstance(out, (int, float)) else ''))
            continue
        out.backward()
        if abs(out.data - want) > 1e-12:
            problems.append(f'hinge({yi}, Value({s})) is {out!r}, expected a Value of {want}')
        elif abs(score.grad - slope) > 1e-12:
            problems.append(f'hinge({yi}, Value({s})): the score\'s grad is {score.grad}, '
                            f'expected {slope}')
    ps = [Value(1.0), Value(-2.0), Value(0.5)]
    out, crash = attempt('l2([1, -2, 0.5], 0.1)', l2, ps, 0.1)
    if crash:
        problems.append(crash)
    elif not isinstance(out, Value):
        problems.append(f'l2([1, -2, 0.5], 0.1) returned {out!r}, not a Value')
    else:
        out.backward()
        if abs(out.data - 0.525) > 1e-12:
            problems.append(f'l2([1, -2, 0.5], 0.1) is {out!r}, expected a Value of 0.525')
        elif [round(p.grad, 12) for p in ps] != [0.2, -0.4, 0.1]:
            problems.append(f'l2([1, -2, 0.5], 0.1): grads {[p.grad for p in ps]}, expected '
                            f'2·alpha·p = [0.2, -0.4, 0.1]')
    for k, want in ((0, 1.0), (50, 0.55), (99, 0.109)):
        if not isinstance(learning_rate(k), (int, float)) or abs(learning_rate(k) - want) > 1e-12:
            problems.append(f'learning_rate({k}) is {learning_rate(k)!r}, expected {want}')
    for p in problems[1:]:   # the first is the line the check stops with
        print('✗', p)
    assert not problems, problems[0] + (f' (and {len(problems) - 1} more, above)'
                                        if len(problems) > 1 else '')
    print('✓ hinge, l2 and learning_rate')

check_parts()

# %% [markdown]
# karpathy's loss function, with your parts in it: the mean hinge loss over a batch, plus the L2
# term with alpha = 1e-4.

# %%
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
    losses = [hinge(yi, scorei) for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    reg_loss = l2(model.parameters(), alpha=1e-4)
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

total_loss, acc = loss()
print(total_loss, acc)

# %% [markdown]
# ## Training
#
# 100 steps of plain gradient descent on all 100 points, at your decaying learning rate.

# %%
# optimization
for k in range(100):
    # forward
    total_loss, acc = loss()
    # backward
    model.zero_grad()
    total_loss.backward()
    # update (sgd)
    for p in model.parameters():
        p.data -= learning_rate(k) * p.grad
    if k % 10 == 9:
        print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
print('karpathy: step 99 loss 0.010978370135492717, accuracy 100.0%')
# Your parts may add in another order than his, which changes the last digits; no more.
assert abs(total_loss.data - 0.010978370135492717) < 1e-9, total_loss.data
assert acc == 1.0

# %% [markdown]
# With his lines for the three parts the last line printed is karpathy's to the last digit:
# every weight is drawn in his order, every sum is added in his order, so the floats are the same
# bit for bit (even `dot` and `sum` inside micrograd's fused neurons add in the lecture's order).
#
# ## The decision boundary
#
# Score every point of a grid and colour it by the sign of the score.

# %%
if np is None:   # micrograd's own picture: each grid square coloured by the sign of its score
    display(points(X, y, score=lambda a, b: model([Value(a), Value(b)]).data, title='the boundary'))
else:
    h = 0.25
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
    plt.xlim(xx.min(), xx.max()); plt.ylim(yy.min(), yy.max()); plt.show()

# %% [markdown]
# The appendix notebook runs this same training under `micrograd.jit`, many times faster.
