"""Walking a computation graph: `topological_order` (children before parents, the order
`Value.backward()` walks) and `backward_step` (the chain rule at one node, as backward() applies
it to each; backward()'s own loop is in engine.py).

Nodes are anything with the lecture's fields (`_prev`, `_op`, `grad`) and `_local`, the local
derivatives an op stored: `Value` (micrograd/engine.py), which imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def topological_order(root: Any, leaves: bool = True) -> list[Any]:
    """Every node `root` depends on, children before parents: the lecture's build_topo
    (backward()'s first step), a post-order depth-first walk, with an explicit stack so that
    depth is limited only by memory; children in tuple order. Each node's `_visit` holds a
    fresh token of this walk.
    ``leaves=False`` leaves out the leaves below `root` (no children, no hand-written
    `_backward`): backward() has no chain rule to apply there."""
    opened, done = object(), object()
    topo: list[Any] = []
    stack = [root]
    while stack:
        v = stack.pop()
        if v._visit is done:
            continue
        if v._visit is opened:  # second time here: all of v's children are done
            v._visit = done
            topo.append(v)
            continue
        v._visit = opened
        stack.append(v)
        for child in reversed(v._prev):
            if child._visit is not done and (leaves or child._prev or child._local):
                stack.append(child)
    return topo


def backward_step(v: Any) -> list[tuple[Any, float, float]]:
    """The chain rule at one node, as backward() applies it to each: every child's ``grad +=
    local derivative * v.grad``, children in order. Returns (child, local derivative, the child's
    grad after) for each, for whoever shows the step (the playground's chain-rule log).

    """
    g = v.grad
    steps = []
    for child, d in zip(v._prev, local_derivatives(v)):
        child.grad += d * g
        steps.append((child, d, child.grad))
    return steps


def local_derivatives(v: Any) -> Sequence[float]:
    """`v._local` as backward() and grad() both use it: a sequence with one local derivative per
    child (a tuple, or a list given by hand), or empty (the gradient stops there, as with the
    lecture's default `_backward`); anything else is refused, the same way by both."""
    local = v._local
    if not isinstance(local, Sequence) and isinstance(local, Iterable):
        local = tuple(local)  # e.g. a numpy array
    if isinstance(local, (str, bytes)) or not isinstance(local, Sequence):
        raise TypeError(
            f"node {v!r} (op {v._op!r}): _local must be a sequence of local derivatives, one "
            f"per child (or a callable _backward), got {type(local).__name__} {local!r}"
        )
    if local and len(local) != len(v._prev):
        raise ValueError(
            f"node {v!r} (op {v._op!r}) has {len(local)} local derivatives for "
            f"{len(v._prev)} children"
        )
    return local
