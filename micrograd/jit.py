"""Trace once, replay vectorised over a batch: write scalar code for one sample, train on a batch.

    import numpy as np
    from micrograd import MLP, Value, jit
    model = MLP(2, [16, 16, 1])
    f = jit(lambda x, y: (1 + -y * model(x)).relu())   # ordinary per-sample micrograd code
    loss = f(X, y)             # X: (B, 2), y: (B,) arrays -> one Value, the mean over the batch
    params = model.parameters()
    total = loss + 1e-4 * Value.dot(params, params)    # composes with eager code
    total.backward()           # every parameter's .grad, as the eager graph over the batch gives
    f.last_outputs             # the B per-sample values of fn, as an array
    f.outputs(X)               # per-sample values only (no gradients), e.g. for accuracy

How it works. The first call *traces* `fn`: it calls it with placeholder leaf Values holding one
sample, then walks the graph it built (children before parents, the engine's own order). Leaves
that already existed before the call -- the parameters `fn` closes over -- are *captured*; leaves
made during the call are constants. The graph becomes a flat program of numpy steps, one per group
of same-kind nodes at the same depth (a layer's 16 ReLUs are one `np.where`; a layer's 16 fused
`dot` neurons reading the same inputs are one matrix product). Each call then runs that program
over the whole batch (rows of a (nodes, batch) array), runs a vectorised reverse pass, and returns
one `Value` with op 'jit' whose children are the captured Values and whose local derivatives are
the batch-reduced gradients: the engine's ``backward()`` takes it from there.

Parameters are read afresh (their current `.data`) on every call, so an optimiser step needs no
retrace; a new per-sample shape traces again. Python code that branches on `.data` would build a
different graph for different samples: tracing runs `fn` on several samples of the first batch and
raises `TraceError` if their graphs differ. That check sees only the samples it traces, so keep the
data-dependent choices inside ops (`relu`, not ``if x.data > 0``).

numpy is imported on first use (``pip install micrograd-plus[jit]``); importing this module does
not import it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .engine import OPS, OpInfo, Value, _topological_order, op_kind

if TYPE_CHECKING:
    from numpy import ndarray

__all__ = ["jit", "Jitted", "TraceError"]

np: Any = None  # numpy, bound by _numpy() on first use so `import micrograd` stays numpy-free

REDUCES = ("mean", "sum", "none")


def _numpy() -> Any:
    global np
    if np is None:
        try:
            import numpy
        except ImportError:
            raise ImportError(
                "micrograd.jit needs numpy: pip install micrograd-plus[jit]"
            ) from None
        np = numpy
    return np


class TraceError(ValueError):
    """`fn` builds different graphs for different samples: its control flow depends on the data,
    so one recorded graph cannot stand for the whole batch."""


# ------------------------------------------------------------------------- the op table
# Elementwise op kind -> (arity, forward(p, *children) -> out, local(p, out, *children) -> one
# local derivative per child), read from the engine's registry (engine.OPS: each op's `vec` rule,
# written beside its Value method). Arrays are (nodes, batch) blocks, or (nodes, 1) for a child
# that is the same for every sample (a parameter or constant). `p` is the number exponent of a
# '**p' node, else None. numpy's floating-point warnings are silenced around the whole replay: where
# the engine raises, the rules give inf or NaN, and `Jitted._explain` then runs each sample holding
# one through the engine, which raises its own error (see `_nonfinite_samples`). 'dot' and 'sum'
# have many children and are compiled specially (see _Program), with the same maths:
# dot = b + sum(w * x), d/dw = x, d/dx = w, d/db = 1; sum: every local derivative is 1.


def _elementwise(info: OpInfo) -> tuple[int, Callable[..., Any], Callable[..., tuple]]:
    fwd, local = info.vec  # type: ignore[misc]
    if info.name == "**p":  # the exponent is the rules' last argument
        return 1, lambda p, a: fwd(np, a, p), lambda p, out, a: local(np, out, a, p)
    if info.arity == 1:
        return 1, lambda p, a: fwd(np, a), lambda p, out, a: local(np, out, a)
    return 2, lambda p, a, b: fwd(np, a, b), lambda p, out, a, b: local(np, out, a, b)


ELEMENTWISE: dict[str, tuple[int, Callable[..., Any], Callable[..., tuple]]] = {
    kind: _elementwise(info) for kind, info in OPS.items() if info.vec is not None
}


def _is_one(d: Any) -> bool:
    # A local derivative of exactly 1 (a plain float, as '+' gives): the gradient passes through.
    return type(d) is float and d == 1.0


def _kind(op: str | tuple) -> str:
    """The registry key of a recorded node op ('**p' nodes are recorded as ('**p', exponent))."""
    return op[0] if type(op) is tuple else op


def _exponent(op: tuple) -> float:
    return op[1]


def _node_op(v: Value) -> str | tuple:
    """How a traced node's op is recorded: its `_op`, or ('**p', exponent) for ``x ** p``."""
    kind = op_kind(v)
    return (kind, v._p) if kind == "**p" else v._op  # type: ignore[attr-defined]


