"""Trace once, replay vectorised over a batch: write scalar code for one sample, train on a batch.

    import numpy as np
    from micrograd import MLP, Value, jit
    model = MLP(2, [16, 16, 1])
    f = jit(lambda x, y: (1 + -y * model(x)).relu())   # ordinary per-sample micrograd code
    loss = f(X, y)             # X: (B, 2), y: (B,) arrays -> one Value, the mean over the batch
    params = model.parameters()
    total = loss + 1e-4 * Value.dot(params, params)    # composes with eager code
    total.backward()           # every parameter's .grad, as the eager graph over the batch gives
    f.outputs(X, y)            # per-sample values only (no gradients), e.g. for accuracy

Why it is shaped so. A learner's code stays scalar micrograd; only the batch loop moves into
numpy. The first call *traces* `fn` on one sample (`micrograd.tracing`): the graph it builds, its
captured Values (parameters, read afresh on every call, so an optimiser step needs no retrace),
and a guard for every Python decision it takes on a number read from a Value (``if x.data >
0``). The graph becomes a few numpy steps, one per group of same-kind nodes at the same depth (a
layer of fused neurons is one matrix product); each call runs them over the whole batch, checks
the guards on every sample (a batch that moved to another path as a whole is traced again; one
whose samples disagree raises `TraceError` naming a sample: never a silent wrong answer), runs a
vectorised reverse pass, and returns one `Value` with op 'jit' whose children are the captured
Values and whose local derivatives are the batch's gradients: ``backward()`` takes it from there.

numpy is imported on first use (``pip install numpy``); importing this module does
not import it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ._callable import make_callable
from .engine import OPS, Value, op_kind
from .registry import array_module
from .tracing import COMPARISONS, Guard, Trace, TraceError, number, numbers_of, record

if TYPE_CHECKING:
    from numpy import ndarray

__all__ = ["jit", "Jitted", "TraceError"]

np: Any = None  # numpy, bound by _numpy() on first use so `import micrograd` stays numpy-free
xp: Any = None  # the array module the ops' rules run on here: numpy, bound with it

REDUCES = ("mean", "sum")


def _numpy() -> Any:
    global np, xp
    if np is None:
        try:
            import numpy
        except ImportError:
            raise ImportError(
                "micrograd.jit needs numpy: pip install numpy (in a clone of micrograd: "
                "pip install -e '.[jit]')"
            ) from None
        np, xp = numpy, array_module(numpy)
    return np


# ------------------------------------------------------------------------- the op table
# Each elementwise op runs by its own two rules from the registry (engine.OPS, read live: an op
# registered after import is compiled too), `forward` and `local`, on numpy (`xp`). Arrays are
# (nodes, batch) blocks, or (nodes, 1) for a child that is the same for every sample (a parameter
# or constant). `p` is the op's own number (the exponent of '**p'), else None. numpy's
# floating-point warnings are silenced around the whole replay: where the engine raises, the
# rules give inf or NaN, and `Jitted._explain` then runs each sample holding one through the
# engine, which raises its own error (see `_nonfinite_samples`). Ops of many children declare
# what they compute (`OpInfo.kernel`) and are batched whole (see _group_nodes): a 'weighted
# sum' b + Σ w·x (d/dw = x, d/dx = w, d/db = 1) and a 'sum' (every slope 1).


def _elementwise(kind: str) -> tuple[int, Callable[..., Any], Callable[..., tuple]] | None:
    """(arity, forward(p, *children), local(p, out, *children)) of op `kind` on numpy arrays,
    or None if it is no elementwise op."""
    info = OPS.get(kind)
    if info is None or info.forward is None:
        return None
    fwd, local = info.forward, info.local
    if info.param:  # the op's own number (the exponent of '**p') is the rules' last argument
        return 1, lambda p, a: fwd(xp, a, p), lambda p, out, a: local(xp, out, a, p)
    if info.arity == 1:
        return 1, lambda p, a: fwd(xp, a), lambda p, out, a: local(xp, out, a)
    return 2, lambda p, a, b: fwd(xp, a, b), lambda p, out, a, b: local(xp, out, a, b)


def _is_one(d: Any) -> bool:
    # A local derivative of exactly 1 (a plain float, as '+' gives): the gradient passes through.
    return type(d) is float and d == 1.0


def _nothing(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
    """The backward step of nodes whose gradient goes nowhere (they read inputs and constants
    only); the program leaves it out."""


def _multiply(d: Any, g: Any) -> Any:
    return d * g


def _multiply_in_place(d: Any, g: Any) -> Any:
    """d * g for a local derivative d and a gradient g: into d itself when d is an array the rule
    has just made (a fresh result, not a view of values: one big temporary fewer per step)."""
    if type(d) is np.ndarray and d.base is None and d.shape == g.shape:
        return np.multiply(d, g, out=d)
    return d * g


def _nonfinite_samples(values: Any) -> list[int]:
    """Samples (columns of `values`) holding a NaN or ±inf somewhere. Where the engine raises
    (overflow, log of a negative number, ...) the rules give inf or NaN, so only these samples
    can be errors;
    a NaN or inf put in propagates instead. Cheap when all is finite (one sum)."""
    if np.isfinite(values.sum()):
        return []
    return np.flatnonzero(~np.isfinite(values).all(0)).tolist()


# ------------------------------------------------------------------------- the traced graph

class Ref(NamedTuple):
    """How a node refers to a child: its `kind` and `index` among its kind. 'input': the
    sample's number k; 'captured': a Value that existed before the call (a parameter), read
    afresh on every call; 'constant': a number made inside fn; 'node': the j-th interior node;
    'prelude': the i-th node computed once per call (it reads no input: the same for every
    sample)."""

    kind: str
    index: int


_SCALAR = ("captured", "constant", "prelude")  # the same for every sample: read from `scalars`


def _op_of(v: Value) -> tuple[str, float | None]:
    """A node's op kind (an elementwise op's, or 'dot' / 'sum') and its declared parameter (the
    exponent of '**p'), else None."""
    kind = op_kind(v)
    info = OPS.get(kind)
    return kind, (info.parameter(v) if info is not None else None)


def _walk(roots: Sequence[Value], inside: set[Value]) -> list[Value]:
    """The nodes the roots depend on, children first, not descending below nodes not `inside`
    (Values that existed before the call: the program reads them, it does not recompute them)."""
    order: list[Value] = []
    seen: set[Value] = set()
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        v, children_done = stack.pop()
        if children_done:
            order.append(v)
            continue
        if v in seen:
            continue
        seen.add(v)
        stack.append((v, True))
        if v in inside:
            stack.extend((c, False) for c in reversed(v._prev) if c not in seen)
    return order


def _sum_chains(
    order: list[Value], created: set[Value], kept: set[Value]
) -> dict[Value, list[Value] | None]:
    """Chains of + that Python's ``sum(...)`` builds (``((0 + t0) + t1) + t2 ...``, each partial
    sum used once, by the next +), as one 'sum' node of all the terms: the last node of a chain
    maps to its terms, the partial sums inside it to None. A chain of 674 nodes (an L2 term written
    ``sum(p*p for p in params)`` inside fn) is then one step instead of 674 steps of one node.
    The terms are added in the chain's order, so the sums are the same to the last bit (a + b and
    b + a are the same float). `kept`: nodes read from outside (the output, guard operands)."""
    uses: dict[Value, int] = {}
    for v in order:
        if v in created:
            for c in v._prev:
                uses[c] = uses.get(c, 0) + 1
    def is_plus(v: Value) -> bool:  # an engine + node made inside fn
        return v in created and op_kind(v) == "+" and type(v._local) is tuple

    terms: dict[Value, list[Value] | None] = {}
    for v in order:  # children first: a partial sum is seen before the + that continues it
        if not is_plus(v):
            continue
        a, b = v._prev
        for acc, t in ((a, b), (b, a)):
            if is_plus(acc) and uses[acc] == 1 and acc not in kept:
                terms[v] = [*(terms.get(acc) or acc._prev), t]
                terms[acc] = None
                break
    return terms


class _Graph:
    """A trace as a program: interior nodes (kind, exponent, child refs) children first, the
    captured Values, the constants, the output's ref, and the guards with refs for operands."""

    def __init__(self, tr: Trace) -> None:
        inputs = {v: k for k, v in enumerate(tr.placeholders)}
        ref: dict[Value, Ref] = {}
        self.captured: list[Value] = []
        self.consts: list[float] = []
        self.nodes: list[tuple[str, float | None, tuple[Ref, ...]]] = []

        def of(v: Value) -> Ref:
            r = ref.get(v)
            if r is None:  # a Value that existed before the call: a parameter, or a graph
                r = ref[v] = Ref("captured", len(self.captured))  # built earlier; read afresh
                self.captured.append(v)
            return r

        def constant(x: float) -> Ref:
            self.consts.append(x)
            return Ref("constant", len(self.consts) - 1)

        operands = [v for g in tr.guards for v in (g.a, g.b) if isinstance(v, Value)]
        order = _walk([tr.out, *operands], tr.created)
        terms = _sum_chains(order, tr.created, kept={tr.out, *operands})
        for v in order:
            if v in inputs:
                ref[v] = Ref("input", inputs[v])
            elif v not in tr.created:
                continue  # captured, when a node reads it
            elif not v._prev:
                ref[v] = constant(number(v))
            else:
                if callable(v._local):
                    raise NotImplementedError(
                        f"jit: node {v!r} (op {v._op!r}) has a hand-written _backward; jit "
                        f"replays only the engine's ops"
                    )
                if v in terms:
                    if terms[v] is None:
                        continue  # added up inside the chain's last node
                    self.nodes.append(("sum", None, tuple(of(c) for c in terms[v])))
                else:
                    kind, p = _op_of(v)
                    self.nodes.append((kind, p, tuple(of(c) for c in v._prev)))
                ref[v] = Ref("node", len(self.nodes) - 1)
        self.out = of(tr.out)
        self.n_inputs = len(tr.placeholders)
        # (the guard without its nodes, so the traced graph can be freed; a's ref; b's ref)
        self.guards = [
            (Guard(g.kind, None, None, g.expected, g.where, g.text), of(g.a),
             None if g.b is None else of(g.b) if isinstance(g.b, Value) else constant(g.b))
            for g in tr.guards
        ]  # fmt: skip
        # per node: does a gradient flow from it to a captured Value? (not from a node of inputs
        # and constants alone, such as -y: its backward step would be wasted work)
        self.wants: list[bool] = []
        for _, _, refs in self.nodes:
            self.wants.append(any(r.kind == "captured" or r.kind == "node" and self.wants[r.index]
                                  for r in refs))
        self.prelude = self._split_off_the_same_for_every_sample()

    def _split_off_the_same_for_every_sample(self) -> _Graph | None:
        """Nodes that read no input (an L2 term of the parameters written inside fn) give the same
        number for every sample: they move to a graph of their own, run once per call with a
        batch of one, and the rest reads them as scalars, Ref('prelude', i), as it reads
        parameters. Returns that graph (no inputs, no guards, no output), or None if there are
        no such nodes."""
        same: list[bool] = []  # children first, so a child's answer is known
        for _, _, refs in self.nodes:
            same.append(all(r.kind in ("captured", "constant") or r.kind == "node" and same[r.index]
                             for r in refs))
        if not any(same):
            return None
        new: dict[int, Ref] = {}  # old node index -> ('u', i) or ('n', j)
        kept: list = []
        pre = _Graph.__new__(_Graph)
        pre.captured, pre.consts, pre.nodes = self.captured, self.consts, []
        pre.n_inputs, pre.guards, pre.out, pre.prelude = 0, [], None, None
        pre.wants = [w for w, same_j in zip(self.wants, same) if same_j]
        self.wants = [w for w, same_j in zip(self.wants, same) if not same_j]

        def moved(r: Ref, inside: bool) -> Ref:
            if r.kind != "node":
                return r
            to = new[r.index]
            return Ref("node", to.index) if inside and to.kind == "prelude" else to

        for j, (kind, p, refs) in enumerate(self.nodes):
            if same[j]:
                pre.nodes.append((kind, p, tuple(moved(r, True) for r in refs)))
                new[j] = Ref("prelude", len(pre.nodes) - 1)
            else:
                kept.append((kind, p, tuple(moved(r, False) for r in refs)))
                new[j] = Ref("node", len(kept) - 1)
        self.nodes = kept
        self.out = moved(self.out, False)
        self.guards = [(guard, moved(a, False), None if b is None else moved(b, False))
                       for guard, a, b in self.guards]  # fmt: skip
        return pre


