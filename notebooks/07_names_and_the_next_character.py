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
# # 7. Names, and the next character
#
# A language model reads some text and says, for every character that could come next, how
# likely it is. Trained on 32,033 names (makemore's `names.txt`), it makes up new ones. This is
# the path of karpathy's makemore, on **your own `Value`** from notebook 2: first count which
# character follows which (the bigram: the loss to beat), then write `softmax` and the
# cross-entropy loss, and train a small network over the last three characters until it beats the
# counts. Notebook 8 goes on to attention and a GPT.

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
from micrograd.data import names
from micrograd.check.language import check_softmax, check_cross_entropy, check_sequence_loss

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
# The loss below takes a logarithm, and notebook 2's `Value` has no `log`. If yours lacks it, this
# cell gives it one, written as notebook 2 wrote `exp`: d log(x)/dx = 1/x.

# %%
if not hasattr(Value, 'log'):
    def log(self):
        out = Value(math.log(self.data), (self,), 'log')
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out
    Value.log = log
x = Value(2.0); y = x.log(); y.backward()
print(f'log(2) = {y.data:.6f}, its slope 1/2 = {x.grad}')

# %% [markdown]
# ## The names
#
# `names()` reads the 32,033 names, one a line. We shuffle them (seeded, so every run is the same)
# and keep the last 200 apart: the model never trains on them, and its loss on them says how well
# it does on names it has not seen.
#
# A name is a sequence of characters, and `.` marks where it starts and ends: `emma` is read as
# `. e m m a .`, five questions "what comes next?" (after `.` an `e`, after `e` an `m`, ..., after
# `a` the end). Each character is a number, its index in `chars`.

# %%
docs = names()
random.seed(42)
random.shuffle(docs)
train_docs, test_docs = docs[:-200], docs[-200:]
chars = ['.'] + sorted(set(''.join(docs)))
stoi = {ch: i for i, ch in enumerate(chars)}
V = len(chars)
print(len(docs), 'names, e.g.', docs[:5])
print(V, 'characters:', ''.join(chars))

# %% [markdown]
# ## Counting: the bigram
#
# The simplest model looks at the last character only. Count, over the training names, how often
# each character follows each other one: `N[a][b]`. Row `a`, divided by its sum, is the
# probability of each next character after `a`. (One is added to every count, so that nothing is
# impossible: a name with a pair never seen would otherwise have probability 0, a loss of
# infinity.)

# %%
N = [[0] * V for _ in range(V)]
for w in train_docs:
    cs = ['.'] + list(w) + ['.']
    for a, b in zip(cs, cs[1:]):
        N[stoi[a]][stoi[b]] += 1
P = [[(n + 1) / (sum(row) + V) for n in row] for row in N]
print('after "q":', {chars[b]: round(p, 3) for b, p in enumerate(P[stoi['q']]) if p > 0.02})

# %% [markdown]
# **Sampling**: start at `.`, draw the next character from its row, then the next from that
# character's row, and so on until `.` comes back. The names sound a little like names, but only
# a little: each character knows nothing but the one before it.

# %%
def sample_bigram(rng):
    out, ix = [], 0
    while True:
        ix = rng.choices(range(V), weights=P[ix])[0]
        if ix == 0:
            return ''.join(out)
        out.append(chars[ix])

rng = random.Random(7)
print([sample_bigram(rng) for _ in range(10)])

# %% [markdown]
# **The loss.** How good is a model? Give it each held-out name, and at each position take the
# probability it gave to the character that really came next: a good model gives high ones. The
# loss is the mean, over the positions, of −log of that probability (the *negative log
# likelihood*): 0 if the model were always sure and right, log(27) ≈ 3.30 for a model that
# guesses uniformly. This is the number the network below has to beat.

# %%
def bigram_loss(words):
    losses = []
    for w in words:
        cs = ['.'] + list(w) + ['.']
        losses += [-math.log(P[stoi[a]][stoi[b]]) for a, b in zip(cs, cs[1:])]
    return sum(losses) / len(losses)

bigram_test = bigram_loss(test_docs)
print(f'the bigram: loss {bigram_loss(train_docs):.4f} on the training names, '
      f'{bigram_test:.4f} on the held-out ones (uniform: {math.log(V):.4f})')

