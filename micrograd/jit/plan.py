"""micrograd.jit's traced graph and its plan, the same for every target (numpy, JavaScript).

`Graph` turns a `tracing.Trace` (one sample's run of fn) into a program: interior nodes children
first, the captured Values (parameters), the constants, the output and the guards; nodes that read
no input move to a `prelude`. `group_nodes` groups same-kind nodes at the same depth into steps (a
layer of fused neurons is one 'matrix product'), and `Layout` says where every number lives: rows of
`values` (rows x batch) and entries of `scalars`. The numpy target (`numpy_target`) and the
JavaScript target (`js_target`) each emit these steps; `jit` runs them. This module needs no numpy:
the JavaScript target plans with it in a browser's Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..engine import OPS, Value, op_kind
from .tracing import Guard, Trace, number

# What each op of any number of children computes, keyed by op name, so jit batches it whole: a
# 'weighted sum' (children *w, *x, b: b + Σ w·x; a layer of them is a matrix product) or a 'sum'
# (Σ children). The other ops run elementwise by their rules. tests/test_op_tables.py holds it to
# the registry.
KERNELS: dict[str, str] = {"dot": "weighted sum", "sum": "sum"}


def _arity(kind: str) -> int | None:
    """The children of an elementwise op's node (its own number, the exponent of '**p', is no
    child), or None if `kind` is no elementwise op."""
    info = OPS.get(kind)
    if info is None or info.forward is None:
        return None
    return 1 if info.param or info.arity == 1 else 2


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


class Graph:
    """A trace as a program: interior nodes (kind, exponent, child refs) children first, the
    captured Values, the constants, the output's ref, and the guards with refs for operands."""

    def __init__(self, tr: Trace, keep: Sequence[Value] = ()) -> None:
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
        terms = _sum_chains(order, tr.created, kept={tr.out, *operands, *keep})
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
        # the refs of `keep`, nodes of the trace a caller reads too (the JavaScript step: the
        # model's outputs, for the accuracy)
        self.kept = [of(v) for v in keep]
        self.n_inputs = len(tr.placeholders)
        # (the guard without its nodes, so the traced graph can be freed; a's ref; b's ref)
        self.guards = [
            (
                Guard(g.kind, None, None, g.expected, g.where, g.text),
                of(g.a),
                None if g.b is None else of(g.b) if isinstance(g.b, Value) else constant(g.b),
            )
            for g in tr.guards
        ]
        # per node: does a gradient flow from it to a captured Value? (not from a node of inputs
        # and constants alone, such as -y: its backward step would be wasted work)
        self.wants: list[bool] = []
        for _, _, refs in self.nodes:
            self.wants.append(
                any(r.kind == "captured" or r.kind == "node" and self.wants[r.index] for r in refs)
            )
        self.prelude = self._split_off_the_same_for_every_sample()

    def _split_off_the_same_for_every_sample(self) -> Graph | None:
        """Nodes that read no input (an L2 term of the parameters written inside fn) give the same
        number for every sample: they move to a graph of their own, run once per call with a
        batch of one, and the rest reads them as scalars, Ref('prelude', i), as it reads
        parameters. Returns that graph (no inputs, no guards, no output), or None if there are
        no such nodes."""
        same: list[bool] = []  # children first, so a child's answer is known
        for _, _, refs in self.nodes:
            same.append(
                all(
                    r.kind in ("captured", "constant") or r.kind == "node" and same[r.index]
                    for r in refs
                )
            )
        if not any(same):
            return None
        new: dict[int, Ref] = {}  # old node index -> ('u', i) or ('n', j)
        kept: list = []
        pre = Graph.__new__(Graph)
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
        self.kept = [moved(r, False) for r in self.kept]
        self.guards = [
            (guard, moved(a, False), None if b is None else moved(b, False))
            for guard, a, b in self.guards
        ]
        return pre


# ------------------------------------------------------------------------- planning
# A program is a list of numpy steps over four arrays: `values`, (rows, batch), one row per input,
# per interior node, and per captured Value or constant that a step reads as a row; `grads`, the
# gradient of the output at each of those; `scalars`, the numbers that are the same for every
# sample (captured Values, constants, prelude nodes), and `scalar_grads`, theirs summed over the
# batch. Nodes of the same kind at the same depth run as one step: a layer's 16 ReLUs are one
# numpy operation, its 16 fused neurons reading the same inputs one matrix product.