# ------------------------------------------------------------------------- planning
# A program is a list of numpy steps over four arrays: `values`, (rows, batch), one row per input,
# per interior node, and per captured Value or constant that a step reads as a row; `grads`, the
# gradient of the output at each of those; `scalars`, the numbers that are the same for every
# sample (captured Values, constants, prelude nodes), and `scalar_grads`, theirs summed over the
# batch. Nodes of the same kind at the same depth run as one step: a layer's 16 ReLUs are one
# numpy operation, its 16 fused neurons reading the same inputs one matrix product.


def _is_scalar(r: Ref) -> bool:
    return r.kind in _SCALAR


class Step(NamedTuple):
    """What the nodes of one numpy step share: their `depth` in the graph and their `kernel`:
    an elementwise op's kind ('tanh', '**p', with its number as `param`), or one of jit's own:
    'matrix product' (weighted sums whose weights and bias are the same for every sample, all
    reading the same `inputs` as x: a layer), 'weighted sums' (weights that vary per sample),
    'sums'; `size` is the number of terms of each sum."""

    depth: int
    kernel: str
    size: int = 0
    param: float | None = None
    inputs: tuple[Ref, ...] = ()


def _group_nodes(g: _Graph) -> list[tuple[Step, list[int]]]:
    """Nodes grouped into steps, in an order that runs every node after its children."""
    depth: list[int] = []
    groups: dict[Step, list[int]] = {}
    for j, (kind, p, refs) in enumerate(g.nodes):
        d = 1 + max((depth[r.index] for r in refs if r.kind == "node"), default=0)
        depth.append(d)
        kernel = OPS[kind].kernel if kind in OPS else ""  # what a many-child op computes
        if kernel == "weighted sum":
            n = (len(refs) - 1) // 2
            if len(refs) != 2 * n + 1:
                raise NotImplementedError(f"jit: a {kind!r} node needs 2n+1 children, got {refs}")
            w, x, b = refs[:n], refs[n : 2 * n], refs[-1]
            if _is_scalar(b) and all(map(_is_scalar, w)):
                step = Step(d, "matrix product", n, inputs=x)  # weights fixed per call
            elif _is_scalar(b) and all(map(_is_scalar, x)):
                step = Step(d, "matrix product", n, inputs=w)  # the same, w and x swapped
            else:
                step = Step(d, "weighted sums", n)  # weights that vary per sample
        elif kernel == "sum":
            step = Step(d, "sums", len(refs))
        elif (rules := _elementwise(kind)) is not None:
            if rules[0] != len(refs):
                raise NotImplementedError(
                    f"jit: op {kind!r} with {len(refs)} children is not an engine op"
                )
            step = Step(d, kind, param=p)
        else:
            raise NotImplementedError(
                f"jit: no vectorised rule for op {kind!r}; jit knows "
                f"{', '.join(k for k, info in OPS.items() if info.forward or info.kernel)}"
            )
        groups.setdefault(step, []).append(j)
    return sorted(groups.items(), key=lambda group: group[0].depth)  # stable: by depth


