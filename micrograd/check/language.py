"""The course's chapters 7 and 8: a learner's softmax, cross-entropy, sequence loss, RMSNorm and
attention head, judged by what they compute on the learner's own Value.

    from micrograd.check.language import check_softmax, check_attention
    check_softmax(softmax, Value)            # ✓ one line, or CheckFailed naming the mistake
    check_attention(attention, Value)

Each check calls the learner's function on Values of their class at a few points (one chosen so
that a typical mistake cannot hide: logits of 800 for softmax's overflow, a vector whose mean is
negative for RMSNorm), compares every output with the formula worked out in plain floats, then
backpropagates a weighted sum of the outputs with the learner's own `backward()` and compares
every input's grad with central differences of that formula. Nothing is read from how the code
is written: softmax by log-sum-exp, attention with its loops in another order, a recursive
topological sort all pass. A wrong number is named by its cause where it matches one (each cause
is the formula with one classic slip, worked out in floats: softmax without the max, the minus
sign of cross-entropy, a sum where a mean belongs, the mean of x where RMSNorm squares it,
attention unscaled, its softmax over the head's dimensions, its weights on the keys), else shown
beside the right number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..viz.formatting import format_number as fmt
from .notebook import CheckFailed, attempted, fail, passed

EPS = 1e-5  # RMSNorm's epsilon, as microgpt writes it
REL = 1e-9  # outputs: within this (relative, beyond ±1) of the formula
GRAD_REL = 1e-6  # grads: within this of central differences of the formula
H = 1e-6  # the nudge of those differences
COEFS = (0.3, -1.1, 0.7, 0.2, -0.4, 0.9)  # the weighted sum backpropagated: no output left out

Floats = list[float]


# ------------------------------------------------------------------ the formulas, in floats


def softmax_f(xs: Sequence[float]) -> Floats:
    m = max(xs)
    es = [math.exp(x - m) for x in xs]
    s = math.fsum(es)
    return [e / s for e in es]


def cross_entropy_f(xs: Sequence[float], target: int) -> float:
    m = max(xs)
    return m + math.log(math.fsum(math.exp(x - m) for x in xs)) - xs[target]


def rmsnorm_f(
    xs: Sequence[float], eps: float = EPS, mean_of: Callable[[float], float] | None = None
) -> Floats:
    sq = mean_of or (lambda x: x * x)
    ms = math.fsum(sq(x) for x in xs) / len(xs)
    return [x / math.sqrt(ms + eps) for x in xs]


def _scores(q: Sequence[float], keys: Sequence[Sequence[float]], scale: float) -> Floats:
    return [math.fsum(a * b for a, b in zip(q, k)) * scale for k in keys]


def attention_f(
    q: Sequence[float],
    keys: Sequence[Sequence[float]],
    values: Sequence[Sequence[float]],
    scale: float | None = None,
    onto: Sequence[Sequence[float]] | None = None,
) -> Floats:
    """One head at one position: softmax(q·k / √d) over the positions, applied to the values
    (`scale` and `onto` give the slips: another scale, the weights applied to the keys)."""
    d = len(q)
    w = softmax_f(_scores(q, keys, 1 / math.sqrt(d) if scale is None else scale))
    rows = values if onto is None else onto
    return [math.fsum(w[t] * rows[t][j] for t in range(len(keys))) for j in range(d)]


def attention_over_dims_f(
    q: Sequence[float], keys: Sequence[Sequence[float]], values: Sequence[Sequence[float]]
) -> Floats:
    """The slip: each position's products q_j·k_j softmaxed over the head's dimensions j."""
    d = len(q)
    out = [0.0] * d
    for k, v in zip(keys, values):
        a = softmax_f([q[j] * k[j] / math.sqrt(d) for j in range(d)])
        for j in range(d):
            out[j] += a[j] * v[j]
    return out


# ------------------------------------------------------------------ calling the learner's code


def near(x: float, y: float, rel: float = REL) -> bool:
    return abs(x - y) <= rel * max(1.0, abs(y))


def all_near(xs: Sequence[float], ys: Sequence[float], rel: float = REL) -> bool:
    return len(xs) == len(ys) and all(near(x, y, rel) for x, y in zip(xs, ys))


def _show(xs: Sequence[Any]) -> str:
    return "[" + ", ".join(fmt(x) if isinstance(x, (int, float)) else repr(x) for x in xs) + "]"


def _datum(name: str, v: Any) -> float:
    """A Value's data as a float; a number that is not one (complex, nan, inf) fails in a line."""
    if not hasattr(v, "data"):
        fail(
            f"{name} returned {type(v).__name__} {v!r} where a Value belongs: build the result "
            f"with Value ops, so that backward() reaches the inputs"
        )
    x = v.data
    if isinstance(x, complex):
        raise ArithmeticError(f"a complex number ({x}): a square root of a negative number")
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        fail(f"{name} returned a Value whose data is {x!r}, not a number")
    return float(x)