def _nonfinite_samples(V: Any) -> list[int]:
    """Samples (columns of V) holding a NaN or ±inf somewhere. Where the engine raises (overflow,
    log of a negative number, ...) the rules give inf or NaN, so only these samples can be errors;
    a NaN or inf put in propagates instead. Cheap when all is finite (one sum)."""
    if np.isfinite(V.sum()):
        return []
    return np.flatnonzero(~np.isfinite(V).all(0)).tolist()


# ------------------------------------------------------------------------- tracing

Ref = tuple  # how a node refers to a child: ('x', k) input k, ('c', k) captured k,
# ('k', hex) a constant, ('n', j) the j-th interior node


class _Trace:
    """One run of `fn` on one sample: its placeholders, output and graph (children first)."""

    def __init__(self, fn: Callable[..., Value], arrays: Sequence[Any], i: int) -> None:
        self.sample = i
        self.placeholders: list[Value] = []

        def build(x: Any) -> Any:
            if isinstance(x, list):
                return [build(e) for e in x]
            v = Value(x)
            self.placeholders.append(v)
            return v

        try:
            out = fn(*[build(a[i].tolist()) for a in arrays])
        except (ValueError, ZeroDivisionError, OverflowError) as e:
            if type(e) not in (ValueError, ZeroDivisionError, OverflowError):
                raise
            # the engine's own error for this sample; say which sample it was
            raise type(e)(f"{e} (jit: tracing batch sample {i})") from e
        if not isinstance(out, Value):
            raise TypeError(
                f"jit: fn must return one Value per sample, got {type(out).__name__} {out!r}"
            )
        self.out = out
        self.topo = _topological_order(out)


class _Graph:
    """A trace as a program: interior nodes (op, child refs) in order, the captured Values, the
    output's ref. Two traces of a data-independent `fn` give equal `signature`s."""

    def __init__(self, tr: _Trace, shared: set[Value]) -> None:
        inputs = {v: k for k, v in enumerate(tr.placeholders)}
        ref: dict[Value, Ref] = {}
        self.captured: list[Value] = []
        self.nodes: list[tuple[str, tuple[Ref, ...]]] = []

        def of(v: Value) -> Ref:
            r = ref.get(v)
            if r is None:  # a captured Value (only shared ones are not yet known here)
                r = ref[v] = ("c", len(self.captured))
                self.captured.append(v)
            return r

        for v in tr.topo:
            if v in inputs:
                ref[v] = ("x", inputs[v])
            elif v in shared:
                continue  # existed before the call (a parameter, or a graph built earlier)
            elif not v._prev:
                ref[v] = ("k", v.data.hex())  # hex: exact, and NaN compares equal
            else:
                if callable(v._local):
                    raise NotImplementedError(
                        f"jit: node {v!r} (op {v._op!r}) has a hand-written _backward; jit "
                        f"replays only the engine's ops"
                    )
                self.nodes.append((_node_op(v), tuple(of(c) for c in v._prev)))
                ref[v] = ("n", len(self.nodes) - 1)
        self.out = of(tr.out)
        self.n_inputs = len(tr.placeholders)

    def signature(self) -> tuple:
        return (self.nodes, self.out, [id(c) for c in self.captured])


