"""Optimizers and learning-rate schedules, shaped like `torch.optim`.

    opt = optim.Adam(model.parameters(), lr=0.01)
    for step in range(100):
        loss = ...
        opt.zero_grad()
        loss.backward()
        opt.step()

`SGD` (momentum, dampening, Nesterov, weight decay), `Adam` and `AdamW` follow PyTorch's update
rules line for line, and their trajectories match torch.optim's in float64 (tested). Each is the
lecture's ``p.data -= lr * p.grad`` with a little state per parameter.

Schedules change `opt.lr` once per `sched.step()`, as in PyTorch: `LambdaLR` (lr = base_lr *
f(step)) and `LinearDecay` (karpathy's demo: ``lr = 1.0 - 0.9 * k / 100``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable

from .engine import Value


def _check(name: str, value: object, low: float, high: float = math.inf, what: str = "") -> float:
    """`value` as a float in [low, high) (or raise a ValueError naming the hyperparameter)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{what}: {name} must be a number, got {value!r}")
    if not low <= value < high or math.isinf(value):
        bound = f"[{low}, {high})" if high != math.inf else f">= {low}"
        raise ValueError(f"{what}: {name} must be {bound}, got {value!r}")
    return float(value)


class Optimizer:
    """Holds the parameters (a list of Values) and the learning rate `lr`; subclasses `step()`."""

    def __init__(self, params: Iterable[Value], lr: float) -> None:
        what = type(self).__name__
        if isinstance(params, Value):
            raise TypeError(f"{what}: params must be an iterable of Values, got one Value")
        self.params: list[Value] = list(params)
        if not self.params:
            raise ValueError(f"{what}: got an empty parameter list (nothing to optimise)")
        for p in self.params:
            if not isinstance(p, Value):
                raise TypeError(f"{what}: params must be Values, got {type(p).__name__} {p!r}")
        self.lr = _check("lr", lr, 0.0, what=what)

    def zero_grad(self) -> None:
        """Reset every parameter's grad to 0 (backward() accumulates into leaves)."""
        for p in self.params:
            p.grad = 0.0

    def step(self) -> None:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's rule:

        g = grad + weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf          (when momentum > 0)
        p -= lr * g

    With the defaults it is the lecture's ``p.data -= lr * p.grad``.
    """

    def __init__(
        self,
        params: Iterable[Value],
        lr: float = 0.01,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        super().__init__(params, lr)
        self.momentum = _check("momentum", momentum, 0.0, what="SGD")
        self.dampening = _check("dampening", dampening, 0.0, what="SGD")
        if self.dampening > 1:
            raise ValueError(f"SGD: dampening must be in [0, 1], got {dampening!r}")
        self.weight_decay = _check("weight_decay", weight_decay, 0.0, what="SGD")
        if nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening == 0")
        self.nesterov = bool(nesterov)
        self._buf: list[float | None] = [None] * len(self.params)

    def step(self) -> None:
        lr, mu, wd = self.lr, self.momentum, self.weight_decay
        for i, p in enumerate(self.params):
            g = p.grad
            if wd:
                g = g + wd * p.data
            if mu:
                buf = self._buf[i]
                buf = g if buf is None else mu * buf + (1 - self.dampening) * g
                self._buf[i] = buf
                g = g + mu * buf if self.nesterov else buf
            p.data -= lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's rule, per parameter at step t:

    g = grad + weight_decay * p          (L2 penalty; see AdamW for decoupled decay)
    m = beta1 * m + (1 - beta1) * g      first moment (running mean of g)
    v = beta2 * v + (1 - beta2) * g*g    second moment (running mean of g²)
    p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    weight_decay None is the class's default, PyTorch's: 0 for Adam, 0.01 for AdamW.
    """

    _decoupled = False
    _default_weight_decay = 0.0

    def __init__(
        self,
        params: Iterable[Value],
        lr: float = 0.001,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float | None = None,
    ) -> None:
        super().__init__(params, lr)
        what = type(self).__name__
        if weight_decay is None:
            weight_decay = self._default_weight_decay
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{what}: betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = (
            _check("betas[0]", betas[0], 0.0, 1.0, what=what),
            _check("betas[1]", betas[1], 0.0, 1.0, what=what),
        )
        self.eps = _check("eps", eps, 0.0, what=what)
        self.weight_decay = _check("weight_decay", weight_decay, 0.0, what=what)
        self.t = 0
        self._m = [0.0] * len(self.params)
        self._v = [0.0] * len(self.params)

    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        lr, wd, eps = self.lr, self.weight_decay, self.eps
        step_size = lr / (1 - b1**self.t)
        bc2_sqrt = math.sqrt(1 - b2**self.t)
        m, v = self._m, self._v
        for i, p in enumerate(self.params):
            g = p.grad
            if wd:
                if self._decoupled:
                    p.data *= 1 - lr * wd
                else:
                    g = g + wd * p.data
            m[i] += (g - m[i]) * (1 - b1)  # PyTorch's lerp: the same as b1*m + (1-b1)*g
            v[i] = v[i] * b2 + (1 - b2) * (g * g)
            p.data -= step_size * (m[i] / (math.sqrt(v[i]) / bc2_sqrt + eps))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr*weight_decay, then the
    Adam step on the raw gradient. PyTorch's default weight_decay for AdamW is 0.01."""

    _decoupled = True
    _default_weight_decay = 0.01


class LambdaLR:
    """lr = base_lr * lr_lambda(k) after k calls of `step()` (k = 0 at construction), as in
    PyTorch. Call `sched.step()` once per optimisation step, after `opt.step()`."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float]) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(self).__name__}: needs an Optimizer, got {type(optimizer).__name__}"
            )
        if not callable(lr_lambda):
            raise TypeError(f"{type(self).__name__}: lr_lambda must be callable, got {lr_lambda!r}")
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.lr_lambda = lr_lambda
        self.last_step = 0
        self._apply()

    def lr_at(self, k: int) -> float:
        return self.base_lr * self.lr_lambda(k)

    def _apply(self) -> None:
        lr = self.lr_at(self.last_step)
        if not lr >= 0:
            raise ValueError(
                f"{type(self).__name__}: the schedule gave lr={lr!r} at step {self.last_step}"
            )
        self.optimizer.lr = lr

    def step(self) -> None:
        self.last_step += 1
        self._apply()


class LinearDecay(LambdaLR):
    """lr goes linearly from `start` (step 0) towards `end` (at step `total_steps`):
    ``lr = start - (start - end) * k / total_steps``, held at `end` afterwards.

    ``LinearDecay(opt, 1.0, 0.1, 100)`` is karpathy's demo, ``lr = 1.0 - 0.9 * k / 100``, to the
    last bit. `start` defaults to the optimizer's lr.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start: float | None = None,
        end: float = 0.0,
        total_steps: int = 100,
    ) -> None:
        start = optimizer.lr if start is None else start
        self.start = _check("start", start, 0.0, what="LinearDecay")
        self.end = _check("end", end, 0.0, what="LinearDecay")
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"LinearDecay: total_steps must be an int >= 1, got {total_steps!r}")
        self.total_steps = total_steps
        super().__init__(optimizer, lambda k: 1.0)

    def lr_at(self, k: int) -> float:
        k = min(k, self.total_steps)
        return self.start - (self.start - self.end) * k / self.total_steps
