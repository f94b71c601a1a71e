"""Training on `micrograd.jit` (the training library standing on the compiler, never the other
way round): the step function and the model outputs `train.fit` can use.

`JitStep(model, loss, alpha)` is `train.Step` with jit's forward: the per-sample term of `loss`
(`losses.LOSSES`) on ``model(x)``, traced once by `micrograd.jit` and replayed over each batch
with numpy; the same numbers as the eager step to rounding, many times faster. `ModelOutputs`
gives a model's outputs for a batch (forward only) and `forward_numpy` an MLP's, as matrix
products. `make_step_fn` and `make_evaluator` pick the jit when numpy is there, else the eager
engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import losses
from ..engine import Value
from ..jit import jit as _jit
from ..nn import ACTIVATIONS, MLP, Module
from . import Step, StepFn, evaluate, make_step


def numpy_available() -> bool:
    """Whether numpy can be imported (micrograd.jit needs it)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def forward_numpy(model: MLP, points: Any) -> Any:
    """The MLP's outputs for an (n, nin) array of points, as an (n, nout) float64 array."""
    import numpy as np

    c = model.config()
    h = np.asarray(points, dtype=np.float64)
    for i, layer in enumerate(model.layers):
        W = np.array([[w.data for w in n.w] for n in layer.neurons])
        b = np.array([n.b.data for n in layer.neurons])
        last = i == len(model.layers) - 1
        act = ACTIVATIONS[c["out_activation"] if last else c["activation"]]
        h = act.numpy(np, h @ W.T + b)
    return h


def _n_outputs(model: Any, x: list) -> int:
    out = model(x)  # one eager forward: a Value for one output, else a list
    return 1 if isinstance(out, Value) else len(out)


class ModelOutputs:
    """`model`'s outputs for a batch, forward only, without a scalar graph per sample: call it
    with a (B, nin) array; get (B,) for a one-output model (as ``model(x)`` gives one Value),
    else (B, nout).

    One output: ``jit(model).outputs(X)``. Several: an MLP goes through `forward_numpy` (one
    pass); any other model through one jitted function per output (jit compiles functions with
    one output per sample).
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.n_outputs: int | None = None
        self._outputs: list = []

    def __call__(self, X: Any) -> Any:
        import numpy as np

        model = self.model
        if self.n_outputs is None:
            self.n_outputs = _n_outputs(model, X[0].tolist())
        if self.n_outputs > 1 and isinstance(model, MLP):
            return forward_numpy(model, X)
        if not self._outputs:
            if self.n_outputs == 1:
                self._outputs = [_jit(lambda x: model(x))]
            else:
                self._outputs = [_jit(lambda x, k=k: model(x)[k]) for k in range(self.n_outputs)]
        if self.n_outputs == 1:
            return self._outputs[0].outputs(X)
        return np.stack([f.outputs(X) for f in self._outputs], axis=1)


class JitStep(Step):
    """`train.Step` on micrograd.jit: ``step(X_batch, y_batch) -> (loss, accuracy)``, as the
    eager step computes them, with every parameter's gradient left in ``.grad``.

    The batch loss is the jitted mean of the loss's per-sample term on ``model(x)``, one Value
    whose children are the parameters; the outputs for the accuracy come from `ModelOutputs`.
    """

    traced = True  # its forward is a trace: no per-sample Values for health.Monitor to read

    def __init__(
        self,
        model: Module,
        loss: str = "hinge",
        alpha: float = 0.0,
        l1: float = 0.0,
        zero_grad: bool = True,
        score: bool = True,
    ) -> None:
        if loss not in losses.LOSSES:
            raise ValueError(
                f"JitStep: unknown loss {loss!r}; choose one of {', '.join(losses.LOSSES)}"
            )
        super().__init__(model, loss, alpha, l1=l1, zero_grad=zero_grad, score=score)
        term = losses.LOSSES[loss].term
        self.loss_fn = _jit(lambda x, t: term(model(x), t))  # type: ignore[assignment]
        self.outputs = ModelOutputs(model)

    def forward(self, Xb: Sequence, yb: Sequence) -> tuple[Value, list]:
        import numpy as np

        X = np.asarray(Xb, dtype=float)
        loss = self.loss_fn(X, self.target_array(yb, X))
        return loss, self.outputs(X).tolist() if self.score else []

    def target_array(self, yb: Sequence, X: Any) -> Any:
        """The targets as arrays: checked by `losses.check_targets`; class indices as one-hot
        rows, so the traced graph is the same for every class."""
        import numpy as np

        if self.loss != "cross_entropy":
            return np.asarray(losses.check_targets(self.loss, yb), dtype=float)
        if self.outputs.n_outputs is None:
            self.outputs.n_outputs = _n_outputs(self.model, X[0].tolist())
        n = self.outputs.n_outputs
        return np.eye(n)[losses.check_targets("cross_entropy", yb, n)]


def make_step_fn(
    model: Module, loss: str = "hinge", alpha: float = 0.0, jit: bool = True
) -> StepFn:
    """A `JitStep` when `jit` and numpy is there, else the eager `train.make_step`."""
    if jit and numpy_available():
        return JitStep(model, loss, alpha)
    return make_step(model, loss, alpha)


def make_evaluator(model: Module, loss: str = "hinge", jit: bool = True) -> Callable:
    """``accuracy(X, y) -> float`` of `model` as it is now, forward only, by the rule of `loss`:
    with `ModelOutputs` when `jit` and numpy is there, else `train.evaluate`."""
    if not (jit and numpy_available()):
        return lambda X, y: evaluate(model, X, y, loss)
    import numpy as np

    outputs = ModelOutputs(model)
    rule = losses.LOSSES[loss].accuracy
    return lambda X, y: rule(outputs(np.asarray(X, dtype=float)).tolist(), y)
