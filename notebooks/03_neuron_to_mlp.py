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
# # 3. From a neuron to an MLP, and training it
#
# A neuron computes tanh(w·x + b). A layer is neurons side by side, reading the same inputs; an
# MLP is layers in a row. You write all three (as in the lecture) on **your own `Value`**, the
# one notebook 2 wrote to `my_value.py`, take one training step by hand, then write the training
# step, find out what a forgotten `zero_grad` does, and train the network to the lecture's result.

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
import importlib, math, random
from micrograd import check
try:
    import matplotlib.pyplot as plt
except ModuleNotFoundError:   # the course in the browser (JupyterLite) has no matplotlib
    plt = None   # micrograd's own pictures draw the loss curves instead
    from micrograd.viz.plot import line

try:
    import my_value
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        'my_value.py is not here: run notebook 2 to its last exercise first (it writes the file '
        'next to this notebook)') from None
importlib.reload(my_value)
Value = my_value.Value
print('Value is', Value, 'from', my_value.__file__)

# %% [markdown]
# ## Exercise: Neuron, Layer, MLP
#
# * `Neuron(nin)`: `nin` weights and a bias, each drawn with `random.uniform(-1, 1)` (the lecture
#   draws the bias at random too; `micrograd.nn` starts it at 0, as karpathy's repository does).
#   Calling it on `x` gives tanh(w·x + b); `parameters()` is `w + [b]`.
# * `Layer(nin, nout)`: `nout` neurons; calling it gives one Value for a one-neuron layer, else a
#   list (the lecture's convenience, so that an MLP's output is a Value).
# * `MLP(nin, nouts)`: layers of sizes `nouts`, each reading the previous one's outputs.
#   `parameters()` lists them layer by layer, neuron by neuron.

# %% exercise="nn" tags=["exercise"]
class Neuron:
    def __init__(self, nin):
        ...
    def __call__(self, x):
        ...  # tanh(w·x + b)
    def parameters(self):
        ...

class Layer:
    def __init__(self, nin, nout):
        ...
    def __call__(self, x):
        ...
    def parameters(self):
        ...

class MLP:
    def __init__(self, nin, nouts):
        ...
    def __call__(self, x):
        ...
    def parameters(self):
        ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# class Neuron:
#     def __init__(self, nin):
#         self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
#         self.b = Value(random.uniform(-1, 1))
#     def __call__(self, x):
#         act = sum((wi*xi for wi, xi in zip(self.w, x)), self.b)
#         return act.tanh()
#     def parameters(self):
#         return self.w + [self.b]
#
# class Layer:
#     def __init__(self, nin, nout):
#         self.neurons = [Neuron(nin) for _ in range(nout)]
#     def __call__(self, x):
#         outs = [n(x) for n in self.neurons]
#         return outs[0] if len(outs) == 1 else outs
#     def parameters(self):
#         return [p for neuron in self.neurons for p in neuron.parameters()]
#
# class MLP:
#     def __init__(self, nin, nouts):
#         sz = [nin] + nouts
#         self.layers = [Layer(sz[i], sz[i+1]) for i in range(len(nouts))]
#     def __call__(self, x):
#         for layer in self.layers:
#             x = layer(x)
#         return x
#     def parameters(self):
#         return [p for layer in self.layers for p in layer.parameters()]
# ```
#
# </details>

# %% [markdown]
# `check` builds your classes, copies their `parameters()` into `micrograd.nn`'s and compares
# outputs and gradients: that also checks the parameters' order. It leaves the random generator
# as it found it, so the seeded numbers below do not depend on it.

# %% checks="nn"
report = check(NeuronClass=Neuron, LayerClass=Layer, MLPClass=MLP)
display(report)
assert report.ok, report.headline   # the first problem; all of them are listed above

# %% [markdown]
# ## One training step, by hand
#
# Four inputs and the outputs we want (the lecture's tiny data set). `MLP(3, [4, 4, 1])` has
# 3·4+4 + 4·4+4 + 4+1 = 41 parameters. The loss is the sum of squared errors: 0 when every
# prediction is right, bigger the further off they are. The numbers are not the lecture's: its
# weights were drawn without a seed, so every run of the video differs; `random.seed(0)` makes
# yours repeatable (and they depend on the order your Neuron draws its numbers in).

