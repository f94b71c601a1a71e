"""The checks of chapters 7 and 8's exercises (micrograd.check.language): every correct version
passes, on micrograd's Value and on a learner's lecture Value (a recursive topological sort, a
set of children), and each classic mistake is named by its cause."""

from __future__ import annotations

import math

import pytest

from micrograd.check.language import (
    attention_f,
    check_attention,
    check_cross_entropy,
    check_rmsnorm,
    check_sequence_loss,
    check_softmax,
    cross_entropy_f,
    rmsnorm_f,
    softmax_f,
)
from micrograd.check.notebook import CheckFailed
from micrograd.engine import Value as Ours
from tests.support.learner import variant

# The learner's Value from notebook 2, given log as chapter 7 gives it.
Learners = variant(
    (
        "    def relu(self):",
        """    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += (1 / self.data) * out.grad

        out._backward = _backward
        return out

    def relu(self):""",
    )
)["Value"]


ENGINES = [pytest.param(Ours, id="micrograd"), pytest.param(Learners, id="lecture")]


def wrap(V, x):
    return x if isinstance(x, V) else V(x)


# ------------------------------------------------------------------ correct versions


def softmax_max(logits):
    m = max(v.data for v in logits)
    es = [(v - m).exp() for v in logits]
    s = es[0]
    for e in es[1:]:
        s = s + e
    return [e / s for e in es]


def softmax_lse(logits):
    """By log-sum-exp, the max a Value (its grads cancel)."""
    m = logits[0]
    for v in logits[1:]:
        m = v if v.data > m.data else m
    s = sum(((v - m).exp() for v in logits[1:]), (logits[0] - m).exp())
    lse = m + s.log()
    return [(v - lse).exp() for v in logits]


def cross_entropy(logits, target):
    return -softmax_max(logits)[target].log()


def cross_entropy_lse(logits, target):
    m = max(v.data for v in logits)
    s = sum(((v - m).exp() for v in logits[1:]), (logits[0] - m).exp())
    return s.log() + m - logits[target]


def sequence_loss(rows, targets):
    losses = [cross_entropy(r, t) for r, t in zip(rows, targets)]
    return sum(losses[1:], losses[0]) * (1 / len(losses))


def rmsnorm(x):
    ms = sum((xi * xi for xi in x[1:]), x[0] * x[0]) * (1 / len(x))
    scale = (ms + 1e-5) ** -0.5
    return [xi * scale for xi in x]


def rmsnorm_divide(x):
    ms = sum((xi**2 for xi in x[1:]), x[0] ** 2) / len(x)
    return [xi / (ms + 1e-5) ** 0.5 for xi in x]


def attention(q, keys, values):
    d = len(q)
    scores = []
    for k in keys:
        s = q[0] * k[0]
        for j in range(1, d):
            s = s + q[j] * k[j]
        scores.append(s * (1 / math.sqrt(d)))
    w = softmax_max(scores)
    return [
        sum((w[t] * values[t][j] for t in range(1, len(keys))), w[0] * values[0][j])
        for j in range(d)
    ]


def attention_other_order(q, keys, values):
    """The loops the other way round: the output accumulated position by position."""
    d = len(q)
    scores = [sum((qj * kj for qj, kj in zip(q, k)), q[0] * 0) / d**0.5 for k in keys]
    w = softmax_lse(scores)
    out = [values[0][j] * w[0] for j in range(d)]
    for t in range(1, len(keys)):
        out = [out[j] + w[t] * values[t][j] for j in range(d)]
    return out


@pytest.mark.parametrize("V", ENGINES)
@pytest.mark.parametrize("fn", [softmax_max, softmax_lse])
def test_a_right_softmax_passes(V, fn, capsys):
    check_softmax(fn, V)
    assert capsys.readouterr().out.startswith("✓ softmax is right")


@pytest.mark.parametrize("V", ENGINES)
@pytest.mark.parametrize("fn", [cross_entropy, cross_entropy_lse])
def test_a_right_cross_entropy_passes(V, fn, capsys):
    check_cross_entropy(fn, V)
    assert capsys.readouterr().out.startswith("✓ cross_entropy is right")


@pytest.mark.parametrize("V", ENGINES)
def test_a_right_sequence_loss_passes(V, capsys):
    check_sequence_loss(sequence_loss, V)
    assert "✓ sequence_loss is right" in capsys.readouterr().out


