"""The one list of mistakes a grad can show: what a wrong number for one grad suggests, in one
line, from the numbers of its chain-rule step (`diagnose`). The explorer's Predict mode
(`playground/explore/predict.py`) and the course notebooks' checks of grads (`check/notebook.py`)
both name a mistake from here, in the same words: a softmax's logit given pᵢ alone or −yᵢ alone (the
explorer finds the softmax: playground/explore/softmax.py), the local derivative alone, out.grad
alone (each plus the grad so far), the other factor of a product, this path's term with the wrong
sign, a second path forgotten (``b = a + a``: a.grad = 1), one use's share alone, a grad from
another path replaced rather than added to, the grad left unchanged; else "not yet: try Hint" (or,
the hints used up, what they give). `mistake` is the list alone: the explorer on a learner's own
Value (`playground/explore/foreign.py`) names with it what their `_backward` did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine import Value
from ..viz.formatting import format_number as fmt

TOLERANCE = 5e-5  # an answer within this of the grad (relative, beyond ±1) is right
TOLERANCE_TEXT = (
    "to 4 decimals (beyond ±1: within 0.005%), or as the 4-decimal numbers shown give it"
)
CLOSE = 1e-2  # within this (relative) but not right: say it is close


@dataclass(frozen=True)
class Question:
    """One grad to predict: `child`'s grad after the step at `parent` (None: the seed)."""

    child: Value
    name: str  # the child as a formula writes it: c, (x1*w1)
    parent: Value | None
    out: str  # the parent's name, as a formula writes it
    op: str
    want: float  # the grad after the step
    had: float  # the grad before it (another path's share, or 0)
    local: float  # ∂out/∂child along one path
    formula: str | None
    out_grad: float
    paths: int  # how many times the child is an input of the parent
    other: str | None = None  # a product's other factor: its name (a * b asked for a: "b")
    own: float | None = None  # ... and the child's own data (the swapped factor's number)
    product: str = ""  # the product as written: a·b
    shown: float = 1.0  # `want` worked out from the numbers as shown (4 decimals): also right
    logit: Any = None  # a softmax's logit under cross-entropy (pᵢ − yᵢ): playground.softmax.Logit


def near(x: float, y: float, tol: float = TOLERANCE) -> bool:
    return abs(x - y) <= tol * max(1.0, abs(y))


def diagnose(q: Question, x: float, level: int = 0) -> str:
    """What an answer `x` that is not `q.want` suggests, in one line, without the answer. `level`:
    the hints shown (both: the fallback points to them, not to a Hint button used up)."""
    out = q.out
    if q.parent is None:
        if level >= 2:
            return f"not yet: the hints above say it ({out}.grad is where the backward pass starts)"
        return f"not yet: try Hint ({out}.grad is where the backward pass starts)"
    named = mistake(q, x)
    if named is not None:
        return named
    if near(x, q.want, CLOSE):
        return (
            "close, but not to 4 decimals: multiply the numbers as shown, rounding only the result"
        )
    if level >= 2:
        return (
            f"not yet: the hints above give both factors: ∂{out}/∂{q.name} × {out}.grad, "
            f"plus {q.name}.grad so far"
        )
    return "not yet: try Hint"


def mistake(q: Question, x: float) -> str | None:
    """The mistake of the list that a grad `x` after the step of `q` (not the seed's) shows, in
    one line; None when it is none of them. For a learner's answer (Predict, a notebook's check)
    and a learner's `_backward` run on known grads (the explorer on their own Value) alike."""
    kid, out, g, d, had = q.name, q.out, q.out_grad, q.local, q.had
    term = q.want - had  # what this step adds to the child's grad (every path of it)

    def looks(*ys: float) -> bool:
        return any(near(x, y) and not near(y, q.want) for y in ys)

    z = q.logit  # the shortcut pᵢ − yᵢ, with one of its halves left out
    if z is not None and looks(had + z.p, had + float(fmt(z.p))):
        return (
            f"that is {z.p_name} alone, the softmax's part: it leaves out −{z.y_name}, the "
            f"target's part (here {z.y_name} = {fmt(z.y)})"
        )
    if z is not None and looks(had - z.y):
        return (
            f"that is −{z.y_name} alone, the target's part: it leaves out {z.p_name}, the "
            f"softmax's part ({kid} is in every p through the sum {z.sum_name}, so its grad has "
            f"{z.p_name} whatever the target)"
        )
    if q.paths > 1 and looks(had + d * g):
        times = "twice" if q.paths == 2 else f"{q.paths} times"
        shown = f" {q.op} ".join([kid] * q.paths)
        return (
            f"{kid} is used {times}: {out} = {shown} adds a grad along each path (+=, once per use)"
        )
    if had != 0 and q.paths > 1 and looks(d * g):
        times = "twice" if q.paths == 2 else f"{q.paths} times"
        return (
            f"that is one use's share alone: {kid} is used {times}, and each use adds its "
            f"share onto {kid}.grad (+=), replacing nothing"
        )
    if had != 0 and looks(q.want - had):
        return (
            f"{kid} already has grad {fmt(had)}: this step adds onto it (+=), it does not "
            f"replace it"
        )
    if had != 0 and looks(had):
        return f"that is {kid}.grad unchanged: this step adds ∂{out}/∂{kid} × {out}.grad to it"
    if q.other is not None and q.own is not None and looks(had + q.own * g):
        return f"∂({q.product})/∂{kid} is {q.other}, the other factor, not {kid} itself"
    if looks(d):
        return f"that is ∂{out}/∂{kid} alone: the chain rule multiplies it by {out}.grad"
    if had != 0 and looks(had + d):
        return (
            f"that is {kid}.grad so far + ∂{out}/∂{kid}: the chain rule multiplies "
            f"∂{out}/∂{kid} by {out}.grad before adding"
        )
    if looks(g):
        return (
            f"that is {out}.grad alone: the chain rule multiplies it by ∂{out}/∂{kid}, "
            f"the local derivative"
        )
    if had != 0 and looks(had + g):
        return (
            f"that is {kid}.grad so far + {out}.grad: the chain rule multiplies {out}.grad "
            f"by ∂{out}/∂{kid}, the local derivative, before adding"
        )
    if looks(had - term):  # this path's term, ∂out/∂kid × out.grad, with its sign flipped
        what = (
            "the size is right but not the sign"
            if had == 0
            else "the size of this path's term is right but not its sign"
        )
        return f"{what}: look again at the signs of ∂{out}/∂{kid} and {out}.grad"
    return None
