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

Why it is shaped so. A learner's code stays scalar micrograd; only the batch loop moves into numpy.
The first call *traces* `fn` on one sample (`micrograd.jit.tracing`): the graph it builds, its
captured Values (parameters, read afresh on every call, so an optimiser step needs no retrace), and
a guard for every Python decision it takes on a number read from a Value (``if x.data >
0``). The graph becomes a few numpy steps, one per group of same-kind nodes at the same depth (a
layer of fused neurons is one matrix product); each call runs them over the whole batch, checks
the guards on every sample (a batch that moved to another path as a whole is traced again; one
whose samples disagree raises `TraceError` naming a sample: never a silent wrong answer), runs a
vectorised reverse pass, and returns one `Value` with op 'jit' whose children are the captured
Values and whose local derivatives are the batch's gradients: ``backward()`` takes it from there.

numpy is imported on first use (``pip install "micrograd-plus[jit]"``); importing this module does
not import it.

Where the parts live, in this folder: tracing.py records the trace, watching reads of `.data`
through watch.py; plan.py makes it a program and plans its steps; one emitter per target writes
them: numpy_target.py (numpy functions, what this module runs) and js_target.py with runtime.js
(JavaScript, for the static site's browser; runtime.js, what its programs need beside them:
powInt, makeRunner; js_shared.py, its kernels for a batch of one, shared by many programs);
gpt.py is micrograd.gpt's loss on jit (tokens as one-hot data), gpt_step.js its training step in
JavaScript; this module is the runner and the public API. The Train view's step and pictures
around a program are the playground's (playground/training/train_js.py and train_step.js).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.callable_module import make_callable
from ..engine import Value
from . import numpy_target as numpy_target
from .numpy_target import Diverged, Program
from .numpy_target import elementwise as _elementwise  # noqa: F401  (for tests)
from .plan import Graph, Layout, group_nodes
from .tracing import TraceError, record

if TYPE_CHECKING:
    from numpy import ndarray

__all__ = ["jit", "Jitted", "TraceError"]

REDUCES = ("mean", "sum")


def load_numpy() -> Any:
    return numpy_target.load_numpy()


class Jitted:
    """`fn` compiled for batches; see `jit`. Attributes: `fn`, `reduce`, `traces` (how many times
    a graph was traced and compiled), `last_outputs` (per-sample values of the latest call)."""

    def __init__(self, fn: Callable[..., Value], reduce: str) -> None:
        self.fn = fn
        self.reduce = reduce
        self.traces = 0
        self.last_outputs: ndarray | None = None
        self._programs: dict[tuple, Program] = {}
        # Nodes of fn's graph to keep (say, a layer's outputs, for train.health): called when
        # tracing, it names Values fn made; `kept()` gives their values and grads per sample.
        self.keep: Callable[[], Any] | None = None
        self._last: tuple[Program, int] | None = None
        self._kept_rows: Any = weakref.WeakKeyDictionary()  # program -> rows of its arrays

    def __repr__(self) -> str:
        name = getattr(self.fn, "__name__", repr(self.fn))
        return f"jit({name}, reduce={self.reduce!r}) [{self.traces} trace(s)]"

    def __call__(self, *arrays: ndarray) -> Value:
        """The batch's loss as one Value (op 'jit'): the mean (or sum) of fn over the samples,
        with the captured Values as children, so `.backward()` fills their grads."""
        arrays, B = self._validate(arrays)
        mean = self.reduce == "mean"
        prog, (outs, grads) = self._run(arrays, B, seed=1.0 / B if mean else 1.0)
        self.last_outputs, self._last = outs, (prog, B)
        total = outs.mean() if mean else outs.sum()
        return Value(float(total), prog.captured, "jit", "", tuple(grads.tolist()))

    def kept(self) -> tuple[ndarray, ndarray] | None:
        """The values and gradients of the nodes `keep` named, in the last call (not
        `outputs`): two (kept, B) arrays, or None before a call or without `keep`."""
        if self._last is None:
            return None
        prog, B = self._last
        rows = self._kept_rows.get(prog)
        arrays = getattr(prog._buffers, "by_size", {}).get(B)  # the call's own arrays
        if rows is None or arrays is None:
            return None
        return arrays[0][rows, :B].copy(), arrays[1][rows, :B].copy()

    def forget(self) -> None:
        """Drop the compiled programs: the next call traces fn again (and asks `keep` again)."""
        self._programs.clear()
        self._last = None

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
        np = numpy_target.np
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

    def _run(self, arrays: list[Any], B: int, seed: float | None) -> tuple[Program, tuple]:
        key = tuple(a.shape[1:] for a in arrays)  # a new per-sample shape traces again
        prog = self._programs.get(key)
        explain = lambda bad: self._explain(arrays, bad)  # noqa: E731
        if prog is not None:
            try:
                return prog, prog.run(arrays, B, seed, explain)
            except Diverged:
                # Some sample took another path than the traced one. If the whole batch agrees
                # on a new path (another batch, or parameters that moved), a trace of this batch
                # replays it; if its samples disagree among themselves, no single graph can.
                del self._programs[key]
        prog = self._programs[key] = self._trace(arrays)
        try:
            return prog, prog.run(arrays, B, seed, explain)
        except Diverged as d:
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

    def _trace(self, arrays: list[Any]) -> Program:
        try:
            tr = record(self.fn, [a[0].tolist() for a in arrays])
        except (ValueError, ZeroDivisionError, OverflowError) as e:
            if type(e) not in (ValueError, ZeroDivisionError, OverflowError):
                raise
            # the engine's own error for this sample; say which sample it was
            raise type(e)(f"{e} (jit: batch sample 0)") from e
        if not isinstance(tr.out, Value):
            raise TypeError(
                f"jit: fn must return one Value per sample, got {type(tr.out).__name__} {tr.out!r}"
            )
        self.traces += 1
        keep = list(self.keep()) if self.keep is not None else []
        if not all(v in tr.created for v in keep):
            keep = []  # not all of them nodes of this trace: keep none rather than guess
        prog = Program(Graph(tr, keep))
        if keep:  # where the program's arrays hold them: the rows of its layout
            at = Layout(prog.graph, group_nodes(prog.graph))
            np = numpy_target.np
            self._kept_rows[prog] = np.array([at.row_of(r) for r in prog.graph.kept])
        return prog


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
    `TraceError` when tracing. numpy is required (``pip install "micrograd-plus[jit]"``).
    """
    if not callable(fn):
        raise TypeError(f"jit: fn must be callable, got {type(fn).__name__} {fn!r}")
    if reduce not in REDUCES:
        raise ValueError(f"jit: reduce must be one of {', '.join(REDUCES)}, got {reduce!r}")
    load_numpy()
    return Jitted(fn, reduce)


def _values(x: Any) -> Any:
    return [_values(e) for e in x] if isinstance(x, list) else Value(x)


make_callable(__name__, "jit")  # micrograd.jit is this module, callable