def _describe(g: _Graph, j: int) -> str:
    if j >= len(g.nodes):
        return "nothing" if j > len(g.nodes) else f"the output {g.out}"
    op, refs = g.nodes[j]
    return f"{op!r} of {', '.join(map(str, refs))}"


def _compare(g0: _Graph, t0: _Trace, g: _Graph, t: _Trace) -> None:
    if g.signature() == g0.signature():
        return
    n = min(len(g0.nodes), len(g.nodes))
    j = next((j for j in range(n) if g0.nodes[j] != g.nodes[j]), n)
    raise TraceError(
        f"jit: fn builds a different graph for batch sample {t.sample} than for sample "
        f"{t0.sample} ({len(g.nodes)} vs {len(g0.nodes)} nodes; node {j} is "
        f"{_describe(g, j)} vs {_describe(g0, j)}). Its Python code depends on the data (e.g. "
        f"`if v.data > 0`, or a number taken from .data), so one recorded graph cannot stand for "
        f"every sample; use an op instead (relu, ...) or run fn eagerly."
    )


# ------------------------------------------------------------------------- compiling


class _Operand:
    """One child position across a group of nodes: rows of the value array V (one per node), or
    entries of the vector S of captured values and constants (the same for every sample)."""

    def __init__(self, rows: list[int] | None = None, scalars: list[int] | None = None) -> None:
        self.is_scalar = scalars is not None
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
            return lambda V, S: S[col]  # (nodes, 1): broadcasts over the batch
        if s is not None:
            return lambda V, S: V[s]
        return lambda V, S: V[idx]

    def accumulator(self) -> Callable[[Any, Any, Any, bool], None]:
        """acc(G, GS, d, per_sample): add the gradient d (nodes, batch) into this operand's
        rows of G, or -- summed over the batch unless per_sample -- into its entries of GS."""
        s, idx, unique = self.slice, self.idx, self.unique
        if self.is_scalar:

            def acc(G: Any, GS: Any, d: Any, per_sample: bool) -> None:
                d = d if per_sample else d.sum(1)
                if unique:
                    GS[idx] += d
                else:
                    np.add.at(GS, idx, d)

        elif s is not None:

            def acc(G: Any, GS: Any, d: Any, per_sample: bool) -> None:
                G[s] += d

        elif unique:

            def acc(G: Any, GS: Any, d: Any, per_sample: bool) -> None:
                G[idx] += d

        else:  # a node read twice in one group: fancy-index += would count it once

            def acc(G: Any, GS: Any, d: Any, per_sample: bool) -> None:
                np.add.at(G, idx, d)

        return acc


def _is_scalar(r: Ref) -> bool:
    return r[0] in "ck"