class _Layout:
    """Where everything lives: rows of `values` (inputs first, then the captured Values and
    constants that are read as rows, then the nodes step by step) and entries of `scalars`
    (captured, constants, prelude nodes)."""

    def __init__(self, g: _Graph, groups: list[tuple[Step, list[int]]]) -> None:
        self.graph = g
        self.n_captured = len(g.captured)
        self.n_consts = len(g.consts)
        self.row: dict[Ref, int] = {Ref("input", k): k for k in range(g.n_inputs)}
        as_rows: dict[int, None] = {}  # scalars read as rows, in first-use order

        def read_as_rows(refs: Sequence[Ref | None]) -> None:
            for r in refs:
                if r is not None and _is_scalar(r):
                    as_rows.setdefault(self.scalar(r), None)

        for step, members in groups:
            refs_of = [g.nodes[j][2] for j in members]
            if step.kernel == "matrix product":  # weights and bias come from scalars; x from rows
                read_as_rows(step.inputs)
            elif step.kernel in ("weighted sums", "sums"):
                read_as_rows([r for refs in refs_of for r in refs])
            else:  # a child position that is a scalar for every node is read from scalars
                for pos in zip(*refs_of):
                    if not all(map(_is_scalar, pos)):
                        read_as_rows(pos)
        read_as_rows([g.out])
        for _, a, b in g.guards:
            read_as_rows([a, b])

        first = g.n_inputs
        # rows first .. first+n hold the scalars `scalars_in_rows`, copied in before the steps
        self.scalar_rows = np.arange(first, first + len(as_rows), dtype=np.intp)
        self.scalars_in_rows = np.array(list(as_rows), dtype=np.intp)
        self.row_of_scalar = {s: int(r) for s, r in zip(as_rows, self.scalar_rows)}
        nxt = first + len(as_rows)
        for _, members in groups:
            for j in members:
                self.row[Ref("node", j)] = nxt
                nxt += 1
        self.n_rows = nxt

    def scalar(self, r: Ref) -> int:
        """The index in `scalars` of a captured Value, a constant or a prelude node (in that
        order)."""
        if r.kind == "captured":
            return r.index
        return self.n_captured + r.index + (self.n_consts if r.kind == "prelude" else 0)

    def row_of(self, r: Ref) -> int:
        return self.row_of_scalar[self.scalar(r)] if _is_scalar(r) else self.row[r]

    def wants(self, r: Ref) -> bool:
        """Does a gradient arriving at `r` go anywhere (to a captured Value)?"""
        if r.kind == "captured":
            return True
        if r.kind == "node":
            return self.graph.wants[r.index]
        if r.kind == "prelude":
            return self.graph.prelude.wants[r.index]  # type: ignore[union-attr]
        return False  # an input or a constant

    def operand(self, refs: Sequence[Ref], allow_scalar: bool) -> _Operand:
        if allow_scalar and all(map(_is_scalar, refs)):
            op = _Operand(scalars=[self.scalar(r) for r in refs])
        else:
            op = _Operand(rows=[self.row_of(r) for r in refs])
        op.wanted = any(map(self.wants, refs))
        return op

    def nodes(self, members: list[int]) -> slice:
        return slice(self.row[Ref("node", members[0])], self.row[Ref("node", members[-1])] + 1)


