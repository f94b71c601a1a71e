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
# # 8. Attention, and the GPT
#
# Notebook 7's network read the last three characters, always the same three, always in the same
# way. A transformer lets each position *choose* what to read: its query meets the keys of every
# position so far, and the better a key matches, the more of that position's value it takes in.
# You write the two parts that are new, RMSNorm and one attention head, then assemble karpathy's
# **microgpt** from them (the whole GPT: embeddings, attention, an MLP, residual connections), on
# **your own `Value`**, check it against `micrograd.gpt` on the same weights, train it on the
# names and sample new ones.

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
from micrograd.gpt import Tokenizer
from micrograd.check.language import check_rmsnorm, check_attention
from micrograd.check.gpt_model import check_gpt

try:
    import my_value
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        'my_value.py is not here: run notebook 2 to its last exercise first (it writes the file '
        'next to this notebook)') from None
importlib.reload(my_value)
Value = my_value.Value
print('Value is', Value, 'from', my_value.__file__)

if not hasattr(Value, 'log'):   # as in notebook 7: d log(x)/dx = 1/x
    def log(self):
        out = Value(math.log(self.data), (self,), 'log')
        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out
    Value.log = log

def softmax(logits):   # notebook 7's exercise: stable, the largest logit subtracted first
    m = max(v.data for v in logits)
    exps = [(v - m).exp() for v in logits]
    total = sum(exps)
    return [e / total for e in exps]

# %% [markdown]
# ## The names, as tokens
#
# microgpt's tokenizer: each character is a token id (in sorted order, `a` is 0), and one more id,
# `BOS`, marks where a name begins and ends (notebook 7's `.`). A name of n letters is n + 2
# tokens, n + 1 predictions.

# %%
docs = names()
random.seed(42)
random.shuffle(docs)
tokenizer = Tokenizer(docs)
BOS, vocab_size = tokenizer.bos, tokenizer.vocab_size
print(len(docs), 'names;', tokenizer)
print(docs[0], '->', tokenizer.encode(docs[0]))

# %% [markdown]
# ## Exercise: RMSNorm
#
# Deep networks keep their numbers in a range where tanh, exp and the learning rate behave, by
# normalising. microgpt uses RMSNorm: divide a vector by its root mean square,
# `rmsnorm(x)` = xᵢ / √(mean(x²) + 1e-5), so the result has a root mean square of about 1 (the
# 1e-5 keeps a vector of zeros finite). A list of Values in, a list of Values out.

# %% exercise="rmsnorm" tags=["exercise"]
def rmsnorm(x):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def rmsnorm(x):
#     ms = sum(xi * xi for xi in x) / len(x)
#     scale = (ms + 1e-5) ** -0.5
#     return [xi * scale for xi in x]
# ```
#
# </details>

# %% checks="rmsnorm"
check_rmsnorm(rmsnorm, Value)

# %% [markdown]
# ## Exercise: one attention head at one position
#
# At position t, the head has a query `q` (a list of `head_size` Values: what this position looks
# for) and, for every position s ≤ t so far, a key `keys[s]` (what s offers) and a value
# `values[s]` (what s passes on), each of `head_size` Values too. Then:
#
# 1. a **score** per position s: q · keys[s], divided by √head_size (so that the scores do not grow
#    with the head's size, and the softmax does not saturate);
# 2. the **weights**: softmax of the scores, over the positions (one weight per position, summing
#    to 1);
# 3. the **output**: Σₛ weight[s] · values[s], a list of `head_size` Values.
#
# Write `attention(q, keys, values)`. (A position only sees itself and the ones before it, never
# the future: that is why `keys` holds the positions so far, and nothing else.)

# %% exercise="attention" tags=["exercise"]
def attention(q, keys, values):
    ...

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def attention(q, keys, values):
#     d = len(q)
#     scores = [sum(qj * kj for qj, kj in zip(q, k)) / d**0.5 for k in keys]
#     weights = softmax(scores)
#     return [sum(w * v[j] for w, v in zip(weights, values)) for j in range(d)]
# ```
#
# </details>

# %% checks="attention"
check_attention(attention, Value)