# How every sum adds: one order, which both targets (numpy_target, js_target) follow, so a step in
# the browser is the same bits as the step in CPython. Floating-point addition is not
# associative; a library's matrix product (BLAS) adds in its own blocked, fused order that no
# other target can repeat, so no step uses one.
# - A node's own sum adds its terms in index order, as the engine does: a 'weighted sum' from
#   its bias (b + w0*x0 + w1*x1 + ...), a 'sum' from 0.
# - A layer's input gradient adds over its neurons in order: dx_i = w_0i*g_0 + w_1i*g_1 + ...
# - A sum over the batch (a captured Value's gradient, the mean of the outputs) is numpy's pairwise
#   sum, what numpy's `sum` does along a contiguous axis (js_target's $psum writes it out).


def is_scalar(r: Ref) -> bool:
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


def group_nodes(g: Graph) -> list[tuple[Step, list[int]]]:
    """Nodes grouped into steps, in an order that runs every node after its children."""
    depth: list[int] = []
    groups: dict[Step, list[int]] = {}
    for j, (kind, p, refs) in enumerate(g.nodes):
        d = 1 + max((depth[r.index] for r in refs if r.kind == "node"), default=0)
        depth.append(d)
        kernel = KERNELS.get(kind, "")  # what a many-child op computes
        if kernel == "weighted sum":
            n = (len(refs) - 1) // 2
            if len(refs) != 2 * n + 1:
                raise NotImplementedError(f"jit: a {kind!r} node needs 2n+1 children, got {refs}")
            w, x, b = refs[:n], refs[n : 2 * n], refs[-1]
            if is_scalar(b) and all(map(is_scalar, w)):
                step = Step(d, "matrix product", n, inputs=x)  # weights fixed per call
            elif is_scalar(b) and all(map(is_scalar, x)):
                step = Step(d, "matrix product", n, inputs=w)  # the same, w and x swapped
            else:
                step = Step(d, "weighted sums", n)  # weights that vary per sample
        elif kernel == "sum":
            step = Step(d, "sums", len(refs))
        elif (arity := _arity(kind)) is not None:
            if arity != len(refs):
                raise NotImplementedError(
                    f"jit: op {kind!r} with {len(refs)} children is not an engine op"
                )
            step = Step(d, kind, param=p)
        else:
            raise NotImplementedError(
                f"jit: no vectorised rule for op {kind!r}; jit knows "
                f"{', '.join(k for k, info in OPS.items() if info.forward or k in KERNELS)}"
            )
        groups.setdefault(step, []).append(j)
    return sorted(groups.items(), key=lambda group: group[0].depth)  # stable: by depth


class Layout:
    """Where everything lives: rows of `values` (inputs first, then the captured Values and
    constants that are read as rows, then the nodes step by step) and entries of `scalars`
    (captured, constants, prelude nodes)."""

    def __init__(self, g: Graph, groups: list[tuple[Step, list[int]]]) -> None:
        self.graph = g
        self.n_captured = len(g.captured)
        self.n_consts = len(g.consts)
        self.row: dict[Ref, int] = {Ref("input", k): k for k in range(g.n_inputs)}
        as_rows: dict[int, None] = {}  # scalars read as rows, in first-use order

        def read_as_rows(refs: Sequence[Ref | None]) -> None:
            for r in refs:
                if r is not None and is_scalar(r):
                    as_rows.setdefault(self.scalar(r), None)

        for step, members in groups:
            refs_of = [g.nodes[j][2] for j in members]
            if step.kernel == "matrix product":  # weights and bias come from scalars; x from rows
                read_as_rows(step.inputs)
            elif step.kernel in ("weighted sums", "sums"):
                read_as_rows([r for refs in refs_of for r in refs])
            else:  # a child position that is a scalar for every node is read from scalars
                for pos in zip(*refs_of):
                    if not all(map(is_scalar, pos)):
                        read_as_rows(pos)
        read_as_rows([g.out])
        for _, a, b in g.guards:
            read_as_rows([a, b])

        first = g.n_inputs
        # rows first .. first+n hold the scalars `scalars_in_rows`, copied in before the steps
        # (lists: the JavaScript target plans with this layout too, where numpy may be missing)
        self.scalar_rows = list(range(first, first + len(as_rows)))
        self.scalars_in_rows = list(as_rows)
        self.row_of_scalar = {s: r for s, r in zip(as_rows, self.scalar_rows)}
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
        return self.row_of_scalar[self.scalar(r)] if is_scalar(r) else self.row[r]

    def wants(self, r: Ref) -> bool:
        """Does a gradient arriving at `r` go anywhere (to a captured Value)?"""
        if r.kind == "captured":
            return True
        if r.kind == "node":
            return self.graph.wants[r.index]
        if r.kind == "prelude":
            return self.graph.prelude.wants[r.index]  # type: ignore[union-attr]
        return False  # an input or a constant

    def nodes(self, members: list[int]) -> slice:
        return slice(self.row[Ref("node", members[0])], self.row[Ref("node", members[-1])] + 1)