def _values(name: str, out: Any, n: int) -> list[Any]:
    if not isinstance(out, (list, tuple)):
        fail(f"{name} should return a list of {n} Values; it returned {type(out).__name__} {out!r}")
    if len(out) != n:
        fail(f"{name} should return a list of {n} Values, one per input; it returned {len(out)}")
    return list(out)


def _numbers(name: str, out: Any, n: int) -> tuple[list[Any], list[float]]:
    """`out`, n Values (`_values`), and their data (`_datum`)."""
    values = _values(name, out, n)
    return values, [_datum(name, v) for v in values]


def _call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as e:  # the learner's code: what it raises is the verdict
        fail(f"{name} raised {type(e).__name__}: {e}")


def _backward(name: str, V: type, outs: Sequence[Any]) -> None:
    """Backpropagate Σ cᵢ·outᵢ with the learner's own Value (its +, * and backward())."""
    loss = outs[0] * V(COEFS[0])
    for i, o in enumerate(outs[1:], 1):
        loss = loss + o * V(COEFS[i % len(COEFS)])
    if not callable(getattr(loss, "backward", None)):
        fail(f"{name}: your Value has no backward() yet (notebook 2 writes it)")
    try:
        loss.backward()
    except Exception as e:  # the learner's engine
        fail(f"{name}: backward() raised {type(e).__name__}: {e}")


def _fd(f: Callable[[Floats], Floats], xs: Floats) -> Floats:
    """∂(Σ cᵢ·f(xs)ᵢ)/∂xs by central differences."""

    def g(ys: Floats) -> float:
        out = f(ys)
        return math.fsum(COEFS[i % len(COEFS)] * o for i, o in enumerate(out))

    grads = []
    for i in range(len(xs)):
        up, down = list(xs), list(xs)
        up[i] += H
        down[i] -= H
        grads.append((g(up) - g(down)) / (2 * H))
    return grads


def _grads_right(
    name: str,
    leaves: Sequence[Any],
    want: Floats,
    names: Sequence[str],
    slips: Sequence[tuple[str, Floats]] = (),
) -> None:
    """The inputs' grads against `want`; a wrong set that matches one of `slips` (each the
    grads a classic slip gives, worked out in floats) is named by its cause."""
    got = [getattr(v, "grad", None) for v in leaves]
    if all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in got):
        right = all(near(float(g), w, GRAD_REL) for g, w in zip(got, want))
        for why, grads in slips:
            if not right and all(near(float(g), w, GRAD_REL) for g, w in zip(got, grads)):
                fail(f"{name}'s numbers are right but its grads are not: {why}")
    if all(isinstance(g, (int, float)) and g == 0 for g in got) and any(
        abs(w) > 1e-6 for w in want
    ):
        fail(
            f"{name}'s numbers are right but no grad reaches its inputs: a step computed on .data "
            f"(plain floats) cuts the graph; build every step with Value ops"
        )
    for g, w, n in zip(got, want, names):
        if not isinstance(g, (int, float)) or not near(float(g), w, GRAD_REL):
            fail(
                f"{name}'s numbers are right but its grads are not: {n}.grad = "
                f"{fmt(g) if isinstance(g, (int, float)) else repr(g)}, but nudging {n} moves the "
                f"result by {w:.6f}: look at the backward of the ops it uses (exp, log, /, **)"
            )


def _leaves(V: type, xs: Sequence[float]) -> list[Any]:
    return [V(float(x)) for x in xs]


# ------------------------------------------------------------------ softmax

SOFTMAX_POINTS: tuple[tuple[float, ...], ...] = (
    (1.0, 2.0, 3.0),
    (0.5, -1.25, 2.0, 0.0),
    (800.0, 799.0, 797.5),  # exp(800) is beyond a float: the largest logit must come off first
)