# %% [markdown]
# ## The weights
#
# microgpt keeps its parameters in a dict, `state_dict`, of matrices (lists of rows of Values,
# drawn from a Gaussian of standard deviation 0.08). `linear(x, w)` is a layer without a bias:
# one output per row of `w`, the row's dot product with `x`.
#
# * `wte`: a row per token, its embedding (notebook 7's `C`); `wpe`: a row per position;
# * per layer: `attn_wq`, `attn_wk`, `attn_wv` make a position's query, key and value from x,
#   `attn_wo` mixes the heads' outputs; `mlp_fc1` (to 4 × n_embd, then ReLU) and `mlp_fc2` (back);
# * `lm_head`: from x to a logit per token.
#
# Small, so that your Value trains it here in a minute: 8 numbers per position, 2 heads of 4, one
# layer (microgpt's own: 16, 4 heads, one layer).

# %%
n_layer, n_embd, n_head, block_size = 1, 8, 2, 16
head_dim = n_embd // n_head

def matrix(nout, nin, std=0.08):
    return [[Value(random.gauss(0, std)) for _ in range(nin)] for _ in range(nout)]

def linear(x, w):
    return [sum(wi * xi for wi, xi in zip(row, x)) for row in w]

state_dict = {'wte': matrix(vocab_size, n_embd), 'wpe': matrix(block_size, n_embd),
              'lm_head': matrix(vocab_size, n_embd)}
for i in range(n_layer):
    state_dict[f'layer{i}.attn_wq'] = matrix(n_embd, n_embd)
    state_dict[f'layer{i}.attn_wk'] = matrix(n_embd, n_embd)
    state_dict[f'layer{i}.attn_wv'] = matrix(n_embd, n_embd)
    state_dict[f'layer{i}.attn_wo'] = matrix(n_embd, n_embd)
    state_dict[f'layer{i}.mlp_fc1'] = matrix(4 * n_embd, n_embd)
    state_dict[f'layer{i}.mlp_fc2'] = matrix(n_embd, 4 * n_embd)
params = [p for mat in state_dict.values() for row in mat for p in row]
print(len(params), 'parameters')

# %% [markdown]
# ## Exercise: the GPT
#
# `gpt(token_id, pos_id, keys, values)` gives the logits of the token after `token_id`, at
# position `pos_id`. `keys[li]` and `values[li]` hold layer li's keys and values of the positions
# before this one (the *KV cache*): append this position's before attending, so that it sees
# itself too. microgpt's steps:
#
# 1. x = the token's row of `wte` plus the position's row of `wpe`, then `rmsnorm(x)`;
# 2. per layer, **attention** with a residual: keep x as `x_residual`; `rmsnorm(x)`; q, k, v by
#    `linear` with `attn_wq`, `attn_wk`, `attn_wv`; append k to `keys[li]` and v to
#    `values[li]`; for each head h, its slice `[h * head_dim:(h + 1) * head_dim]` of q and of every
#    key and value, through your `attention`; the heads' outputs side by side, through
#    `linear(·, attn_wo)`; add `x_residual` back;
# 3. then the **MLP**, with a residual the same way: keep x; `rmsnorm`; `linear` with `mlp_fc1`;
#    `relu` of each; `linear` with `mlp_fc2`; add the kept x back;
# 4. the logits: `linear(x, lm_head)`.

# %% exercise="gpt" tags=["exercise"]
def gpt(token_id, pos_id, keys, values):
    x = ...
    for li in range(n_layer):
        ...
    return linear(x, state_dict['lm_head'])

