"""Gradient checking: compare backpropagated gradients with central finite differences.

The lecture's `lol()` idea as a library feature: nudge each input by ±h, watch the output move,
and the slope (f(x+h) - f(x-h)) / 2h must agree with what `backward` computed. Use it to test an
op you wrote yourself, or to convince yourself the engine is right.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .engine import Value

Fn = Callable[..., Value]


def numerical_grad(f: Fn, inputs: Sequence[float | Value], h: float = 1e-6) -> list[float]:
    """Central differences: ∂f/∂x_i ≈ (f(..., x_i + h, ...) - f(..., x_i - h, ...)) / 2h.

    `f` takes one Value per input and returns a Value; its error is O(h²).
    """
    xs = _numbers(inputs)
    slopes = []
    for i in range(len(xs)):
        up = xs.copy()
        down = xs.copy()
        up[i] += h
        down[i] -= h
        f_up = _call(f, up).data
        f_down = _call(f, down).data
        slopes.append((f_up - f_down) / (2 * h))
    return slopes


def analytic_grad(f: Fn, inputs: Sequence[float | Value]) -> list[float]:
    """The gradient of f at `inputs` by backpropagation."""
    xs = [Value(x) for x in _numbers(inputs)]
    out = _call_values(f, xs)
    out.backward()  # backward(), not grad(): it also runs a learner's own `_backward` closures
    return [x.grad for x in xs]


def gradcheck(
    f: Fn,
    inputs: Sequence[float | Value],
    h: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    raise_exception: bool = True,
) -> bool:
    """True when backprop and central differences agree at `inputs` for every input.

    Otherwise raises ValueError naming the input and both numbers (or returns False when
    ``raise_exception=False``).

    >>> gradcheck(lambda a, b: (a * b + a).tanh(), [0.3, -1.2])
    True
    """
    analytic = analytic_grad(f, inputs)
    numeric = numerical_grad(f, inputs, h)
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        if not math.isclose(a, n, rel_tol=rtol, abs_tol=atol):
            if raise_exception:
                raise ValueError(
                    f"gradcheck: d/d(input {i}) at {list(inputs)}: backprop gives {a!r}, "
                    f"central differences give {n!r}"
                )
            return False
    return True


def _numbers(inputs: Sequence[float | Value]) -> list[float]:
    # The point to check at: numbers, or Values (their .data), as a learner may pass either.
    return [x.data if isinstance(x, Value) else Value(x).data for x in inputs]


def _call(f: Fn, xs: list[float]) -> Value:
    return _call_values(f, [Value(x) for x in xs])


def _call_values(f: Fn, xs: list[Value]) -> Value:
    out = f(*xs)
    if not isinstance(out, Value):
        raise TypeError(f"gradcheck: f must return a Value, got {type(out).__name__} {out!r}")
    return out