# %%
xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]

random.seed(0)
n = MLP(3, [4, 4, 1])
print(len(n.parameters()), 'parameters')
ypred = [n(x) for x in xs]
loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
print('predictions', [round(y.data, 4) for y in ypred])
print('loss', loss.data)
assert len(n.parameters()) == 41

# %% [markdown]
# The loss is one Value at the end of a graph that contains every parameter. `backward()` fills
# each parameter's `grad` with d(loss)/d(parameter). Take the first weight of the first neuron,
# and check its gradient the slow way, by nudging it (a central difference, as `gradcheck` does).

# %%
loss.backward()
w = n.parameters()[0]
print('backward():', w.grad)

def loss_now():
    return sum((n(x).data - ygt)**2 for x, ygt in zip(xs, ys))

h = 1e-6
w.data += h; up = loss_now()
w.data -= 2*h; down = loss_now()
w.data += h
print('nudging   :', (up - down) / (2*h))
assert math.isclose(w.grad, (up - down) / (2*h), rel_tol=1e-5, abs_tol=1e-8)

# %% [markdown]
# **Why the update has a minus sign.** A gradient points uphill: a positive `w.grad` means that
# increasing `w` increases the loss. We want the loss *down*, so each parameter takes a small step
# against its gradient, `p.data += -lr * p.grad`. One step with lr = 0.05, and the loss drops.

# %%
lr = 0.05
before = loss.data
for p in n.parameters():
    p.data += -lr * p.grad
after = loss_now()
print(before, '->', after)
assert after < before

# %% [markdown]
# ## Exercise: one training step
#
# Write `step(model, xs, ys, lr)`: the forward pass over all four inputs, the loss (the sum of
# squared errors, as above), `backward()`, and the update of every parameter. Return the loss
# (the Value you called `backward()` on). `train` below calls it again and again.

# %% exercise="step" tags=["exercise"]
def step(model, xs, ys, lr):
    ...
    return loss

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first, and the "Predict" cells after it)</summary>
#
# ```python
# def step(model, xs, ys, lr):
#     ypred = [model(x) for x in xs]
#     loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))
#     for p in model.parameters():
#         p.grad = 0.0          # zero_grad: see "Predict, then run" below
#     loss.backward()
#     for p in model.parameters():
#         p.data += -lr * p.grad
#     return loss
# ```
#
# </details>

# %% checks="step"
def train(step, lr, steps=100, seed=0):
    # A fresh MLP(3, [4, 4, 1]) from `seed`, trained by `steps` calls of your step.
    random.seed(seed)
    model = MLP(3, [4, 4, 1])
    losses = [step(model, xs, ys, lr).data for _ in range(steps)]
    return model, losses

model, losses = train(step, lr=0.05, steps=30)
print('loss', losses[0], '->', losses[-1])
if plt:
    plt.plot(losses); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
else:
    display(line(losses, xlabel='step', ylabel='loss'))

# %% [markdown]
# ## Predict, then run: the same step twice
#
# Take one network, and call your `step` twice with `lr = 0`: nothing moves, so both calls compute
# the very same loss and the very same gradients. **Predict**: will the first weight's `grad` be
# the same after the second call as after the first?

# %% exercise="predict_grad" tags=["exercise"]
same_grad_both_times = ...   # True or False

# %% [markdown] tags=["solution"]
# <details><summary>Solution (make your prediction first)</summary>
#
# ```python
# same_grad_both_times = True
# ```
#
# With a right step, yes: each call starts from zero gradients. Whether yours does is what the
# next cell shows.
#
# </details>

# %% checks="predict_grad"
assert same_grad_both_times is not ..., 'make your prediction first: True or False, above'
print('you predict:', 'the same' if same_grad_both_times else 'different')

# %%
random.seed(0)
model = MLP(3, [4, 4, 1])
w = model.parameters()[0]
step(model, xs, ys, 0.0); first = w.grad
step(model, xs, ys, 0.0); second = w.grad
print(f'w.grad after the first call {first!r}, after the second {second!r}')
print('you predicted', 'the same' if same_grad_both_times else 'different', '->',
      'the same' if first == second else 'different')