def _build_step(
    g: _Graph, step: Step, members: list[int], at: _Layout
) -> tuple[Callable, Callable]:
    """The forward and backward numpy functions of one group of nodes."""
    o = at.nodes(members)
    refs_of = [g.nodes[j][2] for j in members]
    n = step.size
    if step.kernel == "matrix product":
        x = step.inputs
        ws = [[at.scalar(r) for r in (refs[:n] if refs[n : 2 * n] == x else refs[n : 2 * n])]
              for refs in refs_of]  # fmt: skip
        bs = [at.scalar(refs[-1]) for refs in refs_of]
        return _dot_steps(o, np.array(ws, dtype=np.intp), bs, at.operand(x, False))
    if step.kernel == "weighted sums":
        cols = list(zip(*refs_of))
        return _general_dot_steps(
            o,
            n,
            at.operand([r for c in zip(*cols[:n]) for r in c], False),
            at.operand([r for c in zip(*cols[n : 2 * n]) for r in c], False),
            at.operand(cols[-1], False),
        )
    if step.kernel == "sums":
        flat = [r for refs in refs_of for r in refs]
        return _sum_steps(o, n, at.operand(flat, False))
    return _elementwise_steps(
        o, step.kernel, step.param, [at.operand(pos, True) for pos in zip(*refs_of)]
    )


# ------------------------------------------------------------------------- checking the guards
# Each guard is a decision fn took when tracing (tracing.Guard), its operands rows of values. After
# the forward steps, every guard is evaluated on every sample at once; a sample whose answer
# differs from the traced one would have built another graph.


class _Diverged(Exception):
    """A sample disagrees with guard `k` of the trace."""

    def __init__(self, k: int, sample: int, values: tuple[float, ...]) -> None:
        self.k, self.sample, self.values = k, sample, values


_GUARD_VALUE: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "bool": lambda a, b: a != 0,  # NaN is true, as in Python
    "int": lambda a, b: np.trunc(a),  # int(nan) and int(inf) raise: no sample can match them
    "floor": lambda a, b: np.floor(a),
    "ceil": lambda a, b: np.ceil(a),
    "round": lambda a, b: np.rint(a),  # half to even, as Python's round
    "is_integer": lambda a, b: np.isfinite(a) & (np.floor(a) == a),
    # the same text: equal, the same sign of zero, or both NaN
    "same": lambda a, b: ((a == b) & (np.signbit(a) == np.signbit(b)))
    | (np.isnan(a) & np.isnan(b)),
}  # fmt: skip