# %% [markdown]
# ## Exercise: softmax
#
# A network does not output probabilities: it outputs any numbers, one per character, the
# *logits*. `softmax` turns them into probabilities: pᵢ = exp(xᵢ) / Σⱼ exp(xⱼ), each positive,
# summing to 1, the largest logit the likeliest. Write `softmax(logits)`: a list of Values in, a
# list of Values out, built with your Value's ops (so that `backward()` reaches the logits).
#
# **Make it stable.** exp(800) is beyond a float (it overflows), and a network's logits can grow
# that large. Softmax does not change when the same number is subtracted from every logit
# (exp(xᵢ − m) / Σ exp(xⱼ − m): the exp(−m) cancels), so subtract the largest logit first, as a
# plain number (`max(v.data for v in logits)`): the largest exp is then exp(0) = 1.

# %% exercise="softmax" tags=["exercise"]
def softmax(logits):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def softmax(logits):
#     m = max(v.data for v in logits)
#     exps = [(v - m).exp() for v in logits]
#     total = sum(exps)
#     return [e / total for e in exps]
# ```
#
# </details>

# %% [markdown]
# The check calls your `softmax` on Values of your class at three points (one with logits of 800),
# compares each p with the formula, then backpropagates through it with your own `backward()` and
# compares each logit's grad with a nudge.

# %% checks="softmax"
check_softmax(softmax, Value)

# %% [markdown]
# ## Exercise: cross-entropy
#
# The loss at one position: `cross_entropy(logits, target)` is −log of the probability softmax
# gives the target (an int, the index of the character that came next). A Value, so that
# `backward()` from it fills every logit's grad. (Its grad has a famous form: pᵢ − 1 at the
# target, pᵢ elsewhere. The check compares it.)

# %% exercise="cross_entropy" tags=["exercise"]
def cross_entropy(logits, target):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def cross_entropy(logits, target):
#     return -softmax(logits)[target].log()
# ```
#
# </details>

# %% checks="cross_entropy"
check_cross_entropy(cross_entropy, Value)

# %% [markdown]
# ## Exercise: the loss of many positions
#
# Training reads many positions at once: `sequence_loss(rows, targets)` takes a list of rows of
# logits (one row per position) and the target of each, and returns the **mean** of the
# positions' cross-entropies. The mean, not the sum: then the loss does not grow with the number
# of positions read, and a learning rate that works for 8 positions works for 80.

# %% exercise="sequence_loss" tags=["exercise"]
def sequence_loss(rows, targets):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def sequence_loss(rows, targets):
#     losses = [cross_entropy(row, t) for row, t in zip(rows, targets)]
#     return sum(losses) * (1 / len(losses))
# ```
#
# </details>

# %% checks="sequence_loss"
check_sequence_loss(sequence_loss, Value)

# %% [markdown]
# Counting was a model too: its logits after `a` are log P[a] (softmax of a row of logs gives the
# row back, since it sums to 1). So your loss, given those logits, computes the bigram's loss:

# %%
cs = ['.'] + list('emma') + ['.']
rows = [[Value(math.log(p)) for p in P[stoi[a]]] for a in cs[:-1]]
targets = [stoi[b] for b in cs[1:]]
print(f"your sequence_loss on 'emma': {sequence_loss(rows, targets).data:.6f}, "
      f"the counts': {bigram_loss(['emma']):.6f}")
assert abs(sequence_loss(rows, targets).data - bigram_loss(['emma'])) < 1e-9

# %% [markdown]
# ## A network over the last three characters
#
# The counts cannot look further back: a table of every three characters would have 27³ = 19,683
# rows, most never seen. makemore's answer (Bengio et al., 2003) is a network:
#
# * each character is an **embedding**, a short list of numbers the training finds (here 3 per
#   character, a table `C` of 27 rows), so that characters that behave alike can end up alike;
# * the embeddings of the last three characters, side by side (9 numbers), go into a hidden
#   layer of 8 tanh neurons, as in notebook 3;
# * an output layer turns the hidden layer into 27 logits.
#
# Trained from nothing for a few hundred steps (what your Value does here in a minute), such a
# network is still well above the bigram's loss: it has to learn from scratch everything the
# counts already know. So this one starts where counting stopped: its logits are the
# last character's row of log P (the bigram, as above) **plus** the output layer's, whose weights
# start at 0. At step 0 it *is* the bigram; what it learns is what the characters before the last
# add. (A residual connection: the GPT of notebook 8 is made of them.) The table `T` stays as
# counted: it is already the best any table of the last character can do, and trained on 8
# positions at a time its rows would only wander.

# %%
BLOCK, EMB, HIDDEN = 3, 3, 8   # characters read, numbers per character, hidden neurons
random.seed(1)
C = [[Value(random.gauss(0, 1)) for _ in range(EMB)] for _ in range(V)]
W1 = [[Value(random.gauss(0, 1 / math.sqrt(BLOCK * EMB))) for _ in range(BLOCK * EMB)]
      for _ in range(HIDDEN)]
