"""Walking a computation graph: `topological_order` (children before parents), `backward_step`
(the chain rule at one node) and `chain_rule` (it at every node, children last: the loop of
`Value.backward()`).

Nodes are anything with the lecture's fields (`_prev`, `_op`, `grad`) and `_local`, the local
derivatives an op stored: `Value` (micrograd/engine.py), which imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def topological_order(root: Any, leaves: bool = True) -> list[Any]:
    """Every node `root` depends on, children before parents (a post-order depth-first walk).

    Iterative, with an explicit stack, so depth is limited only by memory; deterministic, because
    children are visited in tuple order. Each node's `_visit` is set to a fresh token per walk.
    ``leaves=False`` leaves out the leaves below `root` (no children, no hand-written `_backward`):
    backward() has no chain rule to apply there, and a node with thousands of parameters as
    children is then walked in two thirds of the time.
    """
    opened, done = object(), object()
    topo: list[Any] = []
    stack = [root]
    while stack:
        v = stack.pop()
        mark = v._visit
        if mark is done:
            continue
        if mark is opened:  # second time here: all of v's children are done
            v._visit = done
            topo.append(v)
            continue
        v._visit = opened
        stack.append(v)
        if leaves:
            for child in reversed(v._prev):
                if child._visit is not done:
                    stack.append(child)
        else:  # a leaf below with a hand-written _backward (or stray _local) stays in
            for child in reversed(v._prev):
                if (child._prev or child._local) and child._visit is not done:
                    stack.append(child)
    return topo


def backward_step(v: Any) -> list[tuple[Any, float, float]]:
    """The chain rule at one node, as backward() applies it to each: every child's ``grad +=
    local derivative * v.grad``, children in order. Returns (child, local derivative, the child's
    grad after) for each, for whoever shows the step (the playground's chain-rule log).

    `chain_rule` (backward()) runs this same update inline where it can.
    """
    g = v.grad
    steps = []
    for child, d in zip(v._prev, local_derivatives(v)):
        child.grad += d * g
        steps.append((child, d, child.grad))
    return steps


def chain_rule(topo: Sequence[Any]) -> None:
    """backward_step at every node of `topo` (children first), parents first: each node's grad
    is complete when its turn comes. The same update as backward_step, inline where the local
    derivatives are a tuple (every node micrograd builds: a call per node would cost a third of
    the time); a hand-written `_backward` is called."""
    for v in reversed(topo):
        local = v._local
        if type(local) is tuple:
            g = v.grad
            n = len(local)
            if n == 2 and len(v._prev) == 2:  # unpacking beats a zip loop (and adds in order)
                a, b = v._prev
                da, db = local
                a.grad += da * g
                b.grad += db * g
            elif n == 1 and len(v._prev) == 1:
                v._prev[0].grad += local[0] * g
            elif n:  # a fused node's many children (a leaf has no local derivatives)
                if n != len(v._prev):
                    local_derivatives(v)  # raises: one local derivative per child, or it is wrong
                for child, d in zip(v._prev, local):
                    child.grad += d * g
        elif callable(local):
            local()
        else:  # a list (or other sequence) given by hand: the same chain rule as a tuple
            backward_step(v)


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
