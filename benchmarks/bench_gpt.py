"""Benchmark: microgpt's training step (one document a step), four ways, side by side in one run.

* minimal Value: microgpt's loop on a lecture-style scalar of this file's own (the peer's shape:
  `__slots__`, the local derivatives stored at the forward pass, a recursive topological sort;
  ``sum()`` chains of + and * nodes), the figure to beat;
* microgpt(): `micrograd.gpt`'s eager step (fused dot nodes, the engine's backward());
* jit per document: `micrograd.jit.gpt.JitGPT`, one document a call (one trace per length, made
  in the first steps and counted in the total, not in the median);
* PyTorch: `micrograd.io.to_torch`'s twin, float64, one thread, the anchor.

Then `micrograd gpt --jit`'s training (`micrograd.jit.gpt.train`) as a whole: its CPU time with
the traces it makes, against eager's total for the same steps.

All four start from the same weights (seed 42, microgpt's draws) and train on the same shuffled
documents, so their losses agree (the first two to the bit, jit to 1e-12 a step, PyTorch's Adam
to rounding); the table says how far apart they end. The figure is the median CPU time of a step
(`time.process_time`, gc pauses included: the default garbage collector, never frozen); the
ratio is the minimal Value's median over the row's. ``--full`` also runs microgpt() for 1,000
steps and checks Karpathy's published figures and samples.

    python benchmarks/bench_gpt.py [--steps 100] [--names FILE] [--full]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Karpathy's figures (microgpt.py, 1,000 steps on makemore's names, seed 42), 1-based steps
HIS_LOSSES = {
    1: 3.3659669475848504,
    2: 3.4242727838717717,
    3: 3.177802125458052,
    100: 3.366930921178914,
    1000: 2.6496944697407585,
}
HIS_SAMPLES = (
    "kamon ann karai jaire vialan karia yeran anna areli kaina konna keylen liole alerin "
    "earan lenne kana lara alela anton"
).split()


class Scalar:
    """A minimal lecture-style Value: data, grad, children and their local derivatives."""

    __slots__ = ("data", "grad", "_children", "_local")

    def __init__(self, data, children=(), local=()):
        self.data, self.grad, self._children, self._local = data, 0, children, local

    def __add__(self, o):
        o = o if isinstance(o, Scalar) else Scalar(o)
        return Scalar(self.data + o.data, (self, o), (1, 1))

    def __mul__(self, o):
        o = o if isinstance(o, Scalar) else Scalar(o)
        return Scalar(self.data * o.data, (self, o), (o.data, self.data))

    def __pow__(self, k):
        return Scalar(self.data**k, (self,), (k * self.data ** (k - 1),))

    def log(self):
        return Scalar(math.log(self.data), (self,), (1 / self.data,))

    def exp(self):
        e = math.exp(self.data)
        return Scalar(e, (self,), (e,))

    def relu(self):
        return Scalar(max(0, self.data), (self,), (float(self.data > 0),))

    def __neg__(self):
        return self * -1

    def __radd__(self, o):
        return self + o

    def __sub__(self, o):
        return self + (-o)

    def __rmul__(self, o):
        return self * o

    def __truediv__(self, o):
        return self * o**-1

    def backward(self):
        order, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._children:
                    visit(c)
                order.append(v)

        visit(self)
        self.grad = 1
        for v in reversed(order):
            for c, d in zip(v._children, v._local):
                c.grad += d * v.grad


def minimal_run(model, tokenizer, docs, steps):
    """microgpt's loop on Scalar, from `model`'s weights: (losses, step times)."""
    from micrograd.gpt import LAYER

    E, H = model.n_embd, model.n_head
    D = E // H

    def mat(rows):
        return [[Scalar(w.data) for w in row] for row in rows]

    sd = model.sd
    wte, wpe, head = mat(sd["wte"]), mat(sd["wpe"]), mat(sd["lm_head"])
    layers = [[mat(sd[f"layer{i}.{name}"]) for name in LAYER] for i in range(model.n_layer)]
    params = [p for m in (wte, wpe, head, *(m for la in layers for m in la)) for r in m for p in r]

    def linear(x, w):
        return [sum(wi * xi for wi, xi in zip(row, x)) for row in w]

    def softmax(ls):
        top = max(v.data for v in ls)
        es = [(v - top).exp() for v in ls]
        total = sum(es)
        return [e / total for e in es]

    def rmsnorm(x):
        scale = (sum(xi * xi for xi in x) / len(x) + 1e-5) ** -0.5
        return [xi * scale for xi in x]

    def forward(tok, pos, keys, values):
        x = rmsnorm([t + p for t, p in zip(wte[tok], wpe[pos])])
        for li, (wq, wk, wv, wo, fc1, fc2) in enumerate(layers):
            res, x = x, rmsnorm(x)
            q = linear(x, wq)
            keys[li].append(linear(x, wk))
            values[li].append(linear(x, wv))
            out = []
            for h in range(0, E, D):
                att = softmax(
                    [
                        sum(a * b for a, b in zip(q[h : h + D], k[h : h + D])) / D**0.5
                        for k in keys[li]
                    ]
                )
                vs = values[li]
                out += [sum(att[t] * vs[t][h + j] for t in range(len(vs))) for j in range(D)]
            x = [a + b for a, b in zip(linear(out, wo), res)]
            res = x
            x = linear([u.relu() for u in linear(rmsnorm(x), fc1)], fc2)
            x = [a + b for a, b in zip(x, res)]
        return linear(x, head)

    m, v = [0.0] * len(params), [0.0] * len(params)
    losses, times = [], []
    for step in range(steps):
        t0 = time.process_time()
        tokens = tokenizer.encode(docs[step % len(docs)])
        n = min(model.block_size, len(tokens) - 1)
        keys, values = [[] for _ in layers], [[] for _ in layers]
        terms = [
            -softmax(forward(tokens[i], i, keys, values))[tokens[i + 1]].log() for i in range(n)
        ]
        loss = (1 / n) * sum(terms)
        loss.backward()
        lr = 0.01 * (1 - step / steps)
        for i, p in enumerate(params):
            m[i] = 0.85 * m[i] + (1 - 0.85) * p.grad
            v[i] = 0.99 * v[i] + (1 - 0.99) * p.grad**2
            mh, vh = m[i] / (1 - 0.85 ** (step + 1)), v[i] / (1 - 0.99 ** (step + 1))
            p.data -= lr * mh / (vh**0.5 + 1e-8)
            p.grad = 0
        times.append(time.process_time() - t0)
        losses.append(loss.data)
    return losses, times


def eager_run(model, tokenizer, docs, steps):
    from micrograd import gpt

    times, last = [], [time.process_time()]

    def tick(step, total, loss):
        now = time.process_time()
        times.append(now - last[0])
        last[0] = now

    return gpt.train(model, tokenizer, docs, steps, on_step=tick), times


def jit_run(model, tokenizer, docs, steps):
    from micrograd.gpt import Adam
    from micrograd.jit.gpt import JitGPT

    jg, adam = JitGPT(model), Adam(model.parameters(), steps)
    losses, times, traced = [], [], []
    for step in range(steps):
        t0, traces = time.process_time(), jg.jitted.traces
        loss = jg.loss([tokenizer.encode(docs[step % len(docs)])])
        loss.backward()
        adam.step()
        (traced if jg.jitted.traces > traces else times).append(time.process_time() - t0)
        losses.append(loss.data)
    return losses, times, traced


def torch_run(model, tokenizer, docs, steps):
    import torch

    from micrograd.io import to_torch

    torch.set_num_threads(1)
    twin = to_torch(model)
    opt = torch.optim.Adam(twin.parameters(), lr=0.01, betas=(0.85, 0.99), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1 - k / steps)
    losses, times = [], []
    for step in range(steps):
        t0 = time.process_time()
        tokens = tokenizer.encode(docs[step % len(docs)])[: model.block_size + 1]
        t = torch.tensor(tokens)
        loss = torch.nn.functional.cross_entropy(twin(t[:-1]), t[1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        times.append(time.process_time() - t0)
        losses.append(loss.item())
    return losses, times


def fresh(docs, seed=42):
    from micrograd import gpt

    return gpt.prepare(docs, seed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--names", help="a names.txt (default: micrograd.data.names())")
    ap.add_argument("--full", action="store_true", help="and microgpt()'s 1,000-step run")
    args = ap.parse_args(argv)
    from micrograd.data import names

    try:
        words = names(args.names) if args.names else names()
    except OSError as e:
        print(f"bench_gpt: {e}", file=sys.stderr)
        return 2
    steps = args.steps
    rows = []
    docs, tok, model = fresh(words)
    ref, t = minimal_run(model, tok, docs, steps)
    rows.append(("minimal Value (his loop, lecture-style Scalar)", t, ref, []))
    docs, tok, model = fresh(words)
    losses, t = eager_run(model, tok, docs, steps)
    rows.append(("microgpt() eager (micrograd.gpt)", t, losses, []))
    docs, tok, model = fresh(words)
    losses, t, traced = jit_run(model, tok, docs, steps)
    rows.append(("jit per document (micrograd.jit.gpt)", t, losses, traced))
    try:
        docs, tok, model = fresh(words)
        losses, t = torch_run(model, tok, docs, steps)
        rows.append(("PyTorch twin (io.to_torch, float64, 1 thread)", t, losses, []))
    except ImportError as e:
        print(f"note: PyTorch row skipped: {e}", file=sys.stderr)
    base = statistics.median(rows[0][1])
    print(f"microgpt, one document a step, {steps} steps, {len(words):,} documents, default gc")
    print(f"{'row':50} {'median ms/step':>15} {'minimal ÷ row':>14}  losses vs minimal")
    for label, times, losses, traced in rows:
        med = statistics.median(times)
        diff = max(abs(a - b) for a, b in zip(losses, ref))
        extra = f"; {len(traced)} traced steps, {sum(traced):.1f} s" if traced else ""
        print(f"{label:50} {med * 1e3:15.2f} {base / med:14.2f}  max |diff| {diff:.1e}{extra}")
    # `micrograd gpt --jit`: micrograd.jit.gpt.train, the whole run (its traces included)
    from micrograd.jit.gpt import train as jit_train

    docs, tok, model = fresh(words)
    t0 = time.process_time()
    jit_losses = jit_train(model, tok, docs, steps)
    jit_secs, eager_secs = time.process_time() - t0, sum(rows[1][1])
    diff = max(abs(a - b) for a, b in zip(jit_losses, rows[1][2]))
    print(
        f"micrograd gpt --jit, {steps} steps: {jit_secs:.1f} s CPU, traces included; eager "
        f"{eager_secs:.1f} s: --jit takes {jit_secs / eager_secs:.2f} times eager's time (the "
        f"traces, once per word length, weigh on a short run); losses vs eager max |diff| "
        f"{diff:.1e}"
    )
    if args.full:
        from micrograd.gpt import microgpt, sample

        t0 = time.process_time()
        model, tok, losses = microgpt(docs=words, steps=1000, seed=42)
        secs = time.process_time() - t0
        got = sample(model, tok)
        same = all(losses[k - 1] == x for k, x in HIS_LOSSES.items()) and got == HIS_SAMPLES
        print(
            f"microgpt() 1,000 steps: {secs:.0f} s CPU; "
            f"his figures and samples, bit for bit: {same}"
        )
        for k in HIS_LOSSES:
            print(f"  step {k}: {losses[k - 1]!r}")
        print("  samples: " + " ".join(got))
    return 0


if __name__ == "__main__":
    from results import recorded  # writes this script's section of RESULTS.md

    sys.exit(recorded("bench_gpt", main))