@pytest.mark.parametrize("V", ENGINES)
@pytest.mark.parametrize("fn", [rmsnorm, rmsnorm_divide])
def test_a_right_rmsnorm_passes(V, fn, capsys):
    check_rmsnorm(fn, V)
    assert capsys.readouterr().out.startswith("✓ rmsnorm is right")


@pytest.mark.parametrize("V", ENGINES)
@pytest.mark.parametrize("fn", [attention, attention_other_order])
def test_a_right_attention_passes(V, fn, capsys):
    check_attention(fn, V)
    assert capsys.readouterr().out.startswith("✓ attention is right")


# ------------------------------------------------------------------ the formulas themselves


def test_the_float_formulas_agree_with_pytorch():
    torch = pytest.importorskip("torch")
    xs = [0.5, -1.25, 2.0, 0.0]
    t = torch.tensor(xs, dtype=torch.float64)
    assert softmax_f(xs) == pytest.approx(torch.softmax(t, 0).tolist(), rel=1e-12)
    ce = torch.nn.functional.cross_entropy(t[None], torch.tensor([2])).item()
    assert cross_entropy_f(xs, 2) == pytest.approx(ce, rel=1e-12)
    rms = torch.nn.functional.rms_norm(t, (4,), eps=1e-5)
    assert rmsnorm_f(xs) == pytest.approx(rms.tolist(), rel=1e-12)
    q = torch.tensor([[[0.5, -1.0]]], dtype=torch.float64)
    k = torch.tensor([[[1.0, 0.5], [-0.5, 2.0], [1.5, -1.0]]], dtype=torch.float64)
    v = torch.tensor([[[0.3, 1.0], [-1.2, 0.4], [2.0, -0.7]]], dtype=torch.float64)
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v)[0, 0].tolist()
    ours = attention_f([0.5, -1.0], k[0].tolist(), v[0].tolist())
    assert ours == pytest.approx(sdpa, rel=1e-12)


# ------------------------------------------------------------------ each mistake, named


def failure(check, fn, V=Ours):
    with pytest.raises(CheckFailed) as e:
        check(fn, V)
    return str(e.value)


def softmax_no_max(logits):
    es = [v.exp() for v in logits]
    s = sum(es[1:], es[0])
    return [e / s for e in es]


def softmax_no_division(logits):
    m = max(v.data for v in logits)
    return [(v - m).exp() for v in logits]


def softmax_on_data(logits):
    m = max(v.data for v in logits)
    es = [math.exp(v.data - m) for v in logits]
    return [Ours(e / sum(es)) for e in es]


@pytest.mark.parametrize("V", ENGINES)
def test_softmax_without_the_max_is_named_by_its_overflow(V):
    said = failure(check_softmax, softmax_no_max, V)
    assert "overflows" in said and "Subtract the largest logit" in said


def test_softmax_without_its_division_and_on_data_are_named():
    assert "divide each by their sum" in failure(check_softmax, softmax_no_division)
    assert "no grad reaches its inputs" in failure(check_softmax, softmax_on_data)


def test_cross_entropy_without_its_minus_sign_is_named():
    said = failure(check_cross_entropy, lambda ls, t: softmax_max(ls)[t].log())
    assert "without the minus sign" in said


def test_cross_entropy_at_the_wrong_target_is_named():
    said = failure(check_cross_entropy, lambda ls, t: cross_entropy(ls, (t + 1) % len(ls)))
    assert "is the loss of target" in said


def test_a_summed_sequence_loss_is_named():
    def summed(rows, targets):
        losses = [cross_entropy(r, t) for r, t in zip(rows, targets)]
        return sum(losses[1:], losses[0])

    assert "average them" in failure(check_sequence_loss, summed)


@pytest.mark.parametrize("V", ENGINES)
def test_rmsnorm_of_the_mean_of_x_is_named(V):
    def mean_of_x(x):
        m = sum(x[1:], x[0]) * (1 / len(x))
        return [xi * (m + 1e-5) ** -0.5 for xi in x]

    said = failure(check_rmsnorm, mean_of_x, V)
    assert "mean of x, not of x²" in said or "root of the mean of x²" in said