def _build_check(g: _Graph, at: _Layout) -> Callable[[Any], None]:
    """Check every guard over the batch, one numpy comparison per kind of guard (and, for yes/no
    guards, per expected answer): raise _Diverged for the first sample that disagrees."""
    groups: dict[tuple, list[int]] = {}
    for k, (guard, _, _) in enumerate(g.guards):
        yes_no = isinstance(guard.expected, bool)
        groups.setdefault((guard.kind, guard.expected if yes_no else None), []).append(k)
    checks = []
    for (kind, answer), ks in groups.items():
        a = np.array([at.row_of(g.guards[k][1]) for k in ks], dtype=np.intp)
        b = np.array([at.row_of(g.guards[k][2] or g.guards[k][1]) for k in ks], dtype=np.intp)
        if answer is None:  # int, floor, ...: compare with the numbers seen when tracing
            expected = np.array([float(g.guards[k][0].expected) for k in ks])[:, None]
        else:  # the samples that do not give the traced answer: False == value, or not value
            expected = None
        checks.append((_GUARD_VALUE[kind], answer, a, b, expected, ks))

    def check(values: Any) -> None:
        first = None
        for value, answer, a, b, expected, ks in checks:
            got = value(values[a], values[b])
            bad = got != expected if answer is None else ~got if answer else got
            if bad.any():
                i = int(bad.any(0).argmax())
                if first is None or i < first[1]:
                    row = int(bad[:, i].argmax())
                    first = (ks[row], i, (float(values[a[row], i]), float(values[b[row], i])))
        if first is not None:
            raise _Diverged(*first)

    return check


class _Program:
    """The compiled replay of one traced graph, for any batch size: the forward steps, the guard
    check, the backward steps."""

    def __init__(self, g: _Graph) -> None:
        self.graph = g
        self.n_inputs = g.n_inputs
        self.captured = g.captured
        self.consts = np.array(g.consts, dtype=float)
        self.prelude = None if g.prelude is None else _Program(g.prelude)
        n_same = 0 if g.prelude is None else len(g.prelude.nodes)
        self.n_scalars = len(g.captured) + len(g.consts) + n_same
        groups = _group_nodes(g)
        at = _Layout(g, groups)
        self.n_rows = at.n_rows
        self.scalar_rows, self.scalars_in_rows = at.scalar_rows, at.scalars_in_rows
        self.out_row = None if g.out is None else at.row_of(g.out)
        # (the prelude's rows of its nodes, in node order: copied into scalars after its forward)
        rows = [at.row[Ref("node", j)] for j in range(len(g.nodes))]
        self.node_rows = np.array(rows, dtype=np.intp)
        steps = [_build_step(g, step, members, at) for step, members in groups]
        self.forward = [f for f, _ in steps]
        self.backward = [b for _, b in steps if b is not _nothing]
        self.check = _build_check(g, at) if g.guards else None
        # The arrays of a call, kept for the next call of the same batch size: a big batch's values
        # and grads are tens of MB, and fresh ones cost page faults every step. Per thread, so two
        # threads can run one program at once.
        self._buffers = threading.local()

    def _arrays(self, B: int, keep: bool = True) -> tuple[Any, Any, Any, Any]:
        """(values, grads, scalars, scalar_grads) for a batch of B, reused from the last call of
        this size (this thread): values and scalars are written whole by every call, grads and
        scalar_grads are zeroed by the caller. With `keep` False (a forward pass only, such as a
        plot's grid of points): fresh values and scalars, no grads, nothing kept (a training step
        reuses its arrays; a picture need not hold megabytes)."""
        if not keep:
            return np.empty((self.n_rows, B)), None, np.empty(self.n_scalars), None
        kept: dict[int, tuple] | None = getattr(self._buffers, "by_size", None)
        if kept is None:
            kept = self._buffers.by_size = {}
        arrays = kept.get(B)
        if arrays is None:
            if len(kept) >= 2:  # e.g. a training batch and an evaluation batch; no more
                kept.clear()
            values, grads = np.empty((self.n_rows, B)), np.empty((self.n_rows, B))
            arrays = kept[B] = (values, grads, np.empty(self.n_scalars), np.empty(self.n_scalars))
        return arrays

    def run(
        self,
        arrays: Sequence[Any],
        B: int,
        seed: float | None,
        on_nonfinite: Callable[[list[int]], None] | None = None,
    ) -> tuple[Any, Any]:
        """Per-sample outputs, and (unless `seed` is None) the gradient of `seed` times their
        sum w.r.t. each captured Value. Raises _Diverged when a sample takes another path than
        the traced one; `on_nonfinite(samples)` hears of samples where an op made NaN or inf
        from finite numbers (where the engine raises)."""
        values, grads, scalars, scalar_grads = self._arrays(B, keep=seed is not None)
        r = 0
        for a in arrays:
            width = a.size // B
            if width:
                values[r : r + width] = a.reshape(B, width).T
            r += width
        C = len(self.captured)
        scalars[:C] = numbers_of(self.captured)  # current values: updates need no retrace
        K = C + len(self.consts)
        scalars[C:K] = self.consts
        pre = self.prelude
        with np.errstate(all="ignore"):  # inf and NaN are looked at below, as a whole
            if pre is not None:  # once for the batch: what every sample computes alike
                scalars[K:] = pre.forward_once(scalars, on_nonfinite)
            if len(self.scalar_rows):
                values[self.scalar_rows] = scalars[self.scalars_in_rows][:, None]
            for step in self.forward:
                step(values, scalars)
            if self.check is not None:
                self.check(values)
            if on_nonfinite is not None:
                bad = _nonfinite_samples(values)
                if bad:
                    on_nonfinite(bad)
            outs = values[self.out_row].copy()
            if seed is None:
                return outs, None
            grads.fill(0.0)
            grads[self.out_row] = seed
            scalar_grads.fill(0.0)
            for step in reversed(self.backward):
                step(values, grads, scalars, scalar_grads)
            if len(self.scalar_rows):
                # (each scalar once)
                scalar_grads[self.scalars_in_rows] += grads[self.scalar_rows].sum(1)
            if pre is not None:
                pre.backward_once(scalars, scalar_grads, scalar_grads[K:])
        return outs, scalar_grads[:C].copy()

    def forward_once(
        self, scalars: Any, on_nonfinite: Callable[[list[int]], None] | None
    ) -> Any:
        """The prelude's forward pass on a batch of one, reading and writing the caller's scalars;
        returns its nodes' values. A NaN or inf made here is made by every sample: sample 0
        says whether the engine raises."""
        values, _, _, _ = self._arrays(1)
        if len(self.scalar_rows):
            values[self.scalar_rows] = scalars[self.scalars_in_rows][:, None]
        for step in self.forward:
            step(values, scalars)
        node_values = values[self.node_rows, 0]
        if on_nonfinite is not None and not np.isfinite(node_values).all():
            on_nonfinite([0])
        return node_values

    def backward_once(self, scalars: Any, scalar_grads: Any, seeds: Any) -> None:
        """The prelude's backward pass: `seeds` are its nodes' gradients (summed over the batch
        by the main program); adds into scalar_grads for the captured Values."""
        values, grads, _, _ = self._arrays(1)
        grads.fill(0.0)
        grads[self.node_rows, 0] = seeds
        for step in reversed(self.backward):
            step(values, grads, scalars, scalar_grads)
        if len(self.scalar_rows):
            scalar_grads[self.scalars_in_rows] += grads[self.scalar_rows].sum(1)

    def explain(self, d: _Diverged, traced: int) -> str:
        guard = self.graph.guards[d.k][0]
        a, b = d.values
        if guard.kind in COMPARISONS:
            there = f"{a!r} {guard.kind} {b!r} is {not guard.expected}"
        else:
            there = f"the number is {a!r}"
        return (
            f"jit: fn takes another path for batch sample {d.sample} than for the traced "
            f"sample {traced}: at {guard.where}, `{guard.text}` was {guard.expected!r} when "
            f"tracing; for sample {d.sample}, {there}. One traced graph cannot stand for both: "
            f"keep data-dependent choices inside ops (relu, ...), or run fn eagerly."
        )