class _Program:
    """The compiled replay of one traced graph, for any batch size."""

    def __init__(self, g: _Graph) -> None:
        self.captured = tuple(g.captured)
        C = len(g.captured)
        consts: dict[str, int] = {}
        # Every constant read by a node, and the output itself if fn returned a constant.
        for r in (*(r for _, refs in g.nodes for r in refs), g.out):
            if r[0] == "k" and r[1] not in consts:
                consts[r[1]] = C + len(consts)
        self.n_scalars = C + len(consts)
        self.consts = np.array([float.fromhex(h) for h in consts], dtype=float)
        self.n_nodes = len(g.nodes)

        def sidx(r: Ref) -> int:
            return r[1] if r[0] == "c" else consts[r[1]]

        # Group nodes by (depth, kind, ...): a group runs as one numpy step over all its nodes.
        level: list[int] = []
        groups: dict[tuple, list[int]] = {}
        for j, (op, refs) in enumerate(g.nodes):
            lv = 1 + max((level[r[1]] for r in refs if r[0] == "n"), default=0)
            level.append(lv)
            kind = _kind(op)
            if kind == "dot":
                n = (len(refs) - 1) // 2
                w, x, b = refs[:n], refs[n : 2 * n], refs[-1]
                if len(refs) != 2 * n + 1:
                    raise NotImplementedError(f"jit: a 'dot' node needs 2n+1 children, got {refs}")
                if _is_scalar(b) and all(map(_is_scalar, w)):
                    key: tuple = (lv, "dot", n, x)  # weights fixed per call: a matrix product
                elif _is_scalar(b) and all(map(_is_scalar, x)):
                    key = (lv, "dot", n, w)  # the same, with w and x swapped (dot is symmetric)
                else:
                    key = (lv, "dot*", n)
            elif kind == "sum":
                key = (lv, "sum", len(refs))
            elif kind in ELEMENTWISE:
                if ELEMENTWISE[kind][0] != len(refs):
                    raise NotImplementedError(
                        f"jit: op {op!r} with {len(refs)} children is not an engine op"
                    )
                key = (lv, op)
            else:
                raise NotImplementedError(
                    f"jit: no vectorised rule for op {op!r}; jit knows "
                    f"{', '.join([*ELEMENTWISE, 'dot', 'sum'])}"
                )
            groups.setdefault(key, []).append(j)
        ordered = sorted(groups.items(), key=lambda kv: kv[0][0])  # stable: by depth

        # Which child positions read rows of V, and so which scalars need a row of their own.
        needs_row: dict[int, None] = {}

        def rows_please(refs: Sequence[Ref]) -> None:
            for r in refs:
                if _is_scalar(r):
                    needs_row.setdefault(sidx(r), None)

        plans = []
        for key, members in ordered:
            kind = _kind(g.nodes[members[0]][0])
            refs_of = [g.nodes[j][1] for j in members]
            if kind == "dot" and key[1] == "dot":
                n, x = key[2], key[3]
                ws, bs = [], []
                for refs in refs_of:
                    w = refs[:n] if refs[n : 2 * n] == x else refs[n : 2 * n]
                    ws.append([sidx(r) for r in w])
                    bs.append(sidx(refs[-1]))
                rows_please(x)
                plans.append(("dot", members, (ws, bs, x)))
            elif kind in ("dot", "sum"):
                for refs in refs_of:
                    rows_please(refs)
                plans.append((key[1], members, None))
            else:
                positions = list(zip(*refs_of))
                for pos in positions:
                    if not all(map(_is_scalar, pos)):
                        rows_please(pos)
                plans.append((kind, members, positions))
        if _is_scalar(g.out):
            rows_please([g.out])

        # Rows of V: the inputs, then scalars that need rows, then the nodes, group by group.
        self.n_inputs = g.n_inputs
        row: dict[Ref, int] = {("x", k): k for k in range(g.n_inputs)}
        self.scalar_rows = np.arange(g.n_inputs, g.n_inputs + len(needs_row), dtype=np.intp)
        self.scalar_rows_of = np.array(list(needs_row), dtype=np.intp)
        srow = {s: int(r) for s, r in zip(needs_row, self.scalar_rows)}
        nxt = g.n_inputs + len(needs_row)
        for _, members, _ in plans:
            for j in members:
                row[("n", j)] = nxt
                nxt += 1
        self.n_rows = nxt

        def operand(refs: Sequence[Ref], allow_scalar: bool) -> _Operand:
            if allow_scalar and all(map(_is_scalar, refs)):
                return _Operand(scalars=[sidx(r) for r in refs])
            return _Operand(rows=[srow[sidx(r)] if _is_scalar(r) else row[r] for r in refs])

        self.forward: list[Callable] = []
        self.backward: list[Callable] = []
        for kind, members, extra in plans:
            o = slice(row[("n", members[0])], row[("n", members[-1])] + 1)
            if kind == "dot":
                ws, bs, x = extra
                f, b = _dot_steps(o, np.array(ws, dtype=np.intp), bs, operand(x, False))
            elif kind == "dot*":
                n = (len(g.nodes[members[0]][1]) - 1) // 2
                cols = list(zip(*[g.nodes[j][1] for j in members]))
                f, b = _general_dot_steps(
                    o,
                    n,
                    operand([r for c in zip(*cols[:n]) for r in c], False),
                    operand([r for c in zip(*cols[n : 2 * n]) for r in c], False),
                    operand(cols[-1], False),
                )
            elif kind == "sum":
                refs_of = [g.nodes[j][1] for j in members]
                f, b = _sum_steps(
                    o, len(refs_of[0]), operand([r for rs in refs_of for r in rs], False)
                )
            else:
                p = _exponent(g.nodes[members[0]][0]) if kind == "**p" else None
                f, b = _elementwise_steps(o, kind, p, [operand(pos, True) for pos in extra])
            self.forward.append(f)
            self.backward.append(b)
        self.out_row = srow[sidx(g.out)] if _is_scalar(g.out) else row[g.out]

    def run(
        self,
        arrays: Sequence[Any],
        B: int,
        mode: str,
        on_nonfinite: Callable[[list[int]], None] | None = None,
    ) -> tuple[Any, Any]:
        """Per-sample outputs, and the gradient w.r.t. each captured Value: reduced over the
        batch for mode 'mean'/'sum', per sample ((C, B)) for 'none', not computed for 'forward'.
        `on_nonfinite(samples)` hears of samples where an op made NaN or inf from finite numbers."""
        V = np.empty((self.n_rows, B))
        r = 0
        for a in arrays:
            width = a.size // B
            if width:
                V[r : r + width] = a.reshape(B, width).T
            r += width
        S = np.empty(self.n_scalars)
        C = len(self.captured)
        S[:C] = [c.data for c in self.captured]  # current values: updates need no retrace
        S[C:] = self.consts
        with np.errstate(all="ignore"):
            if len(self.scalar_rows):
                V[self.scalar_rows] = S[self.scalar_rows_of][:, None]
            for step in self.forward:
                step(V, S)
            if on_nonfinite is not None:
                bad = _nonfinite_samples(V)
                if bad:
                    on_nonfinite(bad)
            outs = V[self.out_row].copy()
            if mode == "forward":
                return outs, None
            per_sample = mode == "none"
            G = np.zeros((self.n_rows, B))
            G[self.out_row] = 1.0 / B if mode == "mean" else 1.0
            GS = np.zeros((self.n_scalars, B) if per_sample else self.n_scalars)
            for step in reversed(self.backward):
                step(V, G, S, GS, per_sample)
            if len(self.scalar_rows):
                d = G[self.scalar_rows]
                np.add.at(GS, self.scalar_rows_of, d if per_sample else d.sum(1))
        return outs, GS[:C]