def check_softmax(softmax: Callable[..., Any], V: type) -> None:
    """`softmax(logits)` → a list of Values: exp(xᵢ − max) / Σⱼ exp(xⱼ − max)."""
    attempted("softmax", softmax)
    for xs in SOFTMAX_POINTS:
        logits = _leaves(V, xs)
        where = f"softmax({_show(xs)})"
        try:
            out, got = _numbers(where, softmax(logits), len(xs))
            finite = all(math.isfinite(p) for p in got)
        except CheckFailed:
            raise
        except (OverflowError, ArithmeticError) as e:  # exp(800), or a nan/inf it led to
            got, finite, why = [], False, f"{type(e).__name__}: {e}"
        except Exception as e:  # the learner's code
            if max(xs) < 700:
                fail(f"{where} raised {type(e).__name__}: {e}")
            got, finite, why = [], False, f"{type(e).__name__}: {e}"
        else:
            why = f"it gave {_show(got)}"
        if not finite:
            if max(xs) > 700:
                fail(
                    f"{where} overflows ({why}): exp(800) is beyond a float. Subtract the largest "
                    f"logit from each logit before exp: softmax is unchanged by the shift, and the "
                    f"largest exp is then exp(0) = 1"
                )
            fail(f"{where}: {why}")
        want = softmax_f(xs)
        if not all_near(got, want):
            es = [math.exp(x) for x in xs]
            if all_near(got, es) or all_near(got, [math.exp(x - max(xs)) for x in xs]):
                fail(
                    f"{where} gave the exps {_show(got)}: divide each by their sum, so "
                    f"the p's sum to 1"
                )
            if math.fsum(xs) and all_near(got, [x / math.fsum(xs) for x in xs]):
                fail(
                    f"{where} divided the logits by their sum: softmax divides their exps, "
                    f"exp(xᵢ) / Σ exp(xⱼ)"
                )
            fail(
                f"{where} gave {_show(got)}; want {_show(want)} (exp(xᵢ − max) / Σⱼ exp(xⱼ − max))"
            )
        _backward(where, V, out)
        _grads_right(
            where, logits, _fd(softmax_f, list(xs)), [f"logit {i}" for i in range(len(xs))]
        )
    passed("softmax is right: the p's, their grads, and no overflow at logits of 800")


# ------------------------------------------------------------------ cross-entropy

CE_POINTS: tuple[tuple[tuple[float, ...], int], ...] = (
    ((1.0, 2.0, 0.5), 0),
    ((2.0, -1.0, 0.25, 1.5), 3),
    ((800.0, 790.0, 795.0), 1),
)


def check_cross_entropy(cross_entropy: Callable[..., Any], V: type) -> None:
    """`cross_entropy(logits, target)` → a Value: −log softmax(logits)[target]."""
    attempted("cross_entropy", cross_entropy)
    for xs, t in CE_POINTS:
        logits = _leaves(V, xs)
        where = f"cross_entropy({_show(xs)}, {t})"
        loss = _call(where, cross_entropy, logits, t)
        try:
            got = _datum(where, loss)
        except ArithmeticError as e:
            fail(f"{where}: {e}")
        want = cross_entropy_f(xs, t)
        if not near(got, want):
            p = softmax_f(xs)
            if near(got, -want):
                fail(
                    f"{where} = {fmt(got)}, which is log p[target] = −(the loss): cross-entropy is "
                    f"−log p[target]; without the minus sign, training would push p[target] down"
                )
            if near(got, -p[t]) or near(got, 1 - p[t]):
                fail(
                    f"{where} = {fmt(got)}: the loss is −log p[target] ({fmt(want)}), "
                    f"not a plain −p"
                )
            other = [k for k in range(len(xs)) if k != t and near(got, cross_entropy_f(xs, k))]
            if other:
                fail(
                    f"{where} = {fmt(got)} is the loss of target {other[0]}: take p at "
                    f"the target, p[{t}]"
                )
            fail(f"{where} = {fmt(got)}; want −log p[{t}] = {fmt(want)}")
        _backward(where, V, [loss])
        grads = [COEFS[0] * (pi - (i == t)) for i, pi in enumerate(softmax_f(xs))]
        _grads_right(where, logits, grads, [f"logit {i}" for i in range(len(xs))])
    passed("cross_entropy is right: −log p[target], and each logit's grad is pᵢ − yᵢ")