# ------------------------------------------------------------------------- numpy steps


class _Operand:
    """One child position across a group of nodes: rows of `values` (one per node), or entries
    of `scalars`, the captured values and constants (the same for every sample)."""

    def __init__(self, rows: list[int] | None = None, scalars: list[int] | None = None) -> None:
        self.is_scalar = scalars is not None
        self.wanted = True  # does its gradient go anywhere? if not, accumulator() is None
        idx = np.array(scalars if self.is_scalar else rows, dtype=np.intp)
        self.idx = idx
        self.unique = len(np.unique(idx)) == len(idx)
        self.slice = None
        if not self.is_scalar and len(idx) and (np.diff(idx) == 1).all():
            self.slice = slice(int(idx[0]), int(idx[-1]) + 1)  # a view: no gather, no scatter

    def reader(self) -> Callable[[Any, Any], Any]:
        s, idx = self.slice, self.idx
        if self.is_scalar:
            col = idx[:, None]
            return lambda values, scalars: scalars[col]  # (nodes, 1): broadcasts over the batch
        if s is not None:
            return lambda values, scalars: values[s]
        return lambda values, scalars: values[idx]

    def accumulator(self) -> Callable[[Any, Any, Any], None] | None:
        """acc(grads, scalar_grads, d): add the gradient d (nodes, batch) into this operand's rows
        of grads, or -- summed over the batch -- into its entries of scalar_grads. None where no
        gradient is wanted."""
        s, idx, unique = self.slice, self.idx, self.unique
        if not self.wanted:
            return None
        if self.is_scalar:

            def acc(grads: Any, scalar_grads: Any, d: Any) -> None:
                if unique:
                    scalar_grads[idx] += d.sum(1)
                else:
                    np.add.at(scalar_grads, idx, d.sum(1))

        elif s is not None:

            def acc(grads: Any, scalar_grads: Any, d: Any) -> None:
                grads[s] += d

        elif unique:

            def acc(grads: Any, scalar_grads: Any, d: Any) -> None:
                grads[idx] += d

        else:  # a node read twice in one group: fancy-index += would count it once

            def acc(grads: Any, scalar_grads: Any, d: Any) -> None:
                np.add.at(grads, idx, d)

        return acc