def _elementwise_steps(
    o: slice, kind: str, p: float | None, ops: list[_Operand]
) -> tuple[Callable, Callable]:
    _, fwd, local = ELEMENTWISE[kind]
    reads = [op.reader() for op in ops]
    accs = [op.accumulator() for op in ops]
    if len(reads) == 1:
        (ra,) = reads

        def forward(V: Any, S: Any) -> None:
            V[o] = fwd(p, ra(V, S))

        def backward(V: Any, G: Any, S: Any, GS: Any, per_sample: bool) -> None:
            g = G[o]
            (d,) = local(p, V[o], ra(V, S))
            accs[0](G, GS, g if _is_one(d) else d * g, per_sample)

    else:
        ra, rb = reads

        def forward(V: Any, S: Any) -> None:
            V[o] = fwd(p, ra(V, S), rb(V, S))

        def backward(V: Any, G: Any, S: Any, GS: Any, per_sample: bool) -> None:
            g = G[o]
            da, db = local(p, V[o], ra(V, S), rb(V, S))
            accs[0](G, GS, g if _is_one(da) else da * g, per_sample)
            accs[1](G, GS, g if _is_one(db) else db * g, per_sample)

    return forward, backward


def _dot_steps(o: slice, widx: Any, bidx: list[int], x: _Operand) -> tuple[Callable, Callable]:
    """A layer: K dot nodes with weights and bias from S reading the same n inputs, as
    V[o] = W @ X + b with W (K, n). Backward: dX = W.T @ g, dW = g @ X.T (summed over the batch
    by the product itself), db = row sums of g."""
    bidx = np.array(bidx, dtype=np.intp)
    bcol = bidx[:, None]
    rx, accx = x.reader(), x.accumulator()
    w_unique = len(np.unique(widx)) == widx.size
    b_unique = len(np.unique(bidx)) == bidx.size

    def forward(V: Any, S: Any) -> None:
        V[o] = np.dot(S[widx], rx(V, S)) + S[bcol]

    def backward(V: Any, G: Any, S: Any, GS: Any, per_sample: bool) -> None:
        g = G[o]
        X = rx(V, S)
        accx(G, GS, np.dot(S[widx].T, g), per_sample)
        # np.dot, not @: numpy's matmul of two views of one buffer (g, X.T) can miss BLAS
        dw = g[:, None, :] * X[None, :, :] if per_sample else np.dot(g, X.T)
        db = g if per_sample else g.sum(1)
        if w_unique:
            GS[widx] += dw
        else:
            np.add.at(GS, widx, dw)
        if b_unique:
            GS[bidx] += db
        else:
            np.add.at(GS, bidx, db)

    return forward, backward


