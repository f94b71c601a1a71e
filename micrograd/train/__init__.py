"""`fit`: the training loop you would write by hand, with a progress bar and a `History`.

The lecture's loop stays first-class (and is often clearer in a notebook)::

    opt = optim.SGD(model.parameters(), lr=0.05)
    for k in range(100):
        scores = [model(x) for x in X]                               # forward
        loss = losses.hinge(scores, y) + losses.l2(model.parameters(), 1e-4)
        opt.zero_grad()                                              # grads accumulate: reset
        loss.backward()                                              # backward
        opt.step()                                                   # update

With `fit` the same is ``fit(model, X, y, loss='hinge', alpha=1e-4, optimizer=opt, steps=100)``.
Each step is one call of a *step function* ``step_fn(X_batch, y_batch) -> (loss, accuracy)``
that leaves the gradients in ``.grad``: a `Step` (`make_step` builds the eager one,
`train.jit_step.JitStep` is the same step on micrograd.jit). Losses are declared in
`losses.LOSSES`. A loss that stops being finite ends `fit` with `Diverged`, at that step.

The training folder: this module (the loop, `Step`); demo.py, the demo's training and pictures
(`micrograd demo`); plots.py, the loss curve and the decision boundary; jit_step.py, the
same step on `micrograd.jit` (this folder stands on the compiler; jit/ never imports it).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from .. import data
from .. import losses as L
from ..engine import Value
from ..nn import Module
from ..optim import SGD, LambdaLR, Optimizer

StepFn = Callable[[Sequence, Sequence], tuple[float, float]]
LossFn = Callable[[list, Sequence], Value]


class Diverged(ArithmeticError):
    """Training stopped at `step` (0-based) because the loss was not finite (`loss` is nan or
    ±inf) or the step raised an arithmetic error (overflow); `history` holds the steps before it.
    The parameters are as they were before that step's update."""

    def __init__(self, step: int, loss: float, history: History, why: str = "") -> None:
        self.step, self.loss, self.history = step, loss, history
        why = why or f"the loss became {loss!r}"
        super().__init__(f"training diverged at step {step + 1}: {why}")


@dataclass
class History:
    """What happened during `fit`, one entry per step (loss and accuracy on that step's batch,
    measured before the step's update, as in karpathy's demo)."""

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    test_accuracy: list[tuple[int, float]] = field(default_factory=list)  # (step, acc), if measured
    seconds: float = 0.0  # wall time of the whole loop
    health: list = field(default_factory=list)  # fit(health=True): a health.StepHealth per step

    @property
    def final_loss(self) -> float:
        return self.loss[-1] if self.loss else math.nan


def _sign_accuracy(outputs: list, targets: Sequence) -> float:
    """Share of outputs on the same side of 0 as their ±1 targets (for a loss of your own)."""
    return L.LOSSES["hinge"].accuracy(outputs, targets)


argmax = L.argmax  # index of the largest output: the predicted class (losses.predict)


def _resolve_loss(loss: str | LossFn) -> tuple[LossFn, str | None]:
    if callable(loss):
        return loss, None
    if loss not in L.LOSSES:
        raise ValueError(
            f"unknown loss {loss!r}; choose one of {', '.join(L.LOSSES)} or a function"
        )
    return L.LOSSES[loss].batch, loss


def backprop(
    model: Module,
    loss: Value,
    alpha: float = 0.0,
    params: Sequence[Value] | None = None,
    zero_grad: bool = True,
    l1: float = 0.0,
) -> Value:
    """The part every training step shares, eager or jit, here or in the playground: the batch
    `loss` plus ``alpha * sum(p*p)`` when alpha > 0 (and ``l1 * sum(|p|)`` when l1 > 0), the
    grads zeroed, backward(). Returns the loss it differentiated; the update (an optimizer's
    `step`) comes next. ``zero_grad=False`` is the lecture's bug, for the playground to show:
    each step's gradients add to the last."""
    ps = model.parameters() if params is None else params
    if alpha:
        loss = loss + L.l2(ps, alpha)
    if l1:
        loss = loss + L.l1(ps, l1)
    if zero_grad:
        model.zero_grad()
    loss.backward()
    return loss