# %% [markdown]
# If the second is twice the first, your step forgets to zero the gradients: `backward()` *adds*
# to `grad` (notebook 2's `+=`, which is right: it is how two paths to one Value add up). Each
# step then descends along the sum of all the gradients so far, as if the learning rate kept
# growing: the lecture's famous bug, which on this tiny problem can even look like faster
# training. The fix is `p.grad = 0.0` for every parameter before `backward()` (micrograd's
# `zero_grad()`). `check` runs your step for several steps on a fresh network of your own
# (your `MLP`, your `Value`), with grads left over before the first, and names this mistake and
# the other classic ones (a `+` in the update, zeroing between `backward()` and the update or
# only on the first step, ignoring `lr`, a loss carried over from the step before).

# %% checks="step"
report = check(train_step=step)   # on your own Value and MLP
display(report)
assert report.ok, report.headline   # fix your step above, then run it and this cell again

# %% [markdown]
# ## Training to the lecture's result
#
# 100 steps at the lecture's lr = 0.05, on your Value, your MLP and your step. The loss ends near
# 0 and each prediction near its target, as the lecture's did. (Over 20 seeds and both orders of
# drawing a neuron's weights and bias, the last loss was at most 0.015, and it never went up.)

# %%
model, losses = train(step, lr=0.05, steps=100)
preds = [model(x).data for x in xs]
print('loss', losses[0], '->', losses[-1])
print('predictions', [round(p, 3) for p in preds], 'wanted', ys)
if plt:
    plt.plot(losses); plt.yscale('log'); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
else:
    display(line([math.log10(v) for v in losses], xlabel='step', ylabel='log10 of the loss'))
assert losses[-1] < 0.05, f'the loss ended at {losses[-1]}'
assert all(abs(p - y) < 0.25 for p, y in zip(preds, ys)), 'a prediction is far from its target'

# %% [markdown]
# ## Learning rates
#
# Four settings, 30 steps each, the same starting weights: 0.01 and 0.05 are the lecture's; 0.2
# and 1.0 are four and twenty times 0.05, to see where a bigger step stops helping.

# %%
ups = lambda c: sum(b > a for a, b in zip(c, c[1:]))
rates = (0.01, 0.05, 0.2, 1.0)
curves = {lr: train(step, lr=lr, steps=30)[1] for lr in rates}
if plt:
    for lr, curve in curves.items():
        plt.plot(curve, label=f'lr={lr}')
    plt.legend(); plt.yscale('log'); plt.xlabel('step'); plt.ylabel('loss'); plt.show()
else:
    display(line(*[[math.log10(v) for v in c] for c in curves.values()],
                 labels=[f'lr={lr}' for lr in curves], xlabel='step', ylabel='log10 of the loss'))
for lr, curve in curves.items():
    print(f'lr={lr}: last loss {curve[-1]:.4f}, went up on {ups(curve)} steps')
assert curves[0.01][-1] > curves[0.05][-1]   # too small a step is slow
assert ups(curves[0.01]) == ups(curves[0.05]) == 0

# %% [markdown]
# What the plot shows depends on the starting weights, but the pattern is common. We ran these
# four rates from 40 starting points (seeds 0 to 19, with a neuron's bias drawn after its weights
# and before them):
#
# * **0.01** is too small: the loss falls smoothly but ends above 0.05's every time.
# * **0.05** falls steadily, and never went up.
# * **0.2** usually ends lowest (39 of 40 times), although the loss went back up on at least one
#   step 32 times: a step can overshoot and still win overall. On four points, bigger is better
#   for a while.
# * **1.0** is too large: in 32 of 40 runs it ended with a loss above 1, most of them near 8. The
#   first steps throw every tanh unit into saturation (outputs stuck at ±1, where the slope
#   1 - tanh² is almost 0); the gradients vanish, and all four predictions stay wrong for good.
#
# So "too large" is not a number: it is when the loss goes up and stays up, or stops moving. On a
# real problem the best setting is found the same way: try values a few times apart and look.