def _general_dot_steps(
    o: slice, n: int, w: _Operand, x: _Operand, b: _Operand
) -> tuple[Callable, Callable]:
    """K dot nodes whose weights vary per sample: gather (K, n, batch) blocks, multiply, sum."""
    rw, rx, rb = w.reader(), x.reader(), b.reader()
    aw, ax, ab = w.accumulator(), x.accumulator(), b.accumulator()
    K = o.stop - o.start

    def forward(V: Any, S: Any) -> None:
        B = V.shape[1]
        prod = rw(V, S).reshape(K, n, B) * rx(V, S).reshape(K, n, B)
        V[o] = prod.sum(1) + rb(V, S)

    def backward(V: Any, G: Any, S: Any, GS: Any, per_sample: bool) -> None:
        B = V.shape[1]
        g = G[o][:, None, :]
        aw(G, GS, (rx(V, S).reshape(K, n, B) * g).reshape(K * n, B), per_sample)
        ax(G, GS, (rw(V, S).reshape(K, n, B) * g).reshape(K * n, B), per_sample)
        ab(G, GS, G[o], per_sample)

    return forward, backward


def _sum_steps(o: slice, n: int, c: _Operand) -> tuple[Callable, Callable]:
    rc, ac = c.reader(), c.accumulator()
    K = o.stop - o.start

    def forward(V: Any, S: Any) -> None:
        V[o] = rc(V, S).reshape(K, n, V.shape[1]).sum(1)

    def backward(V: Any, G: Any, S: Any, GS: Any, per_sample: bool) -> None:
        ac(G, GS, np.repeat(G[o], n, axis=0), per_sample)

    return forward, backward


# ------------------------------------------------------------------------- the public API