def _elementwise_steps(
    o: slice, kind: str, p: float | None, ops: list[_Operand]
) -> tuple[Callable, Callable]:
    _, fwd, local = _elementwise(kind)  # type: ignore[misc]
    reads = [op.reader() for op in ops]
    accs = [op.accumulator() for op in ops]
    if len(reads) == 1:
        (ra,) = reads

        def forward(values: Any, scalars: Any) -> None:
            values[o] = fwd(p, ra(values, scalars))

        def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
            g = grads[o]
            (d,) = local(p, values[o], ra(values, scalars))
            acc(grads, scalar_grads, g if _is_one(d) else _multiply_in_place(d, g))

        acc = accs[0]
        if acc is None:
            backward = _nothing

    else:
        ra, rb = reads

        def forward(values: Any, scalars: Any) -> None:
            values[o] = fwd(p, ra(values, scalars), rb(values, scalars))

        def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
            g = grads[o]
            da, db = local(p, values[o], ra(values, scalars), rb(values, scalars))
            # one array for both slopes (a*a): multiply, not into it
            times = _multiply_in_place if da is not db else _multiply
            if acca is not None:
                acca(grads, scalar_grads, g if _is_one(da) else times(da, g))
            if accb is not None:
                accb(grads, scalar_grads, g if _is_one(db) else times(db, g))

        acca, accb = accs
        if acca is None and accb is None:
            backward = _nothing

    return forward, backward


def _dot_steps(o: slice, widx: Any, bidx: list[int], x: _Operand) -> tuple[Callable, Callable]:
    """A layer: K dot nodes with weights and bias from scalars reading the same n inputs, as
    values[o] = W @ X + b with W (K, n). Backward: dX = W.T @ g, dW = g @ X.T (summed over the batch
    by the product itself), db = row sums of g."""
    bidx = np.array(bidx, dtype=np.intp)
    bcol = bidx[:, None]
    rx, accx = x.reader(), x.accumulator()
    w_unique = len(np.unique(widx)) == widx.size
    b_unique = len(np.unique(bidx)) == bidx.size

    def forward(values: Any, scalars: Any) -> None:
        out = values[o]  # rows of values: the product is written in place, then the bias added
        np.dot(scalars[widx], rx(values, scalars), out=out)
        out += scalars[bcol]

    def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
        g = grads[o]
        X = rx(values, scalars)
        if accx is not None:  # (not when x is the sample's inputs: no one reads their grads)
            accx(grads, scalar_grads, np.dot(scalars[widx].T, g))
        # np.dot, not @: numpy's matmul of two views of one buffer (g, X.T) can miss BLAS
        dw = np.dot(g, X.T)
        db = g.sum(1)
        if w_unique:
            scalar_grads[widx] += dw
        else:
            np.add.at(scalar_grads, widx, dw)
        if b_unique:
            scalar_grads[bidx] += db
        else:
            np.add.at(scalar_grads, bidx, db)

    return forward, backward


def _general_dot_steps(
    o: slice, n: int, w: _Operand, x: _Operand, b: _Operand
) -> tuple[Callable, Callable]:
    """K dot nodes whose weights vary per sample: gather (K, n, batch) blocks, multiply, sum."""
    rw, rx, rb = w.reader(), x.reader(), b.reader()
    aw, ax, ab = w.accumulator(), x.accumulator(), b.accumulator()
    K = o.stop - o.start

    def forward(values: Any, scalars: Any) -> None:
        B = values.shape[1]
        prod = rw(values, scalars).reshape(K, n, B) * rx(values, scalars).reshape(K, n, B)
        values[o] = prod.sum(1) + rb(values, scalars)

    def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
        B = values.shape[1]
        g = grads[o][:, None, :]
        if aw is not None:
            aw(grads, scalar_grads, (rx(values, scalars).reshape(K, n, B) * g).reshape(K * n, B))
        if ax is not None:
            ax(grads, scalar_grads, (rw(values, scalars).reshape(K, n, B) * g).reshape(K * n, B))
        if ab is not None:
            ab(grads, scalar_grads, grads[o])

    return forward, backward


def _sum_steps(o: slice, n: int, c: _Operand) -> tuple[Callable, Callable]:
    rc, ac = c.reader(), c.accumulator()
    K = o.stop - o.start

    def forward(values: Any, scalars: Any) -> None:
        values[o] = rc(values, scalars).reshape(K, n, values.shape[1]).sum(1)

    def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
        ac(grads, scalar_grads, np.repeat(grads[o], n, axis=0))

    return forward, (_nothing if ac is None else backward)


# ------------------------------------------------------------------------- the public API


