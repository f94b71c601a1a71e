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
# # 9. Why isn't it learning?
#
# Your network runs, the loss is printed, and it does not fall, or falls and stops. karpathy's
# makemore part 3 ("Activations & Gradients, BatchNorm") looks *inside*: how many of a layer's
# tanh units are stuck near ±1 (**saturated**: their gradient is nearly 0), how many ReLUs are 0
# for every sample (**dead**: no gradient reaches their weights at all), and how large each step is
# against the weights it changes (**update:data**). You compute the first and the last on your own
# `Value`, diagnose three broken networks from them, and fix their init (Kaiming's).

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
from micrograd.data import moons
from micrograd.check.not_learning import (NETS, CAUSES, SIZES, N_SAMPLES, SEED, LR, STEPS, build,
                                    check_saturation, check_update_data, check_diagnosis,
                                    check_kaiming, check_fixed)

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
# ## The network, and what it keeps
#
# An MLP as in notebook 3, its layers kept as plain data: each a dict of its weight rows `w`
# (one row per unit), its biases `b` and its `activation`. `forward` runs one sample through it
# and keeps each layer's outputs in `outs` (one list per layer, one row per sample), as makemore's
# layers keep `.out`: after `backward()` each kept Value has its `.grad` too. Nothing is computed
# twice: these are the Values of the step's own graph.

# %%
X, y = moons(N_SAMPLES, 0.1, SEED)

def forward(net, x, outs):
    for i, layer in enumerate(net):
        x = [sum((wi * xi for wi, xi in zip(row, x)), b) for row, b in zip(layer['w'], layer['b'])]
        if layer['activation'] == 'tanh':
            x = [v.tanh() for v in x]
        elif layer['activation'] == 'relu':
            x = [v.relu() for v in x]
        outs[i].append(x)
    return x[0]

def parameters(net):
    return [p for layer in net for p in [w for row in layer['w'] for w in row] + layer['b']]

net = build('A', Value)   # NETS['A'], drawn as karpathy draws an MLP, then changed
outs = [[] for _ in net]
scores = [forward(net, x, outs) for x in X]
print(len(outs), 'layers;', len(outs[0]), 'samples x', len(outs[0][0]), 'units in the first')

# %% [markdown]
# ## Exercise: saturation
#
# tanh's slope is 1 − t². Where |t| > 0.97 it is below 0.06: the unit passes on almost none of the
# gradient that reaches it, whatever the loss wants. Write `saturation(outs)`: `outs` is one
# layer's outputs, a list (one per sample) of lists of Values (one per unit); return the share of
# **all** of them (samples × units) whose |data| is above 0.97, a float between 0 and 1.

# %% exercise="saturation" tags=["exercise"]
def saturation(outs):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def saturation(outs):
#     flat = [v.data for row in outs for v in row]
#     return sum(abs(t) > 0.97 for t in flat) / len(flat)
# ```
#
# </details>

# %% checks="saturation"
check_saturation(saturation, Value)
for i, layer_outs in enumerate(outs[:-1]):
    print(f'net A, layer {i + 1}: {saturation(layer_outs):.0%} saturated')

# %% [markdown]
# ## Exercise: update:data
#
# A step changes each weight by its update (with SGD, −lr · grad). How large is that against the
# weights themselves? makemore plots, for each weight matrix, the std of the update over the std
# of the weights before the step, in log10: about −3 in his nets (each step moves the weights by a
# thousandth of their spread). Much above, the learning rate throws the weights around; much
# below, they barely move. Write `update_data(before, after)`: two lists of floats, a matrix's
# weights before and after one step; return log10(std(after − before) / std(before)) (std: the
# square root of the mean squared distance to the mean).

# %% exercise="update_data" tags=["exercise"]
def update_data(before, after):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def std(xs):
#     mean = sum(xs) / len(xs)
#     return (sum((x - mean) ** 2 for x in xs) / len(xs)) ** 0.5
#
# def update_data(before, after):
#     update = [a - b for a, b in zip(after, before)]
#     return math.log10(std(update) / std(before))
# ```
#
# </details>

# %% checks="update_data"
check_update_data(update_data)

# %% [markdown]
# ## Three networks that do not learn
#
# `train` runs the chapter's steps (the mean hinge loss, plain SGD at `LR`) and records, each step
# and each layer, your two numbers, the share of dead ReLUs (units that are 0 for every sample)
# and the loss. The three networks `A`, `B`, `C` are the same MLP(2, [12, 12, 1]) broken three
# ways. Read their numbers.

# %%
def dead(layer_outs):
    units = range(len(layer_outs[0]))
    return sum(all(row[j].data == 0 for row in layer_outs) for j in units) / len(units)