b1 = [Value(0.0) for _ in range(HIDDEN)]
W2 = [[Value(0.0) for _ in range(HIDDEN)] for _ in range(V)]
T = [[Value(math.log(p)) for p in row] for row in P]   # the bigram, as logits
params = ([p for row in C for p in row] + [p for row in W1 for p in row] + b1
          + [p for row in W2 for p in row])   # what training changes: T, the counts, stays
print(len(params), 'parameters')

def logits(context):
    """The logits of the character after `context`, the indices of the last BLOCK characters."""
    x = [v for ix in context for v in C[ix]]                    # the embeddings, side by side
    h = [sum((w * xi for w, xi in zip(row, x)), b).tanh() for row, b in zip(W1, b1)]
    return [sum((w * hi for w, hi in zip(row, h)), t)           # the bigram's row, plus W2·h
            for row, t in zip(W2, T[context[-1]])]

def examples(words):
    """Every (context, next character) pair of `words`; `.` pads the start."""
    pairs = []
    for w in words:
        context = [0] * BLOCK
        for ch in w + '.':
            pairs.append((context, stoi[ch]))
            context = context[1:] + [stoi[ch]]
    return pairs

train_pairs, test_pairs = examples(train_docs), examples(test_docs)
print(len(train_pairs), 'training positions; e.g.',
      [(''.join(chars[i] for i in c), chars[t]) for c, t in train_pairs[:5]])

# %% [markdown]
# **Training.** Each step reads 8 positions drawn at random (a *minibatch*: a noisy estimate of
# the whole loss, much cheaper), computes your `sequence_loss`, zeroes the grads, `backward()`,
# and updates every parameter. The update is Adam (what microgpt and most networks use): plain
# gradient descent, but each parameter's step is its grad's running mean divided by the running
# root mean square, so every parameter moves at about the learning rate, whatever the scale of
# its grad. The learning rate falls linearly to 0.

# %%
STEPS, BATCH, LR = 200, 8, 0.05
m = [0.0] * len(params)   # Adam's running mean of each grad
s = [0.0] * len(params)   # and of its square
rng = random.Random(3)
losses = []
for k in range(STEPS):
    batch = [rng.choice(train_pairs) for _ in range(BATCH)]
    loss = sequence_loss([logits(c) for c, _ in batch], [t for _, t in batch])
    for p in params:
        p.grad = 0.0
    loss.backward()
    lr = LR * (1 - k / STEPS)
    for i, p in enumerate(params):
        m[i] = 0.9 * m[i] + 0.1 * p.grad
        s[i] = 0.99 * s[i] + 0.01 * p.grad ** 2
        p.data -= lr * (m[i] / (1 - 0.9 ** (k + 1))) / ((s[i] / (1 - 0.99 ** (k + 1))) ** 0.5 + 1e-8)
    losses.append(loss.data)
    if k % 50 == 0 or k == STEPS - 1:
        print(f'step {k:3d}: loss {loss.data:.4f}')

# %% [markdown]
# Each step's loss is of 8 positions only, so it jumps about. The fair comparison is on the
# held-out names, the same positions the bigram's loss was measured on:

# %%
def test_loss():
    total = 0.0
    for context, target in test_pairs:
        total += cross_entropy(logits(context), target).data
    return total / len(test_pairs)

mlp_test = test_loss()
print(f'held-out loss: the bigram {bigram_test:.4f}, the network {mlp_test:.4f}')
assert mlp_test < bigram_test, 'the network should beat the counts on the held-out names'

# %% [markdown]
# ## Names from the network
#
# Sampling as before, with the network's probabilities: start with three `.`, draw a character
# from softmax of the logits, slide the context along, stop at `.`.

# %%
def sample_mlp(rng):
    context, out = [0] * BLOCK, []
    while len(out) < 20:
        probs = softmax(logits(context))
        ix = rng.choices(range(V), weights=[p.data for p in probs])[0]
        if ix == 0:
            break
        out.append(chars[ix])
        context = context[1:] + [ix]
    return ''.join(out)

rng = random.Random(7)
print([sample_mlp(rng) for _ in range(10)])

# %% [markdown]
# Longer training, a bigger embedding and hidden layer take makemore's network to a held-out loss
# near 2.1; it reads three characters, always the last three. Notebook 8's attention lets each
# position choose which earlier characters to read, and how much of each: the GPT.