def test_rmsnorm_without_the_epsilon_or_the_root_is_named():
    def no_eps(x):
        ms = sum((xi * xi for xi in x[1:]), x[0] * x[0]) * (1 / len(x))
        return [xi * ms**-0.5 for xi in x]

    def no_root(x):
        ms = sum((xi * xi for xi in x[1:]), x[0] * x[0]) * (1 / len(x))
        return [xi / (ms + 1e-5) for xi in x]

    assert "1e-5" in failure(check_rmsnorm, no_eps)
    assert "without its square root" in failure(check_rmsnorm, no_root)


def attention_variant(scale=None, onto_keys=False):
    def fn(q, keys, values):
        d = len(q)
        k_scale = 1 / math.sqrt(d) if scale is None else scale(d)
        scores = [sum((a * b for a, b in zip(q, k)), q[0] * 0) * k_scale for k in keys]
        w = softmax_max(scores)
        rows = keys if onto_keys else values
        return [sum((w[t] * rows[t][j] for t in range(len(keys))), q[0] * 0) for j in range(d)]

    return fn


def attention_over_dims(q, keys, values):
    d = len(q)
    out = [q[0] * 0 for _ in range(d)]
    for k, v in zip(keys, values):
        a = softmax_max([q[j] * k[j] * (1 / math.sqrt(d)) for j in range(d)])
        out = [out[j] + a[j] * v[j] for j in range(d)]
    return out


@pytest.mark.parametrize("V", ENGINES)
def test_each_attention_mistake_is_named(V):
    assert "leaves out the scale" in failure(check_attention, attention_variant(lambda d: 1.0), V)
    assert "divides the scores by head_size" in failure(
        check_attention, attention_variant(lambda d: 1 / d), V
    )
    assert "to the keys" in failure(check_attention, attention_variant(onto_keys=True), V)
    assert "over the head's dimensions" in failure(check_attention, attention_over_dims, V)


def test_a_crash_and_a_wrong_shape_are_one_line():
    def crashes(logits):
        raise KeyError("oops")

    assert "raised KeyError" in failure(check_softmax, crashes)
    assert "list of 4 Values" in failure(check_rmsnorm, lambda x: x[:2])
    assert "where a Value belongs" in failure(check_cross_entropy, lambda ls, t: 1.0)


@pytest.mark.parametrize("V", ENGINES)
def test_rmsnorm_with_its_scale_from_data_is_named(V):
    """The scale worked out on .data is a plain float: the numbers are right, and each xᵢ's
    grad is its coefficient × the scale, as if the scale did not depend on x."""

    def scale_from_data(x):
        ms = sum((xi * xi for xi in x[1:]), x[0] * x[0]) * (1 / len(x))
        scale = (ms.data + 1e-5) ** -0.5
        return [xi * scale for xi in x]

    said = failure(check_rmsnorm, scale_from_data, V)
    assert said.startswith("rmsnorm([1.0000, -2.0000, 0.5000, 3.0000])'s numbers are right but")
    assert "the scale 1/√(mean(x²) + 1e-5) is a plain float (computed from .data)" in said
    assert "no gradient flows through it; keep it a Value" in said
    assert "exp, log" not in said


def test_an_unfilled_exercise_is_not_attempted_with_what_goes_there():
    ns: dict = {"__name__": "__main__"}
    code = "def rmsnorm(x):\n    ...  # each xᵢ divided by the root of the mean of the squares\n"
    exec(compile(code, "<cell>", "exec"), ns)
    import linecache

    linecache.cache["<cell>"] = (len(code), None, code.splitlines(True), "<cell>")
    said = failure(check_rmsnorm, ns["rmsnorm"])
    assert said == (
        "not attempted: rmsnorm still has `...` (each xᵢ divided by the root of the mean of the "
        "squares): replace each `...` with your code, run that cell, then this one"
    )


def test_a_bare_stub_is_not_attempted_naming_the_body_to_write():
    """Chapters 7 and 8's stubs are a bare `...`: the line names the function's body."""
    import linecache

    ns: dict = {"__name__": "__main__"}
    code = "def softmax(logits):\n    ...\n"
    linecache.cache["<cell 7>"] = (len(code), None, code.splitlines(True), "<cell 7>")
    exec(compile(code, "<cell 7>", "exec"), ns)
    assert failure(check_softmax, ns["softmax"]) == (
        "not attempted: softmax still has `...` (the body of softmax(logits)): replace each "
        "`...` with your code, run that cell, then this one"
    )
