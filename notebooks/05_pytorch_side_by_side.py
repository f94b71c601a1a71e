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
# # 5. PyTorch side by side, and an op of your own in PyTorch
#
# Notebook 2 put your neuron next to PyTorch's, right after tanh, as the lecture does. Here the
# lecture's whole MLP is compared, every weight's and every bias's gradient, and then you write an
# op for PyTorch the way micrograd's ops are written: a forward, and a backward that applies the
# local derivative, as a `torch.autograd.Function`.

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
import random
from micrograd import Value
from micrograd.nn import MLP

try:
    import torch
    Function = torch.autograd.Function
except ModuleNotFoundError:
    torch = None
    Function = object   # so that the exercise's class still runs
    print('PyTorch is not installed: the comparisons below are skipped; they run on a laptop '
          '(pip install torch) or in Colab.')   # the course in the browser has no PyTorch

# %% [markdown]
# ## An MLP, both ways
#
# The same weights in a micrograd `MLP` (the lecture's all-tanh network) and in PyTorch tensors
# give the same loss and the same gradient for every weight and every bias. micrograd works on
# scalars, PyTorch on tensors (a layer is one matrix product); the semantics are the same: leaves
# with `requires_grad`, a graph built by the forward pass, `.backward()`, gradients in `.grad`.

# %%
def mlp_both_ways():
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
    print('largest difference', worst)

if torch is None:
    print('skipped: PyTorch is not installed')
else:
    mlp_both_ways()

# %% [markdown]
# The numbers agree to within a rounding step or so (about 1e-16), not always to the last digit:
# micrograd's tanh is Python's `math.tanh` and PyTorch has its own. The tests hold every op of
# micrograd to PyTorch within 1e-9 relative.
#
# ## Exercise: tanh as a `torch.autograd.Function`
#
# PyTorch lets you add an op the way your `Value` did: a `forward` that computes the output from
# the input, and a `backward` that receives the output's gradient (`grad_out`, your `out.grad`)
# and returns the input's (your `self.grad += ...`, without the `+=`: PyTorch adds up the
# contributions itself). `ctx.save_for_backward(...)` keeps tensors for the backward pass, and
# `ctx.saved_tensors` gives them back. Write tanh, as in the lecture, with `torch.exp`:
# t = (e^2x - 1) / (e^2x + 1), and its local derivative 1 - t².
#
# **Predict**: what does `Tanh.apply(x)` give at x = 0.8813735870195432, and what gradient?

# %% exercise="torch_function" tags=["exercise"]
class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        ...  # t = tanh(x) with torch.exp; save what backward needs; return t

    @staticmethod
    def backward(ctx, grad_out):
        ...  # the input's gradient, from grad_out

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# class Tanh(Function):
#     @staticmethod
#     def forward(ctx, x):
#         e = torch.exp(2*x)
#         t = (e - 1) / (e + 1)
#         ctx.save_for_backward(t)
#         return t
#
#     @staticmethod
#     def backward(ctx, grad_out):
#         (t,) = ctx.saved_tensors
#         return (1 - t**2) * grad_out
# ```
#
# </details>

# %% [markdown]
# The check: at several points, your op's output and gradient against micrograd's tanh, then
# `torch.autograd.gradcheck`, which compares your backward with finite differences of your
# forward.

# %% checks="torch_function"
def check_tanh_function():
    points = [-3.0, -0.5, 0.0, 0.8813735870195432, 2.0]
    x = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    t = Tanh.apply(x)
    assert isinstance(t, torch.Tensor), f'forward returned {t!r}, not a tensor'
    t.backward(torch.full_like(x, 2.5))   # an upstream gradient that is not 1
    print(f"{'x':>20} {'yours':>22} {'micrograd':>22} {'your grad':>22} {'micrograd':>22}")
    for i, p in enumerate(points):
        v = Value(p)
        o = v.tanh()
        o.grad = 2.5
        o._backward()
        print(f'{p!r:>20} {t[i].item()!r:>22} {o.data!r:>22} {x.grad[i].item()!r:>22} '
              f'{v.grad!r:>22}')
        assert math.isclose(t[i].item(), o.data, rel_tol=1e-12, abs_tol=1e-15), (
            f'forward at x = {p}: {t[i].item()}, expected tanh = {o.data}')
        assert math.isclose(x.grad[i].item(), v.grad, rel_tol=1e-9, abs_tol=1e-15), (
            f'backward at x = {p} with grad_out 2.5: {x.grad[i].item()}, expected {v.grad} '
            f'= (1 - t²) · grad_out')
    assert torch.autograd.gradcheck(Tanh.apply, (torch.tensor([0.3, -1.2], dtype=torch.float64,
                                                              requires_grad=True),))
    print('✓ your Tanh agrees with micrograd, and gradcheck passes')

if torch is None:
    print('skipped: PyTorch is not installed, so your Tanh cannot run')
else:
    check_tanh_function()

# %% [markdown]
# Second derivatives, Newton's method and `micrograd.jit` are in the appendix notebook.