def train(net, steps=STEPS, lr=LR, show=True):
    stats = []
    for step in range(steps):
        outs = [[] for _ in net]
        scores = [forward(net, x, outs) for x in X]
        loss = sum(((1 + -yi * s).relu() for s, yi in zip(scores, y)), Value(0.0)) * (1 / len(X))
        params = parameters(net)
        for p in params:
            p.grad = 0.0
        loss.backward()
        before = [[w.data for row in layer['w'] for w in row] for layer in net]
        for p in params:
            p.data -= lr * p.grad
        after = [[w.data for row in layer['w'] for w in row] for layer in net]
        stats.append({
            'loss': loss.data,
            'saturation': [saturation(o) if layer['activation'] == 'tanh' else None
                           for o, layer in zip(outs, net)],
            'dead': [dead(o) if layer['activation'] == 'relu' else None
                     for o, layer in zip(outs, net)],
            'update_data': [update_data(b, a) if any(u != v for u, v in zip(a, b)) else -math.inf
                            for b, a in zip(before, after)],
        })
        if show and (step < 2 or step == steps - 1):
            s = stats[-1]
            def row(xs, f):
                return ' '.join('-' if x is None else f(x) for x in xs)
            print(f"step {step + 1:2d}  loss {s['loss']:9.4f}  saturated "
                  f"{row(s['saturation'], '{:.0%}'.format)}  dead {row(s['dead'], '{:.0%}'.format)}"
                  f"  update:data 10^ {row(s['update_data'], '{:.1f}'.format)}")
    return stats

runs = {}
for name in NETS:
    print(f'net {name}: hidden layers {NETS[name].activation}')
    runs[name] = train(build(name, Value))

# %% [markdown]
# ## Exercise: the diagnoses
#
# For each network, its cause, one of `CAUSES`. Clues: a learning rate acts from the first
# update on, so the numbers at step 1, *before* any update, show the init; karpathy's init starts
# this net's loss near 1; a tanh unit saturated is not dead, and a ReLU cannot saturate.

# %%
print(CAUSES)

# %% exercise="diagnosis" tags=["exercise"]
diagnosis = {'A': ..., 'B': ..., 'C': ...}

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# diagnosis = {'A': 'saturated tanh', 'B': 'dead relus', 'C': 'init too large'}
# ```
#
# A: two thirds of its second layer's outputs are past ±0.97 at the start, four in five a few
# steps later: its weights are three times karpathy's, so its pre-activations are large. B: two thirds of its first layer's
# ReLUs and all of its second's are 0 for every sample from step 1: its biases start at −1, and no
# update ever reaches them (update:data −inf: nothing moves). C: its loss is in the hundreds
# before any update (its weights are ten times karpathy's), and one update kills most of its ReLUs.
#
# </details>

# %% checks="diagnosis"
check_diagnosis(diagnosis)

# %% [markdown]
# ## Exercise: the fix, Kaiming's init
#
# A unit sums `fan_in` inputs times its weights; for its output to keep the spread of its
# inputs, its weights' std should be about 1 / √fan_in, times a *gain* that makes up for what the
# nonlinearity squashes: 5/3 for tanh, √2 for ReLU (it zeroes half), 1 for a linear layer (Kaiming
# He et al., 2015; `torch.nn.init.kaiming_normal_`). Write `kaiming_std(fan_in, activation)`
# (`activation` is `'tanh'`, `'relu'` or `'linear'`).

# %% exercise="kaiming" tags=["exercise"]
def kaiming_std(fan_in, activation):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def kaiming_std(fan_in, activation):
#     gain = {'tanh': 5 / 3, 'relu': 2 ** 0.5, 'linear': 1.0}[activation]
#     return gain / fan_in ** 0.5
# ```
#
# </details>

# %% checks="kaiming"
check_kaiming(kaiming_std)

# %% [markdown]
# The same three networks, their weights drawn again from N(0, `kaiming_std`²) and their biases
# at 0 (`build(name, Value, kaiming_std)`), trained the same way:

# %%
fixed = {}
for name in NETS:
    print(f'net {name}, re-initialised:')
    fixed[name] = train(build(name, Value, kaiming_std))
check_fixed(fixed)

# %% [markdown]
# The same numbers are kept for any `micrograd` network by `fit(..., health=True)`, drawn as
# makemore's four plots by `micrograd.viz.health_plots`, and read in words by
# `micrograd.train.diagnose`: docs/health.md says which thresholds it uses and why
# (ours are not makemore's 10^-3: a small net with a large learning rate learns well at 10^-1).