class Jitted:
    """`fn` compiled for batches; see `jit`. Attributes: `fn`, `reduce`, `traces` (how many times
    a graph was traced and compiled), `last_outputs` (per-sample values of the latest call)."""

    def __init__(self, fn: Callable[..., Value], reduce: str, check: int) -> None:
        self.fn = fn
        self.reduce = reduce
        self.check = check
        self.traces = 0
        self.last_outputs: ndarray | None = None
        self._programs: dict[tuple, _Program] = {}

    def __repr__(self) -> str:
        name = getattr(self.fn, "__name__", repr(self.fn))
        return f"jit({name}, reduce={self.reduce!r}) [{self.traces} trace(s)]"

    def __call__(self, *arrays: ndarray) -> Value | list[Value]:
        """The batch's loss as one Value (op 'jit'): the mean (or sum) of fn over the samples,
        with the captured Values as children, so `.backward()` fills their grads. With
        reduce='none', a list of one such Value per sample."""
        arrays, B = self._validate(arrays)
        prog = self._program(arrays, B)
        mode = self.reduce
        outs, grads = prog.run(arrays, B, mode, lambda bad: self._explain(arrays, bad))
        self.last_outputs = outs
        caps = prog.captured
        if mode == "none":
            return [
                Value(float(v), caps, "jit", "", tuple(col))
                for v, col in zip(outs.tolist(), grads.T.tolist())
            ]
        total = outs.mean() if mode == "mean" else outs.sum()
        return Value(float(total), caps, "jit", "", tuple(grads.tolist()))

    def outputs(self, *arrays: ndarray) -> ndarray:
        """fn's value for each sample, as a (B,) array; forward only (no gradients, no Value)."""
        arrays, B = self._validate(arrays)
        prog = self._program(arrays, B)
        outs, _ = prog.run(arrays, B, "forward", lambda bad: self._explain(arrays, bad))
        self.last_outputs = outs
        return outs

    def _explain(self, arrays: list[Any], samples: list[int]) -> None:
        # These samples hold a NaN or inf: the engine may raise for them (overflow, log of a
        # negative number, ...) or let a NaN put in propagate. Running fn eagerly on each sample
        # decides, and raises the engine's own error, naming the op the user wrote (`/`, not the
        # `**-1` it is made of). It costs an eager run per such sample, only when there are any.
        for i in samples:
            _Trace(self.fn, arrays, i)

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

    def _program(self, arrays: list[Any], B: int) -> _Program:
        key = tuple(a.shape[1:] for a in arrays)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = self._trace(arrays, B)
        return prog

    def _trace(self, arrays: list[Any], B: int) -> _Program:
        # Trace a few samples spread over the batch (sample 0 twice if B == 1): leaves present in
        # every trace are the captured ones; the graphs must agree, or fn depends on the data.
        picks = sorted({round(i * (B - 1) / (self.check - 1)) for i in range(self.check)})
        if len(picks) == 1:
            picks *= 2
        traces = [_Trace(self.fn, arrays, i) for i in picks]
        shared = set(traces[0].topo).intersection(traces[1].topo)
        graphs = [_Graph(t, shared) for t in traces]
        for g, t in zip(graphs[1:], traces[1:]):
            _compare(graphs[0], traces[0], g, t)
        self.traces += 1
        return _Program(graphs[0])


def jit(fn: Callable[..., Value], reduce: str = "mean", *, check: int = 3) -> Jitted:
    """Compile per-sample micrograd code `fn` to run over a batch with numpy.

    `fn` takes Values (or lists, or nested lists, of Values) and returns a Value. The compiled
    function takes numpy arrays instead, one per argument, with the batch on axis 0 (``f(X, y)``
    with X (B, 2) and y (B,) calls ``fn(x, y)`` with x a list of 2 Values and y a Value), and
    returns a Value: fn's output reduced over the batch (`reduce` 'mean' or 'sum'; 'none' gives a
    list of B Values). Its `.backward()` fills the grads of the Values fn captured (the model's
    parameters) exactly as the eager graph over the batch would. ``f.outputs(*arrays)`` gives
    the per-sample values as an array, forward only; ``f.last_outputs`` those of the last call.

    `check` (>= 2) is how many samples, spread over the first batch, are traced and compared to
    catch Python code that branches on the data (TraceError). numpy is required
    (``pip install micrograd-plus[jit]``).
    """
    if not callable(fn):
        raise TypeError(f"jit: fn must be callable, got {type(fn).__name__} {fn!r}")
    if reduce not in REDUCES:
        raise ValueError(f"jit: reduce must be one of {', '.join(REDUCES)}, got {reduce!r}")
    if isinstance(check, bool) or not isinstance(check, int) or check < 2:
        raise ValueError(f"jit: check must be an int >= 2 (samples traced), got {check!r}")
    _numpy()
    return Jitted(fn, reduce, check)
