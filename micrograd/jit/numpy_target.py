"""micrograd.jit's numpy target: a traced graph's steps as numpy functions over the batch.

Each step of the plan (`jit.plan`) becomes a forward and a backward function on numpy arrays:
an elementwise op by its own registry rules on `xp` (numpy, with the engine's correctly rounded
tanh), a layer's weighted sums and the gradients summed over the batch in the order every target
follows (`jit.plan`: how every sum adds), not by BLAS. `Program` runs them over a batch: the
forward steps, the guards checked on every sample, the backward steps from a seed. numpy is
bound on first use (`load_numpy`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..core.registry import array_module
from ..engine import OPS
from .plan import Graph, Layout, Ref, Step, group_nodes, is_scalar
from .tracing import COMPARISONS, numbers_of

np: Any = None  # numpy, bound by load_numpy() on first use so `import micrograd` stays numpy-free
xp: Any = None  # the array module the ops' rules run on here: numpy, bound with it


def load_numpy() -> Any:
    global np, xp
    if np is None:
        try:
            import numpy
        except ImportError:
            raise ImportError(
                'micrograd.jit needs numpy: pip install "micrograd-plus[jit]"'
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
# engine, which raises its own error (see `_nonfinite_samples`). Ops of many children are
# batched whole by what they compute (`jit.plan.KERNELS`, see group_nodes): a 'weighted sum'
# b + Σ w·x (d/dw = x, d/dx = w, d/db = 1) and a 'sum' (every slope 1).


def elementwise(kind: str) -> tuple[int, Callable[..., Any], Callable[..., tuple]] | None:
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


def _build_step(g: Graph, step: Step, members: list[int], at: Layout) -> tuple[Callable, Callable]:
    """The forward and backward numpy functions of one group of nodes."""
    o = at.nodes(members)
    refs_of = [g.nodes[j][2] for j in members]
    n = step.size
    if step.kernel == "matrix product":
        x = step.inputs
        ws = [
            [at.scalar(r) for r in (refs[:n] if refs[n : 2 * n] == x else refs[n : 2 * n])]
            for refs in refs_of
        ]
        bs = [at.scalar(refs[-1]) for refs in refs_of]
        return _dot_steps(o, np.array(ws, dtype=np.intp), bs, _operand(at, x, False))
    if step.kernel == "weighted sums":
        cols = list(zip(*refs_of))
        return _general_dot_steps(
            o,
            n,
            _operand(at, [r for c in zip(*cols[:n]) for r in c], False),
            _operand(at, [r for c in zip(*cols[n : 2 * n]) for r in c], False),
            _operand(at, cols[-1], False),
        )
    if step.kernel == "sums":
        flat = [r for refs in refs_of for r in refs]
        return _sum_steps(o, n, _operand(at, flat, False))
    return _elementwise_steps(
        o, step.kernel, step.param, [_operand(at, pos, True) for pos in zip(*refs_of)]
    )


# ------------------------------------------------------------------------- checking the guards
# Each guard is a decision fn took when tracing (tracing.Guard), its operands rows of values. After
# the forward steps, every guard is evaluated on every sample at once; a sample whose answer
# differs from the traced one would have built another graph.


class Diverged(Exception):
    """A sample disagrees with guard `k` of the trace."""

    def __init__(self, k: int, sample: int, values: tuple[float, ...]) -> None:
        self.k, self.sample, self.values = k, sample, values


_GUARD_VALUE: dict[str, Callable[[Any, Any], Any]] = {
    **COMPARISONS,  # the same on arrays, elementwise
    "bool": lambda a, b: a != 0,  # NaN is true, as in Python
    "int": lambda a, b: np.trunc(a),  # int(nan) and int(inf) raise: no sample can match them
    "floor": lambda a, b: np.floor(a),
    "ceil": lambda a, b: np.ceil(a),
    "round": lambda a, b: np.rint(a),  # half to even, as Python's round
    "is_integer": lambda a, b: np.isfinite(a) & (np.floor(a) == a),
    # the same text: equal, the same sign of zero, or both NaN
    "same": lambda a, b: (
        ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    ),
}


def _build_check(g: Graph, at: Layout) -> Callable[[Any], None]:
    """Check every guard over the batch, one numpy comparison per kind of guard (and, for yes/no
    guards, per expected answer): raise Diverged for the first sample that disagrees."""
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
            raise Diverged(*first)

    return check


class Program:
    """The compiled replay of one traced graph, for any batch size: the forward steps, the guard
    check, the backward steps."""

    def __init__(self, g: Graph) -> None:
        self.graph = g
        self.n_inputs = g.n_inputs
        self.captured = g.captured
        self.consts = np.array(g.consts, dtype=float)
        self.prelude = None if g.prelude is None else Program(g.prelude)
        n_same = 0 if g.prelude is None else len(g.prelude.nodes)
        self.n_scalars = len(g.captured) + len(g.consts) + n_same
        groups = group_nodes(g)
        at = Layout(g, groups)
        self.n_rows = at.n_rows
        self.scalar_rows = np.array(at.scalar_rows, dtype=np.intp)
        self.scalars_in_rows = np.array(at.scalars_in_rows, dtype=np.intp)
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
        sum w.r.t. each captured Value. Raises Diverged when a sample takes another path than
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

    def forward_once(self, scalars: Any, on_nonfinite: Callable[[list[int]], None] | None) -> Any:
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

    def explain(self, d: Diverged, traced: int) -> str:
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
    _, fwd, local = elementwise(kind)  # type: ignore[misc]
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


def _operand(at: Layout, refs: Sequence[Ref], allow_scalar: bool) -> _Operand:
    """One child position across a group of nodes, where `at` lays them out."""
    if allow_scalar and all(map(is_scalar, refs)):
        op = _Operand(scalars=[at.scalar(r) for r in refs])
    else:
        op = _Operand(rows=[at.row_of(r) for r in refs])
    op.wanted = any(map(at.wants, refs))
    return op


def _dot_steps(o: slice, widx: Any, bidx: list[int], x: _Operand) -> tuple[Callable, Callable]:
    """A layer: K dot nodes with weights and bias from scalars reading the same n inputs, as
    values[o] = b + W @ X with W (K, n), every sum in the targets' one order (`jit.plan`: how
    every sum adds), not by BLAS: matmul adds in its own blocked, fused order, which no other
    target can follow. Backward: dX = W.T @ g (k in order), dW = g @ X.T and db = g's row sums
    (over the batch, pairwise)."""
    K, n = widx.shape
    bidx = np.array(bidx, dtype=np.intp)
    bcol = bidx[:, None]
    rx, accx = x.reader(), x.accumulator()
    w_unique = len(np.unique(widx)) == widx.size
    b_unique = len(np.unique(bidx)) == bidx.size

    def forward(values: Any, scalars: Any) -> None:
        out, X = values[o], rx(values, scalars)  # out: rows of values, written in place
        WT, b = scalars[widx].T[:, :, None], scalars[bcol]

        def terms(k: slice) -> Any:  # (1 + n, rows, B): the bias, then input i's products
            t = np.empty((1 + n, len(range(K)[k]), X.shape[1]))
            t[0] = b[k]
            np.multiply(WT[:, k], X[:, None, :], out=t[1:])
            return t

        _sum_in_order(terms, 1 + n, out)

    def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
        g = grads[o]
        X = rx(values, scalars)
        W = scalars[widx]
        if accx is not None:  # (not when x is the sample's inputs: no one reads their grads)
            # dX = W[0, :] g[0] + W[1, :] g[1] + ...
            dx = np.empty((n, g.shape[1]))
            _sum_in_order(lambda i: W[:, i, None] * g[:, None, :], K, dx)
            accx(grads, scalar_grads, dx)
        dw = _products_summed_over_batch(g, X)
        db = g.sum(1)  # (pairwise: the batch on the contiguous axis)
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
    """K dot nodes whose weights vary per sample: b + w[0] x[0] + w[1] x[1] + ..., in order."""
    rw, rx, rb = w.reader(), x.reader(), b.reader()
    aw, ax, ab = w.accumulator(), x.accumulator(), b.accumulator()
    K = o.stop - o.start

    def forward(values: Any, scalars: Any) -> None:
        B = values.shape[1]
        out = values[o]
        W, X = rw(values, scalars).reshape(K, n, B), rx(values, scalars).reshape(K, n, B)
        np.copyto(out, rb(values, scalars))
        _add_in_order(out, lambda i, tmp: np.multiply(W[:, i], X[:, i], out=tmp), 0, n)

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
    """K sum nodes of n terms: 0 + c[0] + c[1] + ..., in order, as the engine adds them."""
    rc, ac = c.reader(), c.accumulator()
    K = o.stop - o.start

    def forward(values: Any, scalars: Any) -> None:
        out = values[o]
        C = rc(values, scalars).reshape(K, n, values.shape[1])
        out.fill(0.0)
        _add_in_order(out, lambda i, tmp: C[:, i], 0, n)

    def backward(values: Any, grads: Any, scalars: Any, scalar_grads: Any) -> None:
        ac(grads, scalar_grads, np.repeat(grads[o], n, axis=0))

    return forward, (_nothing if ac is None else backward)


def _sum_in_order(terms: Callable[[slice], Any], n: int, out: Any) -> None:
    """out = t[0] + t[1] + ... + t[n-1], each element's terms added in index order, where t =
    terms(rows) (an array (n, rows, batch)) holds the terms of out's rows `rows`, made a block
    of rows at a time. numpy's add.reduce adds along an axis in index order whenever an axis of
    more than one element runs inside it (its inner loop runs along that one); along the
    innermost axis it adds pairwise (verified for every shape: tests/test_jit.py). So: the
    reduce where a block's rows and batch hold more than one number, else a loop."""
    rows = out.shape[0]
    step = max(1, _BLOCK // (8 * n * max(1, out[0].size)))
    for r in range(0, rows, step):
        k = slice(r, min(rows, r + step))
        t = terms(k)
        if t[0].size > 1:
            np.add.reduce(t, axis=0, out=out[k])
        else:
            np.copyto(out[k], t[0])
            for i in range(1, n):
                out[k] += t[i]


def _add_in_order(out: Any, term: Callable[[int, Any], Any], start: int, stop: int) -> None:
    """out += term(i) for i from start to stop, one i after another: each element's sum in index
    order, whatever the shapes (numpy's own sum along an axis adds pairwise or in order by the
    array's layout). `term(i, tmp)` may write into tmp, an array shaped as out."""
    tmp = np.empty_like(out)
    for i in range(start, stop):
        np.add(out, term(i, tmp), out=out)


# (bytes of products a batch sum holds at once: a big batch's weight gradients go by blocks)
_BLOCK = 1 << 23


def _products_summed_over_batch(g: Any, X: Any) -> Any:
    """(K, n): Σ_b g[k, b] X[i, b], each sum numpy's pairwise one over the batch (the
    contiguous axis, where `sum` adds pairwise: numpy's documented rule, and the JavaScript
    target's $psum), products made a block of rows of g at a time."""
    K, n, B = g.shape[0], X.shape[0], X.shape[1]
    out = np.empty((K, n))
    rows = max(1, _BLOCK // (8 * max(1, n * B)))
    for k in range(0, K, rows):
        np.multiply(g[k : k + rows, None, :], X[None, :, :]).sum(2, out=out[k : k + rows])
    return out