class Step:
    """One training step, ``step(X_batch, y_batch) -> (loss, accuracy)``: the batch's outputs and
    loss (`forward`), ``alpha * sum(p*p)`` (and ``l1 * sum(|p|)``) added, the grads zeroed,
    backward (`backprop`), and the accuracy of the outputs, before the optimizer's update.

    `forward` computes the batch loss eagerly, one graph per sample; `train.jit_step.JitStep` is the
    same step with micrograd.jit's forward (`traced`: it has no per-sample Values). `loss` is a
    name of `losses.LOSSES` or a function ``(outputs, targets) -> Value`` (then `accuracy`,
    default: the sign rule, says how to score).
    """

    def __init__(
        self,
        model: Module,
        loss: str | LossFn = "hinge",
        alpha: float = 0.0,
        accuracy: Callable[[list, Sequence], float] | None = None,
        l1: float = 0.0,
        zero_grad: bool = True,
        score: bool = True,
    ) -> None:
        self.loss_fn, self.loss = _resolve_loss(loss)
        self.model, self.alpha, self.l1, self.zero_grad = model, alpha, l1, zero_grad
        if accuracy is None:
            accuracy = _sign_accuracy if self.loss is None else L.LOSSES[self.loss].accuracy
        self.accuracy = accuracy
        # score=False: the step returns None for the accuracy and computes no outputs for it
        # (a caller that scores another way: the playground, on all its points at once)
        self.score = score
        self.params = model.parameters()

    traced = False

    def forward(self, Xb: Sequence, yb: Sequence) -> tuple[Value, list]:
        """The batch loss as one Value, and each sample's outputs (for the accuracy)."""
        outputs = [self.model(x) for x in Xb]
        return self.loss_fn(outputs, yb), outputs

    def __call__(self, Xb: Sequence, yb: Sequence) -> tuple[float, float | None]:
        loss, outputs = self.forward(Xb, yb)
        total = backprop(self.model, loss, self.alpha, self.params, self.zero_grad, self.l1)
        return total.data, self.accuracy(outputs, yb) if self.score else None


def make_step(
    model: Module,
    loss: str | LossFn = "hinge",
    alpha: float = 0.0,
    accuracy: Callable[[list, Sequence], float] | None = None,
) -> Step:
    """The eager step function: forward every sample, loss (+ ``alpha * sum(p*p)`` when alpha >
    0), zero the grads, backward. Returns ``step(X_batch, y_batch) -> (loss, accuracy)``."""
    return Step(model, loss, alpha, accuracy)


def evaluate(
    model: Module,
    X: Sequence,
    y: Sequence,
    accuracy: str | Callable[[list, Sequence], float] = "hinge",
) -> float:
    """Accuracy of `model` on (X, y), forward only. `accuracy` is a loss name (its rule: the
    class `losses.predict` gives, against the target's) or a function
    ``(outputs, targets) -> float``."""
    if isinstance(accuracy, str):
        if accuracy not in L.LOSSES:
            raise ValueError(f"evaluate: unknown accuracy rule {accuracy!r}")
        accuracy = L.LOSSES[accuracy].accuracy
    return accuracy([model(x) for x in X], y)


def _steps(steps: object) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"fit: steps must be an int >= 0, got {steps!r}")
    return steps


