"""`grad` (micrograd.grad, micrograd.engine.grad): d output / d input for each input, returned
instead of stored in `.grad`; with ``create_graph=True`` as Values built by the ops' rules, to
differentiate again."""

from __future__ import annotations

from typing import Any

from .compiled import value_class
from .floats import DERIVATIVES
from .registry import OPS, op_kind
from .walk import local_derivatives, topological_order


def grad(output: Any, inputs: Any, create_graph: bool = False, allow_unused: bool = False) -> Any:
    """d output / d input for each input, returned; no `.grad` is touched.

    `inputs` is one Value (one gradient back) or a sequence (a tuple back). An input the output
    is not computed from is a ValueError naming it, as in PyTorch's ``torch.autograd.grad``;
    with ``allow_unused=True`` its gradient is None. (An input in the output's graph gets its
    gradient even where it is 0, as behind a ReLU at rest.) With ``create_graph=True`` the
    gradients are Values, built by the ops' rules, to differentiate again: for ``y = x ** 3`` at
    2, ``dy = grad(y, x, create_graph=True)`` is 3x² = 12 and ``grad(dy, x)`` is 6x = 12.
    """
    if not hasattr(output, "_prev"):
        raise TypeError(f"grad: output must be a Value, got {type(output).__name__} {output!r}")
    single = hasattr(inputs, "_prev")
    xs = [inputs] if single else list(inputs)
    for x in xs:
        if not hasattr(x, "_prev"):
            raise TypeError(f"grad: inputs must be Values, got {type(x).__name__} {x!r}")
    Value = value_class(output)  # the Value class (output may be a subclass)
    grads: dict[Value, object] = {output: Value(1.0) if create_graph else 1.0}
    topo = topological_order(output)
    active, DERIVATIVES.active = DERIVATIVES.active, create_graph or DERIVATIVES.active
    try:
        for v in reversed(topo):
            g = grads.get(v)
            if g is None or not v._prev:
                continue
            if create_graph and op_kind(v) in OPS:
                local = OPS[op_kind(v)].on_values(v)  # the op's rule, on Values
            elif create_graph or callable(v._local):
                raise NotImplementedError(
                    f"grad: node {v!r} (op {v._op!r}) has no registered "
                    f"rule; use .backward() for it"
                )
            else:
                local = local_derivatives(v)
            for child, d in zip(v._prev, local):
                prev = grads.get(child)
                grads[child] = d * g if prev is None else prev + d * g
    finally:
        DERIVATIVES.active = active
    reached = set(topo) if any(x not in grads for x in xs) else ()
    zero = Value(0.0) if create_graph else 0.0  # reached, but no gradient flows back to it
    for i, x in enumerate(xs):
        if x not in grads and x not in reached and not allow_unused:
            which = "the input" if single else f"input {i}"
            raise ValueError(
                f"grad: {which} {x!r} is not used to compute the output {output!r}; "
                f"pass allow_unused=True to get None for it"
            )
    result = tuple(grads.get(x, zero if x in reached else None) for x in xs)
    return result[0] if single else result
