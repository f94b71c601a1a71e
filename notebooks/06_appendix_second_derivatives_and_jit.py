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
# # Appendix: second derivatives, Newton's method, and `micrograd.jit`
#
# Beyond the lecture: two things micrograd adds to its engine, shown briefly.

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
# ## Second derivatives
#
# `grad(y, x, create_graph=True)` returns the gradient as a `Value` that is itself a function of
# `x`, so it can be differentiated again, like `torch.autograd.grad(..., create_graph=True)`.
# For y = x³ at x = 2: dy/dx = 3x² = 12 and d²y/dx² = 6x = 12.

# %%
import math, random, time
from micrograd import Value, grad, jit
from micrograd.nn import MLP
try:
    import numpy as np
except ModuleNotFoundError:   # the course in the browser (JupyterLite) has no numpy
    np = None

try:
    import torch
except ModuleNotFoundError:
    torch = None

x = Value(2.0)
dy = grad(x**3, x, create_graph=True)
d2y = grad(dy, x)
print(dy.data, d2y)
assert (dy.data, d2y) == (12.0, 12.0)

if torch is None:
    print('PyTorch is not installed: its side of this comparison is skipped (pip install torch).')
else:
    t = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (tdy,) = torch.autograd.grad(t**3, t, create_graph=True)
    (td2y,) = torch.autograd.grad(tdy, t)
    print(tdy.item(), td2y.item())
    assert (dy.data, d2y) == (tdy.item(), td2y.item())

# %% [markdown]
# ## Newton's method
#
# Root finding: x ← x - f(x)/f'(x). For f(x) = x³ - 2x - 5 (Newton's own example), from 2.

# %%
x = Value(2.0)
for i in range(6):
    f = x**3 - 2*x - 5
    x = Value(x.data - f.data / grad(f, x))
    print(i, repr(x.data))
assert x.data == 2.0945514815423265

# %% [markdown]
# And minimisation, which needs the second derivative: x ← x - f'(x)/f''(x) for
# f(x) = x⁴ - 3x² + x.

# %%
x = Value(1.5)
for i in range(8):
    f = x**4 - 3*x**2 + x
    d1 = grad(f, x, create_graph=True)
    d2 = grad(d1, x)
    x = Value(x.data - d1.data / d2)
print(x.data, 4*x.data**3 - 6*x.data + 1)
assert abs(4*x.data**3 - 6*x.data + 1) < 1e-12

# %% [markdown]
# ## The moons demo under `micrograd.jit`
#
# Notebook 4's per-sample loss is ordinary scalar code. `jit` runs it once on placeholder inputs,
# records the graph, and replays that graph with numpy over the whole batch at once. The result is
# a `Value` whose children are the parameters, so the eager L2 term and `backward()` work as
# before. The final loss is karpathy's again (here to the last digit; the check allows 1e-9,
# because numpy is free to add up a batch in a different order than Python's `sum`).

# %%
if np is None:
    print('No numpy here (the course in the browser): micrograd.jit runs on numpy, so this '
          'part is skipped.')
else:
    from sklearn.datasets import make_moons

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
    assert acc == 1.0