def fit(
    model: Module,
    X: Sequence,
    y: Sequence,
    loss: str | LossFn = "hinge",
    optimizer: Optimizer | None = None,
    steps: int = 100,
    batch_size: int | None = None,
    alpha: float = 0.0,
    scheduler: LambdaLR | None = None,
    progress: bool = True,
    seed: int | None = 0,
    step_fn: StepFn | None = None,
    callback: Callable[[int, History], None] | None = None,
    file: IO[str] | None = None,
    health: bool = False,
) -> History:
    """Train `model` on (X, y) for `steps` optimisation steps; return the `History`.

    loss        'hinge' (labels ±1), 'mse', 'bce' (logits, labels 0/1), 'cross_entropy'
                (one list of logits per sample, labels are class indices), or a function
                ``(outputs, targets) -> Value``
    optimizer   an `optim` optimizer; default SGD(lr=0.05) over ``model.parameters()``
    batch_size  None: the full batch every step; else shuffled minibatches, epoch after epoch
    alpha       L2 regularisation strength (karpathy's demo: 1e-4)
    scheduler   an `optim.LambdaLR`/`LinearDecay`, stepped after each optimizer step
    progress    a tqdm bar when tqdm is installed, else a line every 10% of the steps
    step_fn     replaces the eager forward/backward (see `make_step`)
    callback    called as ``callback(k, history)`` after each step
    health      keep each step's `health.StepHealth` in ``history.health`` (activations,
                grads, grad:data and update:data per layer: makemore part 3's statistics)

    Raises `Diverged` at the first step whose loss is not finite (before its update).
    """
    steps = _steps(steps)
    if optimizer is None:
        optimizer = SGD(model.parameters(), lr=0.05)
    if step_fn is None:
        step_fn = make_step(model, loss, alpha)
    file = sys.stderr if file is None else file
    feed = data.batches(X, y, batch_size, seed=seed)
    history = History()
    bar, report = _progress(steps, progress, file)
    monitor = None
    if health:
        from .health import Monitor

        monitor = Monitor(model, getattr(step_fn, "alpha", 0.0), getattr(step_fn, "l1", 0.0))
        monitor.attach(step_fn)  # a jit step: the layers are read from its arrays
    t0 = time.perf_counter()
    try:
        for k in range(steps):
            Xb, yb = next(feed)
            lr = optimizer.lr
            try:
                if monitor is None:
                    value, acc = step_fn(Xb, yb)
                else:
                    with monitor.recording():
                        value, acc = step_fn(Xb, yb)
            except ArithmeticError as e:  # e.g. exp overflowing: the same story as a nan loss
                raise Diverged(k, math.nan, history, str(e)) from e
            if not math.isfinite(value):  # stop here: one more update would spread it
                raise Diverged(k, value, history)
            if monitor is not None:
                monitor.read_grads()  # before the step: an optimiser may zero the grads
            optimizer.step()
            if monitor is not None:
                history.health.append(monitor.read_update(k))
            if scheduler is not None:
                scheduler.step()
            history.loss.append(value)
            history.accuracy.append(acc)
            history.lr.append(lr)
            report(k, value, acc)
            if callback is not None:
                callback(k, history)
    finally:
        if bar is not None:
            bar.close()
        history.seconds = time.perf_counter() - t0
    bad = next((p.data for p in model.parameters() if not math.isfinite(p.data)), None)
    if bad is not None:  # the last update overflowed: the loss never showed it
        raise Diverged(steps - 1, history.final_loss, history, f"a weight became {bad!r}")
    return history


def freeze_gc() -> None:
    """Take every object alive now out of the cyclic garbage collector's way (`gc.freeze`).

    For a program that has done its imports and is about to train: our graphs hold no reference
    cycles (refcounting frees them), yet each full collection walks every live object, numpy's
    and matplotlib's included, about a third of an eager moons step (benchmarks/RESULTS.md).
    `micrograd demo` calls it after its imports; the library never does it on its own, since it
    changes the whole process.
    """
    import gc

    gc.collect()
    gc.freeze()


def _progress(
    steps: int, enabled: bool, file: IO[str]
) -> tuple[Any, Callable[[int, float, float], None]]:
    """A tqdm bar (or None) and a function to report one step to it, or in plain lines."""
    if not enabled or steps == 0:
        return None, lambda k, loss, acc: None
    try:
        from tqdm import tqdm
    except ImportError:  # plain lines: pip install "micrograd-plus[progress]" for a bar
        every = max(1, steps // 10)

        def plain(k: int, loss: float, acc: float) -> None:
            if k % every == 0 or k == steps - 1:
                print(f"step {k + 1}/{steps} loss {loss:.6g} accuracy {acc:.1%}", file=file)

        return None, plain
    bar = tqdm(total=steps, file=file, desc="training", unit="step", leave=True)

    def update(k: int, loss: float, acc: float) -> None:
        bar.set_postfix(loss=f"{loss:.4g}", acc=f"{acc:.1%}", refresh=False)
        bar.update(1)

    return bar, update