def check_sequence_loss(sequence_loss: Callable[..., Any], V: type) -> None:
    """`sequence_loss(rows, targets)` → a Value: the mean over positions of each row's
    cross-entropy at its target (a name's loss, as microgpt averages it)."""
    attempted("sequence_loss", sequence_loss)
    rows_f = [(1.0, 2.0, 0.5), (0.0, -1.5, 2.5), (0.75, 0.25, -0.5), (1.5, 1.0, 2.0)]
    targets = [2, 0, 1, 2]
    rows = [_leaves(V, r) for r in rows_f]
    where = "sequence_loss(4 rows of logits, targets [2, 0, 1, 2])"
    loss = _call(where, sequence_loss, rows, targets)
    try:
        got = _datum(where, loss)
    except ArithmeticError as e:
        fail(f"{where}: {e}")
    each = [cross_entropy_f(r, t) for r, t in zip(rows_f, targets)]
    want = math.fsum(each) / len(each)
    if not near(got, want):
        if near(got, math.fsum(each)):
            fail(
                f"{where} = {fmt(got)}, the sum of the 4 positions' losses: average them "
                f"({fmt(want)}), so that a long name does not weigh more than a short one"
            )
        if near(got, -want):
            fail(f"{where} = {fmt(got)}: the minus sign of −log p is missing")
        if any(near(got, e) for e in each):
            fail(f"{where} = {fmt(got)} is one position's loss: average over all 4 positions")
        fail(f"{where} = {fmt(got)}; want the mean of the positions' cross-entropies, {fmt(want)}")
    _backward(where, V, [loss])
    flat = [x for r in rows_f for x in r]

    def mean_loss(ys: Floats) -> Floats:
        rs = [ys[3 * i : 3 * i + 3] for i in range(len(rows_f))]
        return [math.fsum(cross_entropy_f(r, t) for r, t in zip(rs, targets)) / len(rs)]

    names = [f"row {i} logit {j}" for i in range(len(rows_f)) for j in range(3)]
    _grads_right(where, [v for r in rows for v in r], _fd(mean_loss, flat), names)
    passed("sequence_loss is right: the mean of the positions' cross-entropies")


# ------------------------------------------------------------------ RMSNorm

RMS_POINTS: tuple[tuple[float, ...], ...] = (
    (1.0, -2.0, 0.5, 3.0),
    (0.002, -0.001, 0.003),  # so small that the 1e-5 counts
    (-1.5, 0.5, -2.0),  # a negative mean: the mean of x (not x²) has no square root
)


def check_rmsnorm(rmsnorm: Callable[..., Any], V: type) -> None:
    """`rmsnorm(x)` → a list of Values: xᵢ / √(mean(x²) + 1e-5)."""
    attempted("rmsnorm", rmsnorm)
    slips: list[tuple[str, Callable[[Sequence[float]], Floats]]] = [
        (
            "takes the mean of x, not of x²: RMS is the root of the mean square",
            lambda xs: rmsnorm_f(xs, mean_of=lambda x: x),
        ),
        (
            "divides by mean(x²) + 1e-5 without its square root",
            lambda xs: [x / (math.fsum(y * y for y in xs) / len(xs) + EPS) for x in xs],
        ),
        (
            "leaves out the 1e-5 under the square root (it keeps an all-zero x finite)",
            lambda xs: rmsnorm_f(xs, eps=0.0),
        ),
        (
            "sums x² where the mean belongs: divide the sum by len(x)",
            lambda xs: [x / math.sqrt(math.fsum(y * y for y in xs) + EPS) for x in xs],
        ),
        (
            "squares the mean of x instead of taking the mean of the squares",
            lambda xs: [x / math.sqrt((math.fsum(xs) / len(xs)) ** 2 + EPS) for x in xs],
        ),
    ]
    for xs in RMS_POINTS:
        x = _leaves(V, xs)
        where = f"rmsnorm({_show(xs)})"
        try:
            out, got = _numbers(where, rmsnorm(x), len(xs))
        except CheckFailed:
            raise
        except Exception as e:  # the learner's code, or a complex number it made
            if math.fsum(xs) < 0:
                fail(
                    f"{where} fails ({type(e).__name__}: {e}): the mean of this x is negative, so "
                    f"its square root does not exist. RMS is the root of the mean of x²"
                )
            fail(f"{where} raised {type(e).__name__}: {e}")
        want = rmsnorm_f(xs)
        if not all_near(got, want):
            for why, f in slips:
                try:
                    if all_near(got, f(xs)):
                        fail(f"{where} gave {_show(got)}: it {why}")
                except ValueError:  # the slip itself has no value here (a negative root)
                    continue
            fail(f"{where} gave {_show(got)}; want {_show(want)} (xᵢ / √(mean(x²) + 1e-5))")
        _backward(where, V, out)
        scale = 1 / math.sqrt(math.fsum(y * y for y in xs) / len(xs) + EPS)
        cut = [COEFS[i % len(COEFS)] * scale for i in range(len(xs))]  # xᵢ × a plain float
        _grads_right(
            where,
            x,
            _fd(rmsnorm_f, list(xs)),
            [f"x{i}" for i in range(len(xs))],
            [
                (
                    "the scale 1/√(mean(x²) + 1e-5) is a plain float (computed from .data), so "
                    "no gradient flows through it; keep it a Value, e.g. (ms + 1e-5) ** -0.5 "
                    "with ms the Value mean of the squares",
                    cut,
                )
            ],
        )
    passed("rmsnorm is right: xᵢ / √(mean(x²) + 1e-5), and its grads")


