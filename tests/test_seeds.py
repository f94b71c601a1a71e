"""Every worked example in the seeds (the lecture retold in Python, Julia and Go), with its
numbers."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from micrograd.engine import Value
from micrograd.nn import MLP
from tests.support.lecture import build_L, torch_layers


def test_readme_expression() -> None:
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    assert f"{g.data:.4f}" == "24.7041"
    g.backward()
    assert f"{a.grad:.4f}" == "138.8338"
    assert f"{b.grad:.4f}" == "645.5773"


def test_L_gradients() -> None:
    a, b, c, d, e, f, L = build_L()
    assert L.data == -8.0
    L.backward()
    assert (a.grad, b.grad, c.grad, f.grad) == (6.0, -4.0, -2.0, 4.0)
    assert (d.grad, e.grad, L.grad) == (-2.0, -2.0, 1.0)


def test_L_nudged_along_the_gradient() -> None:
    a, b, c, d, e, f, L = build_L()
    L.backward()
    for leaf in (a, b, c, f):
        leaf.data += 0.01 * leaf.grad
    L = ((a * b) + c) * f
    assert math.isclose(L.data, -7.286496, rel_tol=1e-12)


def test_lol_numerical_derivative_of_L_wrt_a() -> None:
    h = 0.001
    L1 = build_L()[-1].data
    a, b, c, d, e, f, _ = build_L()
    a.data += h
    L2 = ((a * b) + c) * f
    assert math.isclose((L2.data - L1) / h, 6.0, rel_tol=1e-9)


def neuron(tanh_from_exp: bool) -> tuple[Value, list[Value]]:
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    if tanh_from_exp:
        e = (2 * n).exp()
        o = (e - 1) / (e + 1)
    else:
        o = n.tanh()
    return o, [x1, w1, x2, w2]


def test_neuron_via_tanh_and_via_exp() -> None:
    for via_exp in (False, True):
        o, (x1, w1, x2, w2) = neuron(via_exp)
        assert f"{o.data:.4f}" == "0.7071"
        o.backward()
        assert [round(v.grad, 4) for v in (x1, w1, x2, w2)] == [-1.5, 1.0, 0.5, 0.0]


def test_neuron_topological_order_shown_in_the_lecture() -> None:
    from micrograd.engine import topological_order

    o, _ = neuron(False)
    order = [round(v.data, 4) for v in topological_order(o)]
    # The lecture prints: 2.0, -3.0, -6.0, 0.0, 1.0, 0.0, -6.0, 6.8814, 0.8814, 0.7071 (in some
    # valid order); ours is children-before-parents, children in the order they were given.
    assert order == [2.0, -3.0, -6.0, 0.0, 1.0, 0.0, -6.0, 6.8814, 0.8814, 0.7071]


def test_a_plus_a() -> None:
    a = Value(3.0, label="a")
    b = a + a
    b.backward()
    assert a.grad == 2.0
    aa = Value(-2.0, label="a")  # the Julia notebook's version
    bb = aa + aa
    bb.backward()
    assert aa.grad == 2.0


def test_a_times_b_times_a_plus_b() -> None:
    a = Value(-2.0, label="a")
    b = Value(3.0, label="b")
    d = a * b
    e = a + b
    f = d * e
    f.backward()
    assert (a.grad, b.grad) == (-3.0, -8.0)


def test_go_article_double_x() -> None:
    x, w, y = Value(2), Value(0.4), Value(4)  # pretend random init
    lines = []
    for k in range(6):
        ypred = w * x
        loss = (ypred - y) ** Value(2)  # Pow(Sub(ypred, y), New(2)): a Value exponent
        w.grad = 0
        loss.backward()
        w.data += -0.1 * w.grad
        lines.append(f"Iter: {k:2d}, Loss: {loss.data:.4g}, w: {w.data:.4g}")
    assert lines == [
        "Iter:  0, Loss: 10.24, w: 1.68",
        "Iter:  1, Loss: 0.4096, w: 1.936",
        "Iter:  2, Loss: 0.01638, w: 1.987",
        "Iter:  3, Loss: 0.0006554, w: 1.997",
        "Iter:  4, Loss: 2.621e-05, w: 1.999",
        "Iter:  5, Loss: 1.049e-06, w: 2",
    ]


def test_go_article_first_gradient() -> None:
    # "the gradient is 2(0.8 - 4) * 2 = -12.8"
    x, w, y = Value(2.0), Value(0.4), Value(4.0)
    loss = (w * x - y) ** 2
    loss.backward()
    assert math.isclose(loss.data, 10.24) and math.isclose(w.grad, -12.8)


XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]


def test_41_parameter_mlp_trains_like_pytorch() -> None:
    random.seed(42)
    n = MLP(3, [4, 4, 1], activation="tanh", out_activation="tanh")
    assert len(n.parameters()) == 41
    # The same network in PyTorch, from the same initial weights.
    layers = torch_layers(n)
    X, Y = torch.tensor(XS, dtype=torch.float64), torch.tensor(YS, dtype=torch.float64)
    losses = []
    for _ in range(20):
        ypred = [n(x) for x in XS]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(YS, ypred))
        n.zero_grad()
        loss.backward()
        for p in n.parameters():
            p.data += -0.05 * p.grad

        h = X
        for W, B in layers:
            h = torch.tanh(h @ W.T + B)
        tloss = ((h.squeeze(1) - Y) ** 2).sum()
        for W, B in layers:
            W.grad = B.grad = None
        tloss.backward()
        with torch.no_grad():
            for W, B in layers:
                W += -0.05 * W.grad
                B += -0.05 * B.grad
        assert math.isclose(loss.data, tloss.item(), rel_tol=1e-9)
        losses.append(loss.data)
    assert losses[-1] < losses[0] / 5
    assert [math.copysign(1, n(x).data) for x in XS] == YS


@pytest.mark.slow
def test_karpathy_moons_demo_step_99() -> None:
    from sklearn.datasets import make_moons

    np.random.seed(1337)
    random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1
    model = MLP(2, [16, 16, 1])
    assert len(model.parameters()) == 337

    def loss():  # karpathy's demo.ipynb, verbatim (full batch)
        Xb, yb = X, y
        inputs = [list(map(Value, xrow)) for xrow in Xb]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    for k in range(100):
        total_loss, acc = loss()
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
    assert math.isclose(total_loss.data, 0.010978370135492717, rel_tol=0, abs_tol=1e-9)
    assert acc == 1.0