class Jitted:
    """`fn` compiled for batches; see `jit`. Attributes: `fn`, `reduce`, `traces` (how many times
    a graph was traced and compiled), `last_outputs` (per-sample values of the latest call)."""

    def __init__(self, fn: Callable[..., Value], reduce: str) -> None:
        self.fn = fn
        self.reduce = reduce
        self.traces = 0
        self.last_outputs: ndarray | None = None
        self._programs: dict[tuple, _Program] = {}

    def __repr__(self) -> str:
        name = getattr(self.fn, "__name__", repr(self.fn))
        return f"jit({name}, reduce={self.reduce!r}) [{self.traces} trace(s)]"

    def __call__(self, *arrays: ndarray) -> Value:
        """The batch's loss as one Value (op 'jit'): the mean (or sum) of fn over the samples,
        with the captured Values as children, so `.backward()` fills their grads."""
        arrays, B = self._validate(arrays)
        mean = self.reduce == "mean"
        prog, (outs, grads) = self._run(arrays, B, seed=1.0 / B if mean else 1.0)
        self.last_outputs = outs
        total = outs.mean() if mean else outs.sum()
        return Value(float(total), prog.captured, "jit", "", tuple(grads.tolist()))

    def outputs(self, *arrays: ndarray) -> ndarray:
        """fn's value for each sample, as a (B,) array; forward only (no gradients, no Value)."""
        arrays, B = self._validate(arrays)
        _, (outs, _) = self._run(arrays, B, seed=None)
        self.last_outputs = outs
        return outs

    def _validate(self, arrays: tuple) -> tuple[list[Any], int]:
        if not arrays:
            raise TypeError("jit: call the compiled function with one array per argument of fn")
        out = []
        for k, a in enumerate(arrays):
            if not isinstance(a, np.ndarray):
                raise TypeError(
                    f"jit: argument {k} must be a numpy array with the batch on axis 0, got "
                    f"{type(a).__name__} {a!r:.60}"
                )
            if a.dtype == bool or a.dtype.kind not in "iuf":
                raise TypeError(f"jit: argument {k} must hold real numbers, got dtype {a.dtype}")
            if a.ndim == 0:
                raise ValueError(
                    f"jit: argument {k} is a 0-d array; arrays need the batch on axis 0"
                )
            out.append(np.ascontiguousarray(a, dtype=float))
        sizes = [a.shape[0] for a in out]
        if len(set(sizes)) > 1:
            raise ValueError(f"jit: the arrays disagree on the batch size (axis 0): {sizes}")
        if sizes[0] == 0:
            raise ValueError("jit: empty batch (axis 0 has length 0)")
        return out, sizes[0]

    def _run(self, arrays: list[Any], B: int, seed: float | None) -> tuple[_Program, tuple]:
        key = tuple(a.shape[1:] for a in arrays)  # a new per-sample shape traces again
        prog = self._programs.get(key)
        explain = lambda bad: self._explain(arrays, bad)  # noqa: E731
        if prog is not None:
            try:
                return prog, prog.run(arrays, B, seed, explain)
            except _Diverged:
                # Some sample took another path than the traced one. If the whole batch agrees
                # on a new path (another batch, or parameters that moved), a trace of this batch
                # replays it; if its samples disagree among themselves, no single graph can.
                del self._programs[key]
        prog = self._programs[key] = self._trace(arrays)
        try:
            return prog, prog.run(arrays, B, seed, explain)
        except _Diverged as d:
            raise TraceError(prog.explain(d, traced=0)) from None

    def _explain(self, arrays: list[Any], samples: list[int]) -> None:
        # These samples hold a NaN or inf: the engine may raise for them (overflow, log of a
        # negative number, ...) or let a NaN put in propagate. Running fn eagerly on each sample
        # decides, and raises the engine's own error, naming the op the user wrote (`/`, not the
        # `**-1` it is made of). It costs an eager run per such sample, only when there are any.
        for i in samples:
            try:
                self.fn(*[_values(a[i].tolist()) for a in arrays])
            except (ValueError, ZeroDivisionError, OverflowError) as e:
                if type(e) not in (ValueError, ZeroDivisionError, OverflowError):
                    raise
                raise type(e)(f"{e} (jit: batch sample {i})") from e

    def _trace(self, arrays: list[Any]) -> _Program:
        try:
            tr = record(self.fn, [a[0].tolist() for a in arrays])
        except (ValueError, ZeroDivisionError, OverflowError) as e:
            if type(e) not in (ValueError, ZeroDivisionError, OverflowError):
                raise
            # the engine's own error for this sample; say which sample it was
            raise type(e)(f"{e} (jit: batch sample 0)") from e
        if not isinstance(tr.out, Value):
            raise TypeError(
                f"jit: fn must return one Value per sample, got {type(tr.out).__name__} "
                f"{tr.out!r}"
            )
        self.traces += 1
        return _Program(_Graph(tr))


def jit(fn: Callable[..., Value], reduce: str = "mean") -> Jitted:
    """Compile per-sample micrograd code `fn` to run over a batch with numpy.

    `fn` takes Values (or lists, or nested lists, of Values) and returns a Value. The compiled
    function takes numpy arrays instead, one per argument, with the batch on axis 0 (``f(X, y)``
    with X (B, 2) and y (B,) calls ``fn(x, y)`` with x a list of 2 Values and y a Value), and
    returns a Value: fn's output reduced over the batch (`reduce` 'mean' or 'sum'). Its
    `.backward()` fills the grads of the Values fn captured (the model's parameters) exactly as
    the eager graph over the batch would. ``f.outputs(*arrays)`` gives the per-sample values as
    an array, forward only; ``f.last_outputs`` those of the last call.

    Python decisions `fn` takes on numbers (``if x.data > 0``, also on a parameter's ``.data``)
    are recorded when tracing and checked on every sample of every call: a batch whose samples
    all take another path is traced again, one whose samples disagree raises `TraceError` naming
    a sample. Uses of ``.data`` no check can cover (``x.data * 2``, ``float(x.data)``) raise
    `TraceError` when tracing. numpy is required (``pip install numpy``).
    """
    if not callable(fn):
        raise TypeError(f"jit: fn must be callable, got {type(fn).__name__} {fn!r}")
    if reduce not in REDUCES:
        raise ValueError(f"jit: reduce must be one of {', '.join(REDUCES)}, got {reduce!r}")
    _numpy()
    return Jitted(fn, reduce)


def _values(x: Any) -> Any:
    return [_values(e) for e in x] if isinstance(x, list) else Value(x)


make_callable(__name__, "jit")  # micrograd.jit is this module, callable