# ------------------------------------------------------------------ one attention head

ATTENTION_POINTS: tuple[tuple[Floats, list[Floats], list[Floats]], ...] = (
    ([0.5, -1.0], [[1.0, 0.5], [-0.5, 2.0], [1.5, -1.0]], [[0.3, 1.0], [-1.2, 0.4], [2.0, -0.7]]),
    (
        [1.0, 0.25, -0.5, 2.0],
        [[0.5, 1.0, -1.0, 0.75], [1.25, -0.5, 0.5, 1.5]],
        [[1.0, -2.0, 0.5, 0.0], [-0.5, 1.5, 2.5, -1.0]],
    ),
    ([0.7, -0.3], [[1.1, 0.4]], [[-0.6, 0.9]]),  # the first position: one key, weight 1
)


def check_attention(attention: Callable[..., Any], V: type) -> None:
    """`attention(q, keys, values)` → a list of Values (the head's output at this position):
    softmax over the positions t of q·keys[t] / √head_size, applied to values[t]."""
    attempted("attention", attention)
    for q_f, k_f, v_f in ATTENTION_POINTS:
        q, keys, values = (
            _leaves(V, q_f),
            [_leaves(V, k) for k in k_f],
            [_leaves(V, v) for v in v_f],
        )
        d, T = len(q_f), len(k_f)
        where = f"attention(q of size {d}, {T} key{'s' * (T > 1)} and value{'s' * (T > 1)})"
        out = _values(where, _call(where, attention, q, keys, values), d)
        try:
            got = [_datum(where, v) for v in out]
        except ArithmeticError as e:
            fail(f"{where}: {e}")
        want = attention_f(q_f, k_f, v_f)
        if not all_near(got, want):
            slips = [
                (
                    "leaves out the scale: the scores q·k are divided by √head_size",
                    attention_f(q_f, k_f, v_f, scale=1.0),
                ),
                (
                    "divides the scores by head_size; the scale is 1/√head_size",
                    attention_f(q_f, k_f, v_f, scale=1 / d),
                ),
                (
                    "applies the weights to the keys: the output is Σ wₜ·values[t]",
                    attention_f(q_f, k_f, v_f, onto=k_f),
                ),
                (
                    "takes the softmax over the head's dimensions: it belongs over the positions "
                    "(one weight per position, the weights summing to 1)",
                    attention_over_dims_f(q_f, k_f, v_f),
                ),
            ]
            for why, slip in slips:
                if all_near(got, slip):
                    fail(f"{where} gave {_show(got)}: it {why}")
            fail(f"{where} gave {_show(got)}; want {_show(want)}")
        _backward(where, V, out)
        flat = [*q_f, *(x for k in k_f for x in k), *(x for v in v_f for x in v)]

        def f(ys: Floats, d: int = d, T: int = T) -> Floats:
            qq, ks, vs = ys[:d], [ys[d + t * d : d + t * d + d] for t in range(T)], ys[d + T * d :]
            return attention_f(qq, ks, [vs[t * d : t * d + d] for t in range(T)])

        names = [f"q{j}" for j in range(d)]
        names += [f"keys[{t}][{j}]" for t in range(T) for j in range(d)]
        names += [f"values[{t}][{j}]" for t in range(T) for j in range(d)]
        leaves = [*q, *(x for k in keys for x in k), *(x for v in values for x in v)]
        _grads_right(where, leaves, _fd(f, flat), names)
    passed("attention is right: softmax of q·k/√d over the positions, applied to the values")