# %% [markdown] tags=["solution"]
# <details><summary>Solution (try the exercise first)</summary>
#
# ```python
# def gpt(token_id, pos_id, keys, values):
#     tok_emb = state_dict['wte'][token_id]
#     pos_emb = state_dict['wpe'][pos_id]
#     x = rmsnorm([t + p for t, p in zip(tok_emb, pos_emb)])
#     for li in range(n_layer):
#         x_residual = x
#         x = rmsnorm(x)
#         q = linear(x, state_dict[f'layer{li}.attn_wq'])
#         k = linear(x, state_dict[f'layer{li}.attn_wk'])
#         v = linear(x, state_dict[f'layer{li}.attn_wv'])
#         keys[li].append(k)
#         values[li].append(v)
#         x_attn = []
#         for h in range(n_head):
#             hs = slice(h * head_dim, (h + 1) * head_dim)
#             x_attn += attention(q[hs], [k[hs] for k in keys[li]], [v[hs] for v in values[li]])
#         x = linear(x_attn, state_dict[f'layer{li}.attn_wo'])
#         x = [a + b for a, b in zip(x, x_residual)]
#         x_residual = x
#         x = rmsnorm(x)
#         x = [h.relu() for h in linear(x, state_dict[f'layer{li}.mlp_fc1'])]
#         x = linear(x, state_dict[f'layer{li}.mlp_fc2'])
#         x = [a + b for a, b in zip(x, x_residual)]
#     return linear(x, state_dict['lm_head'])
# ```
#
# </details>

# %% [markdown]
# The check builds `micrograd.gpt`'s GPT of the same shape, copies its weights into your
# `state_dict`, runs both over one sequence, and compares each position's logits and the loss,
# then every weight's grad after your `backward()`. It puts your weights back afterwards.

# %% checks="gpt"
check_gpt(gpt, state_dict, n_head, Value)

# %% [markdown]
# ## Training
#
# microgpt's loop: one name a step; the loss is the mean, over its positions, of −log of the
# probability given to the next token (notebook 7's `sequence_loss`); then `backward()` and Adam
# (notebook 7's, with microgpt's settings), the learning rate falling linearly to 0.

# %%
def name_loss(doc):
    tokens = tokenizer.encode(doc)
    n = min(block_size, len(tokens) - 1)
    keys, values = [[] for _ in range(n_layer)], [[] for _ in range(n_layer)]
    losses = []
    for pos in range(n):
        probs = softmax(gpt(tokens[pos], pos, keys, values))
        losses.append(-probs[tokens[pos + 1]].log())
    return sum(losses) * (1 / n)

STEPS, LR, B1, B2 = 200, 0.02, 0.85, 0.99
m = [0.0] * len(params)
s = [0.0] * len(params)
losses = []
for step in range(STEPS):
    loss = name_loss(docs[step % len(docs)])
    for p in params:
        p.grad = 0.0
    loss.backward()
    lr = LR * (1 - step / STEPS)
    for i, p in enumerate(params):
        m[i] = B1 * m[i] + (1 - B1) * p.grad
        s[i] = B2 * s[i] + (1 - B2) * p.grad ** 2
        p.data -= lr * (m[i] / (1 - B1 ** (step + 1))) / ((s[i] / (1 - B2 ** (step + 1))) ** 0.5 + 1e-8)
    losses.append(loss.data)
    if step % 50 == 0 or step == STEPS - 1:
        print(f'step {step:3d}: loss {loss.data:.4f}')
first, last = sum(losses[:50]) / 50, sum(losses[-50:]) / 50
print(f'the mean loss of the first 50 steps {first:.4f}, of the last 50 {last:.4f}')
assert last < first, 'the loss should fall'

# %% [markdown]
# ## Names from your GPT
#
# Start from `BOS` at position 0; at each position, the logits divided by a *temperature* of 0.5
# (below 1: bolder, likelier choices) through softmax, a token drawn, fed back in at the next
# position, until `BOS` comes back.

# %%
def sample(rng, temperature=0.5):
    keys, values = [[] for _ in range(n_layer)], [[] for _ in range(n_layer)]
    token, out = BOS, []
    for pos in range(block_size):
        probs = softmax([l / temperature for l in gpt(token, pos, keys, values)])
        token = rng.choices(range(vocab_size), weights=[p.data for p in probs])[0]
        if token == BOS:
            break
        out.append(token)
    return tokenizer.decode(out)

rng = random.Random(7)
print([sample(rng) for _ in range(10)])

# %% [markdown]
# That is the whole of a GPT: this one has 1,328 parameters and read 200 names; GPT-2 has
# the same parts, 124 million parameters on tensors, and read billions of words. `micrograd gpt`
# trains microgpt's own size (16 numbers a position, 4 heads) for 1,000 steps on micrograd's
# faster Value.
