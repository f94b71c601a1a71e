"""A softmax followed by cross-entropy, found in a graph, for Predict each grad (predict.py).

Written out in the expression language (the explorer's example "Softmax and cross-entropy"):

    e1 = exp(z1); e2 = exp(z2); e3 = exp(z3); s = e1 + e2 + e3
    p1 = e1/s; ...; L = -(y1*log(p1) + y2*log(p2) + y3*log(p3))

each logit's grad is pᵢ − yᵢ, the shortcut every course gives and a GPT's last step uses. A
learner who knows it but keeps one half types pᵢ alone (the target's part, −yᵢ, forgotten) or
−yᵢ alone (the softmax's part, pᵢ, forgotten: zᵢ reaches L through every p, by the sum s).
`logit(z, e, ...)` recognises zᵢ at its exp node and says what pᵢ and yᵢ are there, by name and
number, so that `predict.diagnose` can name those two mistakes. It is found by the graph's shape
(exp, the sum of exps, the division by it, log, the target's factor) and kept only if the step's
own answer is pᵢ − yᵢ: any other loss after the softmax (an attention head's) gets nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...engine import Value, op_kind

AGREE = 1e-9  # the step's grad and pᵢ − yᵢ, computed apart, agree to this (relative)


@dataclass(frozen=True)
class Logit:
    """A logit zᵢ of a softmax with cross-entropy: pᵢ and the target yᵢ, by name and number."""

    p: float
    p_name: str  # the node pᵢ = eᵢ/s, as a formula writes it
    y: float
    y_name: str  # the target's leaf (y1), or "y" where the loss has no leaf for it
    sum_name: str  # s, the sum of exps every pᵢ divides by


def _terms(s: Value) -> list[Value]:
    """What a chain of + (or one sum) adds up: s = e1 + e2 + e3 gives [e1, e2, e3]."""
    terms, todo = [], [s]
    while todo:
        v = todo.pop()
        if v._prev and op_kind(v) in ("+", "sum"):
            todo.extend(reversed(v._prev))
        else:
            terms.append(v)
    return terms


def _other(v: Value, child: Value) -> Value | None:
    """The other factor of a product `v` of `child` and one more node; None if `v` is not one."""
    if op_kind(v) != "*" or len(v._prev) != 2 or child not in v._prev:
        return None
    a, b = v._prev
    return b if a is child else a


def _targets(p: Value, consumers: dict[Value, list[Value]]) -> list[tuple[float, Value | None]]:
    """What yᵢ may be, by the loss's shape: a leaf that multiplies log(pᵢ) (y1 of y1*log(p1); or
    the -1 of -log(p2)), else 1 where log(pᵢ) is taken (−log pₜ), 0 where it is not (a class
    the loss does not name). The caller keeps the one the step's numbers agree with."""
    logs = [u for u in consumers.get(p, []) if op_kind(u) == "log"]
    if not logs:
        return [(0.0, None)]
    leaves = [_other(u, logs[0]) for u in consumers.get(logs[0], [])]
    return [(y.data, y) for y in leaves if y is not None and not y._prev] + [(1.0, None)]


def logit(
    z: Value,
    e: Value,
    term: float,
    consumers: dict[Value, list[Value]],
    name: Callable[[Value], str],
) -> Logit | None:
    """zᵢ, at the step of its exp node `e`, if the graph is a softmax with cross-entropy there and
    `term`, what the step adds to zᵢ's grad, is pᵢ − yᵢ; else None."""
    if not isinstance(e, Value) or op_kind(e) != "exp" or e._prev != (z,):
        return None
    for p in consumers.get(e, []):
        inverse = _other(p, e)
        if inverse is None or op_kind(inverse) != "**p" or getattr(inverse, "_p", None) != -1:
            continue
        (s,) = inverse._prev
        terms = _terms(s)
        if e not in terms or any(op_kind(t) != "exp" for t in terms):
            continue
        for y, leaf in _targets(p, consumers):
            if abs(term - (p.data - y)) <= AGREE * max(1.0, abs(term)):
                return Logit(p.data, name(p), y, name(leaf) if leaf is not None else "y", name(s))
        return None  # another loss after the softmax: p − y is not its grad
    return None


def consumers_of(topo: list[Value]) -> dict[Value, list[Value]]:
    """Each node's parents: the nodes that take it as an input, in topological order."""
    out: dict[Value, list[Value]] = {}
    for v in topo:
        for c in dict.fromkeys(v._prev):
            out.setdefault(c, []).append(v)
    return out
